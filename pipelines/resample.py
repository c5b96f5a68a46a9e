"""Area downscaling of working copies, and a memo for a search that measures the same
states at several sizes many times (``downscale_memo``)."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

import cv2
import numpy as np

P = ParamSpec("P")
R = TypeVar("R")


def downscale(image: np.ndarray, max_side: int) -> np.ndarray:
    """``image`` with its long side at most ``max_side`` (area resampling, never enlarged).

    Inside a ``downscale_memo()`` block a repeat for the same pixels in memory is answered
    from the block's memo (see there).

    Args:
        image: any 2-D or HWC array OpenCV can resize.
        max_side: the longest side allowed.

    Returns:
        The image itself when it already fits, else a resampled copy (read-only when it
        came from or went into a memo: it is shared).
    """
    h, w = image.shape[:2]
    scale = max_side / max(h, w)
    if scale >= 1:
        return image
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return memoised(_DOWNSCALE_MEMO.get(), image, size,
                    lambda: cv2.resize(image, size, interpolation=cv2.INTER_AREA))


def memoised(memo: dict | None, image: np.ndarray, size: tuple[int, int],
             make: Callable[[], np.ndarray]) -> np.ndarray:
    """``make()``, the copy of ``image`` at ``size``; with a ``memo`` (a dict a memo block
    owns), its answer for the same pixels in memory and size when it has one.

    The key is ``memo_key``'s; an answer that goes into the memo is made read-only (it is
    shared), and its entry dies with the array it was made from.
    """
    key = memo_key(image, size) if memo is not None else None
    if key is not None:
        hit = memo.get(key[0])
        if hit is not None and hit[0]() is key[1]:
            return hit[1]
    out = make()
    if key is not None:
        out.setflags(write=False)
        table = memo   # the callback drops the entry when the owner dies (its id is reused)
        memo[key[0]] = (weakref.ref(key[1], lambda _ref, k=key[0]: table.pop(k, None)), out)
    return out


#: The memo of the ``downscale_memo()`` block the current thread (context) is in.
_DOWNSCALE_MEMO: ContextVar[dict | None] = ContextVar("downscale_memo", default=None)


def memo_key(image: np.ndarray, size: tuple[int, int]) -> tuple[tuple, np.ndarray] | None:
    """The memo key of ``image``'s pixels and the array that owns them: the owner's id, the
    view's address, shape, strides and type, and the output size (None: not memoisable)."""
    owner = image
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    try:
        weakref.ref(owner)
    except TypeError:
        return None
    return ((id(owner), image.__array_interface__["data"][0], image.shape, image.strides,
             image.dtype.str, size), owner)


@contextmanager
def memo_scope(var: ContextVar[dict | None]) -> Iterator[None]:
    """A fresh memo in ``var`` for the block (this thread only), cleared at its end: an
    owner that lives on keeps its weakref's callback, not the copies."""
    memo: dict = {}
    token = var.set(memo)
    try:
        yield
    finally:
        var.reset(token)
        memo.clear()


@contextmanager
def downscale_memo() -> Iterator[None]:
    """Within the block, ``downscale`` resamples the same pixels to the same size once.

    A search that measures the same states many times (Autopilot's evaluator reads each
    state at 96, 256, 384 and 512 px, and the state it started from again for every
    candidate) saves most of its resampling. The memo belongs to this block and this
    thread only and is dropped at its end, and an entry dies with the array it was made
    from. It is keyed on the memory the pixels live in (the owning array, the view's
    address, shape, strides and type), so the contract is: **inside the block, no array
    handed to** ``downscale`` **is written to** — the search's states are fresh arrays
    each edit makes, never changed in place. The answers are read-only (shared).
    """
    with memo_scope(_DOWNSCALE_MEMO):
        yield


def with_downscale_memo(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside a ``downscale_memo()`` block (one memo per call)."""
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with downscale_memo():
            return fn(*args, **kwargs)
    return wrapper
