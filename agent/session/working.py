"""The frame each step of a turn edits: the head plus the turn's staged layers, and the
critic's work copies carried from one step's frame to the next (issue 36).

A step's frame is the frame before it with the layers of the step before applied, so the
copies the critic made of that frame (``agent.brain.work_copies``) give the next frame's
copies bit for bit with only the part around the layers' box resized anew
(``note_carried``). They are carried only when this class applied those layers itself
to the very array the copies were made of, or to a copy of it: never on a guess.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from agent.brain.work_copies import copies_of, note_carried, shared_work_copies
from pipelines.editors.frame import apply_frame

Box = tuple[int, int, int, int]


class WorkingFrame:
    """The frame the next step edits (``image``) and the blocks its steps run in
    (``step``). ``graph`` is the session's ``StateGraph``.

    ``_tracked`` is the array whose pixels are those the carried copies were made of,
    except inside the ``_changed`` boxes (None: unknown, nothing is carried).
    """

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        #: the full-size working copy, made when a step follows a staged one
        self.work: np.ndarray | None = None
        #: how many staged steps ``work`` holds
        self.applied = 0
        self.forget()

    def forget(self) -> None:
        """Drop the working copy and what is carried (an undo inside the turn)."""
        self.work = None
        self._tracked: np.ndarray | None = None
        self._changed: list[Box] | None = None
        self._copies: dict[tuple[int, int], np.ndarray] = {}

    def image(self, staged: list[tuple[Any, Any, list[Any]]], frames: dict[int, Any]
              ) -> np.ndarray:
        """The head plus the staged layers. A one-action turn never copies the frame."""
        if not staged:
            return self._returned(self.graph.image())
        if self.work is None:
            base = self.graph.image()
            self.work = np.array(base, copy=True)
            self.applied = 0
            if base is self._tracked:
                self._tracked = self.work   # the same pixels in a new array
        for st, _, layers in staged[self.applied:]:
            if st.index in frames:
                self.work = apply_frame(self.work, frames[st.index].change)
            for layer in layers:
                layer.apply(self.work)
                if self.work is self._tracked and self._changed is not None:
                    self._changed.append(tuple(int(v) for v in layer.bbox))
        self.applied = len(staged)
        return self._returned(self.work)

    def _returned(self, frame: np.ndarray) -> np.ndarray:
        if frame is not self._tracked:
            self._tracked, self._changed = None, None
        return frame

    @contextmanager
    def step(self, frame: np.ndarray) -> Iterator[None]:
        """The ``shared_work_copies`` block of one step on ``frame`` (what ``image`` just
        returned): the copies made of ``frame`` are kept for the next step's frame, and
        this one's come from the last step's where ``image`` vouches for the pixels."""
        with shared_work_copies():
            if frame is self._tracked and self._changed is not None:
                note_carried(frame, self._copies, _union(self._changed))
            try:
                yield
            finally:   # nothing writes to ``frame`` within the block (the memo's contract)
                self._copies = copies_of(frame)
                self._tracked, self._changed = frame, []


def _union(boxes: list[Box]) -> Box | None:
    """The box around ``boxes`` (None when there are none: nothing changed)."""
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


def release_memory() -> None:
    """Hand freed heap pages back to the OS after a turn (glibc only; a no-op elsewhere).

    An edit allocates and frees many mid-sized float arrays; without this the freed heap
    stays in the process and a long session's resident memory creeps up.
    """
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL("libc.so.6") if sys.platform.startswith("linux") else False
        except OSError:
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC: Any = None
