"""Whose face: "the face of the man in the black sweatshirt", "the woman's face".

The faces are found as "the faces" are; the owner is located as any phrase is. A face
belongs to the owner when its centre lies inside the owner's outline (grown a little: a
cut-out of a person may stop at the hair). One face there is the answer; none is a
refusal that says so (the owner may be turned away); several, or an owner that is itself
a question, stay a question with the faces offered. Without this, the faces of everyone
else were candidates too, and the answer was a question at best (issue 32, wave 27).
An owner told apart from the others by what they wear (``worn``, wave 38) keeps its face
a question to confirm: that route resolves owners among several people, where the face
ellipse's extent was never measured (tune: 0.72 on the man in the black sweatshirt).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import cv2
import numpy as np

from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.segment import centroid
from pipelines.perception.detectors import Detection, FaceDetector, ObjectDetector, nms, shrink

#: "the face of the man …" / "the man's face" (the owner's words, any qualifiers kept)
OWNED = re.compile(r"^(?:the |a )?face of (?P<of>.+)$|"
                   r"^(?P<own>(?:the |a |an |this |that )?[a-z][a-z -]*?)'s face$")
#: the owner's outline is grown by this share of its box's larger side
GROW = 0.05
#: the most a face chosen by its owner is trusted
SURE = 0.7
#: a face whose eye points lie closer together than this share of its box's width is seen
#: from the side (``FaceDetection.eye_gap``; tune: 0.22-0.47 on every other face the
#: detector finds, people, a carving and animals alike, 0.11 on a man leaning in profile)
SIDE_VIEW = 0.16


def owner(text: str) -> str | None:
    """The owner phrase of a face ("the face of the man in red" → "the man in red"),
    or None when the phrase names no owner."""
    m = OWNED.match(" ".join(text.lower().replace("\u2019", "'").split()))
    if not m:
        return None
    who = (m.group("of") or m.group("own") or "").strip()
    if not who or who.split()[-1] in {"photo", "image", "picture", "frame", "clock", "cliff",
                                      "building", "rock", "mountain", "wall"}:
        return None          # "the face of the cliff": a face that is no one's
    return who if who.split()[0] in {"the", "a", "an", "this", "that"} else f"the {who}"


def detect(rgb: np.ndarray, faces: FaceDetector, objects: ObjectDetector, side: int,
           least: float) -> tuple[list[Detection], list[tuple[int, ...]]]:
    """Every face the face detector sees over ``least`` (boxes in ``rgb``'s pixels), and
    the detector's person boxes (at most six).

    The photo is seen at ``side`` px, where a face a few dozen pixels wide is lost, so each
    person box is looked into again at native resolution: always (one face seen in the
    frame may hide another, and "the face" must then ask), but only there (zoomed in, the
    face detector also sees faces in fruit and clouds)."""
    frame = shrink(rgb, side)
    scale = rgb.shape[1] / frame.shape[1]
    dets = faces.detect(frame, least)
    for d in dets:
        d.box = tuple(v * scale for v in d.box)
    people = [tuple(int(v * scale) for v in d.box)
              for d in objects.detect(frame, 0.3) if d.label == "person"][:6]
    for x0, y0, x1, y1 in people:
        crop = shrink(rgb[y0:y1, x0:x1], side)
        if min(crop.shape[:2]) < 32:
            continue
        k = (x1 - x0) / crop.shape[1]
        for f in faces.detect(crop, least):
            f.box = (f.box[0] * k + x0, f.box[1] * k + y0, f.box[2] * k + x0,
                     f.box[3] * k + y0)
            dets.append(f)
    return nms(dets, 0.3), people


def no_person(face: tuple[float, ...], people: list[tuple[int, ...]]) -> float:
    """1.0 when the centre of the ``face`` box lies in none of the ``people`` boxes (the
    detector's, full-resolution pixels): the face of a statue, a carving or a picture
    (Mount Rushmore's four faces: the face detector finds one, the detector no person;
    every tune face of a person lies in a person's box). 0.0 otherwise."""
    cx, cy = (face[0] + face[2]) / 2, (face[1] + face[3]) / 2
    return float(not any(x0 <= cx <= x1 and y0 <= cy <= y1 for x0, y0, x1, y1 in people))


def side_view(face: Detection) -> float:
    """1.0 when ``face`` is seen from the side (``SIDE_VIEW``), 0.0 otherwise (and for a
    box without eye points). A face is drawn as the ellipse inscribed in its box
    (``face_ellipse``); a profile's face fills one side of its box, and the
    ellipse's other side lies on the neck and hair behind the jaw (tune: the man leaning
    in profile, 55 px of his neck brightened beyond the face's reach, reported done)."""
    return float(getattr(face, "eye_gap", 1.0) < SIDE_VIEW)


def _inside(face: Candidate, where: np.ndarray) -> bool:
    cx, cy = centroid(face.mask)
    h, w = where.shape
    return bool(where[min(h - 1, int(cy * h)), min(w - 1, int(cx * w))])


def _grown(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return mask
    k = max(1, int(GROW * max(ys.max() - ys.min(), xs.max() - xs.min())))
    return cv2.dilate(mask.astype(np.uint8), np.ones((2 * k + 1, 2 * k + 1), np.uint8)) > 0


def find(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray,
         who: str) -> Localization:
    """The face of ``who`` (module doc)."""
    faces = locate(rgb, "the faces")
    if faces.status == "unresolved" or not faces.masks:
        return faces
    pool = faces.masks if faces.status == "resolved" else faces.candidates or faces.masks
    person = locate(rgb, who)
    if person.status == "unresolved":
        return Localization([], "unresolved", f"{who} not found, so not their face: "
                            f"{person.reason}", candidates=pool)
    owners = person.masks if person.status == "resolved" else person.masks[:4]
    theirs = [f for f in pool if any(_inside(f, _grown(np.asarray(o.mask, bool)))
                                     for o in owners)]
    if not theirs and person.status == "resolved":
        return Localization([], "unresolved", f"no face seen on {who}: turned away, or "
                            "too small; click it", candidates=pool)
    if person.status != "resolved" or len(theirs) > 1:
        theirs = theirs or list(pool)       # unsure whose: every face, to click
        return Localization(theirs, "ambiguous", f"{len(theirs)} faces could be the face "
                            f"of {who}; click the one you mean", candidates=pool)
    face = theirs[0]
    if face.evidence.get("side_view"):
        return Localization([face], "ambiguous", f"the face of {who} is seen from the side: "
                            "where it ends is only a guess; click it to confirm, or brush "
                            "it", candidates=pool, guess=1)
    if person.masks[0].evidence.get("worn"):   # told apart by what they wear (``worn``)
        return Localization([face], "ambiguous", f"the face of {who}: where it ends is "
                            "only a guess (the face detector's box stops at the brows); "
                            "click it to confirm, or brush it", candidates=pool, guess=1)
    face.score = round(min(face.score, person.masks[0].score, SURE), 3)
    face.evidence["owner"] = 1.0
    return Localization([face], "resolved", f"the face of {who} (found: "
                        f"{person.reason[:80]}), confidence {face.score:.2f}",
                        candidates=pool)


def face_ellipse(shape: tuple[int, int], box: tuple[float, ...]) -> np.ndarray:
    """A face box as the ellipse inscribed in it, a little taller (BlazeFace's box stops
    at the brows; the forehead is part of the face).

    Args:
        shape: (height, width) of the image.
        box: the face box in full-resolution pixels.

    Returns:
        A bool mask of the ellipse.
    """
    x0, y0, x1, y1 = box
    mask = np.zeros(shape, np.uint8)
    centre = (int(round((x0 + x1) / 2)), int(round((y0 + y1) / 2 - 0.03 * (y1 - y0))))
    axes = (max(1, int(round((x1 - x0) * 0.5))), max(1, int(round((y1 - y0) * 0.58))))
    cv2.ellipse(mask, centre, axes, 0, 0, 360, 1, -1)
    return mask.astype(bool)
