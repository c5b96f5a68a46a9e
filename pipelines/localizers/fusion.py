"""Evidence fusion: which thing in the photo the words name, from every source at once.

One threshold on one detector score refused a cup the detector scored 0.35 "below 0.35"
and took a person for "the unicorn". Here each *object* in the photo is a candidate,
gathered from every source:

* NanoDet boxes of **all** classes down to ``FLOOR`` (the same object often gets a weak
  "cup", a stronger "toilet" and a "vase": boxes that overlap are one object, with a score
  per class);
* the salient-object map (U²-Net-p): how much of each object stands out, and salient
  components no box explains (a candidate of their own);
* for plural, size, place and ordinal words: objects that *look like* the best one (same
  colours, same shape) — three pasted cups are three cups even when the detector names
  two of them "traffic light".

Each object is scored against the words: the named class's own score, the scores of
classes close to it in meaning (MiniLM similarity of the class names, ``RELATED``), the
salient agreement, and a penalty when a class unrelated to the words explains it better.
``fuse`` combines them with weights chosen on the tune split of
``eval/data/localization`` (``bench/perception.py`` reports the effect on both splits).
A unique plausible object is taken even at a low score; two close ones are returned as
candidates with a low confidence (the caller asks which); none is an honest "not found".

Pure functions of the detections and the saliency map, so they are cheap to test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from pipelines.localizers.segment import split_touching
from pipelines.perception.detectors import Detection, ObjectDetector, shrink
from pipelines.perception.words import class_similarity

#: weakest detector score that still counts as evidence
FLOOR = 0.06
#: boxes (any classes) overlapping this much are one object
SAME_OBJECT_IOU = 0.55
#: class names this similar (MiniLM cosine of "a photo of a …") support each other
RELATED = 0.6
#: a class this sure is an answer of its own (not "related support")
SURE_OTHER = 0.35
#: a sure unrelated class explains the object when the named class's evidence is below
#: this share of it (tune, after the closer look: a pasted cup scored cup 0.48 / toilet
#: 0.57 and is a cup; a cup taken for "the bottle" scored 0.29 of evidence / cup 0.53)
EXPLAIN_RATIO = 0.6
#: weights of the fused score (chosen on the tune split)
W_CLASS, W_RELATED, W_SALIENT, W_OTHER = 1.0, 0.5, 0.3, 0.4
#: fused score a best object needs to be taken outright
TAKE = 0.3
#: fused score a *unique* plausible, salient object needs
TAKE_UNIQUE = 0.12
#: class evidence (own + weak related support) a unique object needs to be taken without
#: asking (tune: a pasted cup had 0.14, a spoon taken for "the bottle" 0.115)
TAKE_EVIDENCE = 0.12
#: salient agreement that makes an object "the photo's subject"
SALIENT_AGREE = 0.35
#: two objects closer than this in fused score are a question, not an answer
CLOSE = 0.1
#: with plural, size, place or ordinal words, candidates need this share of the best
#: one's fused score (a weak stray box is not a third motorcycle)
COMPARABLE = 0.5
#: a box of the named class this much larger, holding the taken one (this share of it
#: inside), is a second reading of its extent (``larger_reading``)
LARGER_AREA, LARGER_INSIDE = 1.5, 0.85
#: ... when it is about as sure (this share of the taken box's score; a composite's cup
#: has a taller box at 0.55 of its own, a crouching man his whole body at 0.86)
LARGER_SHARE = 0.6
#: an object whose box lies this much inside a better one's is part of it (a handle)
PART = 0.5
#: appearance similarity (histogram intersection of Lab colours) of look-alike instances
KIN = 0.6
#: twins: candidates this alike (and of sizes within ``TWIN_SIZE`` of each other) differ
#: in detector score and salience only by where they stand, which says nothing about
#: which one the words meant: "the cup" among twin cups is a question
TWIN_KIN = 0.8
TWIN_SIZE = 2.0


@dataclass
class ObjectEvidence:
    """One object in the photo and what each source says about it.

    Attributes:
        box: (x0, y0, x1, y1) in full-resolution pixels.
        scores: best detector score per class of the boxes that make up the object.
        salient: mean salient probability inside the box (0–1).
        source: ``detector``, ``salient`` or ``look-alike``.
        fused: the combined score against the words (``fuse``).
        why: the evidence that decided, in words.
        frame: ``scores`` as the whole frame gave them, kept when a closer look changed them.
    """

    box: tuple[float, float, float, float]
    scores: dict[str, float] = field(default_factory=dict)
    salient: float = 0.0
    source: str = "detector"
    fused: float = 0.0
    why: str = ""
    evidence: float = 0.0
    frame: dict[str, float] = field(default_factory=dict)

    @property
    def best_class(self) -> tuple[str, float]:
        if not self.scores:
            return "", 0.0
        label = max(self.scores, key=self.scores.get)
        return label, self.scores[label]


def box_iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """IoU of two (x0, y0, x1, y1) boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
    return ix * iy / union if union > 0 else 0.0


def inside_share(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The share of box ``a``'s area that lies inside box ``b``."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy / max(1e-6, (a[2] - a[0]) * (a[3] - a[1]))


def group(dets: list[Detection], label: str) -> list[ObjectEvidence]:
    """Boxes of any class that overlap are one object; the object's box is its best box
    of ``label`` when it has one (the named class outlines it), else its best box."""
    objects: list[tuple[list[Detection], ObjectEvidence]] = []
    for det in sorted(dets, key=lambda d: -d.score):
        for members, obj in objects:
            if box_iou(members[0].box, det.box) >= SAME_OBJECT_IOU:
                members.append(det)
                obj.scores[det.label] = max(obj.scores.get(det.label, 0.0), det.score)
                break
        else:
            objects.append(([det], ObjectEvidence(tuple(det.box), {det.label: det.score})))
    out = []
    for members, obj in objects:
        named = [d for d in members if d.label == label]
        if named:
            obj.box = tuple(max(named, key=lambda d: d.score).box)
        out.append(obj)
    return out


def salient_agreement(objects: list[ObjectEvidence], prob: np.ndarray, scale: float) -> None:
    """Set each object's ``salient``: the mean salient probability in its box.

    Args:
        prob: salient probability map of the frame copy.
        scale: full-resolution pixels per ``prob`` pixel.
    """
    h, w = prob.shape
    for obj in objects:
        x0, y0, x1, y1 = (int(round(v / scale)) for v in obj.box)
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, max(x1, x0 + 1)), min(h, max(y1, y0 + 1))
        obj.salient = float(prob[y0:y1, x0:x1].mean()) if x1 > x0 and y1 > y0 else 0.0


def salient_components(prob: np.ndarray, scale: float, min_frac: float = 0.004
                       ) -> list[tuple[tuple[float, ...], np.ndarray]]:
    """Connected salient regions (prob ≥ 0.5), largest first: (box at full resolution,
    component mask at the map's size)."""
    binary = (prob >= 0.5).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, 8)
    out = []
    for i in np.argsort(-stats[1:, cv2.CC_STAT_AREA]) + 1:
        x, y, bw, bh, area = stats[i]
        if area < min_frac * prob.size:
            continue
        out.append(((x * scale, y * scale, (x + bw) * scale, (y + bh) * scale), labels == i))
    return out


def split_instances(parts: list[tuple[tuple[float, ...], np.ndarray]], small: np.ndarray,
                    scale: float) -> list[tuple[tuple[float, ...], np.ndarray]]:
    """Salient components made of touching look-alike instances (two badges side by
    side are one connected blob) split into one part per instance, so "the right one",
    "the biggest" or "the second" pick an instance, not the blob: ``segment.split_touching``
    cuts along the necks, and the pieces are kept apart only when they look alike
    (Lab colour histograms within ``KIN``) — a subject with parts of other colours stays
    whole.

    Args:
        parts: ``salient_components`` output (box at full resolution, mask at ``small``'s
            size), largest first.
        small: uint8 RGB copy the masks are at.
        scale: full-resolution pixels per ``small`` pixel.

    Returns:
        The parts, merged blobs replaced by their instances, largest first.
    """
    out = []
    for box, part in parts:
        pieces = split_touching(part)
        boxes = []
        for piece in pieces:
            x, y, bw, bh = cv2.boundingRect(piece.astype(np.uint8))
            boxes.append((x, y, x + bw, y + bh))
        ref = appearance(small, boxes[0]) if len(pieces) > 1 else None
        if ref is not None and all(float(np.minimum(ref, appearance(small, b)).sum()) >= KIN
                                   for b in boxes[1:]):
            out += [(tuple(v * scale for v in b), piece) for b, piece in zip(boxes, pieces)]
        else:
            out.append((box, part))
    return sorted(out, key=lambda bp: -int(bp[1].sum()))


def similarity(a: str, b: str) -> float:
    """How close two class names are in meaning (1 for the same class)."""
    if a == b:
        return 1.0
    labels, sims = class_similarity()
    if a not in labels or b not in labels:
        return 0.0
    return float(sims[labels.index(a), labels.index(b)])


def _split(obj: ObjectEvidence, label: str) -> tuple[float, float, tuple[str, float]]:
    """(own score, weak related support, strongest other class): a related class counts
    as support only while it is weak; a sure related class ("cup" 0.53 for "the bottle")
    is the detector telling two similar classes apart, so it counts against."""
    own = obj.scores.get(label, 0.0)
    related, other = 0.0, ("", 0.0)
    for cls, score in obj.scores.items():
        if cls == label:
            continue
        if similarity(label, cls) >= RELATED and score < SURE_OTHER:
            related = max(related, score)
        elif score > other[1]:
            other = (cls, score)
    return own, related, other


def fuse(obj: ObjectEvidence, label: str) -> float:
    """The object's score for the words' class ``label``; sets ``obj.fused`` and
    ``obj.why``."""
    own, related, (other_label, other) = _split(obj, label)
    evidence = own + W_RELATED * related
    obj.evidence = evidence
    fused = W_CLASS * own + W_RELATED * related
    if evidence > 0:
        fused += W_SALIENT * obj.salient - W_OTHER * max(0.0, other - evidence)
    obj.fused = float(np.clip(fused, 0.0, 1.0))
    parts = [f"detector {label} {own:.2f}"]
    if related:
        parts.append(f"related class {related:.2f}")
    if obj.salient > 0:            # (not computed when one sure object stands alone)
        parts.append(f"salient {obj.salient:.2f}")
    if other > evidence:
        parts.append(f"also looks like {other_label} ({other:.2f})")
    obj.why = ", ".join(parts)
    return obj.fused


def explained(obj: ObjectEvidence, label: str) -> str:
    """Why the object is not the words' class, or "" when it may be: a sure related class
    beats the named one, or a sure unrelated class is ``EXPLAIN_RATIO`` times stronger
    than all the evidence for the named one."""
    own, related, (other_label, other) = _split(obj, label)
    if other >= SURE_OTHER and similarity(label, other_label) >= RELATED and other > own:
        return f"a {other_label} ({other:.2f})"
    if other >= SURE_OTHER and own + W_RELATED * related < EXPLAIN_RATIO * other:
        return f"a {other_label} ({other:.2f})"
    return ""


def inside_other(obj: ObjectEvidence, label: str, objects: list[ObjectEvidence]) -> str:
    """A weak object lying inside a much larger, sure object of an unrelated class is
    more likely a part of it (a camera's grip is no "bird" in the cameraman's hands); so
    is even a sure one inside a sure object of a kindred class (a tune photo's white dog,
    "dog" as a whole, has a head a crop of it calls "cat 0.63")."""
    x0, y0, x1, y1 = obj.box
    area = max(1.0, (x1 - x0) * (y1 - y0))
    for big in objects:
        cls, score = big.best_class
        if big is obj or score < SURE_OTHER:
            continue
        related = similarity(label, cls) >= RELATED
        kindred = related and cls != label        # even a sure reading is its part
        if not (kindred or obj.evidence < SURE_OTHER and not related):
            continue
        bx0, by0, bx1, by1 = big.box
        ix = max(0.0, min(x1, bx1) - max(x0, bx0))
        iy = max(0.0, min(y1, by1) - max(y0, by0))
        if ix * iy >= 0.8 * area and (bx1 - bx0) * (by1 - by0) >= 3 * area:
            return f"part of a {cls} ({score:.2f})"
    return ""


def larger_reading(obj: ObjectEvidence, objects: list[ObjectEvidence], label: str) -> float:
    """The score of the strongest box of ``label`` that holds ``obj``'s box and is at least
    ``LARGER_AREA`` times its size, when it is ``LARGER_SHARE`` of ``obj``'s own score; else
    0. The detector then reads the thing two ways, as the part and as the whole (a
    crouching man, mirrored: his upper body 0.36, the whole of him 0.31), and where it
    ends is not known."""
    own = obj.scores.get(label, 0.0)
    x0, y0, x1, y1 = obj.box
    area = max(1.0, (x1 - x0) * (y1 - y0))
    best = 0.0
    for big in objects:
        score = big.scores.get(label, 0.0)
        bx0, by0, bx1, by1 = big.box
        if big is obj or score < LARGER_SHARE * own or score < FLOOR or \
                (bx1 - bx0) * (by1 - by0) < LARGER_AREA * area:
            continue
        # a box that also holds another instance about as sure is a group's
        group = any(o is not obj and o is not big and box_iou(o.box, obj.box) < 0.3
                    and o.scores.get(label, 0.0) >= LARGER_SHARE * own
                    and inside_share(o.box, big.box) >= LARGER_INSIDE for o in objects)
        if inside_share(obj.box, big.box) >= LARGER_INSIDE and not group:
            best = max(best, score)
    return best


def evidenced(objects: list[ObjectEvidence], label: str) -> list[ObjectEvidence]:
    """Objects with any evidence of the class, best fused score first (before any other
    class is weighed against them: the ones worth a closer look)."""
    out = []
    for obj in objects:
        fuse(obj, label)
        own, related, _ = _split(obj, label)
        if own >= FLOOR or related >= 2 * FLOOR:
            out.append(obj)
    return sorted(out, key=lambda o: -o.fused)


def plausible(objects: list[ObjectEvidence], label: str) -> list[ObjectEvidence]:
    """Objects with some evidence of the class (its own or a weak related class's score)
    that no other class explains better and that are not part of another object."""
    for obj in objects:
        fuse(obj, label)
    out = []
    for obj in objects:
        own, related, _ = _split(obj, label)
        if (own >= FLOOR or related >= 2 * FLOOR) and not explained(obj, label) and \
                not inside_other(obj, label, objects):
            out.append(obj)
    return sorted(out, key=lambda o: -o.fused)


def appearance(rgb: np.ndarray, box: tuple[float, ...]) -> np.ndarray:
    """A normalised 8×4×4 Lab colour histogram of the box's centre (its inner 60 %)."""
    x0, y0, x1, y1 = box
    cx0, cx1 = x0 + 0.2 * (x1 - x0), x1 - 0.2 * (x1 - x0)
    cy0, cy1 = y0 + 0.2 * (y1 - y0), y1 - 0.2 * (y1 - y0)
    crop = rgb[int(cy0):max(int(cy1), int(cy0) + 1), int(cx0):max(int(cx1), int(cx0) + 1)]
    if crop.size == 0:
        return np.zeros(128, np.float32)
    lab = cv2.cvtColor(np.ascontiguousarray(crop[..., :3]), cv2.COLOR_RGB2Lab)
    hist = cv2.calcHist([lab], [0, 1, 2], None, [8, 4, 4], [0, 256, 0, 256, 0, 256]).ravel()
    return hist / max(1.0, float(hist.sum()))


def kinship(frame: np.ndarray, scale: float, anchor: tuple[float, ...],
            boxes: list[tuple[float, ...]]) -> list[float]:
    """How alike each of ``boxes`` looks to ``anchor`` (full-resolution boxes; ``frame``
    is the copy ``scale`` times smaller): the histogram intersection of their colours, or
    0 when their shapes differ (aspect ratio beyond 35 %) or they overlap (the anchor
    itself among them)."""
    def aspect(b: tuple[float, ...]) -> float:
        return (b[2] - b[0]) / max(1.0, b[3] - b[1])

    def small(b: tuple[float, ...]) -> tuple[float, ...]:
        return tuple(v / scale for v in b)

    ref = appearance(frame, small(anchor))
    return [0.0 if box_iou(b, anchor) > 0.3
            or not 0.65 <= aspect(b) / max(aspect(anchor), 1e-6) <= 1.0 / 0.65
            else float(np.minimum(ref, appearance(frame, small(b))).sum()) for b in boxes]


def look_alikes(frame: np.ndarray, scale: float, anchor: ObjectEvidence,
                pool: list[ObjectEvidence]) -> list[ObjectEvidence]:
    """Objects of ``pool`` that look like ``anchor``: the same colours (histogram
    intersection ≥ ``KIN``) and a similar shape (aspect ratio within 35 %)."""
    out = []
    for obj, kin in zip(pool, kinship(frame, scale, anchor.box, [o.box for o in pool])):
        if kin >= KIN:
            obj.source = "look-alike"
            obj.fused = float(min(anchor.fused, kin * anchor.fused))
            obj.why = f"looks like the {anchor.best_class[0] or 'one'} found (colours " \
                      f"{kin:.2f}), salient {obj.salient:.2f}"
            out.append(obj)
    return out


def twins(frame: np.ndarray, scale: float, cands: list[ObjectEvidence]) -> list[ObjectEvidence]:
    """The candidates after the best that are its twins: as alike as ``TWIN_KIN`` and of
    sizes within ``TWIN_SIZE`` of it (the best first, ``frame`` ``scale`` times smaller
    than the photo)."""
    def area(b: tuple[float, ...]) -> float:
        return max(1.0, (b[2] - b[0]) * (b[3] - b[1]))

    if len(cands) < 2:
        return []
    best, rest = cands[0], cands[1:]
    kins = kinship(frame, scale, best.box, [o.box for o in rest])
    return [o for o, kin in zip(rest, kins)
            if kin >= TWIN_KIN and 1.0 / TWIN_SIZE <= area(o.box) / area(best.box) <= TWIN_SIZE]


#: a box holding instances that fill this share of it is a group of them, not one object
GROUP_FILL = 0.6


def group_of(obj: ObjectEvidence, objects: list[ObjectEvidence]) -> list[ObjectEvidence]:
    """The instances ``obj``'s box is a group of, or [] when it is one object: two or
    more comparable objects (fused ≥ ``COMPARABLE`` × its own) lying inside it, side by
    side rather than on top of each other, filling ``GROUP_FILL`` of it — a detector's
    one box over two touching horses or cups."""
    x0, y0, x1, y1 = obj.box
    area = max(1.0, (x1 - x0) * (y1 - y0))
    inner = [o for o in objects if o is not obj and inside_share(o.box, obj.box) >= 0.8
             and (o.box[2] - o.box[0]) * (o.box[3] - o.box[1]) <= 0.75 * area
             and o.fused >= COMPARABLE * obj.fused]
    inner = [o for i, o in enumerate(inner)
             if all(box_iou(o.box, p.box) < 0.3 for p in inner[:i])]
    fill = sum((o.box[2] - o.box[0]) * (o.box[3] - o.box[1]) for o in inner) / area
    return inner if len(inner) >= 2 and fill >= GROUP_FILL else []


def distinct(objects: list[ObjectEvidence]) -> list[ObjectEvidence]:
    """Drop an object whose box mostly overlaps a better one's (the same object seen as
    two classes, or a part of it): the overlap is measured on the smaller box. A box
    that is a group of touching instances (``group_of``) gives way to them."""
    groups = [o for o in objects if group_of(o, objects)]
    objects = [o for o in objects if o not in groups]
    kept: list[ObjectEvidence] = []
    for obj in sorted(objects, key=lambda o: -o.fused):
        x0, y0, x1, y1 = obj.box
        area = max(1.0, (x1 - x0) * (y1 - y0))
        inside = False
        for k in kept:
            ix = max(0.0, min(x1, k.box[2]) - max(x0, k.box[0]))
            iy = max(0.0, min(y1, k.box[3]) - max(y0, k.box[1]))
            other = max(1.0, (k.box[2] - k.box[0]) * (k.box[3] - k.box[1]))
            if ix * iy > PART * min(area, other):
                inside = True
                break
        if not inside:
            kept.append(obj)
    return kept


def verdict(cands: list[ObjectEvidence], selectors: bool) -> str:
    """``take`` (the best is sure, or the only plausible one stands out as the subject),
    ``choose`` (selector words will pick among several), ``ask`` (close candidates or
    weak evidence) or ``none``."""
    if not cands or cands[0].fused < TAKE_UNIQUE:     # too weak even to ask about
        return "none"
    best = cands[0]
    if selectors:
        return "choose" if best.fused >= TAKE_UNIQUE else "ask"
    if len(cands) == 1:
        if best.evidence >= TAKE_EVIDENCE and (
                best.fused >= TAKE or (best.fused >= TAKE_UNIQUE
                                       and best.salient >= SALIENT_AGREE)):
            return "take"
        return "ask"
    if best.fused >= TAKE and best.fused - cands[1].fused >= CLOSE:
        return "take"
    if best.fused >= TAKE_UNIQUE and best.salient >= SALIENT_AGREE and \
            cands[1].salient < SALIENT_AGREE / 2 and best.fused - cands[1].fused >= CLOSE:
        return "take"
    return "ask"


def to_offer(cands: list[ObjectEvidence], label: str) -> list[ObjectEvidence]:
    """The candidates worth showing the user to click when asking: those no other class
    outweighs (a cat's nose seen as "cell phone 0.37, cup 0.32" is no third cup beside
    two cups), unless every one is outweighed."""
    clear = [o for o in cands if _split(o, label)[2][1] <= o.evidence]
    return clear or cands


#: a target mask may reach this far (share of its box's size) beyond its own box
BOX_SLACK = 0.1
#: share of a target mask outside its slack box, or of another object's box inside the
#: mask, that makes the mask over-large
SPILL = 0.15


#: share of a target mask lying in a neighbour's box (beyond its own box) that is caught
NEIGHBOUR = 0.01
#: a caught mask's note begins so; a taken target's is then asked (what is left is a guess)
CAUGHT = "over-large mask caught and shrunk"


def check_extent(mask: np.ndarray, box: tuple[float, ...],
                 others: list[tuple[float, ...]]) -> tuple[np.ndarray, str]:
    """Catch an over-large target mask before it is edited.

    The mask is compared with the object's own evidence: its detector box (a mask that
    spills well beyond it has taken the surface under it or a neighbour) and the boxes
    of the other objects seen (a mask covering much of one has swallowed it). An
    over-large mask is shrunk to its box, minus the other objects' boxes where they do
    not overlap its own.

    Args:
        mask: bool (H, W) candidate mask.
        box: the object's box (x0, y0, x1, y1) in the mask's pixels.
        others: boxes of the other objects.

    Returns:
        ``(mask, note)``: the mask as it is and "" when it fits its evidence, else the
        shrunk mask and what was caught.
    """
    h, w = mask.shape
    area = int(np.count_nonzero(mask))
    if area == 0:
        return mask, ""
    x0, y0, x1, y1 = box
    sx, sy = BOX_SLACK * (x1 - x0), BOX_SLACK * (y1 - y0)
    sx0, sy0 = int(max(0, x0 - sx)), int(max(0, y0 - sy))
    sx1, sy1 = int(min(w, x1 + sx)), int(min(h, y1 + sy))
    inside = int(np.count_nonzero(mask[sy0:sy1, sx0:sx1]))
    notes, out = [], mask
    if area - inside > SPILL * area:
        out = np.zeros_like(mask)
        out[sy0:sy1, sx0:sx1] = mask[sy0:sy1, sx0:sx1]
        notes.append(f"{(area - inside) / area:.0%} of it lay outside the object's box")
    for other in others:
        if box_iou(other, box) > 0.3:
            continue
        ox0, oy0, ox1, oy1 = (int(round(v)) for v in other)
        ox0, oy0, ox1, oy1 = max(0, ox0), max(0, oy0), min(w, ox1), min(h, oy1)
        if ox1 <= ox0 or oy1 <= oy0:
            continue
        own = np.zeros((oy1 - oy0, ox1 - ox0), bool)      # our box, inside theirs
        own[max(0, int(y0) - oy0):max(0, int(y1) - oy0),
            max(0, int(x0) - ox0):max(0, int(x1) - ox0)] = True
        taken = np.count_nonzero(out[oy0:oy1, ox0:ox1] & ~own)
        if taken > NEIGHBOUR * area:        # the neighbour's pixels beyond our own box
            out = out.copy()
            out[oy0:oy1, ox0:ox1] &= own
            notes.append("it reached into another object")
    if not notes:
        return mask, ""
    return out, f"{CAUGHT}: " + "; ".join(notes)


def explainer(covering: list[Detection], explained: float) -> Detection | None:
    """The detection whose class explains a salient part, or None: its score plus the
    weak support of related classes on the same part (as ``fusion`` weighs evidence)
    reaches ``explained`` — a cat seen as "cat" 0.42 and "dog" 0.40 is an animal the
    detector knows, not "the unicorn"; a flower seen only as "carrot" 0.50 is not."""
    best: dict[str, Detection] = {}
    for d in covering:
        if d.label not in best or d.score > best[d.label].score:
            best[d.label] = d
    owner, top = None, 0.0
    for label, det in best.items():
        related = max((o.score for other, o in best.items() if other != label
                       and similarity(label, other) >= RELATED), default=0.0)
        evidence = det.score + W_RELATED * related
        if evidence >= explained and evidence > top:
            owner, top = Detection(det.box, evidence, label), evidence
    return owner


def near(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> bool:
    """Whether box ``a`` touches box ``b`` grown by a quarter of ``b``'s larger side (parts
    of one subject); boxes further apart are separate objects."""
    if a is None or b is None:
        return True
    pad = 0.25 * max(b[2] - b[0], b[3] - b[1])
    return a[0] <= b[2] + pad and a[2] >= b[0] - pad and a[1] <= b[3] + pad and \
        a[3] >= b[1] - pad


def look_closer(detector: ObjectDetector, rgb: np.ndarray, obj: ObjectEvidence
                 ) -> None:
    """Detect again on a native-resolution crop where the object fills the detector's
    view (1.6× its box); boxes that match it add their class scores to its evidence."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = obj.box
    side = 1.6 * max(x1 - x0, y1 - y0, 32)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    vx0, vy0 = int(max(0, cx - side / 2)), int(max(0, cy - side / 2))
    vx1, vy1 = int(min(w, cx + side / 2)), int(min(h, cy + side / 2))
    view = shrink(rgb[vy0:vy1, vx0:vx1], 2 * 416)
    k = (vx1 - vx0) / view.shape[1]
    vh, vw = view.shape[:2]
    obj.frame = obj.frame or dict(obj.scores)
    for det in detector.detect(view, FLOOR):
        bx0, by0, bx1, by1 = det.box
        cut = (bx0 <= 2 and vx0 > 0) or (by0 <= 2 and vy0 > 0) or \
            (bx1 >= vw - 2 and vx1 < w) or (by1 >= vh - 2 and vy1 < h)
        if cut:             # the view cut a larger object: a fragment confirms nothing
            continue
        box = (bx0 * k + vx0, by0 * k + vy0, bx1 * k + vx0, by1 * k + vy0)
        if box_iou(box, obj.box) >= 0.5:
            obj.scores[det.label] = max(obj.scores.get(det.label, 0.0), det.score)
    obj.source = f"{obj.source}+closer look"
