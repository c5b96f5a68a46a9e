"""Patch-based image completion: PatchMatch nearest fields and patch voting, coarse to fine.

The hole is filled the way Wexler, Shechtman and Irani complete images, with Barnes et
al.'s PatchMatch to find the nearest patches: at each scale of a pyramid every patch that
touches the hole looks for its most similar fully known patch (random search plus
propagation of good offsets from its neighbours), then each hole pixel becomes the average
of what the overlapping patches' matches say it should be; a few such rounds per scale,
from a scale where the hole is small up to full resolution. Textures and lines continue
from the surroundings, with no block seams. Each finer level starts from the coarser
field's patches copied at its own scale (not a blurred enlargement), so the fill keeps the
surroundings' fine detail; levels whose hole is very large (a 1-MP object at 12 MP) get one
light round, the structure being settled below them.

Patch distances are computed on a PCA projection of the patches (the leading components of
the known patches, evaluated for every pixel by a handful of ``cv2.filter2D`` calls), so a
candidate costs a 12-number comparison instead of 147.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import cv2
import numpy as np

log = logging.getLogger(__name__)

PATCH = 7
COMPONENTS = 12
#: the pyramid's coarsest level has a hole at most this many pixels across
COARSE_SIDE = 64
ROUNDS_COARSE, ROUNDS_MIDDLE, ROUNDS_FINE = 5, 3, 2
#: a level whose hole has more pixels than this gets one light round: the levels below
#: settled the structure, so the field only needs a local polish (short propagation, a
#: random search within ``LARGE_RADIUS``) and a vote over every other patch
LARGE_HOLE = 120_000
LARGE_STEPS, LARGE_RADIUS, LARGE_STRIDE = (2, 1), 2 * PATCH, 2
#: from this level on, a level starts from the coarser field's patches copied at its own
#: scale (sharp) rather than from the coarser result enlarged (blurred, so its matches
#: drift to smooth patches: smeared fills); the first refinement of the coarse exemplar
#: layout still starts smooth, so its rounds can correct the layout
SHARP_START_LEVEL = 2
#: the most pixels of a crop completed at full resolution; a larger crop (a large hole in
#: a 50-MP photo) is completed on a copy scaled to fit and its detail added back, so the
#: cost is bounded by this, never by the photo's size
MAX_WORK_PIXELS = 2_500_000


def _pyramid(img: np.ndarray, hole: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    levels = [(img, hole)]
    while True:
        cur, h = levels[-1]
        rows, cols = np.nonzero(h)
        side = max(np.ptp(rows) + 1, np.ptp(cols) + 1) if rows.size else 0
        if side <= COARSE_SIDE or min(cur.shape[:2]) < 6 * PATCH:
            break
        size = ((cur.shape[1] + 1) // 2, (cur.shape[0] + 1) // 2)
        small = cv2.resize(cur, size, interpolation=cv2.INTER_AREA)
        small_hole = cv2.resize(h.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0
        levels.append((small, small_hole))
    return levels[::-1]


def _valid_sources(hole: np.ndarray) -> np.ndarray:
    """Centres whose whole patch is known and inside the image."""
    half = PATCH // 2
    bad = cv2.dilate(hole.astype(np.uint8), np.ones((PATCH, PATCH), np.uint8)) > 0
    ok = ~bad
    ok[:half], ok[-half:], ok[:, :half], ok[:, -half:] = False, False, False, False
    return ok


def _basis(img: np.ndarray, valid: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(COMPONENTS, PATCH, PATCH, 3) leading principal directions of known patches."""
    half = PATCH // 2
    ys, xs = np.nonzero(valid)
    pick = rng.choice(ys.size, size=min(ys.size, 3000), replace=False)
    ys, xs = ys[pick], xs[pick]
    offsets = np.arange(-half, half + 1)
    patches = img[ys[:, None, None] + offsets[None, :, None],
                  xs[:, None, None] + offsets[None, None, :]]
    flat = patches.reshape(len(ys), -1)
    flat = (flat - flat.mean(axis=0)).astype(np.float64)
    _, vectors = np.linalg.eigh(flat.T @ flat)   # ascending eigenvalues
    k = min(COMPONENTS, vectors.shape[1])
    return vectors[:, ::-1][:, :k].T.reshape(k, PATCH, PATCH, 3).astype(np.float32)


def _descriptors(img: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """(H, W, k): every pixel's patch projected on the basis (correlation = patch · basis)."""
    # contiguous channel planes in, contiguous planes summed (a strided channel view is
    # copied by every filter2D call, a strided sum is several times slower)
    # copied into its channel once per component: the (H, W, k) result is the only
    # full-size array (no (k, H, W) stack and transposed copy beside it)
    channels = cv2.split(img)
    out = np.empty(img.shape[:2] + (basis.shape[0],), np.float32)
    for k in range(basis.shape[0]):
        plane = cv2.filter2D(channels[0], cv2.CV_32F, basis[k, ..., 0],
                             borderType=cv2.BORDER_REFLECT)
        for c in (1, 2):
            plane += cv2.filter2D(channels[c], cv2.CV_32F, basis[k, ..., c],
                                  borderType=cv2.BORDER_REFLECT)
        out[..., k] = plane
    return out


class _Field:
    """The nearest-patch field of the target pixels (hole dilated by half a patch)."""

    def __init__(self, hole: np.ndarray, valid: np.ndarray, rng: np.random.Generator) -> None:
        half = PATCH // 2
        self.shape = hole.shape
        self.targets = cv2.dilate(hole.astype(np.uint8), np.ones((PATCH, PATCH), np.uint8)) > 0
        self.ty, self.tx = np.nonzero(self.targets)
        self.valid = valid
        self.vy, self.vx = np.nonzero(valid)
        self.rng = rng
        self.sy = np.zeros(self.ty.size, np.int32)
        self.sx = np.zeros(self.ty.size, np.int32)
        self.cost = np.full(self.ty.size, np.inf, np.float32)
        self.index = np.full(hole.shape, -1, np.int32)
        self.index[self.ty, self.tx] = np.arange(self.ty.size)
        self.half = half
        #: targets whose source came from a coarser field (the rest are random)
        self.seeded = np.zeros(self.ty.size, bool)
        self.randomise(np.ones(self.ty.size, bool))

    def randomise(self, which: np.ndarray) -> None:
        pick = self.rng.integers(0, self.vy.size, size=int(which.sum()))
        self.sy[which], self.sx[which] = self.vy[pick], self.vx[pick]

    def seed_from(self, coarse: _Field) -> None:
        """Start from a coarser level's field (offsets doubled)."""
        cy = np.minimum(self.ty // 2, coarse.shape[0] - 1)
        cx = np.minimum(self.tx // 2, coarse.shape[1] - 1)
        j = coarse.index[cy, cx]
        has = j >= 0
        sy = np.where(has, coarse.sy[np.maximum(j, 0)] * 2 + self.ty % 2, 0)
        sx = np.where(has, coarse.sx[np.maximum(j, 0)] * 2 + self.tx % 2, 0)
        sy = np.clip(sy, 0, self.shape[0] - 1)
        sx = np.clip(sx, 0, self.shape[1] - 1)
        ok = has & self.valid[sy, sx]
        self.sy[ok], self.sx[ok] = sy[ok], sx[ok]
        self.seeded = ok

    def seed_offsets(self, offsets: np.ndarray) -> None:
        """Start from copy offsets (dy, dx) per pixel, where they point at valid sources."""
        sy = np.clip(self.ty + offsets[self.ty, self.tx, 0], 0, self.shape[0] - 1)
        sx = np.clip(self.tx + offsets[self.ty, self.tx, 1], 0, self.shape[1] - 1)
        ok = self.valid[sy, sx]
        self.sy[ok], self.sx[ok] = sy[ok], sx[ok]

    def _try(self, desc: np.ndarray, target: np.ndarray, sy: np.ndarray,
             sx: np.ndarray) -> None:
        h, w = self.shape
        sy = np.clip(sy, 0, h - 1)
        sx = np.clip(sx, 0, w - 1)
        flat = sy * w + sx
        ok = np.take(self.valid.ravel(), flat)
        diff = np.take(desc.reshape(-1, desc.shape[-1]), flat, axis=0)
        diff -= target
        cost = np.einsum("ij,ij->i", diff, diff)
        better = ok & (cost < self.cost)
        self.sy[better], self.sx[better], self.cost[better] = sy[better], sx[better], \
            cost[better]

    def improve(self, desc: np.ndarray, steps: tuple[int, ...] = (8, 4, 2, 1),
                radius: int | None = None) -> None:
        """One PatchMatch round: re-score, propagate (jump flooding), random search.

        Args:
            desc: (H, W, k) patch descriptors of the current fill.
            steps: propagation distances, long to short.
            radius: the random search's first radius (default: the whole crop); it halves
                down to 1 px.
        """
        target = desc[self.ty, self.tx]
        diff = desc[self.sy, self.sx] - target
        self.cost = np.einsum("ij,ij->i", diff, diff)
        full_y = np.zeros(self.shape, np.int32)
        full_x = np.zeros(self.shape, np.int32)
        for step in steps:
            full_y[self.ty, self.tx], full_x[self.ty, self.tx] = self.sy, self.sx
            for dy, dx in ((step, 0), (-step, 0), (0, step), (0, -step)):
                qy = np.clip(self.ty + dy, 0, self.shape[0] - 1)
                qx = np.clip(self.tx + dx, 0, self.shape[1] - 1)
                inside = self.targets[qy, qx]
                sy = np.where(inside, full_y[qy, qx] - dy, self.sy)
                sx = np.where(inside, full_x[qy, qx] - dx, self.sx)
                self._try(desc, target, sy, sx)
        radius = max(self.shape) if radius is None else radius
        while radius >= 1:
            jitter = self.rng.integers(-radius, radius + 1, size=(2, self.ty.size))
            self._try(desc, target, self.sy + jitter[0], self.sx + jitter[1])
            radius //= 2

    def vote(self, img: np.ndarray, hole: np.ndarray, stride: int = 1,
             seeded_only: bool = False) -> np.ndarray:
        """Each hole pixel: the mean of what the overlapping patches' matches put there.

        Args:
            img: (H, W, 3) the current fill (kept where no patch votes).
            hole: bool (H, W).
            stride: take every ``stride``-th overlapping patch in each direction (2 on
                large levels: a quarter of the work, the same spatial extent).
            seeded_only: only the targets seeded from a coarser field vote (random
                sources would paste random content).
        """
        h, w = self.shape
        r = self.half
        wide = w + 2 * r   # a grid padded by half a patch: no bounds checks below
        src = np.full((h + 2 * r) * wide, -1, np.int64)
        voters = self.seeded if seeded_only else slice(None)
        src[(self.ty[voters] + r) * wide + self.tx[voters] + r] = \
            (self.sy[voters] + r) * wide + self.sx[voters] + r
        flat = np.pad(img, ((r, r), (r, r), (0, 0)), mode="edge").reshape(-1, 3)
        flat = np.vstack([flat, np.zeros((1, 3), np.float32)])   # the "no vote" row
        nothing = flat.shape[0] - 1
        hy, hx = np.nonzero(hole)
        here = (hy + r) * wide + hx + r
        total = np.zeros((hy.size, 3), np.float32)
        count = np.zeros(hy.size, np.float32)
        shifts = range(-r, r + 1) if stride == 1 else range(-r, r + 1, stride)
        for dy in shifts:
            for dx in shifts:
                shift = dy * wide + dx
                source = np.take(src, here - shift)
                use = source >= 0
                total += np.take(flat, np.where(use, source + shift, nothing), axis=0)
                count += use
        out = img.copy()
        done = count > 0
        out[hy[done], hx[done]] = total[done] / count[done, None]
        return out


def complete(img: np.ndarray, hole: np.ndarray, seed: int = 0,
             first_guess: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None
             ) -> np.ndarray:
    """Fill ``hole`` in ``img`` (float32 in [0, 1]); a crop larger than ``MAX_WORK_PIXELS``
    is completed on a copy scaled to fit, and its detail is added back at full resolution
    (``_bounded``), so memory and time stay bounded at any photo size (see ``_complete``
    for the method)."""
    img = np.ascontiguousarray(img, dtype=np.float32)
    hole = hole.astype(bool)
    if not hole.any() or hole.all():
        return img
    if hole.shape[0] * hole.shape[1] > MAX_WORK_PIXELS:
        out = img.copy()
        _bounded(out, hole, seed, first_guess)
        return out
    return _complete(img, hole, seed, first_guess)[0]


def complete_u8(img: np.ndarray, hole: np.ndarray, seed: int = 0,
                first_guess: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
                | None = None) -> None:
    """``complete`` on a ``uint8`` crop, written into it in place (only the hole's pixels
    change). A crop larger than ``MAX_WORK_PIXELS`` never exists in float: it is shrunk
    strip by strip and its hole is written back strip by strip (``_bounded``)."""
    hole = hole.astype(bool)
    if not hole.any() or hole.all():
        return
    if hole.shape[0] * hole.shape[1] > MAX_WORK_PIXELS:
        _bounded(img, hole, seed, first_guess)
        return
    filled = _complete(img.astype(np.float32) / 255.0, hole, seed, first_guess)[0]
    img[hole] = np.clip(np.rint(filled[hole] * 255.0), 0, 255).astype(np.uint8)


#: rows of a crop converted to float at a time by ``_bounded`` (times the crop's width)
STRIP_PIXELS = 2_000_000


def _unit(values: np.ndarray) -> np.ndarray:
    """float32 in [0, 1] from ``uint8`` or float pixels."""
    if values.dtype == np.uint8:
        return values.astype(np.float32) * np.float32(1.0 / 255.0)
    return values.astype(np.float32)


def _shrunk(img: np.ndarray, hole: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The crop's ``k``×``k`` block means (float32) and the blocks that touch the hole, a
    strip of rows at a time; the rows and columns past the last whole block belong to it
    (they count for the hole, not for the means)."""
    h, w = hole.shape
    sh, sw = max(1, h // k), max(1, w // k)
    small = np.empty((sh, sw, 3), np.float32)
    small_hole = np.zeros((sh, sw), bool)
    step = max(1, STRIP_PIXELS // (k * w))
    columns = np.arange(sw) * k
    for r in range(0, sh, step):
        r1 = min(sh, r + step)
        rows = slice(r * k, h if r1 == sh else r1 * k)
        strip = _unit(img[r * k:r1 * k, :sw * k])
        small[r:r1] = cv2.resize(strip, (sw, r1 - r), interpolation=cv2.INTER_AREA)
        touched = np.logical_or.reduceat(hole[rows], np.arange(r1 - r) * k, axis=0)
        small_hole[r:r1] = np.logical_or.reduceat(touched, columns, axis=1)
    return small, small_hole


#: ``cv2.remap`` takes maps of at most this many columns (and rows)
_REMAP_SIDE = 4096


def _bilinear(small: np.ndarray, ys: np.ndarray, xs: np.ndarray, k: int) -> np.ndarray:
    """``small`` enlarged ``k`` times (pixel centres aligned and edges clamped, as
    ``cv2.resize``), at the full-resolution pixels ``(ys, xs)`` only (``cv2.remap``: its
    1/32-px steps are far below a smooth enlargement's change)."""
    n = ys.size
    rows = -(-n // _REMAP_SIDE)
    maps = np.zeros((2, rows * _REMAP_SIDE), np.float32)
    np.multiply(xs, 1.0 / k, out=maps[0, :n], casting="unsafe")
    np.multiply(ys, 1.0 / k, out=maps[1, :n], casting="unsafe")
    maps[:, :n] += np.float32(0.5 / k - 0.5)
    out = cv2.remap(small, maps[0].reshape(rows, -1), maps[1].reshape(rows, -1),
                    cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(-1, small.shape[2])[:n]


def _bounded(img: np.ndarray, hole: np.ndarray, seed: int,
             first_guess: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None
             ) -> None:
    """Coarse fill on ``k``×``k`` block means (at most ``MAX_WORK_PIXELS``), detail added
    back, written into ``img`` (``uint8`` or float32) in place: each full-resolution hole
    pixel takes the coarse fill (enlarged) plus the fine detail (the image minus its
    enlarged block means) of the full-resolution pixel its coarse match points at.

    Only the hole's pixels and their sources are touched at full resolution, a strip of
    rows at a time: no full-size float, blend or index array (a 50-MP crop's float copy
    alone is 600 MB)."""
    h, w = hole.shape
    k = int(np.ceil(np.sqrt(h * w / MAX_WORK_PIXELS)))
    small, small_hole = _shrunk(img, hole, k)
    filled, field = _complete(small, small_hole, seed, first_guess)
    sh, sw = small.shape[:2]
    step = max(1, STRIP_PIXELS // w)
    hole_flat = np.ascontiguousarray(hole).reshape(-1)
    index = field.index.reshape(-1) if field is not None else None
    for r in range(0, h, step):
        ys, xs = np.nonzero(hole[r:r + step])
        if not ys.size:
            continue
        ys, xs = ys.astype(np.int32) + r, xs.astype(np.int32)
        values = _bilinear(filled, ys, xs, k)
        if field is not None and index is not None:
            cy, oy = np.divmod(ys, k)
            cx, ox = np.divmod(xs, k)
            j = index[np.minimum(cy, sh - 1) * sw + np.minimum(cx, sw - 1)]
            at = np.flatnonzero(j >= 0)
            j = j[at]
            sy = np.minimum(field.sy[j] * k + oy[at], h - 1)
            sx = np.minimum(field.sx[j] * k + ox[at], w - 1)
            known = ~hole_flat[sy * w + sx]
            at, sy, sx = at[known], sy[known], sx[known]
            # the fine detail: the source pixel minus its enlarged block mean
            values[at] += _unit(img[sy, sx]) - _bilinear(small, sy, sx, k)
        np.clip(values, 0.0, 1.0, out=values)
        img[ys, xs] = np.rint(values * 255.0).astype(np.uint8) if img.dtype == np.uint8 \
            else values


def _complete(img: np.ndarray, hole: np.ndarray, seed: int = 0,
              first_guess: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
              | None = None) -> tuple[np.ndarray, _Field | None]:
    """Fill ``hole`` in ``img`` by multi-scale PatchMatch completion.

    Args:
        img: float32 (H, W, 3) in [0, 1], a crop with known surroundings around the hole.
        hole: bool (H, W), True on the pixels to fill.
        seed: random seed (the fill is deterministic for a given seed).
        first_guess: ``(img, hole, offsets) -> filled`` for the coarsest level (an exemplar
            fill that writes each filled pixel's copy offset into ``offsets``, int32
            (H, W, 2)); it then seeds the nearest-patch field. Default: a smooth fill.

    Returns:
        float32 (H, W, 3): known pixels unchanged, the hole filled; and the finest
        level's nearest-patch field (None when the fill fell back to a smooth one).
    """
    if not hole.any() or hole.all():
        return img, None
    rng = np.random.default_rng(seed)
    previous: tuple[_Field, np.ndarray] | None = None
    result = img
    for n, (level_img, level_hole) in enumerate(_pyramid(img, hole)):
        started = time.perf_counter()
        valid = _valid_sources(level_hole)
        if valid.sum() < 16:
            return _smooth_fill(img, hole), None
        field = _Field(level_hole, valid, rng)
        large = n > 0 and field.ty.size > LARGE_HOLE
        if previous is None:
            work, exemplar = _first_level(field, level_img, level_hole, first_guess)
            rounds = 0 if exemplar else ROUNDS_COARSE
        else:
            field.seed_from(previous[0])
            up = cv2.resize(previous[1], (level_img.shape[1], level_img.shape[0]),
                            interpolation=cv2.INTER_LINEAR)
            work = np.where(level_hole[..., None], up, level_img).astype(np.float32)
            if n >= SHARP_START_LEVEL:
                work = field.vote(work, level_hole, LARGE_STRIDE if large else 1,
                                  seeded_only=True)
            rounds = 1 if large else ROUNDS_FINE if level_img.shape == img.shape \
                else ROUNDS_MIDDLE
        basis = _basis(level_img, valid, rng)
        for _ in range(rounds):
            if large:
                field.improve(_descriptors(work, basis), LARGE_STEPS, LARGE_RADIUS)
                work = field.vote(work, level_hole, LARGE_STRIDE)
            else:
                field.improve(_descriptors(work, basis))
                work = field.vote(work, level_hole)
        previous, result = (field, work), work
        log.debug("completion level %d: %s px, hole %d px, %d rounds, %.2f s", n,
                  level_img.shape[:2], int(level_hole.sum()), rounds,
                  time.perf_counter() - started)
    field = previous[0] if previous is not None else None
    return np.where(hole[..., None], result, img).astype(np.float32), field


def _first_level(field: _Field, img: np.ndarray, hole: np.ndarray,
                 first_guess: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
                 | None) -> tuple[np.ndarray, bool]:
    """The coarsest level's fill and whether an exemplar guess seeded the field."""
    if first_guess is None:
        return _smooth_fill(img, hole), False
    offsets = np.zeros(hole.shape + (2,), np.int32)
    work = first_guess(img, hole, offsets).astype(np.float32)
    field.seed_offsets(offsets)
    return work, True


def _smooth_fill(img: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """A smooth first guess (OpenCV Telea) that the patch rounds then replace."""
    u8 = np.clip(img * 255.0 + 0.5, 0, 255).astype(np.uint8)
    filled = cv2.inpaint(u8, hole.astype(np.uint8) * 255, 3, cv2.INPAINT_TELEA)
    return np.where(hole[..., None], filled.astype(np.float32) / 255.0, img).astype(np.float32)
