"""The perception cases of ``tests/data/perception_cases.json`` as images and boxes,
shared by ``tests/test_perception.py`` and ``bench/perception.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

CASES_FILE = Path(__file__).with_name("data") / "perception_cases.json"


@dataclass(frozen=True)
class Case:
    """One phrase to find in one image, with the hand-drawn box of the answer."""

    split: str
    image_name: str
    phrase: str
    box: tuple[int, int, int, int]
    render: dict | None = None
    polygon: tuple[tuple[int, int], ...] | None = None
    silhouette: bool = False

    @property
    def id(self) -> str:
        return f"{self.split}:{self.image_name}:{self.phrase.replace(' ', '_')}"

    def truth_mask(self, shape: tuple[int, int]) -> np.ndarray | None:
        """The hand-drawn polygon or the exact silhouette as a bool mask, if the case has
        one."""
        if self.silhouette:
            from skimage import data

            return ~np.asarray(data.horse(), bool)
        if self.polygon:
            mask = np.zeros(shape, np.uint8)
            cv2.fillPoly(mask, [np.array(self.polygon, np.int32)], 1)
            return mask > 0
        return None

    def image(self) -> np.ndarray:
        photo = photo_by_name(self.image_name)
        return render_zoom_case(photo, self.render) if self.render else photo


def photo_by_name(name: str) -> np.ndarray:
    """A scikit-image photo as uint8 RGB."""
    from skimage import data

    loaders = {"coffee": data.coffee, "chelsea": data.chelsea, "astronaut": data.astronaut,
               "rocket": data.rocket, "camera": data.camera, "horse": data.horse,
               "motorcycle_left": lambda: data.stereo_motorcycle()[0],
               "motorcycle_right": lambda: data.stereo_motorcycle()[1]}
    image = np.asarray(loaders[name]())
    if image.dtype == bool:
        image = np.where(image, 255, 0).astype(np.uint8)
    if image.ndim == 2:
        image = np.dstack([image] * 3)
    return np.ascontiguousarray(image[..., :3])


def render_zoom_case(photo: np.ndarray, spec: dict) -> np.ndarray:
    """A large canvas (a smooth, textured grey-green field) with ``spec['crop']`` of the
    photo pasted at ``spec['at']``: an object far too small for a downscaled frame."""
    width, height = spec["canvas"]
    rng = np.random.default_rng(7)
    base = cv2.resize(rng.integers(60, 170, (12, 16, 3), dtype=np.uint8), (width, height),
                      interpolation=cv2.INTER_CUBIC)
    noise = rng.integers(-12, 12, (height // 4, width // 4, 1)).astype(np.int16)
    noise = cv2.resize(noise.astype(np.float32), (width, height))[..., None]
    canvas = np.clip(base.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    x0, y0, x1, y1 = spec["crop"]
    patch = photo[y0:y1, x0:x1]
    if spec.get("scale", 1.0) != 1.0:
        patch = cv2.resize(patch, None, fx=spec["scale"], fy=spec["scale"],
                           interpolation=cv2.INTER_AREA)
    ax, ay = spec["at"]
    canvas[ay:ay + patch.shape[0], ax:ax + patch.shape[1]] = patch
    return canvas


def load_cases() -> list[Case]:
    """Every case, tune split first, then held-out, then zoom renders."""
    doc = json.loads(CASES_FILE.read_text())
    cases = [Case(split, c["image"], c["phrase"], tuple(c["box"]),
                  polygon=tuple(map(tuple, c["polygon"])) if "polygon" in c else None,
                  silhouette=bool(c.get("silhouette")))
             for split in ("tune", "held_out") for c in doc[split]]
    for c in doc["zoom"]:
        x0, y0, x1, y1 = c["crop"]
        s = c.get("scale", 1.0)
        ax, ay = c["at"]
        box = (ax, ay, ax + round((x1 - x0) * s), ay + round((y1 - y0) * s))
        cases.append(Case("zoom", c["image"], c["phrase"], box, c))
    return cases


def box_iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int]:
    """The bounding box of a bool mask."""
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two bool masks."""
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 0.0
