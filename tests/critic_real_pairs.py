"""Good and wrong-extent edits on real photographs, made through the agent's own layer path
(issue 32, part 4). Shared by ``bench/critic_real.py`` and ``tests/test_critic_extent.py``.

A *case* is a real photo, a phrase naming one thing in it, the thing's true mask and a
failure class. The masks come from the labelled set (``eval/data/realphotos/cases``, one
JSON list per photo with a native-resolution PNG per resolved case) and, where a photo
ships them, from labelme's human-drawn polygons (``eval.realphotos.polygons``).

From each case:

* **good** pairs — an operation (brighter, darker, a named colour, remove for small things,
  a deeper blue for a sky) applied by ``agent.executor`` inside the TRUE mask;
* **bad** pairs — the same instruction through a wrong extent: the mask grown onto what
  surrounds it, moved onto its neighbour or support, cut to one half, or the whole frame;
  and for "a deeper blue", the colour pushed to its limit inside the true mask;
* a removal inside the true mask is only good when its fill is: each removal's fill was
  judged by eye (``tests/data/critic_real_fills.json``); a fill that is visibly wrong (a
  ghost, copied or invented structure, a gap) is a bad pair of its own kind, "wrong fill",
  and an undecided one is left out.

The critic is handed the mask each edit was made with, as the turn loop does: only
checks that do not trust that mask can catch a wrong extent.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw

from eval import realphotos

log = logging.getLogger(__name__)

#: long side every photo is edited and judged at (fast; large enough for the detectors)
SIDE = 768
#: the labelled set
DATA_DIR = Path(realphotos.PHOTOS_FILE).parent
CASES_DIR = DATA_DIR / "cases"
MASKS_DIR = DATA_DIR / "masks"
#: the split is by photo and fixed (see the labelled set's notes)
HELD_OUT = frozenset({"dragonfly", "sunset", "christmas_table", "dogs_on_grass", "free",
                      "friends", "castle_maintenon", "european_honey_bee", "butterfly",
                      "voc_2011_000006", "street_truck", "after_the_rain", "wine",
                      "kpa_skagen_2", "kpa_anne_helene"})
#: the wrong extents are made with a case's first this many instructions (goods with all)
BAD_WORDS = 1
#: the wrong extents every case is edited through
BAD_KINDS = ("grown", "moved", "half", "whole frame", "to the limit", "wrong fill")
#: the kinds made through a wrong mask (the others are made inside the true mask)
MASK_KINDS = ("grown", "moved", "half", "whole frame")
#: removal fills judged by eye: case id -> {"fill": plausible|wrong|undecided, ...}
FILLS_FILE = Path(__file__).resolve().parent / "data" / "critic_real_fills.json"
#: ids whose fill no longer is the one judged (its fingerprint changed): look again
STALE_FILLS: set[str] = set()
#: ids of removals whose fill was never judged by eye: left out of both rates until it is
UNJUDGED_FILLS: set[str] = set()


@dataclass
class Case:
    """One named thing on a real photo and its true mask (at ``SIDE``)."""

    id: str
    photo: str
    split: str
    phrase: str
    cls: str
    mask: np.ndarray


@dataclass
class Pair:
    """One before/after pair: ``good`` when the edit's extent is right."""

    case: Case
    instruction: str
    kind: str            # "good" or one of BAD_KINDS
    before: np.ndarray
    after: np.ndarray
    used_mask: np.ndarray

    @property
    def good(self) -> bool:
        return self.kind == "good"

    @property
    def name(self) -> str:
        return f"{self.case.id}: {self.instruction} ({self.kind})"


@cache
def photo(pid: str) -> np.ndarray:
    return realphotos.load(pid, SIDE)


def _fit(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    if mask.shape == shape:
        return mask.astype(bool)
    small = cv2.resize(mask.astype(np.uint8) * 255, (shape[1], shape[0]),
                       interpolation=cv2.INTER_AREA)
    return small >= 128


# --- where the cases come from --------------------------------------------------------

def labelled_cases(ids: set[str] | None = None) -> list[Case]:
    """The labelled set's resolved cases (empty until it lands): all, or those of ``ids``
    (only their photos are loaded)."""
    out = []
    for path in sorted(CASES_DIR.glob("*.json")) if CASES_DIR.is_dir() else []:
        for row in json.loads(path.read_text()):
            if row.get("expect") != "resolved" or not row.get("mask"):
                continue
            if ids is not None and row["id"] not in ids:
                continue
            file = MASKS_DIR / row["mask"]
            if not file.is_file():
                continue
            image = photo(row["photo"])
            with Image.open(file) as img:
                mask = np.asarray(img.convert("L")) > 127
            split = "held_out" if row["photo"] in HELD_OUT else "tune"
            out.append(Case(row["id"], row["photo"], split, row["phrase"],
                            row.get("class", "plain"), _fit(mask, image.shape[:2])))
    return out


#: labelme photos: the class each one's polygons stand for
POLYGON_CLASSES = {"voc_2011_000003": "people", "voc_2011_000025": "touching",
                   "shelf_objects": "support", "voc_2011_000006": "people",
                   "street_truck": "plain"}
#: labels that name a support or a surface, not a thing to edit
NOT_THINGS = {"shelf", "road", "background"}


def polygon_cases() -> list[Case]:
    """One case per human-drawn polygon that covers 1–60 % of its photo; phrases are made
    from the labels alone (the same rule for every photo, held-out ones included)."""
    out = []
    for pid, cls in POLYGON_CLASSES.items():
        image = photo(pid)
        h, w = image.shape[:2]
        native = realphotos.catalogue()[pid]
        k = w / native.width
        found = []
        for label, points in realphotos.polygons(pid):
            if label in NOT_THINGS or label.startswith("_"):
                continue
            canvas = Image.new("L", (w, h), 0)
            ImageDraw.Draw(canvas).polygon([(x * k, y * k) for x, y in points], fill=255)
            mask = np.asarray(canvas) > 0
            if 0.01 <= mask.mean() <= 0.6:
                found.append((label, mask))
        for label, mask in found:
            same = [m for lb, m in found if lb == label]
            words = label.replace("_", " ")
            if len(words.split()) > 3:            # "highland 6539 self stick notes"
                words = " ".join(words.split()[-3:])
            if len(same) > 1:
                xs = [float(np.nonzero(m)[1].mean()) for m in same]
                x = float(np.nonzero(mask)[1].mean())
                words += " on the left" if x == min(xs) else \
                    " on the right" if x == max(xs) else " in the middle"
            out.append(Case(f"{pid}__{words.replace(' ', '_')}", pid,
                            "held_out" if pid in HELD_OUT else "tune", f"the {words}", cls,
                            mask))
    return out


def cases(split: str | None = None) -> list[Case]:
    """Every case of ``split`` (both when None): the labelled set's, else the polygons'."""
    found = labelled_cases()
    seen = {c.photo for c in found}
    found += [c for c in polygon_cases() if c.photo not in seen]
    return [c for c in found if split in (None, c.split)]


# --- the edits ------------------------------------------------------------------------

SKY_WORDS = ("sky", "clouds")


#: "a deeper blue" done right: more colour and a little less light, not a new colour
DEEPER = ({"operation": "saturation", "params": {"amount": 0.2}},
          {"operation": "brightness", "params": {"amount": -0.06}})


#: "a deeper blue" done wrong: the named colour at full strength (how the planner read it
#: before it read relative words as an adjustment)
LIMIT = {"color": "blue", "strength": 1.0, "lightness": 1.0}


def instructions(case: Case, image: np.ndarray) -> list[str]:
    """The instructions a case is edited with (good and bad use the same words)."""
    p = case.phrase
    if any(w in p.split() for w in SKY_WORDS):
        # "a deeper blue" is planned as a recolour until the planner reads relative words
        # as an adjustment (issue 32, part 5): its good edit is judged against that, so
        # only its wrong sizes are pairs here ("to the limit")
        return [f"make {p} darker", f"make {p} brighter", f"make {p} a deeper blue"]
    hue = _mean_hue(image, case.mask)
    colour = "red" if 90 <= hue <= 140 else "blue"
    out = [f"make {p} brighter", f"make {p} darker", f"make {p} {colour}"]
    if case.mask.mean() <= 0.08:
        out.append(f"remove {p}")
    return out


def _mean_hue(image: np.ndarray, mask: np.ndarray) -> float:
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV_FULL)
    return float(np.median(hsv[..., 0][mask])) * 360 / 256


def _edit(image: np.ndarray, instruction: str, mask: np.ndarray, *, right: bool = False
          ) -> np.ndarray:
    """The agent's own planner and executor apply the instruction on ``mask``; with
    ``right``, relative colour words are done as ``DEEPER`` (the size they ask for)."""
    from agent import executor  # noqa: PLC0415 — tests may import this without the agent
    from agent.actions import Action  # noqa: PLC0415 — same
    from agent.brain.planner import get_planner  # noqa: PLC0415 — same

    plan = get_planner(name="rules").plan(instruction, has_mask=True,
                                          image_size=(image.shape[1], image.shape[0]))
    action = plan.actions[0]
    if not right and "deeper" in instruction:   # the named colour at full strength
        action = Action(kind="replace", operation="recolor", target=action.target,
                        region=action.region, params=LIMIT)
    elif right and "deeper" in instruction:
        out = image
        for step in DEEPER:
            done = Action(kind="adjust", target=action.target, region=action.region, **step)
            out = executor.execute(out, done, mask).paste(out)
        return out
    return executor.execute(image, action, mask).paste(image)


def wrong_mask(mask: np.ndarray, kind: str) -> np.ndarray:
    """The true mask given a wrong extent (see the module doc)."""
    h, w = mask.shape
    ys, xs = np.nonzero(mask)
    bw, bh = int(np.ptp(xs)) + 1, int(np.ptp(ys)) + 1
    if kind == "whole frame":
        return np.ones_like(mask)
    if kind == "grown":
        r = max(6, int(0.35 * np.sqrt(mask.sum())))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        return cv2.dilate(mask.astype(np.uint8), kernel) > 0
    if kind == "half":
        out = mask.copy()
        if bw >= bh:
            out[:, int(xs.min() + bw // 2):] = False
        else:
            out[int(ys.min() + bh // 2):] = False
        return out
    if kind == "moved":   # onto what lies beside it (the side with more room), or below
        cx, cy = float(xs.mean()), float(ys.mean())
        dx = int(0.6 * bw) * (1 if cx < w / 2 else -1)
        dy = int(0.6 * bh) if bw < 0.3 * w else 0
        if bw >= 0.6 * w:
            dx, dy = 0, int(0.6 * bh) * (1 if cy < h / 2 else -1)
        m = np.float32([[1, 0, dx], [0, 1, dy]])
        return cv2.warpAffine(mask.astype(np.uint8), m, (w, h),
                              flags=cv2.INTER_NEAREST) > 0
    raise ValueError(kind)


@cache
def fill_verdicts() -> dict[str, dict]:
    """The removal fills judged by eye, by case id (``FILLS_FILE``)."""
    return json.loads(FILLS_FILE.read_text())["fills"]


def fill_seen(case: Case, after: np.ndarray) -> str:
    """How the true-mask removal's fill of ``case`` looked: "plausible", "wrong",
    "undecided" or "unjudged"; a fill unlike the one judged is logged and kept in
    ``STALE_FILLS`` (its verdict still holds until someone looks again), one never judged
    in ``UNJUDGED_FILLS`` (left out: counting it good unseen made the good rate up)."""
    row = fill_verdicts().get(case.id)
    if row is None:
        UNJUDGED_FILLS.add(case.id)
        log.warning("removal fill of %s was never judged by eye; left out", case.id)
        return "unjudged"
    print_ = hashlib.sha1(np.ascontiguousarray(after[case.mask]).tobytes()).hexdigest()[:12]
    if print_ != row["fill_sha1"]:
        STALE_FILLS.add(case.id)
        log.warning("removal fill of %s changed since it was judged (%s); look again",
                    case.id, row["fill"])
    return str(row["fill"])


def pairs(split: str | None = None, classes: tuple[str, ...] | None = None,
          kinds: tuple[str, ...] = ("good", *BAD_KINDS), bad_words: int = BAD_WORDS,
          ids: set[str] | None = None) -> Iterator[Pair]:
    """Every good and bad pair of ``split`` (built on demand); the wrong masks are edited
    with a case's first ``bad_words`` instructions (3: brighter, darker and the colour);
    ``ids`` keeps only those cases."""
    inside = "good" in kinds or "wrong fill" in kinds
    for case in cases(split):
        if (classes and case.cls not in classes) or (ids and case.id not in ids):
            continue
        image = photo(case.photo)
        for n, words in enumerate(instructions(case, image)):
            made = [k for k in ("good", *MASK_KINDS) if k in kinds or (k == "good" and inside)]
            for kind in made:
                if (kind != "good" and n >= bad_words) or "deeper" in words:
                    continue
                used = case.mask if kind == "good" else wrong_mask(case.mask, kind)
                if not used.any():
                    continue
                after = _edit(image, words, used, right=kind == "good")
                if kind == "good" and words.startswith("remove"):
                    seen = fill_seen(case, after)
                    kind = {"wrong": "wrong fill", "undecided": "",
                            "unjudged": ""}.get(seen, kind)
                if kind in kinds:
                    yield Pair(case, words, kind, image, after, used)
            if "deeper" in words and "to the limit" in kinds:
                # the words' colour pushed to its full strength inside the true mask
                yield Pair(case, words, "to the limit", image, _edit(image, words, case.mask),
                           case.mask)


def labelled_by_id(ids: set[str]) -> dict[str, Case]:
    """The labelled cases of ``ids`` by id (each must ship in the set)."""
    found = {c.id: c for c in labelled_cases(ids)}
    assert set(found) == ids   # the labelled set ships these cases
    return found


def extent_of(case: Case, words: str, used: np.ndarray) -> list:
    """The critic's extent checks on an edit of ``words`` made through ``used`` (the
    agent's own planner and executor)."""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action

    image = photo(case.photo)
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    return extent_checks(image, _edit(image, words, used, right=True), action, used)


def judged(case: Case, words: str, used: np.ndarray, *, right: bool) -> dict:
    """The critique the turn loop makes of ``words`` done through ``used`` (the agent's
    planner and executor; ``right``: as the edit of the true thing is made), as
    ``bench/critic_real.py`` builds and judges its pairs."""
    from agent.brain.judge import critique_images  # noqa: PLC0415 — the judge itself

    image = photo(case.photo)
    return critique_images(image, _edit(image, words, used, right=right), words, used)
