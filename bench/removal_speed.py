"""Removal speed and quality at native resolution (issue 14): edge growth + PatchMatch fill.

Usage::

    .venv/bin/python bench/removal_speed.py [--repeats 2] [--cases photo_12mp,...]

Three cases, each removed through a whole Edit turn (``EditSession.turn``: plan, localise,
grow the mask, fill, critique, commit) on a fresh session:

* ``photo_12mp``: scikit-image's coffee photo upscaled to 4000×3000 with an anti-aliased
  blue disc of about 1 MP (radius 565 px) — "remove the blue circle";
* ``texture_12mp``: scikit-image's gravel, mirror-tiled at its native grain to 4000×3000,
  with a 1-MP magenta disc — "remove the magenta circle";
* ``hdd_4k``: an HDD render at 3840×2160 with a medium green square — "remove the green
  box".

The fill alone (``executor.execute`` on the localised mask) is timed too, and its result
is measured against the true background (known: the object is drawn here): ``rim_px``,
pixels within 8 px of the old edge that have the object's colour (within 30 ΔE of it,
closer to it than to the background there, and > 15 ΔE off that background);
``fill_dE``, the fill's mean Lab colour against a ring 5–30 px around it; ``spread``, its
lightness spread over the ring's; ``detail``, its mean gradient magnitude over the ring's
(below 1: smoother than its surroundings). ``fill_cpu_s`` is the fill's process CPU time
(all threads): on a shared machine the wall time mostly measures the other processes.
The last printed line is one JSON object;
the target is a few seconds per removal at 12 MP on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import executor  # noqa: E402
from agent.actions import Action  # noqa: E402
from agent.session import EditSession  # noqa: E402
from eval import hdd  # noqa: E402
from pipelines.editors.objects import lab_of  # noqa: E402
from pipelines.editors.operations import parse_color  # noqa: E402
from pipelines.localizers import get_localizer  # noqa: E402

Case = tuple[np.ndarray, np.ndarray, str]


def _disc(background: np.ndarray, colour: str) -> np.ndarray:
    image = background.copy()
    cv2.circle(image, (2000 * 16, 1500 * 16), 565 * 16, parse_color(colour), -1,
               cv2.LINE_AA, 4)
    return image


def photo_12mp() -> Case:
    """4000×3000 coffee photo with a ~1-MP anti-aliased blue disc."""
    from skimage import data

    bg = cv2.resize(data.coffee(), (4000, 3000), interpolation=cv2.INTER_CUBIC)
    return _disc(bg, "blue"), bg, "blue circle"


def texture_12mp() -> Case:
    """4000×3000 gravel (mirror-tiled at native grain) with a ~1-MP magenta disc."""
    from skimage import data

    tile = np.dstack([data.gravel()] * 3)
    bg = np.ascontiguousarray(np.pad(tile, ((0, 3000 - tile.shape[0]),
                                            (0, 4000 - tile.shape[1]), (0, 0)),
                                     mode="symmetric"))
    return _disc(bg, "magenta"), bg, "magenta circle"


def hdd_4k() -> Case:
    """3840×2160 HDD render with one medium green square."""
    obj = hdd.SceneObject("o1", "green", "medium", "matte", "square", (0.5, 0.55))
    return (hdd.render(hdd.SceneState((obj,), 3, 2), (3840, 2160)),
            hdd.render(hdd.SceneState((), 3, 2), (3840, 2160)), "green box")


CASES = {"photo_12mp": photo_12mp, "texture_12mp": texture_12mp, "hdd_4k": hdd_4k}


def quality(out: np.ndarray, before: np.ndarray, bg: np.ndarray) -> dict:
    """Rim pixels and fill statistics against the true background (see the module doc)."""
    obj = np.any(np.abs(before.astype(int) - bg.astype(int)) > 2, axis=2)
    x, y, w, h = cv2.boundingRect(obj.view(np.uint8))
    pad = 40
    win = (slice(max(0, y - pad), y + h + pad), slice(max(0, x - pad), x + w + pad))
    obj, lab, lab_bg = obj[win], lab_of(out[win]), lab_of(bg[win])
    colour = lab_of(before[win])[cv2.erode(obj.view(np.uint8), np.ones((15, 15))) > 0].mean(0)
    far = cv2.distanceTransform((~obj).view(np.uint8), cv2.DIST_L2, 5)
    near = cv2.distanceTransform(obj.view(np.uint8), cv2.DIST_L2, 5)
    band = ((far > 0) & (far <= 8)) | ((near > 0) & (near <= 8))
    d_obj = np.linalg.norm(lab[band] - colour, axis=1)
    d_bg = np.linalg.norm(lab[band] - lab_bg[band], axis=1)
    inner = cv2.erode(obj.view(np.uint8), np.ones((5, 5), np.uint8)) > 0
    ring = (far > 4) & (far <= 30)
    grad = np.hypot(cv2.Sobel(lab[..., 0], cv2.CV_32F, 1, 0), cv2.Sobel(lab[..., 0], cv2.CV_32F,
                                                                         0, 1))
    return {"rim_px": int(((d_obj < d_bg) & (d_bg > 15) & (d_obj < 30)).sum()),
            "fill_dE": round(float(np.linalg.norm(lab[inner].mean(0) - lab[ring].mean(0))), 2),
            "spread": round(float((lab[inner][:, 0].std() + 1) / (lab[ring][:, 0].std() + 1)), 3),
            "detail": round(float(grad[inner].mean() / max(grad[ring].mean(), 1e-6)), 3)}


def measure(image: np.ndarray, bg: np.ndarray, phrase: str, repeats: int, tmp: Path) -> dict:
    """Median seconds of the fill alone and of a whole turn, and the fill's quality."""
    mask = get_localizer().locate(image, f"the {phrase}").masks[0].mask
    action = Action(kind="remove", operation="inpaint", target=phrase)
    fills, turns, cpus = [], [], []
    for i in range(repeats):
        t, cpu = time.perf_counter(), time.process_time()
        done = executor.execute(image, action, mask)
        fills.append(time.perf_counter() - t)
        cpus.append(time.process_time() - cpu)
        session = EditSession.create(image, tmp / f"s{len(os.listdir(tmp))}")
        t = time.perf_counter()
        result = session.turn(f"remove the {phrase}")
        turns.append(time.perf_counter() - t)
        logging.info("repeat %d: fill %.2f s, turn %.2f s", i, fills[-1], turns[-1])
    step = result.steps[0]
    return {"pixels": int(image.shape[0] * image.shape[1]), "hole_px": int(mask.sum()),
            "fill_s": round(statistics.median(fills), 2),
            "fill_cpu_s": round(statistics.median(cpus), 2),
            "turn_s": round(statistics.median(turns), 2),
            "attempts": len(step.attempts), "status": step.status,
            "score": round(max((a.score for a in step.attempts), default=0.0), 2),
            **quality(done.paste(image), image, bg)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            image, bg, phrase = CASES[name]()
            out[name] = measure(image, bg, phrase, args.repeats, Path(tmp))
            print(name, out[name], flush=True)
    out["load_avg_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
