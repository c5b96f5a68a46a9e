"""The real-photo labelled set (issue 32): real photographs, hand-drawn masks, honest answers.

The photos come from Debian packages (``eval.realphotos``); the cases are data, one JSON
file per photo in ``data/realphotos/cases/``, each a list of cases:

* ``id`` (``<photo>__<name>``, unique), ``photo``, ``split`` (``tune`` / ``held_out``, fixed
  by photo: ``HELD_OUT``), ``phrase`` (what the user names), ``expect`` (``resolved``: the
  mask must match; ``ask``: a question is the right answer; ``refuse``: the thing is not in
  the photo), ``class`` (the failure class, ``CLASSES``), ``mask`` (resolved only: a
  1-bit PNG at the photo's native size in ``data/realphotos/masks/``), optional ``edits``
  (instructions naming the same thing, for the CLI run), ``how`` and ``note``.

``load_cases()`` refuses a malformed set (``SetError`` says what and where).
``evaluate(locate, cases)`` runs a localiser: per case the answer kind (``resolved`` /
``ask`` for an ambiguous answer / ``refuse`` for an unresolved one), the mask IoU, the
boundary F-score (2 px tolerance, at the resolution it ran at) and whether it is right: IoU
≥ ``RIGHT_IOU`` when resolved, else the expected kind. ``upscale_to=MP`` runs photos below
12 MP upscaled (Lanczos, mask scaled with it) to exercise the native-resolution path.
With ``offer=N`` a question is also judged as the user meets it: the best IoU among the
first N candidates it offers to click (``Outcome.offered``); ``summarise``'s ``one_click``
is the share of the cases naming a thing that are right, or asked with the right thing
among the candidates (one click from a right edit).
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from eval import realphotos
from eval.localization import mask_iou
from pipelines.localizers.base import Localization
from pipelines.localizers.steady import exposed, mirrored
from pipelines.upscale import lanczos

log = logging.getLogger(__name__)

SET_DIR = Path(__file__).with_name("data") / "realphotos"
CASES_DIR = SET_DIR / "cases"
MASKS_DIR = SET_DIR / "masks"

#: the held-out photos (REALSET.md: fixed once, never changed); every other photo is tune
HELD_OUT = frozenset({
    "dragonfly", "sunset", "christmas_table", "dogs_on_grass", "free", "friends",
    "castle_maintenon", "european_honey_bee", "butterfly", "voc_2011_000006",
    "street_truck", "after_the_rain", "wine", "kpa_skagen_2", "kpa_anne_helene"})
SPLITS = ("tune", "held_out")
EXPECTS = ("resolved", "ask", "refuse")
CLASSES = ("support", "sky_boundary", "focus", "touching", "logo_text", "people", "text",
           "small_clutter", "sky_water", "plain")
FIELDS = {"id", "photo", "split", "phrase", "expect", "class", "mask", "edits", "how",
          "note"}
#: mask IoU a resolved answer needs to be the right target (issue 32; not eval.localization's)
RIGHT_IOU = 0.8
#: boundary tolerance of the boundary F-score, in pixels
BOUNDARY_TOL = 2
#: the localiser's status → the answer kind the set speaks of
KIND = {"resolved": "resolved", "ambiguous": "ask", "unresolved": "refuse"}
#: photos at or above this size run at their own size in the upscaled mode
BIG_MP = 12.0


class SetError(ValueError):
    """The labelled set is malformed; the message names the file and the case."""


@dataclass(frozen=True)
class RealCase:
    """One phrase on one real photo and the answer it must get (module doc)."""

    id: str
    photo: str
    split: str
    phrase: str
    expect: str
    cls: str
    mask: str | None = None
    edits: tuple[str, ...] = ()
    how: str = ""
    note: str = ""

    def truth(self) -> np.ndarray | None:
        """The true mask (bool, native size) or None when the case names no mask."""
        return load_mask(self.mask) if self.mask else None


def _check(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise SetError(f"{where}: {what}")


def _parse(row: object, where: str) -> RealCase:
    _check(isinstance(row, dict), where, "a case must be a JSON object")
    unknown = set(row) - FIELDS
    _check(not unknown, where, f"unknown field(s) {sorted(unknown)}")
    for key in ("id", "photo", "split", "phrase", "expect", "class"):
        _check(isinstance(row.get(key), str) and row[key].strip() != "", where,
               f"'{key}' must be a non-empty string")
    where = f"{where} ({row['id']})"
    _check(row["split"] in SPLITS, where, f"unknown split {row['split']!r}")
    _check(row["expect"] in EXPECTS, where, f"unknown expect {row['expect']!r}")
    _check(row["class"] in CLASSES, where, f"unknown class {row['class']!r}")
    _check(row["id"].startswith(row["photo"] + "__"), where, "id must start with '<photo>__'")
    want = "held_out" if row["photo"] in HELD_OUT else "tune"
    _check(row["split"] == want, where, f"photo {row['photo']} is in split {want}")
    if row["expect"] == "resolved":
        _check(row.get("mask") == f"{row['id']}.png", where, "a resolved case needs "
               "'mask': '<id>.png'")
    else:
        _check("mask" not in row, where, "only a resolved case has a mask")
    edits = row.get("edits", [])
    _check(isinstance(edits, list) and all(isinstance(e, str) and e.strip() for e in edits),
           where, "'edits' must be a list of instructions")
    return RealCase(row["id"], row["photo"], row["split"], row["phrase"], row["expect"],
                    row["class"], row.get("mask"), tuple(edits), str(row.get("how", "")),
                    str(row.get("note", "")))


def parse_file(path: Path) -> list[RealCase]:
    """The cases of one photo's file, validated (except the mask pixels: ``validate``)."""
    try:
        rows = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SetError(f"{path.name}: {exc}") from exc
    _check(isinstance(rows, list), path.name, "must hold a JSON list of cases")
    cases = [_parse(row, f"{path.name}[{i}]") for i, row in enumerate(rows)]
    for case in cases:
        _check(case.photo == path.stem, path.name, f"case {case.id} names photo {case.photo}")
    return cases


def validate(cases: list[RealCase], check_masks: bool = True) -> None:
    """Refuse duplicate ids, unknown photos, a split that varies within a photo, missing
    masks and masks of another size than their photo (``SetError``)."""
    table = realphotos.catalogue()
    seen: set[str] = set()
    splits: dict[str, str] = {}
    for case in cases:
        _check(case.id not in seen, case.id, "duplicate id")
        seen.add(case.id)
        _check(case.photo in table, case.id, f"unknown photo {case.photo}")
        _check(splits.setdefault(case.photo, case.split) == case.split, case.id,
               "split differs within the photo")
        if check_masks and case.mask:
            path = MASKS_DIR / case.mask
            _check(path.is_file(), case.id, f"mask {case.mask} missing")
            with Image.open(path) as img:
                photo = table[case.photo]
                _check(img.size == (photo.width, photo.height), case.id,
                       f"mask is {img.size}, photo is {(photo.width, photo.height)}")


def load_cases(split: str | None = None, *, folder: Path = CASES_DIR,
               check_masks: bool = True) -> list[RealCase]:
    """Every case of the set (one split, or all), validated; ``SetError`` when malformed."""
    if split is not None and split not in SPLITS:
        raise SetError(f"unknown split {split!r}")
    cases = [c for path in sorted(folder.glob("*.json")) for c in parse_file(path)]
    validate(cases, check_masks)
    return [c for c in cases if split is None or c.split == split]


def case(case_id: str, *, check_masks: bool = True) -> RealCase:
    """The case ``case_id`` of either split; ``SetError`` when there is none."""
    for found in load_cases(check_masks=check_masks):
        if found.id == case_id:
            return found
    raise SetError(f"no case {case_id!r} in the set")


def load_mask(name: str) -> np.ndarray:
    """A mask of the set as a bool array (white = the named thing)."""
    with Image.open(MASKS_DIR / name) as img:
        return np.asarray(img.convert("L")) > 127


def save_mask(mask: np.ndarray, name: str) -> Path:
    """Write a bool mask as an optimised 1-bit PNG in the set's mask folder."""
    MASKS_DIR.mkdir(parents=True, exist_ok=True)
    path = MASKS_DIR / name
    Image.fromarray(np.asarray(mask, bool)).convert("1").save(path, optimize=True)
    return path


@lru_cache(maxsize=2)
def photo(pid: str) -> np.ndarray:
    """A photo of the set at native size (read-only, the last two cached)."""
    image = realphotos.load(pid)
    image.setflags(write=False)
    return image


def case_shot(case_id: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A case's photo as shot (read-only) and its true mask (None for ask/refuse)."""
    found = case(case_id)
    return photo(found.photo), found.truth()


def case_at(case_id: str, side: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A case's photo shrunk to ``side`` px on its long side (area average) and its true
    mask at that size (nearest), for tests that need a real photo but not its pixels."""
    image, truth = case_shot(case_id)
    image = image[..., :3]
    k = side / max(image.shape[:2])
    return _resized(image, truth, (round(image.shape[1] * k),
                                          round(image.shape[0] * k)))


def case_printed(case_id: str, how: str | None) -> tuple[np.ndarray, np.ndarray | None, str]:
    """A case's photo, true mask and phrase as shot (``how`` None) or on another print
    (``printed``: "flip", "gamma0.8", ...)."""
    found = case(case_id)
    image, truth = photo(found.photo), found.truth()
    if how is None:
        return image, truth, found.phrase
    return printed(image, truth, found.phrase, how)


def _resized(image: np.ndarray, mask: np.ndarray | None, size: tuple[int, int]
             ) -> tuple[np.ndarray, np.ndarray | None]:
    """The photo at ``size`` (area average) and its mask with it (nearest)."""
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    if mask is None:
        return small, None
    return small, cv2.resize(mask.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0


# ----------------------------------------------------------------------- measures


def boundary(mask: np.ndarray) -> np.ndarray:
    """The mask's boundary pixels: inside, with a 4-neighbour outside (the frame's edge
    is not a boundary)."""
    m = np.asarray(mask, np.uint8)
    inner = cv2.erode(m, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_REPLICATE)
    return (m > 0) & (inner == 0)


def boundary_f(found: np.ndarray | None, truth: np.ndarray, tol: int = BOUNDARY_TOL) -> float:
    """Boundary F-score: the share of each boundary within ``tol`` px of the other's,
    combined harmonically (1 when both masks are empty of boundary, 0 when one is)."""
    if found is None:
        return 0.0
    b_found, b_truth = boundary(found), boundary(truth)
    n_found, n_truth = int(b_found.sum()), int(b_truth.sum())
    if n_found == 0 or n_truth == 0:
        return float(n_found == n_truth)
    near_truth = cv2.distanceTransform((~b_truth).astype(np.uint8), cv2.DIST_L2, 5) <= tol
    near_found = cv2.distanceTransform((~b_found).astype(np.uint8), cv2.DIST_L2, 5) <= tol
    precision = np.count_nonzero(b_found & near_truth) / n_found
    recall = np.count_nonzero(b_truth & near_found) / n_truth
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def upscale_factor(width: int, height: int, target_mp: float) -> float:
    """How much a photo is enlarged to reach ``target_mp`` (1 when it is >= ``BIG_MP``);
    the result stays within 12–20 MP."""
    mp = width * height / 1e6
    if mp >= BIG_MP:
        return 1.0
    return math.sqrt(min(max(target_mp, 12.0), 20.0) / mp)


def upscaled(image: np.ndarray, mask: np.ndarray | None, target_mp: float
             ) -> tuple[np.ndarray, np.ndarray | None]:
    """The photo upscaled by ``upscale_factor`` (Lanczos-4) and the mask with it
    (bilinear, then thresholded at one half)."""
    k = upscale_factor(image.shape[1], image.shape[0], target_mp)
    if k == 1.0:
        return image, mask
    size = (round(image.shape[1] * k), round(image.shape[0] * k))
    big = lanczos(image, size)
    if mask is None:
        return big, None
    soft = cv2.resize(mask.astype(np.float32), size, interpolation=cv2.INTER_LINEAR)
    return big, soft >= 0.5


#: other prints of a photo that show the same scene (``printed``): mirrored left to
#: right, brighter or darker mid-tones (gamma 0.8 / 1.25), a smaller copy (0.6 ×), and a
#: crop 0.6 × each side around the target (what else is in the frame changes: the main
#: subject, the detector's context; only for ``printable`` cases)
PRINTS = ("flip", "gamma0.8", "gamma1.25", "scale0.6", "crop0.6")
#: words whose meaning a crop may change (where a thing is, or what it is next to)
_PLACE_WORDS = re.compile(
    r"\b(?:left|right|top|bottom|middle|centre|center|upper|lower|corner|front|back|behind|"
    r"above|below|under|over|near|next|beside|between|by|held|holding|on|in|at|first|"
    r"second|third|last|biggest|largest|smallest|tallest|far|farthest|closest|nearest|"
    r"it|its|other)\b")


def printable(case: RealCase, how: str | None) -> bool:
    """Whether ``printed(…, how)`` keeps a case's answer: a crop keeps only a resolved
    case whose words name no place or neighbour and whose whole target fits the window
    (an ask case may lose the look-alikes that made it one)."""
    if how is None or not how.startswith("crop"):
        return True
    if case.expect != "resolved" or _PLACE_WORDS.search(case.phrase.lower()):
        return False
    truth = case.truth()
    if truth is None or not truth.any():
        return False
    k = float(how[4:])
    ys, xs = np.nonzero(truth)
    return bool(np.ptp(ys) + 1 <= k * truth.shape[0] and np.ptp(xs) + 1 <= k * truth.shape[1])


def _window(size: int, k: float, low: int, high: int) -> tuple[int, int]:
    """A window of ``k * size`` px along one side, centred on ``low..high``, in the frame."""
    span = max(1, round(k * size))
    start = int(np.clip(round((low + high) / 2 - span / 2), 0, size - span))
    return start, start + span


def printed(image: np.ndarray, mask: np.ndarray | None, phrase: str, how: str
            ) -> tuple[np.ndarray, np.ndarray | None, str]:
    """Another print of a case (one of ``PRINTS``): the photo, its mask and the phrase
    ("left" and "right" swap in a mirror image). A localiser that is right on a photo
    but says "found" on a wrong answer on another print of it is right by luck."""
    if how == "flip":
        flipped, words = mirrored(image, phrase)
        return flipped, None if mask is None else np.ascontiguousarray(mask[:, ::-1]), words
    if how.startswith("gamma"):
        return exposed(image, float(how[5:])), mask, phrase
    if how.startswith("scale"):
        k = float(how[5:])
        size = (max(1, round(image.shape[1] * k)), max(1, round(image.shape[0] * k)))
        return *_resized(image, mask, size), phrase
    if how.startswith("crop"):
        k = float(how[4:])
        h, w = image.shape[:2]
        if mask is not None and mask.any():
            ys, xs = np.nonzero(mask)
            (y0, y1), (x0, x1) = (_window(h, k, ys.min(), ys.max()),
                                  _window(w, k, xs.min(), xs.max()))
        else:
            (y0, y1), (x0, x1) = _window(h, k, 0, h - 1), _window(w, k, 0, w - 1)
        return (np.ascontiguousarray(image[y0:y1, x0:x1]),
                None if mask is None else np.ascontiguousarray(mask[y0:y1, x0:x1]), phrase)
    raise ValueError(f"unknown print {how!r}: one of {', '.join(PRINTS)}")


# ----------------------------------------------------------------------- evaluate


@dataclass
class Outcome:
    """How a localiser did on one case (``found`` is the resolved mask, kept only when
    ``keep_masks``)."""

    case: RealCase
    kind: str
    iou: float
    bf: float
    right: bool
    ms: float
    reason: str
    size: tuple[int, int] = (0, 0)
    found: np.ndarray | None = field(default=None, repr=False)
    #: a question's best IoU among the candidates it offers (0 when none or not measured)
    offered: float = 0.0

    @property
    def silent(self) -> bool:
        """Answered as if sure (resolved) and wrong: what the user would not be told."""
        return self.kind == "resolved" and not self.right

    @property
    def one_click(self) -> bool:
        """Right, or a question offering the named thing among its candidates."""
        return self.right or (self.kind == "ask" and self.offered >= RIGHT_IOU)


def judge(case: RealCase, kind: str, found: np.ndarray | None,
          truth: np.ndarray | None) -> tuple[float, float, bool]:
    """(IoU, boundary F, right) of one answer; IoU and F are 0 unless both masks exist."""
    if case.expect != "resolved":
        return 0.0, 0.0, kind == case.expect
    if kind != "resolved" or found is None or truth is None:
        return 0.0, 0.0, False
    iou = mask_iou(found, truth)
    return iou, boundary_f(found, truth), iou >= RIGHT_IOU


def offered_iou(answer: Localization, truth: np.ndarray | None, offer: int) -> float:
    """The best IoU with ``truth`` among the first ``offer`` candidates (best score first)
    a question offers to click; 0 for an answer that is no question."""
    if answer.status != "ambiguous" or truth is None or offer <= 0:
        return 0.0
    shown = sorted(answer.masks, key=lambda c: -float(c.score))[:offer]
    return max((mask_iou(np.asarray(c.mask, bool), truth) for c in shown
                if np.asarray(c.mask).shape == truth.shape), default=0.0)


def evaluate(locate: Callable, cases: Iterable[RealCase], upscale_to: float | None = None,
             keep_masks: bool = False, print_as: str | None = None,
             offer: int = 0) -> list[Outcome]:
    """Run ``locate(image, phrase) -> Localization`` on every case.

    Args:
        locate: e.g. ``PerceptionLocalizer().locate``.
        cases: from ``load_cases``.
        upscale_to: None runs each photo at its own size; a number of megapixels runs the
            photos below 12 MP upscaled to it (within 12–20 MP), the mask with them.
        keep_masks: keep each resolved mask on its outcome (for overlays).
        print_as: run each case on another print of its photo (``printed``).
        offer: how many of a question's candidates the user is shown (``offered_iou``).

    Returns:
        One ``Outcome`` per case, in order.
    """
    out = []
    for case in cases:
        image, truth = photo(case.photo), case.truth()
        if upscale_to is not None:
            image, truth = upscaled(image, truth, upscale_to)
        phrase = case.phrase
        if print_as is not None:
            image, truth, phrase = printed(image, truth, phrase, print_as)
        start = time.perf_counter()
        answer = locate(image, phrase)
        ms = (time.perf_counter() - start) * 1000
        kind = KIND[answer.status]
        found = answer.union() if kind == "resolved" else None
        iou, bf, right = judge(case, kind, found, truth)
        out.append(Outcome(case, kind, round(iou, 3), round(bf, 3), right, round(ms, 1),
                           answer.reason, (image.shape[1], image.shape[0]),
                           found if keep_masks else None,
                           round(offered_iou(answer, truth, offer), 3)))
        log.info("%s %s IoU %.3f F %.3f %s", case.id, kind, iou, bf,
                 "right" if right else "WRONG")
    return out


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 3) if flags else 0.0


def summarise(outcomes: list[Outcome]) -> dict:
    """Per split: right share, mean IoU and boundary F of the resolved-expected cases,
    right/total per class, silent failures, the case count and the share of the
    resolved-expected cases one click from right (``Outcome.one_click``)."""
    keys = ("right_share", "mean_iou", "boundary_f", "by_class", "silent_failures", "cases",
            "one_click")
    out: dict = {k: {} for k in keys}
    for split in SPLITS:
        got = [o for o in outcomes if o.case.split == split]
        if not got:
            continue
        named = [o for o in got if o.case.expect == "resolved"]
        out["right_share"][split] = _share([o.right for o in got])
        out["mean_iou"][split] = round(float(np.mean([o.iou for o in named])), 3) if named \
            else None
        out["boundary_f"][split] = round(float(np.mean([o.bf for o in named])), 3) if named \
            else None
        classes: dict[str, list[bool]] = {}
        for o in got:
            classes.setdefault(o.case.cls, []).append(o.right)
        out["by_class"][split] = {k: f"{sum(v)}/{len(v)}" for k, v in sorted(classes.items())}
        out["silent_failures"][split] = sum(o.silent for o in got)
        out["cases"][split] = len(got)
        out["one_click"][split] = _share([o.one_click for o in named])
    return out


def overlay(image: np.ndarray, truth: np.ndarray | None, found: np.ndarray | None = None,
            side: int = 1200) -> np.ndarray:
    """A picture to look at: the photo fitted to ``side``, the truth tinted green with its
    outline, the found mask outlined (and tinted) magenta."""
    k = min(1.0, side / max(image.shape[:2]))
    size = (max(1, round(image.shape[1] * k)), max(1, round(image.shape[0] * k)))
    view = cv2.resize(image, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    for mask, colour in ((truth, (0, 255, 0)), (found, (255, 0, 255))):
        if mask is None:
            continue
        small = cv2.resize(mask.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
        view[small] = 0.6 * view[small] + 0.4 * np.array(colour, np.float32)
        edge = boundary(cv2.dilate(small.astype(np.uint8), np.ones((2, 2), np.uint8)) > 0)
        view[cv2.dilate(edge.astype(np.uint8), np.ones((2, 2), np.uint8)) > 0] = colour
    return np.clip(view, 0, 255).astype(np.uint8)
