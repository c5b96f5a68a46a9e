"""Subjects apart from their supports: a salient mask that runs into a branch, a stem or a
trunk is cut back to the subject.

A salient-object map marks "the thing that stands out", and a small animal on a branch
stands out together with the branch it grips: the mask takes the support too, and an edit
of the animal brightens or smears the branch (issue 32, class "support"). What tells the
two apart is shape, then colour:

* **shape** — a support runs on out of the view (the frame, or the margin around a
  detector's box), and it is narrow next to the subject's body. The parts of the mask that
  an opening as wide as a third of the body's thickness removes, and that reach the
  view's edge, are the support's visible stubs (``stubs``);
* **colour** — the support also passes between the subject's limbs, where it is not at
  the edge. GrabCut, with the stubs as sure background and the rest of the mask as
  probable foreground, learns the support's colours from the stubs and takes the other
  pieces of it out (``cut_support``).

A mask without such stubs comes back unchanged, so a subject that fills the frame, a
bird in the sky or a flower on its own is never touched.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.segment import largest_parts

#: an opening this wide relative to the body's half-thickness separates limbs and supports
NARROW = 0.35
#: stubs covering less than this share of the mask are noise, not a support
MIN_STUB = 0.01
#: a stub within this many pixels of the view's edge runs out of the view
EDGE = 2
#: the subject must keep at least this share of the mask (else the cut is not trusted)
KEEP = 0.35


def stubs(mask: np.ndarray, edge: np.ndarray | None = None) -> np.ndarray:
    """The narrow parts of ``mask`` that run out of the view.

    Args:
        mask: bool mask at a working size (a few hundred pixels).
        edge: bool map of where "out of the view" is (default: the image border, ``EDGE``
            pixels wide).

    Returns:
        A bool mask (empty when no narrow part reaches the edge).
    """
    u = mask.astype(np.uint8)
    half = float(cv2.distanceTransform(u, cv2.DIST_L2, 5).max())
    r = max(2, int(round(NARROW * half)))
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    narrow = mask & ~(cv2.morphologyEx(u, cv2.MORPH_OPEN, disk) > 0)
    if edge is None:
        edge = np.zeros(mask.shape, bool)
        edge[:EDGE + 1], edge[-EDGE - 1:], edge[:, :EDGE + 1], edge[:, -EDGE - 1:] = \
            True, True, True, True
    count, labels = cv2.connectedComponents(narrow.astype(np.uint8), connectivity=8)
    if count <= 1:
        return np.zeros(mask.shape, bool)
    touching = np.unique(labels[edge & narrow])
    return np.isin(labels, touching[touching > 0])


def cut_support(rgb: np.ndarray, mask: np.ndarray, edge: np.ndarray | None = None
                ) -> tuple[np.ndarray, float]:
    """``mask`` without the support it runs into (module doc).

    Args:
        rgb: uint8 RGB at the mask's size.
        mask: bool mask of a salient subject.
        edge: where the view ends (``stubs``).

    Returns:
        (the mask, the share of it taken out: 0 when nothing was).
    """
    stub = stubs(mask, edge)
    total = int(mask.sum())
    if total == 0 or stub.sum() < MIN_STUB * total:
        return mask, 0.0
    seed = np.full(mask.shape, cv2.GC_BGD, np.uint8)
    near = cv2.dilate(mask.astype(np.uint8), np.ones((15, 15), np.uint8)) > 0
    seed[near] = cv2.GC_PR_BGD
    seed[mask] = cv2.GC_PR_FGD
    seed[stub] = cv2.GC_BGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)       # the same mask for the same photo, whatever ran before
    try:
        cv2.grabCut(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), seed, None, bgd, fgd, 4,
                    cv2.GC_INIT_WITH_MASK)
    except cv2.error:
        return mask, 0.0
    subject = largest_parts(((seed == cv2.GC_FGD) | (seed == cv2.GC_PR_FGD)) & mask,
                            keep=0.25)
    kept = int(subject.sum())
    if kept < KEEP * total:
        return mask, 0.0
    return subject, round(1.0 - kept / total, 3)
