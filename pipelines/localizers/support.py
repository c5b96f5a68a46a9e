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

The cut can stop short: GrabCut may keep a broad piece of the support that its stubs lead
into, when that piece sits where the subject's own colours could be (the sand ridge in
front of the Bent Pyramid, one stuff with the dune cut away beside it, kept as the
pyramid's foot: "make the pyramid warmer" warmed 9,518 px of desert, done).
``runs_on`` measures what of the support's colour, joined to what was cut, the kept mask
still holds in one broad piece; ``cut_evidence`` reports it beside the cut's share, and
``assurance`` asks where the subject ends when it is large.
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
#: a kept pixel is of the support's colour within this ΔE (Lab, after a 5-px blur) of the
#: stubs' median colour ...
LIKE_SUPPORT = 10.0
#: ... which is read only when the kept subject's median colour is at least this far from
#: it (the support is another stuff; a cut that took a piece of the subject itself, a
#: pyramid's corner, leaves the rest of that same stuff)
OTHER_STUFF = 12.0
#: a piece of the support's colour joined to what was cut, after an opening of this
#: diameter (px at the work size) takes away specks and threads, holding at least this
#: share of the kept mask is the support running on into it. Every cut of a tune photo's
#: main subject, as shot and on its lighter, darker and 0.6x prints (24-26 cuts each):
#: the Bent Pyramid's ridge 0.26-0.37 (the support 13-18 ΔE from the pyramid); every
#: other cut whose support is 12 ΔE or more from what it kept 0.09 or less, but the
#: proboscis monkeys on the lighter print (0.15: their fur's pale patches, asked there as
#: a guessed subject already)
RUNS_ON, OPENING = 0.1, 7


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


def _lab(rgb: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(cv2.GaussianBlur(rgb, (5, 5), 0), cv2.COLOR_RGB2LAB).astype(np.float32)
    lab[..., 0] *= 100.0 / 255.0
    lab[..., 1:] -= 128.0
    return lab


def runs_on(rgb: np.ndarray, mask: np.ndarray, kept: np.ndarray) -> float:
    """The share of ``kept`` (``mask`` after ``cut_support``) that is the support running
    on into it: its largest broad piece of the stubs' colour joined to what was cut
    (module doc); 0 when under ``RUNS_ON``, or when the support is the kept subject's own
    colour (``OTHER_STUFF``) and nothing tells them apart.

    Args:
        rgb: uint8 RGB at the masks' size.
        mask: the salient mask before the cut.
        kept: what the cut kept of it.
    """
    stub, removed = stubs(mask), mask & ~kept
    total = int(kept.sum())
    if not stub.any() or not removed.any() or total == 0:
        return 0.0
    lab = _lab(rgb)
    colour = np.median(lab[stub], axis=0)
    if float(np.linalg.norm(colour - np.median(lab[kept], axis=0))) < OTHER_STUFF:
        return 0.0
    like = kept & (np.linalg.norm(lab - colour, axis=-1) < LIKE_SUPPORT)
    _, labels = cv2.connectedComponents((like | removed).astype(np.uint8), connectivity=8)
    joined = np.unique(labels[removed])
    piece = like & np.isin(labels, joined[joined > 0])
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (OPENING, OPENING))
    broad = cv2.morphologyEx(piece.astype(np.uint8), cv2.MORPH_OPEN, disk)
    count, _, stats, _ = cv2.connectedComponentsWithStats(broad, connectivity=8)
    share = float(stats[1:, cv2.CC_STAT_AREA].max()) / total if count > 1 else 0.0
    return round(share, 3) if share >= RUNS_ON else 0.0


def cut_evidence(rgb: np.ndarray, mask: np.ndarray, kept: np.ndarray, cut: float
                 ) -> dict[str, float]:
    """The evidence a subject cut from its support carries: the share cut
    (``support_cut``) and, when the support runs on into what was kept, that share
    (``support_runs_on``, ``runs_on``); empty when nothing was cut."""
    if not cut:
        return {}
    runs = runs_on(rgb, mask, kept)
    return {"support_cut": cut} | ({"support_runs_on": runs} if runs else {})
