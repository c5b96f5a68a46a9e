"""The parts of a landscape no detector has a class for: the land under the sky, the
ground along the bottom, the water, the clouds and the snow (issue 34: a noun reaches
what the eyes know through what it *is*).

WordNet says "hill" and "mountain" are landforms and "lake" is a body of water; "meadow",
"field", "cloud" and "snow" are named in ``KINDS``. Each kind is a region of the scene,
found on a copy of ``WORK_SIDE`` px:

* the **skyline** splits the photo into sky and land: the sky ``find_sky`` finds is sure
  sky; without one, the top rows are probably sky and the bottom rows probably land, and
  GrabCut learns their colours from there (a storm sky over dark hills). The land is
  everything under the skyline, column by column (trees that rise into the sky are land);
* **land** (hills, mountains): the land, less a lake or a field in front of it (asked
  when much land of the named colour went with the field: ``FRONT_NAMED``; without a
  colour word, when the field is much of it, ``FRONT_FOOT``: it may be their own foot);
* **ground** (a meadow, a field, a lawn): the land along the bottom edge that has the
  bottom rows' colour, read twice (``ground``: all in front of a straight far edge; the
  whole frame where no sky and no skyline split it);
* **water** (a lake, the sea): the smooth part of the land along the bottom edge, under
  a straight shoreline, blue or of the sky's tint (``water_sky``);
* **cloud**: pale regions above the skyline; **snow**: white patches ringed by land, not
  by sky (read on the finer copy ``find_sky`` sees: snow lies in small patches on rock).

A colour word narrows the region ("the green hills"). The answer is ``resolved`` only
when the skyline came from a sky that was found and the region is a plausible share of
the frame (clouds and snow never: a colour threshold); otherwise it is ``ambiguous``
(shown, not edited until the user agrees). The reason says how the noun was understood
("lake: a body of water; found the water under the skyline").
"""

from __future__ import annotations

import logging

import cv2
import numpy as np

from pipelines.localizers.answers import WEAK
from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.ground import (
    GROUND_AGREE,
    agreement,
    edged_ground,
    frame_ground,
    ground,
    grown_ground,
    in_front,
    under_the_land,
)
from pipelines.localizers.phrases import Phrase, select_candidates
from pipelines.localizers.refine import upsample_region
from pipelines.localizers.segment import colour_mask, hsv, largest_parts
from pipelines.localizers.sky import find_sky, sky_likelihood
from pipelines.localizers.water_sky import blue_share, not_water, sky_tint
from pipelines.perception.detectors import shrink

log = logging.getLogger(__name__)

#: long side of the copy the scene is read on
WORK_SIDE = 256
#: the copy ``find_sky`` runs on (its own work size)
SKY_SIDE = 512
#: nouns of each region kind that WordNet's categories do not give (``kind_of``)
KINDS: dict[str, str] = {
    **{w: "ground" for w in ("meadow", "meadows", "field", "fields", "grass", "lawn",
                             "lawns", "pasture", "pastures", "grassland", "prairie",
                             "farmland", "ground", "turf", "paddock")},
    **{w: "water" for w in ("water", "sea", "ocean", "lake", "lakes", "pond", "river",
                            "reservoir", "loch")},
    **{w: "land" for w in ("hill", "hills", "hillside", "mountain", "mountains",
                           "mountainside", "ridge", "slope", "slopes", "peak", "peaks",
                           "landscape", "land")},
    **{w: "cloud" for w in ("cloud", "clouds")},
    **{w: "snow" for w in ("snow", "snowfield", "snowfields", "snowdrift", "snowdrifts",
                           "snowbank", "snowbanks", "snowcap", "snowcaps", "snowpack")},
}
#: WordNet categories that are region kinds ("landform" is not one: it holds "drop",
#: "hole" and "cave" as well as hills, which ``KINDS`` names)
CATEGORY_KINDS = {"body of water": "water"}
#: what the chat calls each kind
KIND_WORDS = {"ground": "the ground along the bottom", "water": "the water under the "
              "skyline", "land": "the land under the skyline", "cloud": "the pale "
              "regions in the sky", "snow": "the white patches on the land"}
#: what each kind is, for the chat when WordNet gave no category ("meadow: ground cover")
KIND_NAMES = {"ground": "ground cover", "water": "a body of water", "land": "a landform",
              "cloud": "a cloud", "snow": "snow cover"}
#: the land must fill this share of the frame (else no skyline was read)
LAND_SHARE = (0.08, 0.95)
#: a region smaller than this share of the frame is no answer
MIN_SHARE = 0.003
#: a field or a lake in front is taken out of "the hills" up to this share of the land
#: (a larger one is the hills themselves, seen from them)
FRONT, FRONT_WATER = 0.5, 0.85
#: scores: a skyline under a sky found, and one read from a clear split without a sky
#: (an answer shown but not sure enough to edit gets ``answers.WEAK``)
SURE, FALLBACK = 0.6, 0.45
#: a skyline is clear when the land's colours stand this far from the
#: rest's (over their spread) and the skyline steps no more than this share of the height
#: between columns (tune: storm skies over hills 1.5-2.6 and 0.04; a dog on a floor 0.47)
CONTRAST, STEP = 1.4, 0.08
#: without a sky found, the land under a skyline read from colours alone is edited only
#: when the split is this clear: at 1.0-1.7 (a storm over hazy ridges, every print) GrabCut
#: took a grey cloud bank at the frame's side for land (150k px of "the mountains" beyond
#: the true ones), the same doubt that makes ``grey_sky`` ask; 2.2-2.9 drew the hills under
#: a storm sky right on every print
FALLBACK_CONTRAST = 2.0
#: the shore is this percentile of the columns' smooth-run tops (reflections of a
#: textured shore stop some runs short of it)
SHORE_PCT = 25
#: a shoreline's columns lie within this share of the height (interquartile)
FLAT = 0.07
#: water under a sky it reflects is not this dark (HSV value, mean)
DARK = 0.25
#: water mirrors what is above it this well, or is blue this much (share of it)
MIRROR, BLUISH = 0.15, 0.5
#: a mirror this clear is a shore even where the smooth run under it is not level
CLEAR_MIRROR = 0.3
#: still water under an unclear split: a pool that mirrors its shore this well (``reflection``
#: at its shore row) and whose Lab a-b mean lies this close to the sky found's is water
#: however the skyline splits: the shore it mirrors, not the skyline, draws its edge (tune:
#: the Golden Temple's pool under an overcast sky 0.68 / 8.7-12.1 on every print, IoU 0.98,
#: asked for a split of 1.1-1.4; the Sanchi stupa's orange dirt "mirrors" at 0.55 but
#: lies 64-66 from its blue sky; Schwerin's moat, IoU 0.27-0.61, 0.32 / 17-25; the
#: helicopter's sea, IoU 0.26, 0.04-0.14 / 7-11)
STILL_MIRROR, SKY_TINT = 0.5, 15.0
#: a smooth run under the skyline this much of it grass-green (hue 60-160°, saturation
#: 0.25 or more) and not blue is a lawn or a meadow unless it mirrors clearly: a meadow
#: under autumn trees "mirrored" them by 0.24 through its top edge's structure and was
#: edited as "the water" (0.83 of it green); the tune's sea and lake 0.07 and 0.01
GRASSY = 0.5
#: a colour word narrows a region when this share of it has the colour ("the green
#: hills" under olive light are still the hills)
TINTED = 0.4
#: "the green hills": green land taken off as the field in front of them, this share of
#: the hills' own or more, may be the hills' foot (tune, brightened: a green strip under
#: the hills read as the field, 0.34 as much as the hills taken, IoU 0.65 said found; as
#: shot 0.001, darker 0.04)
FRONT_NAMED = 0.15
#: ... and without a colour word, a field taken off this much of the land kept (tune: the
#: scree under Mount Rushmore 0.39 and the scrub under the Great Wall's hills 0.18, where the
#: land with them was right, IoU 0.99 and 0.88 against 0.71 and 0.77; the meadow under the
#: hills of 'this is not windows' 0.54, where the hills without it were right, 0.83 against
#: 0.54): where the hills end is the user's call, both readings offered
FRONT_FOOT = 0.15
#: hills, mountains, a ridge, a peak rise: under a skyline level to within ``LEVEL`` of
#: the height (the spread of its columns' tops, 5th to 95th percentile) the land is a
#: plain, and the hills named are at most a band along the horizon that the skyline did
#: not part from the plain (tune: a pasture under a thin band of hazy hills 0.02, taken
#: whole for "the distant hills"; hills and mountains 0.07-0.26): asked, not edited
RAISED = frozenset({"hill", "hills", "hillside", "mountain", "mountains", "mountainside",
                    "ridge", "peak", "peaks"})
LEVEL = 0.04
#: grass is green: "the grass", "the lawn", "the meadow", "the pasture" name a ground this
#: much of which is green (hue 50-170°, saturation 0.15 or more, not black) or they are
#: asked, the ground offered (tune, "make the grass greener": a forest in silhouette,
#: tidal sand and a lake at the bottom were edited as grass, 0-2 % green; the meadows
#: 96-98 %); "the field" and "the ground" may be ploughed, sand or snow
VERDANT = frozenset({"grass", "grasses", "lawn", "lawns", "meadow", "meadows", "pasture",
                     "pastures", "turf", "grassland", "grasslands", "paddock"})
GREEN = 0.3
#: snow lies in patches: a patch this small still counts
SPECK = 0.0002
#: clouds: saturation below this, or below this share of the sky's, and this bright
CLOUD_SAT, CLOUD_SHARE, CLOUD_VAL = 0.15, 0.3, 0.6
#: snow: nearly colourless and this bright
SNOW_SAT, SNOW_VAL = 0.08, 0.78
#: a white patch is snow on the land when less than this share of the ring of ``RING``
#: px (at ``SKY_SIDE``) round it is sky (tune: a cloud over a crest 0.68-1.0; snow
#: patches on rock 0-0.19, also where the mist round them was taken for sky)
RINGED, RING = 0.5, 2


def kind_of(noun: str, category: str) -> str:
    """The region kind a noun names ("" when it names none): ``KINDS`` for its last word
    (or the whole), else WordNet's ``category``."""
    words = noun.lower().split()
    for key in (noun.lower(), words[-1] if words else ""):
        if key in KINDS:
            return KINDS[key]
    return CATEGORY_KINDS.get(category, "")


def skyline(small: np.ndarray, sky: np.ndarray | None, holes: bool = True) -> np.ndarray:
    """The land under the skyline (bool, ``small``'s size): below the sky found (sure
    background) or, without one, what GrabCut tells from the top rows' colours. With
    ``holes`` the sky seen through it (between branches) is left out; without, the land
    is everything under the skyline (snow under a crest that ``find_sky`` took for a
    cloud in the sky)."""
    h, w = small.shape[:2]
    seed = np.full((h, w), cv2.GC_PR_BGD, np.uint8)
    seed[h // 2:] = cv2.GC_PR_FGD
    seed[-max(1, h // 12):] = cv2.GC_FGD
    if sky is not None and sky.any():
        seed[sky] = cv2.GC_BGD
    else:
        seed[:max(1, h // 12)] = cv2.GC_BGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)
    try:
        cv2.grabCut(cv2.cvtColor(small, cv2.COLOR_RGB2BGR), seed, None, bgd, fgd, 4,
                    cv2.GC_INIT_WITH_MASK)
        land = (seed == cv2.GC_FGD) | (seed == cv2.GC_PR_FGD)
    except cv2.error:
        land = np.zeros((h, w), bool)
        land[h // 2:] = True
    land = largest_parts(land, keep=0.05)
    # under the skyline, column by column: what rises into the sky from the land is land
    below = np.maximum.accumulate(land, axis=0)
    if sky is not None and holes:
        below &= ~sky
    return below


def separation(small: np.ndarray, land: np.ndarray) -> tuple[float, float]:
    """How clearly a skyline read without a sky splits the photo: (the Lab distance of
    the land's and the rest's mean colours over their pooled spread, the largest step of
    the skyline between neighbouring columns as a share of the height)."""
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    if land.all() or not land.any():
        return 0.0, 1.0
    a, b = lab[land], lab[~land]
    spread = float(np.sqrt((a.var(axis=0).sum() + b.var(axis=0).sum()) / 2)) + 1e-6
    contrast = float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0))) / spread
    h = land.shape[0]
    top = np.where(land.any(axis=0), land.argmax(axis=0), h)
    return contrast, float(np.abs(np.diff(top)).max()) / h


def water(small: np.ndarray, land: np.ndarray) -> np.ndarray:
    """The smooth part of the land along the bottom, under its shoreline (the highest
    row, per column, from which it runs smooth down to the bottom)."""
    smooth, _ = sky_likelihood(small)
    smooth = smooth & land
    h, w = land.shape
    # per column: how far up from the bottom the smooth run reaches (small gaps bridged)
    closed = cv2.morphologyEx(smooth.astype(np.uint8), cv2.MORPH_CLOSE,
                              np.ones((7, 3), np.uint8)) > 0
    run = np.flip(np.minimum.accumulate(np.flip(closed, 0), axis=0), 0)
    tops = np.where(run.any(axis=0), h - run.sum(axis=0), h)
    reach = (h - tops) / h
    if np.mean(reach > 0.05) < 0.6:        # water spans most of the width
        return np.zeros((h, w), bool)
    wet = tops[reach > 0.05]
    # still water mirrors its shore: the shore is the row about which it mirrors best
    # (searched between the runs' tops); without a mirror, a low percentile of the tops
    rows = range(int(np.percentile(wet, 5)), int(np.percentile(wet, 75)) + 1)
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32),
                            (5, 5), 0)     # read once for every row tried
    mirror, shore = max(((reflection(grey, r), r) for r in rows), default=(0.0, h))
    flat = float(np.percentile(wet, 75) - np.percentile(wet, 25))
    # a shore is level, a hill's foot is not; but a clear mirror is a shore even where
    # ripples break the smooth run (a tune lake, brightened by a gamma of 0.8: its hill
    # was taken with its reflection)
    if flat > FLAT * h and mirror < CLEAR_MIRROR:
        log.debug("water: no level shore (spread %.3f)", flat / h)
        return np.zeros((h, w), bool)
    if mirror < MIRROR:
        shore = int(np.percentile(wet, SHORE_PCT))
    out = np.zeros((h, w), bool)
    out[shore:] = True
    out &= land
    colours = hsv(small)
    if not out.any() or float(colours[..., 2][out].mean()) < DARK:
        return np.zeros((h, w), bool)       # a dark, smooth foot of a hill in shadow
    hue, sat = colours[..., 0][out], colours[..., 1][out]
    bluish = blue_share(small, out)
    grassy = float(((hue >= 60) & (hue <= 160) & (sat >= 0.25)).mean())
    log.debug("water: shore at %.2f, reflection %.2f, bluish %.2f, grassy %.2f", shore / h,
              mirror, bluish, grassy)
    # a lawn is smooth too, but green: water that is not blue must mirror its shore, and
    # clearly so when it is grass-green
    if bluish < BLUISH and (mirror < MIRROR or (grassy >= GRASSY and mirror < CLEAR_MIRROR)):
        return np.zeros((h, w), bool)
    return out


def reflection(grey: np.ndarray, shore: int) -> float:
    """How much the band under ``shore`` mirrors the band above it (normalised
    correlation of the grey bands' structure along the rows, the upper band flipped):
    still water reflects the shore. ``grey``: the work copy in grey, float, blurred 5×5."""
    h = grey.shape[0]
    band = min(shore, h - shore, max(4, int(0.15 * h)))
    if band < 4:
        return 0.0
    above = grey[shore - band:shore][::-1]
    below = grey[shore:shore + band]
    # the fine structure along the rows only (ramps of light are no mirror)
    a = above - cv2.blur(above, (15, 1))
    b = below - cv2.blur(below, (15, 1))
    return float((a * b).sum() / (np.sqrt((a * a).sum() * (b * b).sum()) + 1e-6))


def still_pool(small: np.ndarray, region: np.ndarray, sky: np.ndarray) -> tuple[float, float]:
    """How still water ``region`` is under ``sky`` (both bool, ``small``'s size): the
    reflection at its shore (the median of its columns' top rows) and the Lab a-b distance
    of its mean colour from the sky's (``STILL_MIRROR``, ``SKY_TINT``)."""
    if not region.any() or not sky.any():
        return 0.0, float("inf")
    cols = region.any(axis=0)
    shore = int(np.median(region.argmax(axis=0)[cols]))
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32),
                            (5, 5), 0)
    return reflection(grey, shore), sky_tint(small, region, sky)


def clouds(small: np.ndarray, land: np.ndarray, sky: np.ndarray | None) -> np.ndarray:
    """Bright pixels above the skyline far less saturated than the sky around them."""
    hsv_map = hsv(small)
    sat, val = hsv_map[..., 1], hsv_map[..., 2]
    above = ~land
    sky_sat = float(np.median(sat[sky])) if sky is not None and sky.any() else 0.4
    pale = (sat <= max(CLOUD_SAT, CLOUD_SHARE * sky_sat)) & (val >= CLOUD_VAL)
    return cv2.morphologyEx((above & pale).astype(np.uint8), cv2.MORPH_OPEN,
                            np.ones((3, 3), np.uint8)) > 0


def snow(work: np.ndarray, sky: np.ndarray) -> np.ndarray:
    """Near-white patches (grey rock is darker or tinted) that lie on the land: what
    surrounds each patch is mostly not sky (a cloud is ringed by sky, a snowfield by rock
    or grass, even where ``find_sky`` took the mist round a crest for sky). ``sky`` is
    at ``work``'s size: the sky found, or what lies above the skyline."""
    hsv_map = hsv(work)
    white = (hsv_map[..., 1] <= SNOW_SAT) & (hsv_map[..., 2] >= SNOW_VAL)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(white.astype(np.uint8), 8)
    out = np.zeros(white.shape, bool)
    ring_k = np.ones((2 * RING + 1, 2 * RING + 1), np.uint8)
    least = SPECK * white.size       # smaller specks are no answer (``_parts``)
    for i in range(1, count):
        x, y, bw, bh, area = stats[i]
        if area < least:
            continue
        x0, y0 = max(0, x - RING), max(0, y - RING)
        x1, y1 = x + bw + RING, y + bh + RING
        patch = labels[y0:y1, x0:x1] == i
        ring = (cv2.dilate(patch.astype(np.uint8), ring_k) > 0) & ~white[y0:y1, x0:x1]
        if ring.any() and float(sky[y0:y1, x0:x1][ring].mean()) < RINGED:
            out[y0:y1, x0:x1] |= patch
    return out


def _level(land: np.ndarray) -> float:
    """How far the skyline over ``land`` rises and falls: the spread (5th to 95th
    percentile) of its columns' top rows, as a share of the height."""
    h = land.shape[0]
    tops = np.where(land.any(axis=0), land.argmax(axis=0), h) / h
    return float(np.percentile(tops, 95) - np.percentile(tops, 5))


def _sky_level(sky: np.ndarray | None) -> float:
    """How far the lower edge of the sky found rises and falls (10th to 90th percentile
    of its columns' lowest sky rows, a share of the height; 1.0 without a sky): a sea's
    or a beach's horizon is level even where the land's top, read by GrabCut, wanders
    (tune, "make the mountains darker": a rough sea and a beach were edited as mountains,
    their land's tops spread 0.07-0.09, the sky's edge 0.00-0.01)."""
    if sky is None or not sky.any():
        return 1.0
    h = sky.shape[0]
    cols = sky.any(axis=0)
    lowest = (h - 1 - np.argmax(sky[::-1], axis=0))[cols] / h
    return float(np.percentile(lowest, 90) - np.percentile(lowest, 10))


def _green(small: np.ndarray, region: np.ndarray) -> float:
    """The share of ``region`` that is green as grass is (``VERDANT``, ``GREEN``)."""
    if not region.any():
        return 0.0
    colours = hsv(small)[region]
    hue, sat, val = colours[:, 0], colours[:, 1], colours[:, 2]
    return float(((hue >= 50) & (hue <= 170) & (sat >= 0.15) & (val >= 0.12)).mean())


def _parts(mask: np.ndarray, least: float = MIN_SHARE) -> list[np.ndarray]:
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    order = np.argsort(-stats[1:, cv2.CC_STAT_AREA]) + 1
    return [labels == i for i in order if stats[i, cv2.CC_STAT_AREA] >= least * mask.size]


#: a sky no colour test finds (a storm, a warm grey dusk): the region above a skyline read
#: without a sky, when this much of it is smooth, its mean Lab L is this much above the
#: land's and its median HSV saturation is below this (tune: two storm skies 0.95 / +26-45
#: / 0.07-0.13; an indoor wall above a dog is darker than the floor, a bokeh is saturated)
GREY_SMOOTH, GREY_BRIGHTER, GREY_SAT = 0.85, 15.0, 0.3


def grey_sky(rgb: np.ndarray) -> Localization:
    """The sky that ``find_sky`` does not find because it is neither blue, dusky nor pale:
    the smooth, colourless region brighter than the land above a skyline read from the
    photo's top and bottom colours. Always ``ambiguous``, the region offered as the guess
    to confirm (one click): a skyline read from colours alone can take a bank of bright
    mist between two ridges for sky (a storm over misty hills, tune); ``unresolved`` when
    the region above the skyline does not look like a sky at all."""
    no = Localization([], "unresolved", "no sky: no smooth blue, dusky, pale or grey region "
                      "lies above a skyline")
    small = shrink(rgb[..., :3], WORK_SIDE)
    land = skyline(small, None)
    above = ~land
    if not LAND_SHARE[0] <= float(land.mean()) <= LAND_SHARE[1] or above[0].mean() < 0.9:
        return no
    work = shrink(rgb[..., :3], SKY_SIDE)
    smooth = sky_likelihood(work)[0]
    smooth = cv2.resize(smooth.astype(np.uint8), land.shape[::-1],
                        interpolation=cv2.INTER_AREA) > 0
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    brighter = float(lab[..., 0][above].mean() - lab[..., 0][land].mean())
    sat = float(np.median(hsv(small)[..., 1][above]))
    smooth_share = float(smooth[above].mean())
    if smooth_share < GREY_SMOOTH or brighter < GREY_BRIGHTER or sat > GREY_SAT:
        return no
    contrast, step = separation(small, land)
    clear = contrast >= CONTRAST and step <= STEP
    mask = upsample_region(rgb, above)
    cand = Candidate(mask, SURE if clear else WEAK, "sky", "scene:grey-sky",
                     {"size": round(float(above.mean()), 3), "position": 1.0})
    said = (f"found a grey sky above the skyline ({float(above.mean()):.0%} of the frame, "
            f"{smooth_share:.0%} smooth, {brighter:.0f} L brighter than the land; "
            f"{'a clear' if clear else 'an unclear'} split, contrast {contrast:.1f})")
    return Localization([cand], "ambiguous", f"{said}; is the first one the sky? click it "
                        "to confirm, or brush it", candidates=[cand], guess=1)


def any_sky(rgb: np.ndarray) -> Localization:
    """``find_sky``'s answer, or when it finds none, ``grey_sky``'s (a storm, a warm grey
    dusk: neither blue nor pale)."""
    found = find_sky(rgb)
    return grey_sky(rgb) if found.status == "unresolved" else found


def find_region(rgb: np.ndarray, kind: str, parsed: Phrase, noun: str,
                understood: str = "") -> Localization:
    """The ``kind`` region (module doc) of ``rgb`` at full resolution.

    Args:
        rgb: uint8 (H, W, 3).
        kind: ``ground``, ``water``, ``land``, ``cloud`` or ``snow`` (``kind_of``).
        parsed: the phrase's cues (colours, size, place and plural words choose).
        noun: the user's noun, as the answer names it.
        understood: how the lexicon read the noun ("lake: a body of water"), for the chat.
    """
    small = shrink(rgb[..., :3], WORK_SIDE)
    h, w = small.shape[:2]
    work = shrink(rgb[..., :3], SKY_SIDE)
    found_sky = find_sky(work)
    sky = None
    if found_sky.status == "resolved" and found_sky.masks:
        sky = cv2.resize(found_sky.masks[0].mask.astype(np.uint8), (w, h),
                         interpolation=cv2.INTER_NEAREST) > 0
    land = skyline(small, sky)
    share = float(land.mean())
    lead = f"{understood or f'{noun}: {KIND_NAMES[kind]}'}; "
    if not LAND_SHARE[0] <= share <= LAND_SHARE[1]:
        return Localization([], "unresolved", f"{lead}no skyline to find {KIND_WORDS[kind]}"
                            f" by (the land would be {share:.0%} of the frame); paint it "
                            "with the brush")
    contrast, step = separation(small, land)
    clear = contrast >= CONTRAST and step <= STEP
    split = f"{'a clear' if clear else 'an unclear'} split, contrast {contrast:.1f}"
    if sky is not None:
        how = f"under the sky found; {split}"
        sure = SURE if clear else WEAK
    else:
        how = f"read from the colours of the top and bottom rows (no sky found; {split})"
        sure = FALLBACK if clear and contrast >= FALLBACK_CONTRAST else WEAK
    front, agree, second = np.zeros((h, w), bool), 1.0, None
    field = np.zeros((h, w), bool)      # the part of ``front`` that is a field, not water
    if kind == "land":        # the hills, less a lake or a field in front of them
        region = land.copy()
        for is_field, part, most in ((False, water(small, land), FRONT_WATER),
                                     (True, ground(small, land), FRONT)):
            if MIN_SHARE * land.size <= part.sum() <= most * land.sum():
                ahead = in_front(part) & region
                front |= ahead
                region &= ~ahead
                if is_field:
                    field = ahead
    elif kind == "ground":        # read twice: where the two differ, its edge is unsure
        region, second = ground(small, land), grown_ground(small, land)
        filling = frame_ground(small) if sky is None and sure <= WEAK else None
        if filling is not None:     # no sky and no skyline: the ground fills the frame
            (region, second), land = filling, np.ones_like(land)
            how += "; the ground fills the frame, read from its bottom and its top"
        agree = agreement(region, second)
        sure = SURE if filling is not None and agree >= GROUND_AGREE else sure
        edged = edged_ground(region, second, land) if agree < GROUND_AGREE and \
            filling is None else None
        if edged is not None:   # both stopped short of a straight far edge: all in front
            region, second, agree = edged, None, 1.0
            how += "; the ground is all in front of its straight far edge"
            sure = SURE if sky is not None and under_the_land(edged, land) else sure
    elif kind == "water":
        region = water(small, land)
        if sky is not None and not_water(small, region, sky):   # stone or earth that mirrors
            region = np.zeros_like(region)
            how += "; what lay there is neither blue nor of the sky's tint"
        if sky is not None and sure <= WEAK:
            mirror, tint = still_pool(small, region, sky)
            if mirror >= STILL_MIRROR and tint <= SKY_TINT:
                sure = SURE
                how += f"; still water: it mirrors its shore at {mirror:.2f}, tinted as the sky"
    elif kind == "cloud":
        region = clouds(small, land, sky)
    else:       # snow patches are small: read on the sky's finer copy
        wh, ww = work.shape[:2]
        above = found_sky.masks[0].mask if sky is not None else \
            cv2.resize((~land).astype(np.uint8), (ww, wh), interpolation=cv2.INTER_NEAREST) > 0
        region = snow(work, above)
    if parsed.colors and kind not in ("cloud", "snow"):
        named = colour_mask(small, parsed.colors)
        tinted = region & named
        if tinted.sum() >= TINTED * region.sum():   # else the colour word is loose
            region = tinted
        front &= named
    parts = _parts(region, SPECK if kind == "snow" else MIN_SHARE)
    if not parts:
        return Localization([], "unresolved", f"{lead}no {noun} found: {KIND_WORDS[kind]} "
                            f"is empty or too small (skyline {how}); paint it with the brush")

    picks = parsed.ordinal or parsed.last or parsed.size or parsed.spatial
    if kind == "cloud" and (picks or parsed.plural):    # "the big cloud": one of them
        cands = [Candidate(upsample_region(rgb, p), sure, noun, f"scene:{kind}",
                           {"share": round(float(p.mean()), 3)}) for p in parts[:6]]
        found = select_candidates(cands, parsed, noun)
    else:       # a region is one thing made of its parts (the snow, the hills)
        union = np.logical_or.reduce(parts)
        cands = [Candidate(upsample_region(rgb, union), sure, noun, f"scene:{kind}",
                           {"share": round(float(union.mean()), 3)})]
        found = Localization(cands, "resolved", "", candidates=cands)
    # resolved only where the scene's structure draws the edge (a sky found, the bottom
    # edge, a shoreline); clouds are a colour threshold: shown, not edited. So is snow:
    # white on the land under a sky with a clear skyline is also sunlit limestone (on
    # Aitzgorri and the lake's hill "the snow" resolved on a few white specks once the
    # sky's edge sharpened) or a white house: offered first, never edited unasked
    edge = sure > WEAK and kind not in ("cloud", "snow")
    # land of the named colour taken off as the field in front: where the hills end and
    # the field begins is the user's call (module doc)
    in_doubt = bool(parsed.colors) and front.sum() >= FRONT_NAMED * max(1, region.sum())
    # without a colour word, a field taken off as in front may be the hills' own foot (the
    # scree and trees under a carved cliff, the scrub under the Great Wall's hills); a lake
    # in front is not the hills. Asked, both readings offered
    foot = kind == "land" and not parsed.colors and \
        field.sum() >= FRONT_FOOT * max(1, region.sum())
    last = noun.lower().split()[-1] if noun.split() else ""
    level = min(_level(land), _sky_level(sky)) if kind == "land" and last in RAISED else 1.0
    green = _green(small, region) if kind == "ground" and last in VERDANT else 1.0
    status = found.status if edge and not in_doubt and not foot and level >= LEVEL and \
        green >= GREEN and agree >= GROUND_AGREE else "ambiguous"
    if status == "ambiguous":
        for cand in found.masks or cands:
            cand.score = min(cand.score, WEAK)
    if agree < GROUND_AGREE and second is not None and second.mean() >= MIN_SHARE:
        cands.append(Candidate(upsample_region(rgb, second), min(cands[0].score, WEAK),
                               noun, "scene:ground-grown", {"share": round(float(
                                   second.mean()), 3)}))
        found = Localization(cands, "ambiguous", "", candidates=cands)
    if foot and found.masks:
        cands.append(Candidate(upsample_region(rgb, region | field), WEAK, noun,
                               "scene:land-with-foot", {"share": round(float(
                                   (region | field).mean()), 3)}))
        found = Localization(cands, "ambiguous", "", candidates=cands)
    score = (found.masks or cands)[0].score
    reason = (f"{lead}found {KIND_WORDS[kind]} ({float(region.mean()):.0%} of the frame; "
              f"skyline {how}), confidence {score:.2f}")
    if in_doubt:
        reason += (f"; but land of that colour in front of it, {front.sum() / region.sum():.0%}"
                   " as much, was taken for the field: click it if it is what you mean")
    elif level < LEVEL:
        reason += (f"; but the skyline is level (within {level:.0%} of the height): a plain"
                   f" lies under it, and the {noun} may be only a band along the horizon: "
                   "click them or paint them with the brush")
    elif foot:
        reason += (f"; but a field in front of it, {field.sum() / region.sum():.0%} as much, "
                   f"was left out, and it may be the foot of the {noun}: click the one you mean "
                   "(the second takes it in), or paint it with the brush")
    elif green < GREEN:
        reason += (f"; but only {green:.0%} of it is green, as {noun} is: click it if it is "
                   "what you mean, or paint it with the brush")
    elif agree < GROUND_AGREE:
        reason += (f"; but read by its colours from the bottom edge it agrees only "
                   f"{agree:.0%} with that: where it ends is unsure; click the one you mean "
                   "(the second is that reading), or paint it with the brush")
    elif status == "ambiguous" and found.status == "resolved":
        reason += "; not sure enough to edit: click it if it is what you mean"
    return Localization(found.masks if found.masks else cands, status, reason,
                        candidates=cands)
