"""Labelled good/bad edits on real photos, built deterministically in code (issue 24).

Shared by ``bench/critic.py`` (precision/recall of the critic's "passed") and
``tests/test_independent.py`` (the offline instruction-following score). Every pair is a
scikit-image photo or a composite of them (the coffee cup cut out along its hand-drawn
polygon and pasted at known places; text lines drawn at known places) with an edit made
by the agent's own executor, on the right target (good) or on a wrong one (bad: the other
instance, every text region, a touching neighbour, nothing changed, the wrong direction).

Each ``Pair`` carries the mask the edit was made with (``used_mask``): the turn loop hands
its critic that mask, so a wrong-target edit arrives with a wrong mask and only checks that
do not trust it can catch it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np

from tests.perception_cases import load_cases, photo_by_name

#: long side of every composite (large enough for the detectors, small enough for CI)
SIDE = 960


@dataclass
class Pair:
    """One labelled before/after pair."""

    split: str            # "tune" or "held_out"
    name: str
    instruction: str
    before: np.ndarray
    after: np.ndarray
    good: bool
    kind: str             # "good", "wrong instance", "every text", "touching neighbour", …
    used_mask: np.ndarray | None   # the mask the edit was made with (None: whole photo)


@cache
def _cup() -> tuple[np.ndarray, np.ndarray]:
    """The coffee cup and its polygon mask, cropped to the polygon's box."""
    case = next(c for c in load_cases() if c.image_name == "coffee" and c.polygon)
    photo = photo_by_name("coffee")
    mask = case.truth_mask(photo.shape[:2])
    ys, xs = np.nonzero(mask)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    return photo[y0:y1, x0:x1].copy(), mask[y0:y1, x0:x1].copy()


def background(name: str, size: tuple[int, int] = (SIDE, SIDE * 2 // 3)) -> np.ndarray:
    """A scikit-image photo stretched to ``size`` (w, h)."""
    return cv2.resize(photo_by_name(name), size, interpolation=cv2.INTER_CUBIC)


def paste_cup(image: np.ndarray, at: tuple[int, int], height: int) -> np.ndarray:
    """Paste the cup (its polygon only) with its top-left at ``at``; return its mask."""
    cup, mask = _cup()
    scale = height / cup.shape[0]
    cup = cv2.resize(cup, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    m = cv2.resize(mask.astype(np.uint8), (cup.shape[1], cup.shape[0]),
                   interpolation=cv2.INTER_NEAREST) > 0
    x, y = at
    h, w = m.shape
    region = image[y:y + h, x:x + w]
    region[m] = cup[m]
    full = np.zeros(image.shape[:2], bool)
    full[y:y + h, x:x + w] = m
    return full


def draw_text(image: np.ndarray, text: str, at: tuple[int, int], scale: float) -> np.ndarray:
    """Draw white text with a dark outline at ``at`` (baseline left); return its box mask."""
    font = cv2.FONT_HERSHEY_DUPLEX
    thick = max(2, int(scale * 2))
    cv2.putText(image, text, at, font, scale, (20, 20, 20), thick + 4, cv2.LINE_AA)
    cv2.putText(image, text, at, font, scale, (250, 250, 250), thick, cv2.LINE_AA)
    (w, h), base = cv2.getTextSize(text, font, scale, thick + 4)
    mask = np.zeros(image.shape[:2], bool)
    x, y = at
    mask[max(0, y - h - 4):y + base + 4, max(0, x - 4):x + w + 4] = True
    return mask


def _edit(image: np.ndarray, instruction: str, mask: np.ndarray | None) -> np.ndarray:
    """The agent's own executor applies the instruction's (first) action on ``mask``."""
    from agent import executor
    from agent.brain.planner import get_planner

    plan = get_planner(name="rules").plan(instruction, has_mask=mask is not None,
                                     image_size=(image.shape[1], image.shape[0]))
    action = plan.actions[0]
    return executor.execute(image, action, mask).paste(image)


# --- the scenes -----------------------------------------------------------------------

def _two_cups(bg: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    image = background(bg)
    h = image.shape[0]
    left = paste_cup(image, (60, h // 4), h // 2)
    right = paste_cup(image, (image.shape[1] - 60 - int(h // 2 * 1.1), h // 4), h // 2)
    return image, left, right


def _cup_by_person(mirror: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The astronaut with the cup pasted touching her side (the photo mirrored for the
    tune split, so the two splits share no layout)."""
    image = cv2.resize(photo_by_name("astronaut"), (SIDE, SIDE), interpolation=cv2.INTER_CUBIC)
    person = np.zeros(image.shape[:2], bool)
    person[30:SIDE, 40:680] = True       # the hand-drawn box of "the person", scaled
    if mirror:
        image, person = np.ascontiguousarray(image[:, ::-1]), person[:, ::-1].copy()
        cup = paste_cup(image, (SIDE - 655 - 250, 420), 260)
    else:
        cup = paste_cup(image, (655, 520), 300)
    return image, cup, person


def _three_texts(bg: str) -> tuple[np.ndarray, list[np.ndarray]]:
    image = background(bg)
    w, h = image.shape[1], image.shape[0]
    masks = [draw_text(image, "SUMMER", (w // 3, 70), 2.0),
             draw_text(image, "LOUPE 2026", (40, h // 2 + 20), 1.6),
             draw_text(image, "sale", (w - 220, h - 40), 1.8)]
    return image, masks


def _grow(mask: np.ndarray, px: int) -> np.ndarray:
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * px + 1, 2 * px + 1))
    return cv2.dilate(mask.astype(np.uint8), kernel) > 0


Maker = Callable[[], Iterator[Pair]]


CUP_EDITS = ("make the {} cup blue", "remove the {} cup", "brighten the {} cup")


def _cups_pairs(split: str, bg: str, edits: tuple[str, ...] = CUP_EDITS) -> Iterator[Pair]:
    image, left, right = _two_cups(bg)
    for side, target, other in (("left", left, right), ("right", right, left)):
        name = f"{bg}-cups-{side}"
        for words in (e.format(side) for e in edits):
            yield Pair(split, name, words, image, _edit(image, words, target), True, "good",
                       target)
            yield Pair(split, name, words, image, _edit(image, words, other), False,
                       "wrong instance", other)
        words = f"make the {side} cup blue"
        yield Pair(split, name, words, image, image.copy(), False, "nothing changed", target)


def _text_pairs(split: str, bg: str) -> Iterator[Pair]:
    image, masks = _three_texts(bg)
    every = np.logical_or.reduce(masks)
    for words, target in (("blur the text at the top", masks[0]),
                          ("blur the text at the bottom", masks[2])):
        name = f"{bg}-text"
        # blurred until it no longer reads (``agent.brain.critic.legible``): the default
        # 4 px leaves these 40-px letters legible, and the agent's retry goes on to 12
        hidden = f"{words} by 12 px"
        yield Pair(split, name, words, image, _edit(image, hidden, target), True, "good",
                   target)
        yield Pair(split, name, words, image, _edit(image, hidden, every), False,
                   "every text", every)


def _neighbour_pairs(split: str) -> Iterator[Pair]:
    image, cup, person = _cup_by_person(split == "tune")
    for words in ("make the cup blue", "make the cup red"):
        yield Pair(split, "astronaut-cup", words, image, _edit(image, words, cup), True,
                   "good", cup)
        spill = cup | (_grow(cup, 60) & person)
        yield Pair(split, "astronaut-cup", words, image, _edit(image, words, spill), False,
                   "touching neighbour", spill)


def _whole_pairs(split: str, photos: tuple[str, ...]) -> Iterator[Pair]:
    for name in photos:
        image = photo_by_name(name)
        for words, bad in (("make the photo brighter", "make the photo darker"),
                           ("make the photo black and white", None),
                           ("make the whole photo warmer", "make the whole photo cooler")):
            yield Pair(split, name, words, image, _edit(image, words, None), True, "good",
                       None)
            after = _edit(image, bad, None) if bad else image.copy()
            yield Pair(split, name, words, image, after, False,
                       "wrong direction" if bad else "nothing changed", None)


SPLITS: dict[str, list[Callable[[], Iterator[Pair]]]] = {
    "tune": [lambda: _cups_pairs("tune", "rocket"),
             lambda: _text_pairs("tune", "rocket"),
             lambda: _neighbour_pairs("tune"),
             lambda: _whole_pairs("tune", ("coffee", "astronaut"))],
    "held_out": [lambda: _cups_pairs("held_out", "chelsea"),
                 lambda: _text_pairs("held_out", "coffee"),
                 lambda: _neighbour_pairs("held_out"),
                 lambda: _whole_pairs("held_out", ("chelsea", "rocket"))],
}


def pairs(split: str | None = None) -> Iterator[Pair]:
    """Every labelled pair of ``split`` (both when None), built on demand."""
    for name, makers in SPLITS.items():
        if split in (None, name):
            for make in makers:
                yield from make()
