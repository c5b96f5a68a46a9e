"""The session list ("Your sessions"): every photo a browser works on, side by side.

A browser keeps the ids of its sessions (encrypted in its local storage, like the id of
the current one). Opening a photo, an example, an archive or Autopilot's result starts a
*new* session beside the current one when that one already holds a photo, so nothing is
thrown away; deleting a session is an explicit action.

Listing reads each session's ``ui.json`` and ``previews/thumb.jpg`` without opening its
graph, and without counting as a use (listing does not keep sessions from expiring). Cards
carry a short key derived from the id, never the id itself, so the page's HTML holds no
session id.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.session import SessionError
from web.edit import import_archive, open_image
from web.sessions import SESSION_ID_RE, ensure_session, get_manager
from web.views import PREVIEW_DIR, THUMB_FILE, SessionView

log = logging.getLogger(__name__)

#: Most sessions one browser lists (the oldest drop off the list, not off the disk).
MAX_SESSIONS = 30
MAX_THUMB_BYTES = 64 * 1024


@dataclass
class SessionCard:
    """One entry of the session list."""

    key: str
    name: str
    changed: float
    thumb: str = ""
    current: bool = False

    def when(self, now: float | None = None) -> str:
        """The last change as people say it ("just now", "5 min ago", "3 Jan")."""
        return ago(self.changed, now)


def card_key(session_id: str) -> str:
    """A short, stable, non-secret handle for a session in the page's HTML."""
    return hashlib.sha256(f"loupe-card:{session_id}".encode()).hexdigest()[:12]


def ago(stamp: float, now: float | None = None) -> str:
    """``stamp`` (seconds since the epoch) relative to ``now`` in plain words."""
    delta = max(0.0, (time.time() if now is None else now) - stamp)
    if delta < 60:
        return "just now"
    if delta < 3600:
        return f"{int(delta // 60)} min ago"
    if delta < 86400:
        return f"{int(delta // 3600)} h ago"
    if delta < 2 * 86400:
        return "yesterday"
    return time.strftime("%-d %b", time.localtime(stamp))


def _ui(session_id: str) -> tuple[dict, float] | None:
    """The session's ``ui.json`` and its modification time, or None (no photo / gone)."""
    if not get_manager().exists(session_id):
        return None
    path = get_manager().root / session_id / "ui.json"
    try:
        data = json.loads(path.read_text())
        changed = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not data.get("edit_dir"):
        return None
    return data, changed


def has_photo(session_id: str | None) -> bool:
    """Whether ``session_id`` names an existing session that holds a photo."""
    return isinstance(session_id, str) and _ui(session_id) is not None


def known_sessions(ids: Any, *extra: str | None) -> list[str]:
    """The browser's list, cleaned: well-formed ids of sessions that still hold a photo.

    Args:
        ids: the list the browser sent (anything; malformed entries are dropped).
        extra: ids to put first (e.g. the current one), when they hold a photo.

    Returns:
        At most ``MAX_SESSIONS`` ids, without duplicates, newest additions first.
    """
    raw = [i for i in extra if i] + (list(ids) if isinstance(ids, (list, tuple)) else [])
    out: list[str] = []
    for sid in raw:
        if isinstance(sid, str) and SESSION_ID_RE.match(sid) and sid not in out \
                and has_photo(sid):
            out.append(sid)
    return out[:MAX_SESSIONS]


def _thumb(session_id: str) -> str:
    path = get_manager().root / session_id / PREVIEW_DIR / THUMB_FILE
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    if len(data) > MAX_THUMB_BYTES:
        return ""
    return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")


def cards(ids: Any, current: str | None = None) -> list[SessionCard]:
    """The session list of a browser, most recently changed first.

    Args:
        ids: the browser's session ids.
        current: the session shown in the Edit tab (marked).

    Returns:
        One card per session that still holds a photo.
    """
    out = []
    for sid in known_sessions(ids, current):
        found = _ui(sid)
        if found is None:
            continue
        ui, changed = found
        name = Path(str(ui.get("filename") or "photo")).name
        out.append(SessionCard(card_key(sid), name, changed, _thumb(sid), sid == current))
    out.sort(key=lambda c: c.changed, reverse=True)
    return out


def find(ids: Any, key: str) -> str:
    """The session id behind a card key, among this browser's sessions."""
    for sid in known_sessions(ids):
        if card_key(sid) == str(key):
            return sid
    raise SessionError("That session is no longer in your list.")


def remember(ids: Any, session_id: str) -> list[str]:
    """The browser's list with ``session_id`` first."""
    return known_sessions(ids, session_id)


def _slot(current: str | None) -> str:
    """The current session when it is still empty, else a new one beside it."""
    if isinstance(current, str) and SESSION_ID_RE.match(current) and not has_photo(current):
        return ensure_session(current)
    return ensure_session(None)


def open_beside(current: str | None, src: Any, filename: str | None = None) -> SessionView:
    """Open a photo in a new session beside the current one (or in it, while empty).

    Args:
        current: the browser's current session id.
        src: the photo (path, bytes or array).
        filename: its name as the person knows it.

    Returns:
        The new session's page state (its ``session_id`` is the new current id).
    """
    return open_image(_slot(current), src, filename)


def import_beside(current: str | None, archive: str | Path) -> SessionView:
    """Bring back an exported session (photo, graph and chat) beside the current one."""
    target = _slot(current)
    try:
        return import_archive(target, archive)
    except SessionError:
        if target != current:
            get_manager().delete(target)
        raise


def empty_slot(current: str | None) -> str:
    """A session id ready to take a photo (the current one while it is empty)."""
    return _slot(current)


def delete_session(session_id: str) -> None:
    """Delete a session for good (its folder, photos, chat, review links and comments)."""
    if not isinstance(session_id, str) or not SESSION_ID_RE.match(session_id):
        raise SessionError("Unknown or malformed session id.")
    get_manager().delete(session_id)
    log.info("session %s… deleted by its owner", session_id[:6])


def render_cards(items: list[SessionCard], now: float | None = None) -> str:
    """The session list as HTML: thumbnail, name, last change, and a delete button.

    Each card carries ``data-key`` (see :func:`card_key`); the delete button carries
    ``data-delete``. The page's script turns clicks into events.
    """
    if not items:
        return ('<div class="loupe-sessions-empty">Your sessions appear here: each photo '
                "you open gets its own, and nothing is replaced.</div>")
    parts = ['<div class="loupe-sessions" role="list">']
    for card in items:
        name = html.escape(card.name)
        key = html.escape(card.key, quote=True)
        img = (f'<img src="{card.thumb}" alt="" loading="lazy">' if card.thumb
               else '<div class="noimg"></div>')
        current = " current" if card.current else ""
        parts.append(
            f'<div class="loupe-card{current}" role="listitem" data-key="{key}" '
            f'title="Open {name}">{img}<div class="meta"><span class="name">{name}</span>'
            f'<span class="when">{html.escape(card.when(now))}</span></div>'
            f'<button class="del" data-delete="{key}" title="Delete {name}" '
            f'aria-label="Delete {name}">×</button></div>')
    parts.append("</div>")
    return "".join(parts)
