"""Candidates to click and click-to-select (issue 24): the Edit tab's photo clicks, the
API/MCP tools ``select``, ``clear_selection`` and ``choose_region``, and the preview with
the selection outlined and the candidates numbered."""

from __future__ import annotations

import secrets
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from pipelines.files import atomic_write
from pipelines.progress import ProgressFn
from web.sessions import WebSession, with_session
from web.views import SessionView, preview_file, session_view, turn_messages

#: outline colour of the selection, and of the numbered candidates (RGB)
SELECTION_RGB = (255, 214, 10)
CANDIDATE_RGB = (255, 45, 85)


def choose_region(session_id: str | None, candidate_id: str | int, *,
                  progress: ProgressFn | None = None) -> tuple[SessionView, dict]:
    """Run the last unsure instruction on one of its numbered candidates.

    Args:
        session_id: the web session.
        candidate_id: an ``id`` from the turn result's ``candidates`` ("1", "2" …).
        progress: called with ``(fraction, text)`` while the turn runs.

    Returns:
        ``(page state, TurnResult.to_dict())`` as ``edit_turn``.

    Raises:
        SessionError: nothing to choose from, or an unknown candidate.
    """
    def run(session: WebSession) -> tuple[SessionView, dict]:
        edit = session.edit
        pending = edit.pending
        result = edit.choose(candidate_id, progress=progress).to_dict()
        text = f"{pending[0]} (candidate {candidate_id})" if pending else str(candidate_id)
        said = turn_messages(text, result)
        session.chat.extend(said)
        session.save_ui()
        return session_view(session, message=said[-1]["content"]), result

    return with_session(session_id, run, create=False)


def select(session_id: str | None, x: float, y: float, add: bool = False) -> dict:
    """Select the object under a point of the current photo (full-resolution pixels).

    While the selection exists, "this", "that", "the selection" and a bare "it" in an
    instruction mean it; "the whole photo" overrides it.

    Args:
        session_id: the web session.
        x, y: the point in the current photo's full-resolution pixels.
        add: add the object to the current selection instead of replacing it.

    Returns:
        ``{"session_id", "head", "selection": {"box", "label", "source", "area",
        "parts", "seconds"}}``.
    """
    def run(session: WebSession) -> dict:
        found = session.edit.select(x, y, add=bool(add))
        return {"session_id": session.id, "head": session.edit.head, **found}

    return with_session(session_id, run, create=False)


def clear_selection(session_id: str | None) -> dict:
    """Drop the session's selection. Returns ``{"session_id", "head", "selection": None}``."""
    def run(session: WebSession) -> dict:
        return {"session_id": session.id, "head": session.edit.head,
                **session.edit.clear_selection()}

    return with_session(session_id, run, create=False)


def selection_mask(session_id: str | None) -> np.ndarray | None:
    """The session's selection as a bool mask at the photo's size (None when none)."""
    def run(session: WebSession) -> np.ndarray | None:
        return None if not session.has_image else session.edit.selection

    return with_session(session_id, run, create=False)


def _boxes(masks: dict[str, np.ndarray]) -> dict[str, tuple[int, int, int, int]]:
    out = {}
    for cid, mask in masks.items():
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        if rows.size:
            out[cid] = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
    return out


def candidate_at(session_id: str | None, x: float, y: float) -> str | None:
    """The pending candidate whose box holds (x, y) (full-resolution pixels; the smallest
    such box), or None when none is pending there."""
    def run(session: WebSession) -> str | None:
        pending = session.edit.pending if session.has_image else None
        if not pending:
            return None
        holding = [(cid, b) for cid, b in _boxes(pending[1]).items()
                   if b[0] <= x < b[2] and b[1] <= y < b[3]]
        if not holding:
            return None
        return min(holding, key=lambda c: (c[1][2] - c[1][0]) * (c[1][3] - c[1][1]))[0]

    return with_session(session_id, run, create=False)


def marked_preview(session_id: str | None) -> Path | None:
    """The current preview with the selection outlined and the pending candidates drawn
    as numbered boxes; None when there is neither (the plain preview is right)."""
    def run(session: WebSession) -> Path | None:
        if not session.has_image:
            return None
        edit = session.edit
        if edit.selection is None and not edit.pending:
            return None
        plain = preview_file(session, edit.graph.head)
        with open(plain, "rb") as fh:
            data = np.frombuffer(fh.read(), np.uint8)
        bgr = cv2.imdecode(data, cv2.IMREAD_COLOR)
        if bgr is None:
            return None
        width, height = edit.graph.size
        k = bgr.shape[1] / width
        thick = max(2, round(bgr.shape[1] / 300))
        if edit.selection is not None and edit.selection.shape == (height, width):
            small = cv2.resize(edit.selection.astype(np.uint8), (bgr.shape[1], bgr.shape[0]),
                               interpolation=cv2.INTER_AREA)
            contours, _ = cv2.findContours(small, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            cv2.drawContours(bgr, contours, -1, (0, 0, 0), thick + 2, cv2.LINE_AA)
            cv2.drawContours(bgr, contours, -1, SELECTION_RGB[::-1], thick, cv2.LINE_AA)
        for cid, (x0, y0, x1, y1) in _boxes(edit.pending[1] if edit.pending else {}).items():
            p0, p1 = (int(x0 * k), int(y0 * k)), (int(x1 * k), int(y1 * k))
            cv2.rectangle(bgr, p0, p1, CANDIDATE_RGB[::-1], thick, cv2.LINE_AA)
            r = max(10, thick * 6)
            centre = (p0[0] + r, p0[1] + r)
            cv2.circle(bgr, centre, r, CANDIDATE_RGB[::-1], -1, cv2.LINE_AA)
            scale = r / 14
            (tw, th), _ = cv2.getTextSize(cid, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
            cv2.putText(bgr, cid, (centre[0] - tw // 2, centre[1] + th // 2),
                        cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 2, cv2.LINE_AA)
        ok, png = cv2.imencode(".png", bgr)
        if not ok:
            return None
        for old in plain.parent.glob("marked-*.png"):   # one marked preview at a time
            old.unlink(missing_ok=True)
        out = plain.parent / f"marked-{secrets.token_hex(6)}.png"
        atomic_write(out, png.tobytes())
        return out

    return with_session(session_id, run, create=False)


def preview_size(session_id: str | None) -> tuple[int, int] | None:
    """``(width, height)`` of the preview the Edit tab shows (clicks arrive in it)."""
    def run(session: WebSession) -> tuple[int, int] | None:
        if not session.has_image:
            return None
        with Image.open(preview_file(session, session.edit.graph.head)) as im:
            return im.size      # the header alone: nothing is decoded

    return with_session(session_id, run, create=False)
