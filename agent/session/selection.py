"""Candidates to click and the clicked selection of a session (issue 24).

A turn whose target is unsure lists the localiser's candidates (``candidates_of``) and
changes nothing; ``choose`` runs the same instruction on the one picked. ``select`` takes
the object under a point (``pipelines.localizers.point``); while the selection exists,
"this", "that", "the selection" and a bare "it" mean it (``refers_to_selection``).
``SelectionMixin`` gives ``EditSession`` these calls.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from agent.brain.selection import refers_to_selection
from agent.session.store import SessionError
from pipelines.localizers import LocalizationError
from pipelines.localizers.point import SelectionError, select_at

#: most candidates a turn offers to click
MAX_CANDIDATES = 6


def candidates_of(found: Any) -> dict[str, tuple[str, float, list[int], np.ndarray]]:
    """A localisation's candidates to click, numbered 1… best first (id → label, score,
    box, mask)."""
    out: dict[str, tuple[str, float, list[int], np.ndarray]] = {}
    for cand in sorted(found.masks, key=lambda c: -float(c.score))[:MAX_CANDIDATES]:
        mask = np.asarray(cand.mask, bool)
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        if rows.size == 0:
            continue
        box = [int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1]
        out[str(len(out) + 1)] = (str(cand.label), float(cand.score), box, mask)
    return out


def masks_to_offer(label: str, masks: list[np.ndarray]
                   ) -> dict[str, tuple[str, float, list[int], np.ndarray]]:
    """Located masks as candidates to click (id → label, score, box, mask), or none when
    there is only one (a question with one answer is "click it")."""
    out: dict[str, tuple[str, float, list[int], np.ndarray]] = {}
    for mask in masks[:MAX_CANDIDATES]:
        mask = np.asarray(mask, bool)
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        if rows.size:
            box = [int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1]
            out[str(len(out) + 1)] = (label, 0.0, box, mask)
    return out if len(out) > 1 else {}


def neighbours_of(found: Any, target: np.ndarray) -> np.ndarray | None:
    """The localisation's other candidates that are not part of ``target``, as one mask
    (the objects a target's mask must not grow into), or None."""
    near = [np.asarray(c.mask, bool) for c in found.candidates
            if np.asarray(c.mask).shape == target.shape and
            np.count_nonzero(c.mask & target) < 0.5 * max(1, np.count_nonzero(c.mask))]
    return np.logical_or.reduce(near) & ~target if near else None


class SelectionMixin:
    """The selection and the pending candidates of an ``EditSession`` (see the module
    doc); the session provides ``turn``, ``current_image``, ``graph`` and ``_lock``."""

    _lock: threading.RLock
    #: the clicked selection (bool mask at the frame's size) and what it is
    selection: np.ndarray | None = None
    selection_info: dict[str, Any] = {}
    #: the last unsure turn's instruction and its candidates (id → mask)
    pending: tuple[str, dict[str, np.ndarray]] | None = None

    def _bind_selection(self, instruction: str, mask: np.ndarray | None
                        ) -> np.ndarray | None:
        """The selection as the turn's mask when the words point at it."""
        width, height = self.graph.size  # type: ignore[attr-defined]
        if mask is None and self.selection is not None and \
                self.selection.shape == (height, width) and refers_to_selection(instruction):
            return self.selection
        return mask

    def offer_candidates(self, instruction: str, masks: dict[str, np.ndarray]) -> None:
        """Remember an unsure turn's candidates, so ``choose`` can run it on one."""
        self.pending = (instruction, dict(masks)) if masks else None

    def choose(self, candidate_id: str | int, *, progress: Any = None) -> Any:
        """Run the last unsure instruction on the candidate ``candidate_id`` (as numbered
        in the turn's ``candidates``).

        Raises:
            SessionError: no candidates are pending, or the id is not one of them.
        """
        if self.pending is None:
            raise SessionError("There are no candidates to choose from: send an "
                               "instruction first.")
        instruction, masks = self.pending
        key = str(candidate_id).strip()
        if key not in masks:
            raise SessionError(f"There is no candidate {key!r}; choose one of "
                               f"{', '.join(masks)}.")
        return self.turn(instruction, masks[key], progress=progress)  # type: ignore[attr-defined]

    def select(self, x: float, y: float, *, add: bool = False) -> dict[str, Any]:
        """Select the object under (x, y) (full-resolution pixels of the current photo);
        with ``add`` it joins the current selection.

        Returns:
            ``{"selection": {"box", "label", "source", "area", "seconds", "parts"}}``.

        Raises:
            SessionError: the point is not inside the photo.
        """
        with self._lock:
            image = self.current_image()  # type: ignore[attr-defined]
            try:
                found = select_at(image, x, y)
            except (SelectionError, LocalizationError) as err:
                raise SessionError(str(err)) from None
            same = self.selection is not None and self.selection.shape == found.mask.shape
            if add and same:
                self.selection = self.selection | found.mask
                parts = int(self.selection_info.get("parts", 1)) + 1
                labels = f"{self.selection_info.get('label', '')} + {found.label}"
            else:
                self.selection, parts, labels = found.mask, 1, found.label
            rows = np.flatnonzero(self.selection.any(axis=1))
            cols = np.flatnonzero(self.selection.any(axis=0))
            self.selection_info = dict(found.to_dict(), label=labels, parts=parts,
                                       area=int(self.selection.sum()),
                                       box=[int(cols[0]), int(rows[0]), int(cols[-1]) + 1,
                                            int(rows[-1]) + 1])
            return {"selection": dict(self.selection_info)}

    def clear_selection(self) -> dict[str, Any]:
        """Drop the selection. Returns ``{"selection": None}``."""
        with self._lock:
            self.selection, self.selection_info = None, {}
        return {"selection": None}
