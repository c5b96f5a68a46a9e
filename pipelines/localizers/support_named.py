"""The support itself named: "the branch" the kingfisher sits on, "the trunk" the squirrel
clings to, "the log" under the lemurs (issue 32, class "support").

No detector class names a branch, and the salient map marks the animal, not what it
stands on, so these words fell to the photo's main subject (the animal: a guess, asked)
or were refused ("the main subject is a bird, not a perch"). What tells a photographer
which thing the animal rests on is focus: a wildlife photo with a shallow depth of field
has the animal *and* what it grips in focus, the rest in the bokeh. The support is then
the zone in focus beside the animal that runs on out of the frame:

1. the main subject must be one animal or a few (``_animal_subject``): "the log" of a
   photo whose main subject is the mossy log itself is that subject, not its support;
2. the photo must have a shallow depth of field (``focus.sharp_zones``'s test: the
   strongest edges strong, the median far weaker); a photo sharp throughout (a gibbon
   in a tangle of branches, a kookaburra among twigs) has many things in focus beside
   the animal, and which one is meant is not known: the question stays;
3. the zones in focus outside the animal (its own edges taken out) that touch it,
   reach the frame's edge and hold at least a quarter of the animal's area (``SIZE``:
   a support is a thing of the animal's scale, not its feet) are the support's
   candidates. Exactly one is the support; its edge is set by GrabCut (the zone
   probable foreground, the blurred rest and the animal's body background, the
   animal's rim only probably: the salient map may hold the stub of the branch under
   it) and decided at native resolution, one part. None, or more than one of
   comparable size, leaves the answer to the usual path (a question);
4. what is found must not run along the frame's bottom (``GROUND``: the ground or a
   floor, where a horse stands) nor share the animal's colours (``OWN_COLOUR``: a
   lizard's legs and tail, left out of its salient mask, are in focus beside it too).

Anything else returns None and the caller goes on as before.
"""

from __future__ import annotations

import logging
from typing import Any

import cv2
import numpy as np

from pipelines.localizers import focus
from pipelines.localizers.base import Candidate, Localization, mask_box
from pipelines.localizers.refine import upsample_region
from pipelines.localizers.segment import largest_parts
from pipelines.perception import words as kinds
from pipelines.perception.detectors import shrink

log = logging.getLogger(__name__)

#: words that name what an animal sits, stands or clings on ("limb" and "stick" are left
#: out: an animal's own leg, a stick a dog carries)
SUPPORTS = frozenset({"branch", "bough", "twig", "trunk", "log", "perch", "stump"})
#: long side of the copy the detector sees (``perception.FRAME_SIDE``)
FRAME_SIDE = 1024
#: the detector's animal class must be this sure that the main subject is an animal
ANIMAL = 0.3
#: in focus: local energy at least this share of the strongest edges' (``focus.ZONE``
#: marks zones to offer; the support's bark or moss is textured but weaker than the
#: animal's outline)
IN_FOCUS = 0.25
#: the animal's own outline (sharp too) is taken out this far, as a share of the side
OWN_EDGE = 0.02
#: a zone touches the animal within this share of the side
TOUCH = 0.03
#: a candidate must hold this share of the frame ...
MIN_AREA = 0.01
#: ... and at least this share of the animal's area: what an animal rests on is a thing
#: of its own scale, not a fringe of it (a macaw's feet, left out of its salient mask,
#: run out of the frame's bottom edge too)
SIZE = 0.25
#: ... and a second one this share of the first's area makes the support ambiguous
RIVAL = 0.5
#: the animal's pixels deeper than this share of its largest inner distance are surely
#: the animal; the rim around them may be the support's stub
RIM = 0.35
#: a support along this share of the frame's bottom edge or more is the ground or a
#: floor (tune, "the branch" asked of every photo: a horse's field 1.0, a duck's rock 0.69,
#: a kitten's plank 0.72; the squirrel's trunk 0.28, branches 0)
GROUND = 0.5
#: a support whose chroma is this close to the animal's (Bhattacharyya) may be its own
#: limbs or tail, left out of its salient mask (the garden lizard's 0.34; branches and
#: trunks 0.49-0.88)
OWN_COLOUR = 0.4
#: the energy under this share of the strongest edges is the bokeh: sure background
BOKEH = 0.08


def _disk(r: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


def _animal_subject(subject: np.ndarray, dets: list, scale: float) -> bool:
    """Whether the main subject is one animal or a few (``subject`` in work pixels;
    ``scale`` maps detection boxes to them): the boxes of the detector's animals at
    ``ANIMAL`` or more hold most of it together (two lemurs side by side), and no other
    class that holds most of it on its own is surer than the surest of them (a mossy log
    the detector reads as broccoli 0.52 and a bird 0.37 is no animal)."""
    animals = kinds.CATEGORY_CLASSES.get("animal", ())
    total = max(1, int(subject.sum()))
    held = np.zeros(subject.shape, bool)
    surest_animal, surest_other = 0.0, 0.0
    for d in dets:
        x0, y0, x1, y1 = (max(0, int(round(v * scale))) for v in d.box)
        box = np.zeros(subject.shape, bool)
        box[y0:y1, x0:x1] = True
        if d.label in animals and d.score >= ANIMAL and (box & subject).any():
            held |= box
            surest_animal = max(surest_animal, d.score)
        elif (box & subject).sum() > 0.5 * total:
            surest_other = max(surest_other, d.score)
    return (held & subject).sum() > 0.5 * total and surest_animal > surest_other


def support_zone(small: np.ndarray, subject: np.ndarray) -> tuple[np.ndarray | None, str]:
    """The zone in focus the ``subject`` rests on, at the work copy's size (module doc,
    steps 2-3), or None and why not."""
    energy = cv2.GaussianBlur(focus.laplacian(small), (0, 0), focus.ENERGY_SIGMA)
    top, median = np.percentile(energy, [99, 50])
    if top < focus.SHALLOW_TOP or top < focus.SHALLOW_RATIO * max(1e-6, float(median)):
        return None, "the photo is sharp throughout: more than the animal's support is " \
                     "in focus"
    side = max(small.shape[:2])
    u = subject.astype(np.uint8)
    own = cv2.dilate(u, _disk(max(2, round(OWN_EDGE * side)))) > 0
    near = cv2.dilate(u, _disk(max(3, round((OWN_EDGE + TOUCH) * side)))) > 0
    sharp = (energy >= IN_FOCUS * top) & ~own
    count, labels, stats, _ = cv2.connectedComponentsWithStats(sharp.astype(np.uint8), 8)
    edge = np.zeros(subject.shape, bool)
    edge[:2], edge[-2:], edge[:, :2], edge[:, -2:] = True, True, True, True
    zones = []
    for i in range(1, count):
        if stats[i, cv2.CC_STAT_AREA] < MIN_AREA * subject.size:
            continue
        zone = labels == i
        if (zone & near).any() and (zone & edge).any() and \
                zone.sum() >= SIZE * subject.sum():
            zones.append(zone)
    zones.sort(key=lambda z: -int(z.sum()))
    if not zones:
        return None, "nothing in focus beside the animal runs out of the frame"
    if len(zones) > 1 and zones[1].sum() >= RIVAL * zones[0].sum():
        return None, f"{len(zones)} things in focus beside the animal run out of the frame"
    seed = np.full(subject.shape, cv2.GC_PR_BGD, np.uint8)
    seed[zones[0]] = cv2.GC_PR_FGD
    seed[(energy < BOKEH * top) & ~zones[0]] = cv2.GC_BGD
    # the animal's body is sure background; its rim only probable: the salient map may
    # have taken the stub of the branch it grips (a kingfisher's, mirrored)
    dist = cv2.distanceTransform(u, cv2.DIST_L2, 5)
    seed[subject] = cv2.GC_PR_BGD
    seed[dist > RIM * float(dist.max())] = cv2.GC_BGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)
    try:
        cv2.grabCut(cv2.cvtColor(np.ascontiguousarray(small[..., :3]), cv2.COLOR_RGB2BGR),
                    seed, None, bgd, fgd, 4, cv2.GC_INIT_WITH_MASK)
    except cv2.error:
        return None, "its outline could not be cut"
    cut = (seed == cv2.GC_FGD) | (seed == cv2.GC_PR_FGD)
    cut = largest_parts(cut, keep=1.0)      # one thing: the beak's rim is no part of it
    if cut.sum() < max(MIN_AREA * subject.size, SIZE * subject.sum()):
        return None, "its outline could not be cut"
    if cut[-2:].any(axis=0).mean() >= GROUND:
        return None, "what is in focus under the animal runs along the frame's bottom: " \
                     "the ground or a floor, not a branch"
    if _colour_distance(small, cut, subject) < OWN_COLOUR:
        return None, "what is in focus beside the animal has its colours: it may be its " \
                     "own legs or tail"
    return cut, ""


def _colour_distance(small: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Bhattacharyya distance between the chroma (Lab a, b) histograms of two regions."""
    lab = cv2.cvtColor(np.ascontiguousarray(small[..., :3]), cv2.COLOR_RGB2LAB)
    hists = []
    for m in (a, b):
        h = cv2.calcHist([lab], [1, 2], m.astype(np.uint8), [16, 16], [0, 256, 0, 256])
        hists.append(cv2.normalize(h, h, 1, 0, cv2.NORM_L1))
    return float(cv2.compareHist(hists[0], hists[1], cv2.HISTCMP_BHATTACHARYYA))


def find(rgb: np.ndarray, noun: str, models: Any) -> Localization | None:
    """The support ``noun`` names (module doc), resolved; None to go on as before.

    Args:
        rgb: uint8 (H, W, 3), the photo at full resolution.
        noun: the head noun ("branch").
        models: the localiser's loaded nets (``objects`` and ``salient``).
    """
    if noun not in SUPPORTS:
        return None
    small = shrink(rgb, focus.WORK_SIDE)
    subject = largest_parts(models.salient.saliency(small) >= 0.5, keep=0.25)
    if not subject.any():
        return None
    frame = shrink(rgb, FRAME_SIDE)         # the detector's own view, as the localiser's
    dets = models.objects.detect(frame, 0.2)
    if not _animal_subject(subject, dets, small.shape[1] / frame.shape[1]):
        return None
    zone, why = support_zone(small, subject)
    if zone is None:
        log.info("'%s' is not the animal's support in focus: %s", noun, why)
        return None
    mask = upsample_region(rgb, zone)
    if not mask.any():
        return None
    cand = Candidate(mask, 0.6, noun, "focus-support", {"support": 1.0, "focus": 1.0},
                     mask_box(mask))
    return Localization([cand], "resolved", f"found the {noun}: the one zone in focus "
                        "beside the animal that runs out of the frame (the rest is "
                        "blurred)", candidates=[cand])
