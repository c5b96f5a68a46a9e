"""Per-browser web sessions: ids, folders, locks, expiry.

A *web session* is a random id (kept in the browser's ``BrowserState``, or held by an API
client) mapped to a folder ``<sessions_dir>/<id>/``::

    <id>/edit-*/      the EditSession folder (graph, layers, original image)
    <id>/ui.json      chat history and the original file's name
    <id>/.access      touched on every use; its mtime drives expiry
    <id>/previews/    display previews per state, the session list's thumbnail
    <id>/shares.json  the session's review-link tokens (web.share)
    <id>/autopilot-*/ the last Autopilot run's scratch session
    <id>/downloads/   downloads/exports made without a private folder (API callers get
                      private folders in the web server's cache, see web.files)

Everything needed to redraw the page lives on disk, so a page refresh or a server restart
restores the graph, the images and the chat. Ids are 128-bit random tokens minted here and
checked against a strict pattern (``pipelines.files.ID_RE``'s alphabet, 16–64 characters,
nothing else), so a session can reach only its own folder, and an id the server did not
mint never creates one. Each session may hold ``Settings.session_quota_mb`` on disk
(``check_room``); sessions not used for ``Settings.session_ttl_hours`` are deleted by
:meth:`SessionManager.sweep`, and what a killed process left half-written (staging and
unreferenced edit folders) is cleared when a session is next loaded from disk.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.session import EditSession, SessionError
from pipelines.config import get_settings
from pipelines.files import atomic_write, remove_stale, tree_size

log = logging.getLogger(__name__)


#: session ids: the id alphabet of ``pipelines.files.ID_RE``, at least 16 characters
#: (``\Z``, not ``$``: a trailing newline is not part of an id)
SESSION_ID_RE = re.compile(r"[A-Za-z0-9_-]{16,64}\Z")
#: a half-written folder older than this is a leftover of a killed process
STALE_AFTER_S = 3600.0


SWEEP_EVERY_S = 60.0


@dataclass
class WebSession:
    """One browser's (or API client's) server-side state."""

    id: str
    folder: Path
    lock: threading.RLock = field(default_factory=threading.RLock)
    cancel: threading.Event = field(default_factory=threading.Event)
    _edit: Any = None
    ui: dict = field(default_factory=dict)
    autopilot: Any = None
    used: float = field(default_factory=time.monotonic)

    @property
    def edit_folder(self) -> Path:
        return self.folder / str(self.ui.get("edit_dir") or "edit")

    @property
    def has_image(self) -> bool:
        return self._edit is not None or (
            bool(self.ui.get("edit_dir")) and self.edit_folder.is_dir())

    @property
    def edit(self) -> Any:
        """The EditSession, opened from disk on first use (after a restart too)."""
        if self._edit is None:
            if not self.has_image:
                raise SessionError("No photo in this session yet: open a photo first.")
            self._edit = EditSession.open(self.edit_folder)
        return self._edit

    @property
    def chat(self) -> list[dict]:
        return self.ui.setdefault("chat", [])

    def save_ui(self) -> None:
        atomic_write(self.folder / "ui.json", json.dumps(self.ui, default=str))

    def touch(self) -> None:
        self.used = time.monotonic()
        (self.folder / ".access").touch()


class SessionManager:
    """Maps session ids to folders; opens, isolates and expires sessions.

    Args:
        root: folder holding one sub-folder per session (default: settings' sessions_dir).
        ttl_hours: idle time after which a session is deleted (default: settings).
    """

    def __init__(self, root: str | Path | None = None, ttl_hours: float | None = None,
                 quota_mb: float | None = None):
        settings = get_settings()
        self.root = Path(root) if root is not None else settings.sessions_dir
        self.ttl_s = 3600.0 * (settings.session_ttl_hours if ttl_hours is None else ttl_hours)
        self.quota_bytes = int(1024 * 1024 * (settings.session_quota_mb if quota_mb is None
                                              else quota_mb))
        self.root.mkdir(parents=True, exist_ok=True)
        self._sessions: dict[str, WebSession] = {}
        self._lock = threading.Lock()
        self.max_open = max(1, settings.max_open_sessions)
        self._last_sweep = 0.0

    @staticmethod
    def new_id() -> str:
        """Return a fresh random session id (128 bits, URL-safe)."""
        return secrets.token_urlsafe(16)

    def get(self, session_id: str | None, *, create: bool = False) -> WebSession:
        """Return the session for ``session_id``, loading it from disk after a restart.

        Args:
            session_id: the id; must match ``SESSION_ID_RE``.
            create: make the folder when it does not exist (only for ids minted by
                ``new_id``; else an unknown id raises ``SessionError``).

        Returns:
            The ``WebSession`` (its access time refreshed).
        """
        if not isinstance(session_id, str) or not SESSION_ID_RE.match(session_id):
            raise SessionError("Unknown or malformed session id.")
        self._maybe_sweep()
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                folder = self.root / session_id
                if not folder.is_dir():
                    if not create:
                        raise SessionError("This session does not exist (it may have expired).")
                    folder.mkdir(parents=True)
                session = WebSession(session_id, folder)
                ui_file = folder / "ui.json"
                if ui_file.exists():
                    try:
                        session.ui = json.loads(ui_file.read_text())
                        if not isinstance(session.ui, dict):
                            raise ValueError("not an object")
                    except (OSError, ValueError, RecursionError):
                        session.ui = {}
                        log.warning("session %s…: unreadable ui.json, starting a fresh chat",
                                    session_id[:6])
                _clear_leftovers(session)
                self._sessions[session_id] = session
        session.touch()
        self._close_idle(keep=session_id)
        return session

    def create(self) -> WebSession:
        """A new session under a fresh random id (its folder created)."""
        return self.get(self.new_id(), create=True)

    def check_room(self, session: WebSession, incoming: int = 0, freed: int = 0,
                   what: str = "This") -> None:
        """Refuse work that would take the session past its disk quota.

        Args:
            session: the web session.
            incoming: bytes the work is expected to add.
            freed: bytes it will delete (a replaced photo).
            what: the work, for the message ("This edit", "Importing that archive"…).
        """
        used = tree_size(session.folder)
        if used - freed + incoming <= self.quota_bytes:
            return
        raise SessionError(
            f"{what} would take this session past its disk space: it uses "
            f"{used / 1e6:.0f} MB of {self.quota_bytes / 1e6:.0f} MB "
            f"(LOUPE_SESSION_QUOTA_MB) and needs about {incoming / 1e6:.0f} MB more. "
            "Export the session and start a new one, or open a smaller photo.")

    def _close_idle(self, keep: str) -> None:
        """Keep at most ``max_open`` EditSessions in memory (the rest reopen from disk)."""
        with self._lock:
            loaded = sorted((s for s in self._sessions.values()
                             if s._edit is not None and s.id != keep), key=lambda s: s.used)
        for session in loaded[:max(0, len(loaded) + 1 - self.max_open)]:
            if session.lock.acquire(blocking=False):  # busy sessions stay open
                try:
                    session._edit = None
                finally:
                    session.lock.release()

    def exists(self, session_id: str | None) -> bool:
        """Whether a session folder exists for this id (malformed ids: False)."""
        return bool(isinstance(session_id, str) and SESSION_ID_RE.match(session_id)
                    and (self.root / session_id).is_dir())

    def delete(self, session_id: str) -> None:
        """Forget a session and delete its folder."""
        with self._lock:
            self._sessions.pop(session_id, None)
        if SESSION_ID_RE.match(session_id):
            shutil.rmtree(self.root / session_id, ignore_errors=True)

    def sweep(self, now: float | None = None) -> list[str]:
        """Delete sessions idle for longer than the TTL.

        Args:
            now: the current time (seconds since the epoch); default ``time.time()``.

        Returns:
            The ids removed.
        """
        now = time.time() if now is None else now
        removed = []
        for folder in list(self.root.iterdir()) if self.root.is_dir() else []:
            if not folder.is_dir() or not SESSION_ID_RE.match(folder.name):
                continue
            stamp = folder / ".access"
            last = stamp.stat().st_mtime if stamp.exists() else folder.stat().st_mtime
            if now - last <= self.ttl_s:
                continue
            session = self._sessions.get(folder.name)
            if session is not None and not session.lock.acquire(blocking=False):
                continue  # busy right now: not abandoned
            try:
                self.delete(folder.name)
                removed.append(folder.name)
            finally:
                if session is not None:
                    session.lock.release()
        if removed:
            log.info("expired %d idle session(s)", len(removed))
        return removed

    def _maybe_sweep(self) -> None:
        now = time.time()
        if now - self._last_sweep >= SWEEP_EVERY_S:
            self._last_sweep = now
            try:
                self.sweep(now)
            except OSError as exc:  # a sweep must never break a request
                log.warning("session sweep failed: %s", exc)


def _clear_leftovers(session: WebSession) -> None:
    """Delete what a killed process left in a session folder: staging folders, and edit
    or autopilot folders the session's ``ui.json`` does not name (a half import)."""
    folder, ui = session.folder, session.ui
    keep = {str(ui.get("edit_dir") or ""), str((ui.get("autopilot") or {}).get("scratch")
                                                or "")}
    remove_stale(folder, STALE_AFTER_S)
    try:
        for entry in folder.iterdir():
            if entry.is_dir() and entry.name.startswith(("edit-", "autopilot-")) \
                    and entry.name not in keep \
                    and time.time() - entry.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(entry, ignore_errors=True)
    except OSError as exc:  # tidying must never break loading a session
        log.warning("could not tidy a session folder: %s", exc)


def browser_secret() -> str:
    """Key that encrypts the session id kept in the browser; stable across restarts.

    ``LOUPE_SESSION_SECRET`` when set, else a random key written once to the data folder.
    """
    settings = get_settings()
    if settings.session_secret:
        return settings.session_secret
    path = settings.data_dir / "browser-secret"
    try:
        if path.is_file():
            value = path.read_text().strip()
            if len(value) >= 16:
                return value
        path.parent.mkdir(parents=True, exist_ok=True)
        value = secrets.token_urlsafe(24)
        atomic_write(path, value)   # created 0600 (never readable by others), whole or not at all
        return value
    except OSError as exc:
        log.warning("cannot keep a browser secret (%s); sessions will not survive restarts",
                    exc)
        return secrets.token_urlsafe(24)


_MANAGER: SessionManager | None = None


_MANAGER_LOCK = threading.Lock()


def get_manager() -> SessionManager:
    """The process-wide session manager (created on first use from the settings)."""
    global _MANAGER
    with _MANAGER_LOCK:
        if _MANAGER is None or _MANAGER.root != get_settings().sessions_dir:
            _MANAGER = SessionManager()
        return _MANAGER


def set_manager(manager: SessionManager | None) -> None:
    """Replace the process-wide manager (tests, custom roots)."""
    global _MANAGER
    with _MANAGER_LOCK:
        _MANAGER = manager


def ensure_session(session_id: str | None) -> str:
    """Return ``session_id`` when it names an existing session, else a new id (its
    folder created): an id the server did not mint never creates a folder.

    Args:
        session_id: the id stored in the browser, possibly empty or stale.

    Returns:
        A usable session id.
    """
    manager = get_manager()
    if manager.exists(session_id):
        try:
            manager.get(session_id)
            return session_id  # type: ignore[return-value]
        except SessionError:
            pass  # expired between the check and the load
    return manager.create().id


def in_new_session(fn: Callable[[str], Any]) -> tuple[str, Any]:
    """Run ``fn(session_id)`` in a session made for it; the session is deleted again if
    ``fn`` fails (a refused upload leaves no empty session behind).

    Returns:
        ``(session_id, fn's result)``.
    """
    manager = get_manager()
    session = manager.create()
    try:
        return session.id, fn(session.id)
    except BaseException:
        manager.delete(session.id)
        raise


def with_session(session_id: str | None, fn: Callable[[WebSession], Any], *,
                 create: bool = False) -> Any:
    """Run ``fn(session)`` holding that session's lock (one change at a time per session)."""
    session = get_manager().get(session_id, create=create)
    with session.lock:
        try:
            return fn(session)
        except SessionError:
            raise
        except ValueError as exc:  # ImageLoadError, the EditSession's refusals, bad values
            raise SessionError(str(exc)) from exc
