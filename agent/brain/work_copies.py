"""Work copies of a frame for the critic's checks that do not trust the mask (issue 36).

``work_copy`` is the one way those checks shrink a frame (area interpolation). Inside a
``shared_work_copies()`` block (one turn step) each copy of the same pixels at the same
size is made once, and a frame that ``note_pasted`` describes as another frame with one
box changed gets its copies from that frame's plus a resize of the box's part, bit for
bit the copy of the whole frame where OpenCV's area weights repeat (``_from_base``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import cv2
import numpy as np

from pipelines.resample import memo_key, memo_scope, memoised

#: long side of the frame copy every check of ``agent.brain.independent`` works on
SIDE = 1024

#: the memo of the ``shared_work_copies()`` block this thread (context) is in
_WORK_MEMO: ContextVar[dict | None] = ContextVar("independent_work_copies", default=None)


@contextmanager
def shared_work_copies() -> Iterator[None]:
    """Within the block, ``work_copy`` makes each copy of the same pixels once (the early
    detection, the detector route and the extent checks read the same before frame).

    Keyed like ``pipelines.resample.downscale_memo`` (``memoised``: the array that owns
    the pixels, the view, the size), so the contract is the same: **inside the block, no
    array handed to** ``work_copy`` **is written to**. The copies are read-only (shared);
    the memo belongs to this block and thread and is dropped at its end.
    """
    with memo_scope(_WORK_MEMO):
        yield


def work_copy(image: np.ndarray, side: int = SIDE) -> np.ndarray:
    """RGB copy of ``image`` with its long side at most ``side`` (area interpolation;
    made once per pixels and size inside a ``shared_work_copies()`` block, and for a
    frame ``note_pasted`` describes, from its base frame's copy)."""
    h, w = image.shape[:2]
    s = min(1.0, side / max(h, w))
    memo = _WORK_MEMO.get()
    if s >= 1.0:
        pasted = memo.get(("pasted", id(image))) if memo is not None else None
        if pasted is not None and len(pasted) > 3 and pasted[0]() is image:
            pasted[3](image, None)   # a ``pasted_frame`` read whole: every pixel first
        return np.ascontiguousarray(image[..., :3])
    size = (max(1, round(w * s)), max(1, round(h * s)))

    def make() -> np.ndarray:
        pasted = memo.get(("pasted", id(image))) if memo is not None else None
        if pasted is not None and pasted[0]() is image:
            base = pasted[1].get(size) if isinstance(pasted[1], dict) else \
                work_copy(pasted[1], side)
            if len(pasted) > 3:   # a ``pasted_frame``: the pixels the copy reads are written
                spans = aligned_spans(image.shape[:2], size, pasted[2]) \
                    if base is not None else None
                pasted[3](image, spans[1] if spans is not None else None)
            out = _from_base(image, base, pasted[2], size)
            if out is not None:
                return out
        return cv2.resize(np.ascontiguousarray(image[..., :3]), size,
                          interpolation=cv2.INTER_AREA)

    return memoised(memo, image, size, make)


def note_pasted(frame: np.ndarray, base: np.ndarray, box: tuple[int, int, int, int]
                ) -> None:
    """Inside a ``shared_work_copies()`` block: ``frame`` is ``base`` (same size) with only
    the pixels in ``box`` (x0, y0, x1, y1) changed, so ``work_copy(frame)`` is made from
    ``work_copy(base)`` and a resize of the part around ``box`` (bit for bit the same
    copy; see ``_from_base``). Neither may be written to within the block."""
    memo = _WORK_MEMO.get()
    if memo is None or frame.shape != base.shape:
        return
    _note(memo, frame, base, box)


def pasted_frame(base: np.ndarray, patch: np.ndarray, offset: tuple[int, int]
                 ) -> np.ndarray | None:
    """Inside a ``shared_work_copies()`` block: the frame ``base`` with ``patch`` pasted at
    ``offset`` (x, y), for ``work_copy`` alone (None outside a block).

    Its copies come from ``base``'s and a resize of the part around the patch
    (``note_pasted``), so only that part of the frame is ever written (``base``'s pixels
    there, the patch over them) and the 12-MP copy of ``base`` is made only when a copy
    cannot come from ``base``'s (a scale ``aligned_spans`` does not cut). **Read it
    through** ``work_copy`` **only** (its other pixels may not be there); neither array
    may be written to within the block.
    """
    memo = _WORK_MEMO.get()
    if memo is None:
        return None
    x0, y0 = (int(v) for v in offset)
    h, w = patch.shape[:2]
    box = (x0, y0, x0 + w, y0 + h)
    frame = np.empty_like(base)
    done: list[tuple[int, int, int, int]] = []

    def fill(frame: np.ndarray, span: tuple[int, int, int, int] | None) -> None:
        """Write the frame's pixels in ``span`` (x0, y0, x1, y1; None: all of them); the
        frame is handed in, not held (the memo's entry must not keep it alive)."""
        sx0, sy0, sx1, sy1 = span or (0, 0, frame.shape[1], frame.shape[0])
        if any(d[0] <= sx0 and d[1] <= sy0 and d[2] >= sx1 and d[3] >= sy1 for d in done):
            return
        frame[sy0:sy1, sx0:sx1] = base[sy0:sy1, sx0:sx1]
        ix0, iy0, ix1, iy1 = max(x0, sx0), max(y0, sy0), min(x0 + w, sx1), min(y0 + h, sy1)
        if ix0 < ix1 and iy0 < iy1:   # the patch over the base's pixels
            frame[iy0:iy1, ix0:ix1] = patch[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0,
                                            :frame.shape[2]]
        done.append((sx0, sy0, sx1, sy1))

    _note(memo, frame, base, box, fill)
    return frame


def _note(memo: dict, frame: np.ndarray, base: np.ndarray | dict,
          box: tuple[int, int, int, int] | None,
          fill: Callable[[np.ndarray, tuple[int, int, int, int] | None], None] | None = None
          ) -> None:
    key = ("pasted", id(frame))
    ref = weakref.ref(frame, lambda _ref: memo.pop(key, None))
    memo[key] = (ref, base, box) if fill is None else (ref, base, box, fill)


def copies_of(frame: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Inside a ``shared_work_copies()`` block: the copies of the whole ``frame`` made so
    far, by size (read-only), for ``note_carried`` in the next block."""
    memo = _WORK_MEMO.get()
    key = memo_key(frame, (0, 0)) if memo is not None else None
    if key is None:
        return {}
    return {k[-1]: hit[1] for k, hit in list(memo.items())
            if k[:-1] == key[0][:-1] and hit[0]() is key[1]}


def note_carried(frame: np.ndarray, copies: dict[tuple[int, int], np.ndarray],
                 box: tuple[int, int, int, int] | None) -> None:
    """Inside a ``shared_work_copies()`` block: ``frame`` has the pixels of the frame whose
    ``copies`` (``copies_of``, in an earlier block) were made, except inside ``box``
    (x0, y0, x1, y1; None: none changed). Its copies at those sizes are made from them
    and a resize of the part around ``box`` (``_from_base``: bit for bit), others anew.
    The caller vouches for the pixels: this is for the turn that applied the layers."""
    memo = _WORK_MEMO.get()
    if memo is not None and copies:
        _note(memo, frame, dict(copies), box)


def _period(scale: float) -> int | None:
    """The fewest output pixels of an area resize by ``scale`` (input px per output px)
    that span a whole number of input pixels, if that is a power of two up to 1024."""
    k = 1
    while k <= 1024:
        if float(k * scale).is_integer():
            return k
        k *= 2
    return None


def aligned_spans(shape: tuple[int, int], size: tuple[int, int],
                  box: tuple[int, int, int, int]
                  ) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None:
    """Where an area resize of an ``shape`` (h, w) frame to ``size`` (w, h) can be cut at
    ``box`` (x0, y0, x1, y1): the output span ``(x0, y0, x1, y1)`` that covers the box and
    the input span whose resize to it is, bit for bit, that part of the whole resize.

    OpenCV's area weights of output pixel ``d`` come from ``d · scale`` (input pixels per
    output pixel, ``1 / (out / in)`` as OpenCV computes it). When ``scale`` is a multiple
    of 1/2^k (k ≤ 10) every such product is exact, and a crop that starts and ends on a
    whole number of input pixels per ``period`` output pixels gets the very same weights
    (other scales: None). Output pixels outside the span read input pixels outside the box
    only.
    """
    h, w = shape
    scales = (1.0 / (size[0] / w), 1.0 / (size[1] / h))
    periods = [_period(s) for s in scales]
    if None in periods:
        return None
    spans = []
    for lo, hi, s, k, n_in, n_out in zip(box[:2], box[2:], scales, periods, (w, h), size):
        step = int(k * s)                    # input pixels per ``k`` output pixels
        o0, o1 = lo // step * k, min(n_out, -(-hi // step) * k)
        spans.append((o0, o1, int(o0 * s), n_in if o1 == n_out else int(o1 * s)))
    (ox0, ox1, ix0, ix1), (oy0, oy1, iy0, iy1) = spans
    return (ox0, oy0, ox1, oy1), (ix0, iy0, ix1, iy1)


def _from_base(frame: np.ndarray, base: np.ndarray | None,
               box: tuple[int, int, int, int] | None, size: tuple[int, int]
               ) -> np.ndarray | None:
    """``frame``'s area copy at ``size`` from ``base`` (the copy at ``size`` of a frame
    with the same pixels outside ``box``), the part over ``box`` resized anew
    (``aligned_spans``: bit for bit the whole frame's copy; other scales: None)."""
    if base is None or base.shape[:2] != (size[1], size[0]):
        return None
    if box is None:
        return base   # nothing changed: the very copy (read-only, shared)
    spans = aligned_spans(frame.shape[:2], size, box)
    if spans is None:
        return None
    (ox0, oy0, ox1, oy1), (ix0, iy0, ix1, iy1) = spans
    out = np.array(base, copy=True)
    out[oy0:oy1, ox0:ox1] = cv2.resize(np.ascontiguousarray(frame[iy0:iy1, ix0:ix1, :3]),
                                       (ox1 - ox0, oy1 - oy0), interpolation=cv2.INTER_AREA)
    return out


def area_resize_in_box(image: np.ndarray, size: tuple[int, int],
                       box: tuple[int, int, int, int] | None, *, times: int = 1
                       ) -> np.ndarray:
    """``cv2.resize(image * times, size, interpolation=cv2.INTER_AREA)`` of an ``image``
    that is zero outside ``box`` (None: zero everywhere; ``times`` multiplies in the
    image's own type, as numpy does), reading only the box's part where ``aligned_spans``
    allows: bit for bit the same answer (other scales resize the whole)."""
    out_shape = (size[1], size[0]) + image.shape[2:]
    if box is None:
        return np.zeros(out_shape, image.dtype)
    h, w = image.shape[:2]
    spans = aligned_spans((h, w), size, box) if size[0] <= w and size[1] <= h else None
    if spans is None:
        if times != 1:   # the product in a zeroed array: only the box's rows are written
            x0, y0, x1, y1 = box
            scaled = np.zeros(image.shape, image.dtype)
            scaled[y0:y1, x0:x1] = image[y0:y1, x0:x1] * times
            image = scaled
        return cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    (ox0, oy0, ox1, oy1), (ix0, iy0, ix1, iy1) = spans
    part = image[iy0:iy1, ix0:ix1]
    out = np.zeros(out_shape, image.dtype)
    out[oy0:oy1, ox0:ox1] = cv2.resize(part * times if times != 1 else
                                       np.ascontiguousarray(part),
                                       (ox1 - ox0, oy1 - oy0), interpolation=cv2.INTER_AREA)
    return out
