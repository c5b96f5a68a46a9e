"""Does the extent of an edit match the thing the words name? (issue 32, part 4)

The detector route of ``agent.brain.independent`` asks whether the change lies on the
named thing; it cannot tell a mask grown over the bark the bird sits on, a mask cut in
half, or a sky that took the sea. Here the photo itself is the evidence, read at the
edge of what changed, never through the mask the edit was made with:

- **edge agreement** — a thing ends where the photo changes: along the border of the
  edited area the *before* photo should differ from one side to the other (colour or
  texture). Where both sides are the same stuff, the edit cut through a region: a grown
  mask runs through the support, a half mask cuts the thing, a moved mask sits on what
  surrounds it. Long runs of such cut border fail the check.
- **straight cuts** — a half mask is cut along a line through the thing's own interior:
  along a straight stretch of the border the photo's change across it is no stronger
  than beside it (a real edge peaks on the line). Such stretches fail the check, and so
  does one stretch through smooth stuff half the area's radius long: a thing does not
  end on a straight line in the middle of a flat region (``agent.brain.extent_lines``).
- **the background** — everything but the subject: the part left as it was must be
  outlined by edges of the photo, and an edit of the whole photo kept no subject.
- **plausible size** — a change that covers (nearly) the whole frame for a named thing
  is larger than any instance of it.
- **one kind of region** — for a sky, what changed must be smooth and lie above a
  horizon: a textured facade or the water below a shore line is another region.
- **relative words keep their size** — "a deeper blue", "bluer", "a bit brighter" must
  not drive the changed region's saturation to its limit (``agent.brain.extent_relative``).

The answer uses ``Independent`` (check name → True/False, with plain-words keep/fix and
the measures behind them); "cannot decide" is reported as such and never counted as passed.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import cv2
import numpy as np

from agent.brain.extent_lines import (
    SMOOTH_LENGTH,
    Stretch,
    flat_cut,
    layer_lines,
    smooth_cut,
    straight_share,
    straight_stretches,
)
from agent.brain.extent_relative import relative_applies, relative_size
from agent.brain.independent import Independent, named_label, work_copy
from agent.brain.work_copies import area_resize_in_box
from pipelines.arrays import channel_max
from pipelines.editors.objects import growth_limit
from pipelines.layers import mask_bbox
from pipelines.localizers.phrases import WHOLE, parse_phrase
from pipelines.operations import registry
from pipelines.operations.errors import OperationError

log = logging.getLogger(__name__)

#: long side of the work copy (the checks read regions, not detail)
SIDE = 512
#: a pixel counts as changed above this difference (0–255, any channel, work copy)
CHANGE_LEVEL = 6
#: the photo "differs across the border" above this distance of the side means (Lab ΔE)
EDGE_CONTRAST = 9.0
#: ... or when the local texture (gradient energy) of one side is this many times the other
TEXTURE_RATIO = 2.0
#: gaps in what changed up to this share of the mask's radius are bridged
BRIDGE = 0.06
#: the thing may end this share of the edited area's radius inside its border (a mask the
#: agent grew by ``pipelines.editors.objects.growth_limit``, a quarter of the object's)
GROWN_REACH = 0.2
#: an operation on a whole object grew its mask by up to a quarter of the object's radius
#: (``growth_limit``) over its soft edge and onto what lies past it: the thing's outline
#: lies somewhere in that band. A contour at one of these shares of the edited area's
#: radius inside its border that clearly follows the photo's edges (at most
#: ``OUTLINE_CUT`` of it through one region) is that outline, and its cut share counts: a
#: recoloured plane, lake, cloud or man ended 0.05-0.1 radii inside the grown border,
#: where the border and the contour at ``GROWN_REACH`` both ran through one region
#: (44-50 %) and this contour through one region for 6-24 %; the wrong masks a bar of
#: 0.4 let through read 33 % or more there. The straight cuts are read as before.
GROWN_STEPS, OUTLINE_CUT = (0.05, 0.1, 0.15), 0.25
#: below this share of its mask changed, an edit is judged by its mask
HIT = 0.5
#: the flood from the far side starts this share of the edit's radius away from it
FLOOD_REACH = 0.5
#: regions larger than this share of the frame are not flooded
FLOOD_AREA = 0.3
#: the core's flood may pass the edit's border by this share of its area
FLOODS = 0.5
#: share of the border that may run through one region before the extent fails
CUT_SHARE = 0.4
#: a single run of cut border this long (share of the border) is a cut through a region
CUT_RUN = 0.2
#: straight stretches with no edge along them may make up this share of the border
STRAIGHT_CUT = 0.12
#: a border that runs through one region for more than this share while a contour a third
#: to a half of the area's radius inside follows the photo's edges (its cut share under
#: ``INNER_CUT`` and under ``INNER_RATIO`` of the border's): the thing ends inside the
#: edited area, which was grown past it onto its surroundings
GROWN_PAST, INNER_CUT, INNER_RATIO = 0.2, 0.1, 0.4
INNER_DEPTHS = (0.3, 0.4, 0.5)
#: a change covering this share of the frame is no instance of a named thing (a sky may
#: fill more of it, and so may open water seen from above it: the narwhals' sea fills 90-94 %)
WHOLE_FRAME, WHOLE_SKY = 0.85, 0.95
#: the words for open water, which may fill the frame as a sky does
OPEN_WATER = ("sea", "ocean", "water")
#: smoothness of a sky: share of its pixels that may be textured (facade, foliage), read
#: this many px inside its outline (the texture is read over 7 px: the outline's own edge
#: made a grainy sky seen through leaves 38 % textured, 29 % inside it)
SKY_TEXTURED, SKY_OUTLINE = 0.35, 4
SKY_WORDS = ("sky", "skies", "clouds")
#: an edit of the background leaves at least this share of the frame (the subject) as it was
KEPT_SUBJECT = 0.01
#: words that may name most of the frame
BACKGROUND = re.compile(r"\b(background|backdrop|surroundings|everything else|rest of)\b")
#: words that name the part of a region on one side of a line ("the left half of the
#: sky"): its border runs straight along that line by design ("the dog in the left half"
#: names a dog: its edit does not end on that line)
HALF = re.compile(r"^(?:the\s+)?(?:left|right|top|bottom|upper|lower)\s+hal(?:f|ves)\s+of\b")
#: checks whose failure means the edit's extent is wrong (the words were not followed)
EXTENT_CHECKS = ("extent", "plausible_size", "one_region")


def _fit(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """``mask`` at ``shape``: the pixels at least half covered (area interpolation; only
    the mask's box is read where the scale allows: the same answer bit for bit)."""
    m = np.asarray(mask)
    box = mask_bbox(m) if m.dtype == bool else None   # a bool mask's box: no copy made
    m = m.view(np.uint8) if m.dtype == bool else np.asarray(m, np.uint8)
    if m.shape == shape:
        return m > 0
    return area_resize_in_box(m, (shape[1], shape[0]), box if box else mask_bbox(m),
                              times=255) >= 128


def _phrase(action: Any) -> str:
    region = getattr(action, "region", None)
    return str(getattr(region, "phrase", "") or getattr(action, "target", "") or "").strip()


def _names_a_thing(action: Any) -> bool:
    region = getattr(getattr(action, "region", None), "type", None)
    phrase = _phrase(action)
    # a brushed area or a drawn box is the user's own extent: nothing to find again
    return bool(phrase) and getattr(region, "value", region) not in ("image", "mask", "box") \
        and (not WHOLE.search(parse_phrase(phrase).text) or _all_but(phrase))


def _all_but(phrase: str) -> bool:
    """"everything except the sky", "the whole photo but the dog": the whole frame less a
    named thing, which is the edit's subject, left as it was (judged as a background)."""
    said = parse_phrase(phrase)
    return said.exclude is not None and bool(WHOLE.search(said.text))


def _background_words(phrase: str) -> bool:
    """Whether ``phrase`` names everything but a subject (``BACKGROUND`` or ``_all_but``)."""
    return bool(BACKGROUND.search(phrase.lower())) or _all_but(phrase)


def _has(action: Any, flag: str) -> bool:
    """Whether ``action``'s operation declares ``flag`` (False for an unknown one)."""
    try:
        return flag in registry.get(str(getattr(action, "operation", "") or "")).flags
    except OperationError:   # an unknown or missing operation: no flags
        return False


def _tonal(action: Any) -> bool:
    """A tone or colour adjustment whose change follows each pixel's own value."""
    return _has(action, "tonal")


def extent_checks(before: np.ndarray, after: np.ndarray, action: Any,
                  used_mask: np.ndarray | None = None) -> Independent:
    """Judge the extent of ``after``'s change for ``action`` on the photo's own evidence.

    Args:
        before: the whole frame before the edit (uint8 RGB/RGBA).
        after: the whole frame after it, same size.
        action: the ``agent.actions.Action`` (its target words and instruction).
        used_mask: the mask the edit was made with (full size; None: read from the change).

    Returns:
        An ``Independent`` with the checks ``extent``, ``plausible_size``, ``one_region``
        and ``relative_size`` where they apply.
    """
    out = Independent()
    if before.shape[:2] != after.shape[:2] or not extent_applies(action):
        return out     # no check applies: not even the copies are needed
    words = _words(action)
    small_b, small_a = work_copy(before, SIDE), work_copy(after, SIDE)
    diff = channel_max(cv2.absdiff(small_b, small_a))
    changed = cv2.morphologyEx((diff > CHANGE_LEVEL).astype(np.uint8), cv2.MORPH_OPEN,
                               np.ones((3, 3), np.uint8)) > 0
    # the mask the edit was made with, at the work size (read once: it is 12 MP)
    used = _fit(used_mask, changed.shape) if used_mask is not None else None
    if changed.sum() < 20 and (used is None or not _tonal(action) or used.sum() < 20):
        # nothing changed: the operation's own check says so. A tone change aimed at stuff
        # already at its limit (white pins made brighter) barely shows; the area it was
        # aimed at is still the edit's extent, and is judged as such
        return out
    relative_size(out, small_b, small_a, changed, changed if used is None else used, words,
              action)
    if not _names_a_thing(action):
        return out
    phrase = _phrase(action)
    share = float(changed.mean())
    out.measures["extent_changed_share"] = round(share, 4)
    sky = any(w in phrase.lower().split() for w in SKY_WORDS)
    # the area aimed at counts where a tone change barely shows (white made brighter); an
    # operation on a whole object is handed its mask grown to the photo's edges, which on
    # a wide floor reached 90 % of the frame while the recolour changed 65 %
    masked = float(used.mean()) if used is not None and not _has(action, "object_edge") \
        else 0.0
    head = parse_phrase(phrase).text.split()[-1:]   # the noun: "the water", not "water drop"
    wide = sky or bool(head) and head[0] in OPEN_WATER
    limit = WHOLE_SKY if wide else WHOLE_FRAME
    if max(share, masked) >= limit and not _background_words(phrase):
        out.checks["plausible_size"] = False
        out.fix.append(f"{max(share, masked):.0%} of the photo was edited: far more than "
                       f"'{phrase}'")
        return out
    # what the edit changed (the mask handed over may be wider than what the operation
    # touched: an object mask grown for the edit's edge)
    region = _region_of(diff, changed) if changed.any() else changed
    if used is not None and not np.asarray(used_mask).all():
        # bridge the pixels an operation leaves as they were (black under "brighter",
        # grey under a recolour) without taking the unchanged rim of a grown mask
        k = max(3, round(BRIDGE * np.sqrt(used.sum() / np.pi)))
        near = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_CLOSE, _disc(k))
        region = _filled(used & (cv2.dilate(near, _disc(3)) > 0))
        if region.sum() < HIT * used.sum() or _tonal(action):
            # the operation left most of its target as it was (warmer on a pure red
            # ball, darker on a black shadow), or it moves each pixel by its own value
            # (a deeper blue leaves a grey patch of sky as it was, so what changed has
            # ragged inner borders that are no edge of anything): judge the area it was
            # aimed at
            region = _filled(used)
    if region.sum() < 20:
        return out
    # the phrase's last nouns, as the rules below were measured with: "the writing in the
    # sand" is strokes with edges of their own, judged like any thing (its head alone,
    # "writing", would read as a text box and leave its grown and moved masks unjudged)
    if named_label(parse_phrase(phrase), phrase, head=False) == "text":
        out.undecided["extent"] = "text is edited in its box, which has no edge of its own"
        return out
    if _background_words(phrase):
        # an object operation grew the mask over the subject's soft edge (``growth_limit``
        # at full size): the subject's outline lies that far out from what was left
        grow = 0 if not _has(action, "object_edge") or used is None else round(
            growth_limit(np.asarray(used_mask, bool)) * used.shape[1] / used_mask.shape[1])
        _background(out, small_b, used, phrase, grow)
        return out
    # an operation on a whole object works on its mask grown over the object's soft edge
    # (``object_edge``): the thing starts that far inside, and so does the flood's core
    grown = _has(action, "object_edge")
    _edges(out, small_b, region, phrase, sky, grown, read_inner=not grown)
    _floods(out, small_b, region, phrase,
            GROWN_REACH if grown and not _has(action, "removes_target") else 0.0)
    if sky:
        _one_sky(out, small_b, region, phrase)
    return out


def _background(out: Independent, small: np.ndarray, used: np.ndarray | None,
                phrase: str, grow: int = 0) -> None:
    """Everything but the subject: the part the edit was not aimed at is the subject, and
    its outline must follow edges of the photo (a half, grown or moved background mask
    cuts through the background or the subject). An edit aimed at the whole photo kept
    no subject. What changed is not read: where the background is already grey (or
    dark) it has ragged inner borders that are no edge of anything."""
    if used is None:
        out.undecided["extent"] = "the background is everything but the subject"
        return
    kept = _filled(~used)
    if grow > 0 and kept.any():
        kept = cv2.dilate(kept.astype(np.uint8), _disc(grow)) > 0
    if kept.mean() < KEPT_SUBJECT:
        out.checks["extent"] = False
        out.fix.append(f"the whole photo was edited for '{phrase}': the subject changed too")
        return
    _edges(out, small, kept, f"the subject '{phrase}' leaves out")


def _region_of(diff: np.ndarray, changed: np.ndarray) -> np.ndarray:
    """The edited area read from the change alone: where the change reaches half its
    typical strength (the middle of a feather), holes filled."""
    level = max(CHANGE_LEVEL, 0.5 * float(np.median(diff[changed])))
    return _filled(cv2.GaussianBlur(diff.astype(np.float32), (5, 5), 0) >= level)


def _filled(mask: np.ndarray) -> np.ndarray:
    """``mask`` closed a little and with its holes filled."""
    m = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    filled = np.zeros_like(m)
    cv2.drawContours(filled, contours, -1, 1, -1)
    return filled > 0


def _box(img: np.ndarray, r: int) -> np.ndarray:
    return cv2.boxFilter(img, -1, (2 * r + 1, 2 * r + 1), normalize=False,
                         borderType=cv2.BORDER_CONSTANT)


def _lab(small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lab (L 0–100, a/b centred) and the local gradient energy of L."""
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2LAB).astype(np.float32)
    lab[..., 0] *= 100.0 / 255.0
    lab[..., 1:] -= 128.0
    gx = cv2.Sobel(lab[..., 0], cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab[..., 0], cv2.CV_32F, 0, 1, ksize=3)
    return lab, np.sqrt(gx * gx + gy * gy)


def side_contrast(lab: np.ndarray, energy: np.ndarray, region: np.ndarray, r: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For each border pixel of ``region`` (not on the frame's edge): whether the photo
    differs across the border there (mean colour of the two sides within ``r`` px, or
    their texture). Returns ``(border, differs)`` (bool HxW each)."""
    h, w = region.shape
    inside = region.astype(np.float32)
    outside = 1.0 - inside
    n_in, n_out = _box(inside, r), _box(outside, r)
    ok = (n_in >= 3) & (n_out >= 3)
    dist = np.zeros((h, w), np.float32)
    for c in range(3):
        mi = _box(lab[..., c] * inside, r) / np.maximum(n_in, 1)
        mo = _box(lab[..., c] * outside, r) / np.maximum(n_out, 1)
        dist += (mi - mo) ** 2
    dist = np.sqrt(dist)
    ti = _box(energy * inside, r) / np.maximum(n_in, 1)
    to = _box(energy * outside, r) / np.maximum(n_out, 1)
    texture = (np.maximum(ti, to) + 1.0) / (np.minimum(ti, to) + 1.0)
    border = region & ~(cv2.erode(region.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0)
    frame = np.zeros((h, w), bool)
    frame[:2], frame[-2:], frame[:, :2], frame[:, -2:] = True, True, True, True
    border &= ~frame & ok
    differs = (dist >= EDGE_CONTRAST) | (texture >= TEXTURE_RATIO)
    return border, differs & border


def _disc(r: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


def edge_agreement(small: np.ndarray, region: np.ndarray,
                   lab: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The border of ``region`` and where the photo differs across it (the sides are read
    within a tenth of the region's equivalent radius, 2–7 px). ``lab``: ``_lab(small)``
    when the caller has it."""
    lab, energy = lab if lab is not None else _lab(small)
    radius = float(np.sqrt(float(region.sum()) / np.pi))
    return side_contrast(lab, energy, region, int(np.clip(0.1 * radius, 2, 7)))


def _cut(small: np.ndarray, region: np.ndarray, lab: tuple[np.ndarray, np.ndarray],
         layers: np.ndarray | None = None) -> tuple[float, float, int]:
    """Share of the border that runs through one region, its longest run, border size.
    ``layers``: pixels on a layer's border (``layer_lines``), which the photo changes
    across a few pixels off the line."""
    border, differs = edge_agreement(small, region, lab)
    if layers is not None:
        differs |= border & layers
    n = int(border.sum())
    cut = border & ~differs
    count, _, stats, _ = cv2.connectedComponentsWithStats(cut.astype(np.uint8), 8)
    run = float(stats[1:, cv2.CC_STAT_AREA].max()) / max(1, n) if count > 1 else 0.0
    return float(cut.sum()) / max(1, n), run, n


def _edges(out: Independent, small: np.ndarray, region: np.ndarray, phrase: str,
           sky: bool = False, grown: bool = False, read_inner: bool = False) -> None:
    """The border of what changed must follow edges in the photo (``_cut``) and must not
    be a straight line with no edge along it (``straight_stretches``). ``grown``: the
    operation works on the object's mask grown over its soft edge, whose border may lie on
    the surroundings: the border a grown reach inside is read too, and a contour in the
    grown band that clearly follows the photo's edges (``GROWN_STEPS``, ``OUTLINE_CUT``).
    ``read_inner``: a contour well inside that follows the photo's edges where the border
    does not fails (``_ends_inside``)."""
    lab = _lab(small)   # read by both cuts
    stretches = _stretches(small, region, phrase, sky)
    share, run, n = _cut(small, region, lab, layer_lines(stretches, region.shape))
    border = share      # the edited border's own (a grown reach inside may replace share)
    # the agent grows an object's mask to cover its soft edge (``growth_limit``: a quarter
    # of its radius): the thing may also end that far inside the edited area's border
    depth = round(GROWN_REACH * np.sqrt(float(region.sum()) / np.pi))
    inner = cv2.erode(region.astype(np.uint8), _disc(max(1, depth))) > 0
    deep = depth >= 1 and inner.sum() >= 20
    if deep:
        share_in, run_in, n_in = _cut(small, inner, lab)
        if n_in >= 12 and share_in < share:
            share, run = share_in, run_in
    if grown:   # the thing's outline, where a contour in the grown band clearly follows it
        for contour in _insides(region, GROWN_STEPS):
            share_in, run_in, n_in = _cut(small, contour, lab)
            if n_in >= 12 and share_in <= OUTLINE_CUT and share_in < share:
                share, run = share_in, run_in
    if n < 12:
        out.undecided["extent"] = "the edited area has no border inside the frame"
        return
    out.measures["extent_cut_share"] = round(share, 3)
    straight, smooth = straight_share(stretches), smooth_cut(stretches, sky)
    flat = flat_cut(stretches) if sky else 0.0
    if deep and grown:
        # the border or the contour a grown reach inside, whichever reads fewer cuts, each on
        # its own (the inner contour taken whole gave a tv the cuts of one inside its screen)
        inside = _stretches(small, inner, phrase, sky)
        straight = min(straight, straight_share(inside))
        smooth = min(smooth, smooth_cut(inside, sky))
        flat = min(flat, flat_cut(inside))
    out.measures.update({"extent_straight_cut": round(straight, 3), "extent_smooth_cut":
                         round(smooth, 3), "extent_longest_cut": round(run, 3),
                         "extent_flat_cut": round(flat, 3)})
    ok = bool(share <= CUT_SHARE and run <= CUT_RUN)
    fits = ok and straight <= STRAIGHT_CUT and smooth < SMOOTH_LENGTH and not flat
    # read only where it can decide: every other failure above names its own fix
    past = fits and read_inner and _ends_inside(small, region, lab, border)
    out.checks["extent"] = fits and not past
    if straight > STRAIGHT_CUT:
        out.fix.append(f"the edited area's border runs straight through '{phrase}' for "
                       f"{straight:.0%} of its length, with no edge in the photo along it "
                       "(a part of it cut off)")
    elif smooth >= SMOOTH_LENGTH or flat:   # a flat cut: straight across open sky
        out.fix.append(f"the edited area stops on a straight line in the middle of a smooth "
                       f"region or of one colour ({max(smooth, flat):.1f} times the area's "
                       f"radius long): '{phrase}' goes on past it")
    elif not ok:
        out.fix.append(f"the edited area does not end where '{phrase}' ends: "
                       f"{share:.0%} of its border runs through one region (grown onto "
                       "its surroundings, cut through it, or on the wrong thing)")
    elif past:
        out.fix.append(f"'{phrase}' ends inside the edited area: a contour well inside it "
                       "follows the photo's edges and the edited border does not (grown "
                       "onto its surroundings)")
    else:
        out.keep.append(f"the edit ends where '{phrase}' ends (the photo changes along "
                        f"{1 - share:.0%} of its border)")


def _stretches(small: np.ndarray, region: np.ndarray, phrase: str, sky: bool
               ) -> list[Stretch]:
    """The straight stretches of ``region``'s border read for ``phrase`` (``_off_division``).
    A sky ends on the highest of the photo's layer borders, the skyline or the horizon: a
    sky's level stretch on a layer border below that is a sky grown onto the sea or the
    beach (clouds_beach), so a sky's stretches are not read as layer borders."""
    stretches = _off_division(straight_stretches(small, region), phrase)
    if sky:
        for s in stretches:
            s.layer = False
    return stretches


def _off_division(stretches: list[Stretch], phrase: str) -> list[Stretch]:
    """``stretches`` less those along the line the words cut the region by: "the left
    half of the sky" ends on a vertical line through open sky, "the lower half" on a
    level one, as asked (a corner's quarter, both ways, is left as it is)."""
    said = parse_phrase(phrase)
    if not HALF.search(phrase.lower()) or (said.horizontal is None) == (said.vertical is None):
        return stretches
    steep = said.horizontal is not None     # a left or right half: a vertical line
    return [s for s in stretches if s.steep != steep]


def _insides(region: np.ndarray, shares: tuple[float, ...]) -> list[np.ndarray]:
    """``region`` eroded by each of ``shares`` of its equivalent radius (at least 1 px;
    those left with under 20 px are dropped)."""
    radius = np.sqrt(float(region.sum()) / np.pi)
    out = []
    for share in shares:
        core = cv2.erode(region.astype(np.uint8), _disc(max(1, round(share * radius)))) > 0
        if core.sum() >= 20:
            out.append(core)
    return out


def _ends_inside(small: np.ndarray, region: np.ndarray, lab: tuple[np.ndarray, np.ndarray],
                 share: float) -> bool:
    """Whether a contour ``INNER_DEPTHS`` of the area's radius inside its border follows
    the photo's edges far better than the border does (``GROWN_PAST``, ``INNER_CUT``,
    ``INNER_RATIO``): the thing ends there, and the edit was grown past it."""
    if share <= GROWN_PAST:
        return False
    for core in _insides(region, INNER_DEPTHS):   # deeper ones are only ever smaller
        inner, _, n = _cut(small, core, lab)
        if n >= 12 and inner < INNER_CUT and inner < INNER_RATIO * share:
            return True
    return False


def _floods(out: Independent, small: np.ndarray, region: np.ndarray, phrase: str,
            depth: float = 0.0) -> None:
    """Flood the photo (watershed on its colours) from the edited area's core and from
    everything farther than half its radius: where no edge stops the core's flood before
    the far basin's, the thing goes on past the edit (half a thing, or a region that
    continues) — the edit's own border plays no part in where the flood stops. ``depth``:
    the core starts this share of each part's radius inside it (a mask grown over the
    thing's soft edge lies partly on its surroundings)."""
    if region.mean() > FLOOD_AREA:
        return   # the far basin would be a thin strip along the frame: no evidence
    markers = np.zeros(region.shape, np.int32)
    near = np.zeros(region.shape, bool)
    count, parts = cv2.connectedComponents(region.astype(np.uint8))
    for i in range(1, count):   # each part of a plural edit at its own scale
        part = (parts == i).astype(np.uint8)
        radius = float(np.sqrt(part.sum() / np.pi))
        core = cv2.erode(part, _disc(max(2, round(depth * radius)))) > 0
        markers[core if core.any() else cv2.erode(part, _disc(2)) > 0] = 1
        near |= cv2.dilate(part, _disc(max(4, int(FLOOD_REACH * radius)))) > 0
    markers[~near] = 2
    if not (markers == 1).any() or not (markers == 2).any():
        return
    flood = cv2.watershed(cv2.GaussianBlur(small, (3, 3), 0), markers) == 1
    grows = float((flood & ~region).sum()) / max(1.0, float(region.sum()))
    out.measures["extent_floods"] = round(grows, 3)
    ok = grows <= FLOODS
    out.checks["extent"] = bool(out.checks.get("extent", True) and ok)
    if not ok:
        out.fix.append(f"'{phrase}' goes on past the edited area: nothing in the photo stops "
                       f"it there ({grows:.0%} more of the same region lies just outside)")


def _one_sky(out: Independent, small: np.ndarray, region: np.ndarray, phrase: str) -> None:
    words = set(phrase.lower().split())
    if "clouds" in words and not words & {"sky", "skies"}:
        # a sky is smooth, its clouds are not: their puffs and rims, and the branches
        # they are seen through, read 67-73 % textured, so texture tells no facade apart
        out.undecided["one_region"] = "clouds are textured: their texture tells nothing"
        return
    gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32),
                            (3, 3), 0)
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    energy = cv2.blur(np.sqrt(gx * gx + gy * gy), (7, 7))
    # the sky's own outline is an edge: read what lies inside it (sky seen through a
    # tree's leaves is mostly outline at the work size)
    core = cv2.erode(region.astype(np.uint8), _disc(SKY_OUTLINE)) > 0
    textured = float((energy[core if core.sum() >= 20 else region] > 24.0).mean())
    out.measures["sky_textured_share"] = round(textured, 3)
    ok = textured <= SKY_TEXTURED
    out.checks["one_region"] = ok
    if not ok:
        out.fix.append(f"{textured:.0%} of what changed for '{phrase}' is textured: a "
                       "facade, trees or ground, not sky")


def extent_applies(action: Any) -> bool:
    """Whether ``extent_checks`` has a check for ``action`` (it names a thing, or its
    relative words ask for a colour change); without one it answers nothing."""
    return _names_a_thing(action) or relative_applies(_words(action), action)


def _words(action: Any) -> str:
    """The instruction's words less the words naming the target: "the white sweater" or
    "the yellow loader" end in "-er" before the colour asked for, which is no relative
    word ("make the loader blue" is a recolour, not "a deeper blue")."""
    words = str(getattr(action, "instruction", "") or "").lower()
    phrase = _phrase(action).lower()
    return words.replace(phrase, " ") if phrase else words

