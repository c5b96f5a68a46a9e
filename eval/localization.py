"""The labelled localisation set (issue 23): real photos at 12–20 MP with exact answers.

Every case is built deterministically from the photos that ship offline (scikit-image,
scikit-learn and matplotlib samples) by ``render(case)``:

* **cut-outs** with exact outlines (the scikit-image logo's disc, its horse
  silhouette filled with the cat's fur, the coffee cup's hand-drawn polygon, the dahlia's
  hand-drawn ellipse, the rocket's hand-drawn polygon) pasted at known places onto another
  photo enlarged to 12–20 MP: the pasted outline is the answer, pixel for pixel;
* **skies** made of real sky crops (a hazy day over Beijing, the dusk over the launch pad)
  above a generated skyline of real tree crops, with a canopy over the top, a dark sky,
  water (the lake from the same photo) below a far shore, or a person cut-out standing in
  front: the sky's mask is known;
* **text** written at known places among other text, a watermark being its text and the
  mark beside it.

Cases and splits are data (``eval/data/localization/cases.json``): the split is by photo —
no photo of a ``held_out`` case is a background or cut-out of a ``tune`` case — and
thresholds were only ever looked at on ``tune``. ``score(found, truth)`` is the mask IoU.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from pipelines.editors.objects import growth_limit
from pipelines.layers import feather_for
from pipelines.localizers.base import Localization

CASES_FILE = Path(__file__).with_name("data") / "localization" / "cases.json"
FONT = cv2.FONT_HERSHEY_DUPLEX


@dataclass(frozen=True)
class Case:
    """One phrase on one generated photo, with what the answer must be.

    Attributes:
        id: unique, stable name.
        split: ``tune`` or ``held_out``.
        kind: the failure class it tests (``low_score``, ``non_coco``, ``not_found``,
            ``sky``, ``no_sky``, ``background``, ``text``, ``touching``, ``qualifier``).
        phrase: what the user types.
        expect: ``resolved`` (the mask must match ``truth``) or ``refused`` (anything but
            a resolved answer).
        spec: how to render it (see ``render``).
    """

    id: str
    split: str
    kind: str
    phrase: str
    expect: str
    spec: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def photos(self) -> set[str]:
        """Every source photo the case is made of (the split is by photo)."""
        names = {self.spec.get("background", "")}
        names |= {p["source"] for p in self.spec.get("paste", [])}
        names |= {self.spec.get("sky", ""), self.spec.get("ground", "")}
        if self.spec.get("canopy"):
            names.add(self.spec.get("canopy_source", ["china"])[0])
        if self.spec.get("water"):
            names.add("china")
        if self.spec.get("text"):
            names |= {t["mark"] for t in self.spec["text"] if t.get("mark")}
        return {n for n in names if n}


def load_cases(split: str | None = None) -> list[Case]:
    """The cases of ``cases.json`` (one split, or all)."""
    doc = json.loads(CASES_FILE.read_text())
    cases = [Case(c["id"], c["split"], c["kind"], c["phrase"], c.get("expect", "resolved"),
                  c["spec"]) for c in doc["cases"]]
    return [c for c in cases if split is None or c.split == split]


# ------------------------------------------------------------------------- photos


@lru_cache(maxsize=16)
def photo(name: str) -> np.ndarray:
    """A shipped sample photo as uint8 RGB (read-only, cached)."""
    from skimage import data

    if name in ("china", "flower"):
        # the file ``sklearn.datasets.load_sample_image`` reads, read the same way
        # (``np.asarray`` of the PIL image), without importing scikit-learn (~2 s of CPU
        # in every process that renders a case)
        from PIL import Image

        from eval.photos import photo_path  # only these two photos need it (see above)

        with Image.open(photo_path(name)) as img:
            image = np.asarray(img)
    elif name == "grace_hopper":
        import matplotlib.cbook as cbook
        import matplotlib.image as mimage

        image = mimage.imread(cbook.get_sample_data("grace_hopper.jpg"))
    elif name == "horse":
        image = np.where(data.horse()[..., None], 255, 0).astype(np.uint8)
    elif name == "motorcycle":
        image = data.stereo_motorcycle()[0]
    else:
        image = getattr(data, name)()
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.dstack([image] * 3)
    out = np.ascontiguousarray(image[..., :3]).astype(np.uint8)
    out.setflags(write=False)
    return out


#: hand-drawn outlines in the source photo's pixels (drawn by eye on a 50-px grid)
POLYGONS: dict[str, list[tuple[int, int]]] = {
    "cup": [(172, 75), (180, 45), (200, 28), (240, 18), (290, 15), (340, 18), (380, 28),
            (400, 42), (410, 65), (408, 100), (400, 150), (390, 195), (378, 232),
            (360, 262), (330, 282), (290, 290), (258, 288), (235, 297), (215, 303),
            (198, 292), (193, 260), (200, 237), (222, 228), (200, 205), (185, 170),
            (178, 120)],
    # the cameraman of scikit-image's "camera", without his tripod (his coat runs off the
    # photo's left and bottom edges: pasted against the frame's left and bottom borders)
    "cameraman": [(0, 250), (30, 210), (60, 170), (100, 130), (135, 108), (160, 105),
                  (170, 80), (190, 66), (215, 62), (245, 72), (262, 90), (270, 115),
                  (265, 135), (258, 140), (325, 138), (325, 158), (310, 170), (330, 180),
                  (330, 205), (305, 215), (300, 240), (300, 265), (280, 290), (240, 305),
                  (200, 318), (160, 345), (150, 360), (150, 511), (0, 511)],
    "rocket": [(322, 126), (330, 133), (334, 148), (336, 165), (336, 340), (309, 340),
               (309, 165), (311, 148), (315, 133)],
}


def cutout(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A cut-out object: its RGB crop and its exact bool mask (same size)."""
    if name == "logo":
        from skimage import data

        rgb = np.ascontiguousarray(np.asarray(data.logo())[..., :3])
        disc = np.zeros(rgb.shape[:2], np.uint8)     # the badge is a disc on white
        cv2.circle(disc, (250, 250), 239, 1, -1)
        return rgb, disc > 0
    if name == "horse":
        fur = photo("chelsea")
        sil = ~np.asarray(__import__("skimage").data.horse(), bool)
        tex = cv2.resize(fur[40:260, 120:400], (sil.shape[1], sil.shape[0]))
        tex = (tex.astype(np.float32) * 0.55).astype(np.uint8)      # a dark bay horse
        return tex, sil
    if name == "flower":
        src = photo("flower")
        mask = np.zeros(src.shape[:2], np.uint8)
        cv2.ellipse(mask, (307, 222), (137, 135), 0, 0, 360, 1, -1)
        x0, y0, x1, y1 = 165, 82, 450, 362
        return src[y0:y1, x0:x1].copy(), mask[y0:y1, x0:x1] > 0
    source = {"cup": "coffee", "rocket": "rocket", "cameraman": "camera"}[name]
    src = photo(source)
    poly = np.array(POLYGONS[name], np.int32)
    mask = np.zeros(src.shape[:2], np.uint8)
    cv2.fillPoly(mask, [poly], 1)
    x, y, w, h = cv2.boundingRect(poly)
    return src[y:y + h, x:x + w].copy(), mask[y:y + h, x:x + w] > 0


# ------------------------------------------------------------------------ render


@dataclass
class Rendered:
    """A case's image, the true mask of its answer (None for ``refused`` cases) and the
    masks of the other objects in it (those an edit of the answer must not touch)."""

    image: np.ndarray
    truth: np.ndarray | None
    others: list[np.ndarray] = field(default_factory=list)


def _canvas(name: str, size: tuple[int, int], crop: list[int] | None = None) -> np.ndarray:
    src = photo(name)
    if crop:
        x0, y0, x1, y1 = crop
        src = src[y0:y1, x0:x1]
    return cv2.resize(src, size, interpolation=cv2.INTER_CUBIC)


def _paste(image: np.ndarray, item: dict) -> np.ndarray:
    """Paste one cut-out (``source``, ``at`` = top-left as fractions of the canvas,
    ``height`` = fraction of the canvas height, ``flip``); returns its mask."""
    rgb, mask = cutout(item["source"])
    if item.get("flip"):
        rgb, mask = rgb[:, ::-1], mask[:, ::-1]
    h, w = image.shape[:2]
    k = item["height"] * h / mask.shape[0]
    size = (max(1, round(mask.shape[1] * k)), max(1, round(mask.shape[0] * k)))
    rgb = cv2.resize(np.ascontiguousarray(rgb), size, interpolation=cv2.INTER_CUBIC)
    soft = cv2.resize(np.ascontiguousarray(mask).astype(np.float32), size,
                      interpolation=cv2.INTER_LINEAR)
    x0, y0 = round(item["at"][0] * w), round(item["at"][1] * h)
    x1, y1 = min(w, x0 + size[0]), min(h, y0 + size[1])
    soft = soft[:y1 - y0, :x1 - x0]
    # soft·cut-out + (1 − soft)·photo, rounded: where soft is 1 that is the cut-out's
    # pixel and where it is 0 the photo's, exactly; only the rim in between is blended
    region, src = image[y0:y1, x0:x1], rgb[:y1 - y0, :x1 - x0]
    whole = soft >= 1
    np.copyto(region, src, where=whole[..., None])
    rim = (soft > 0) & ~whole
    part = soft[rim][:, None]
    blend = part * src[rim] + (1 - part) * region[rim].astype(np.float32)
    region[rim] = np.clip(blend + 0.5, 0, 255).astype(np.uint8)
    out = np.zeros((h, w), bool)
    out[y0:y1, x0:x1] = soft >= 0.5
    return out


def _profile(width: int, base: float, amp: float, seed: int) -> np.ndarray:
    """A smooth skyline height (fraction of the height) for every column."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 1, width)
    y = np.full(width, base)
    for f in (2, 5, 11, 23):
        y += amp / math.sqrt(f) * np.sin(2 * math.pi * (f * x + rng.random()))
    return y


def _sky_scene(spec: dict, size: tuple[int, int]) -> Rendered:
    """Sky crop above a tree skyline; optional canopy over the top, water below a shore.

    Each pixel is taken from one source (sky, ground, water, shore, canopy), each source
    rounded to uint8 as it would be at the end: picking among uint8 layers is the same
    picture as picking among float ones and rounding once, at a fraction of the memory."""
    w, h = size
    sky = _canvas(spec["sky"], size, spec["sky_crop"])
    if spec.get("dark"):
        sky = _u8(sky.astype(np.float32) * spec["dark"])
    ground = _canvas(spec["ground"], size, spec["ground_crop"])
    rows = np.arange(h)[:, None]
    line = (_profile(w, spec["horizon"], spec.get("amp", 0.04), spec.get("seed", 1))
            * h)[None, :]
    is_sky = rows < line
    image = np.where(is_sky[..., None], sky, ground)
    if spec.get("water"):            # the lake below a thin far shore: not sky
        shore = spec["water"]["shore"] * h
        top = spec["water"]["top"] * h
        water = _canvas("china", size, [330, 235, 560, 300])
        water = water[::-1]            # ripples as seen from the shore
        in_water = (rows >= top) & (rows < spec["water"]["bottom"] * h)
        image[in_water[:, 0]] = _u8(water[in_water[:, 0]].astype(np.float32)
                                    * spec.get("dark", 1.0))
        band = ((rows >= top - shore) & (rows < top))[:, 0]
        image[band] = _u8(_canvas("china", size, [0, 300, 200, 420])[band]
                          .astype(np.float32) * 0.8)
        is_sky &= rows < top - shore
    if spec.get("canopy"):           # trees over the top edge: the sky does not touch it
        edge = (_profile(w, spec["canopy"], 0.05, 7) * h)[None, :]
        leaves = rows < edge
        canopy = spec.get("canopy_source", ["china", [0, 340, 300, 427]])
        image = np.where(leaves[..., None], _canvas(canopy[0], size, canopy[1]), image)
        is_sky &= ~leaves
    image = cv2.GaussianBlur(image, (3, 3), 0)
    return Rendered(image, is_sky)


def _u8(values: np.ndarray) -> np.ndarray:
    """Float pixels clipped to 0–255 and truncated to uint8."""
    return np.clip(values, 0, 255).astype(np.uint8)


def _text(image: np.ndarray, item: dict) -> np.ndarray:
    """Write one text line (``text``, ``at`` = bottom-left fractions, ``height``
    fraction); with ``mark`` (a cut-out's name) a small mark pasted just left of it (a
    watermark is the text and its mark)."""
    h, w = image.shape[:2]
    scale = item["height"] * h / 22.0
    thick = max(1, round(scale * 1.6))
    (tw, th), base = cv2.getTextSize(item["text"], FONT, scale, thick)
    x, y = round(item["at"][0] * w), round(item["at"][1] * h)
    colour = tuple(int(c) for c in item.get("colour", (255, 255, 255)))
    cv2.putText(image, item["text"], (x, y), FONT, scale, colour, thick, cv2.LINE_AA)
    mask = np.zeros((h, w), bool)
    mask[max(0, y - th - thick):y + base + thick, max(0, x - thick):x + tw + thick] = True
    if item.get("mark"):
        side = th + base
        disc = {"source": item["mark"], "at": ((x - 1.3 * side) / w, (y - th) / h),
                "height": side / h}
        mask |= _paste(image, disc)
    return mask


def render(case: Case) -> Rendered:
    """The case's photo and the true mask of its answer (deterministic)."""
    spec = case.spec
    size = tuple(spec.get("size", (4240, 2832)))
    if spec.get("sky"):
        shot = _sky_scene(spec, size)
        if spec.get("paste"):        # people in front of the sky hide what they cover
            cover = [_paste(shot.image, item) for item in spec["paste"]]
            shot = Rendered(shot.image, shot.truth & ~np.logical_or.reduce(cover), cover)
        return shot
    image = _canvas(spec["background"], size, spec.get("crop"))
    masks = [_paste(image, item) for item in spec.get("paste", [])]
    for i, mask in enumerate(masks):        # a later cut-out hides what it covers
        for later in masks[i + 1:]:
            mask &= ~later
    texts = [_text(image, item) for item in spec.get("text", [])]
    if case.expect != "resolved":
        return Rendered(image, None, masks + texts)
    pick = spec.get("truth", "all")
    items = masks + texts
    if pick == "background":
        truth = ~np.logical_or.reduce(masks)
    elif pick == "all":
        truth = np.logical_or.reduce(items)
    else:
        truth = np.logical_or.reduce([items[i] for i in pick])
    if pick == "all":
        others = []
    elif pick == "background":
        others = masks            # the subjects a background edit must leave alone
    else:
        others = [m for i, m in enumerate(items) if i not in pick]
    return Rendered(image, truth, others)


def beyond_reach(truth: np.ndarray) -> np.ndarray:
    """The pixels an edit of ``truth`` must leave bit-identical: those farther from it
    than its feather plus the most its edge may grow (and 2 px of rounding)."""
    reach = feather_for(truth) + growth_limit(truth) + 2
    return cv2.distanceTransform((~truth).astype(np.uint8), cv2.DIST_L2, 5) > reach


def mask_iou(found: np.ndarray | None, truth: np.ndarray) -> float:
    """Intersection over union of two bool masks (0 when nothing was found)."""
    if found is None:
        return 0.0
    union = np.count_nonzero(found | truth)
    return float(np.count_nonzero(found & truth) / union) if union else 0.0


@dataclass
class Outcome:
    """How a localiser did on one case.

    ``clicked_iou`` / ``clicked_right``: the same once the user clicks the guess an
    unsure answer offers to confirm (``Localization.guess``, issue 32: what nothing here
    can verify is asked, its guess first; ``asked_with_guess``): the guess's IoU where it
    asked, else ``iou`` and ``right``. A refusal case stays judged as it was (no one
    clicks a guess for a thing that is not there)."""

    case: Case
    status: str
    iou: float
    right: bool
    ms: float
    reason: str
    clicked_iou: float = 0.0
    clicked_right: bool = False
    asked_with_guess: bool = False


#: mask IoU a resolved answer needs to count as the right target
RIGHT_IOU = 0.5


def offered(found: Localization) -> np.ndarray | None:
    """The guess an unsure answer offers to confirm (its first ``guess`` masks merged),
    or None when it offers none (a refusal, or a question with no guess: "which cup?")."""
    if found.status != "ambiguous" or not found.guess or not found.masks:
        return None
    return np.logical_or.reduce([np.asarray(m.mask, bool) for m in found.masks[:found.guess]])


def evaluate(locate, cases: list[Case]) -> list[Outcome]:
    """Run ``locate(image, phrase) -> Localization`` on every case.

    A ``resolved`` case is right when its answer's mask IoU reaches ``RIGHT_IOU``; a
    ``refused`` case is right when the answer is anything but ``resolved``. The
    ``clicked_`` figures judge the guess a question offers (``Outcome``) beside them.
    """
    import time

    out = []
    for case in cases:
        shot = render(case)
        start = time.perf_counter()
        found = locate(shot.image, case.phrase)
        ms = (time.perf_counter() - start) * 1000
        mask = found.union() if found.status == "resolved" else None
        guess = offered(found)
        if case.expect == "resolved":
            iou = mask_iou(mask, shot.truth)
            right = iou >= RIGHT_IOU
            clicked = mask_iou(guess, shot.truth) if mask is None else iou
        else:
            iou, right = 0.0, found.status != "resolved"
            clicked = 0.0
        out.append(Outcome(case, found.status, round(iou, 3), right, round(ms, 1),
                           found.reason, round(clicked, 3),
                           clicked >= RIGHT_IOU if case.expect == "resolved" else right,
                           guess is not None))
    return out
