"""Per-browser sessions and the thin calls the UI, the HTTP API and the MCP tools make.

Gradio-free on purpose: ``app.py`` only wires components to these functions, and the same
functions serve ``gradio_client`` and MCP callers.

A *web session* is a random id (kept in the browser's ``BrowserState``, or held by an API
client) mapped to a folder ``<sessions_dir>/<id>/``::

    <id>/edit/        the EditSession folder (graph, layers, original image)
    <id>/ui.json      chat history and the original file's name
    <id>/.access      touched on every use; its mtime drives expiry
    <id>/downloads/   full-resolution downloads and exported archives

Everything needed to redraw the page lives on disk, so a page refresh or a server restart
restores the graph, the images and the chat. Ids are 128-bit random tokens checked against
a strict pattern, so a session can reach only its own folder. Sessions not used for
``Settings.session_ttl_hours`` are deleted by :meth:`SessionManager.sweep`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.config import get_settings
from pipelines.images import downscale

log = logging.getLogger(__name__)

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
PREVIEW_MAX_SIDE = int(os.environ.get("LOUPE_PREVIEW_SIDE", "1024"))
SWEEP_EVERY_S = 60.0
_EMBEDDED_LIMITS = (
    "Embedded default (no model weights): edits are classical (exposure, colour, recolour, "
    "blur/sharpen, remove by inpainting from surroundings, paste a reference, text). It cannot "
    "generate new objects from words, and it finds targets only by colour words, positions "
    "or your brush mask — brush the area for anything else."
)


class SessionError(ValueError):
    """A request the session cannot serve; the message is meant for the person using it."""


# --------------------------------------------------------------------------- pixels (small)


def preview(image: np.ndarray, max_side: int = PREVIEW_MAX_SIDE) -> np.ndarray:
    """Downscale an image for display so its longer side is at most ``max_side``.

    Args:
        image: ``uint8`` HWC image.
        max_side: longest side of the result in pixels.

    Returns:
        The image itself when already small enough, else an area-resampled copy.
    """
    return downscale(image, max_side)


def mask_from_editor(value: Any, shape: tuple[int, int]) -> np.ndarray | None:
    """Turn an image-editor value (background, brush layers, composite) into a native mask.

    The brush is painted on a downscaled canvas; the painted area (any layer pixel with
    alpha > 0) is scaled to the native ``(H, W)`` of the photo.

    Args:
        value: ``{"background", "layers", "composite"}`` with numpy arrays (or None).
        shape: native ``(height, width)``.

    Returns:
        A ``bool`` mask of ``shape``, or ``None`` when nothing was painted.
    """
    if not isinstance(value, dict):
        return None
    painted = None
    for layer in value.get("layers") or []:
        if layer is None:
            continue
        arr = np.asarray(layer)
        alpha = arr[..., 3] > 0 if arr.ndim == 3 and arr.shape[2] == 4 else arr.reshape(
            arr.shape[0], arr.shape[1], -1).max(axis=2) > 0
        painted = alpha if painted is None else painted | alpha
    if painted is None or not painted.any():
        return None
    h, w = shape
    scaled = cv2.resize(painted.astype(np.uint8) * 255, (w, h), interpolation=cv2.INTER_LINEAR)
    mask = scaled >= 128
    return mask if mask.any() else None


def load_mask_file(path: str | Path | None, shape: tuple[int, int]) -> np.ndarray | None:
    """Read a mask image (white = edit area, any size) and scale it to ``shape``.

    Args:
        path: image file; ``None`` or empty gives ``None``.
        shape: native ``(height, width)``.

    Returns:
        A ``bool`` mask or ``None`` when the file is empty of marks.
    """
    if not path:
        return None
    from pipelines.images import load_image

    pixels = load_image(path).pixels
    marks = pixels[..., 3] > 0 if pixels.shape[2] == 4 and pixels[..., 3].min() < 255 \
        else pixels[..., :3].max(axis=2) > 127
    return mask_from_editor({"layers": [np.dstack([marks] * 3).astype(np.uint8)]}, shape)


# --------------------------------------------------------------------------- sessions


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
            from agent.session import EditSession

            self._edit = EditSession.open(self.edit_folder)
        return self._edit

    @property
    def chat(self) -> list[dict]:
        return self.ui.setdefault("chat", [])

    def save_ui(self) -> None:
        tmp = self.folder / "ui.json.tmp"
        tmp.write_text(json.dumps(self.ui, default=str))
        tmp.replace(self.folder / "ui.json")

    def touch(self) -> None:
        self.used = time.monotonic()
        (self.folder / ".access").touch()


class SessionManager:
    """Maps session ids to folders; opens, isolates and expires sessions.

    Args:
        root: folder holding one sub-folder per session (default: settings' sessions_dir).
        ttl_hours: idle time after which a session is deleted (default: settings).
    """

    def __init__(self, root: str | Path | None = None, ttl_hours: float | None = None):
        settings = get_settings()
        self.root = Path(root) if root is not None else settings.sessions_dir
        self.ttl_s = 3600.0 * (settings.session_ttl_hours if ttl_hours is None else ttl_hours)
        self.root.mkdir(parents=True, exist_ok=True)
        self._sessions: dict[str, WebSession] = {}
        self._lock = threading.Lock()
        self.max_open = max(1, int(os.environ.get("LOUPE_MAX_OPEN_SESSIONS", "8")))
        self._last_sweep = 0.0

    @staticmethod
    def new_id() -> str:
        """Return a fresh random session id (128 bits, URL-safe)."""
        return secrets.token_urlsafe(16)

    def get(self, session_id: str | None, *, create: bool = True) -> WebSession:
        """Return the session for ``session_id``, loading it from disk after a restart.

        Args:
            session_id: the id; must match ``SESSION_ID_RE``.
            create: make the folder when it does not exist (else raise ``SessionError``).

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
                    except (OSError, ValueError):
                        log.warning("session %s: unreadable ui.json, starting a fresh chat",
                                    session_id)
                self._sessions[session_id] = session
        session.touch()
        self._close_idle(keep=session_id)
        return session

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


def browser_secret() -> str:
    """Key that encrypts the session id kept in the browser; stable across restarts.

    ``LOUPE_SESSION_SECRET`` when set, else a random key written once to the data folder.
    """
    env = get_settings()
    if os.environ.get("LOUPE_SESSION_SECRET"):
        return os.environ["LOUPE_SESSION_SECRET"]
    path = env.data_dir / "browser-secret"
    try:
        if path.is_file():
            value = path.read_text().strip()
            if len(value) >= 16:
                return value
        path.parent.mkdir(parents=True, exist_ok=True)
        value = secrets.token_urlsafe(24)
        path.write_text(value)
        path.chmod(0o600)
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
    """Return ``session_id`` when it is well-formed, else a new id (its folder created).

    Args:
        session_id: the id stored in the browser, possibly empty or stale.

    Returns:
        A usable session id.
    """
    manager = get_manager()
    if isinstance(session_id, str) and SESSION_ID_RE.match(session_id):
        manager.get(session_id)
        return session_id
    new = manager.new_id()
    manager.get(new)
    return new


def with_session(session_id: str | None, fn: Callable[[WebSession], Any], *,
                 create: bool = True) -> Any:
    """Run ``fn(session)`` holding that session's lock (one change at a time per session)."""
    session = get_manager().get(session_id, create=create)
    with session.lock:
        try:
            return fn(session)
        except SessionError:
            raise
        except ValueError as exc:  # ImageLoadError, the EditSession's refusals, bad values
            raise SessionError(str(exc)) from exc


# --------------------------------------------------------------------------- views


@dataclass
class SessionView:
    """What the Edit tab shows for a session (all images are display previews)."""

    session_id: str
    image: np.ndarray | None = None
    before: np.ndarray | None = None
    graph_svg: str = ""
    chat: list[dict] = field(default_factory=list)
    head: str | None = None
    size: tuple[int, int] | None = None
    status: str = ""
    message: str = ""

    def info(self) -> dict:
        """A JSON-able summary (for API callers)."""
        return {"session_id": self.session_id, "head": self.head,
                "width": self.size[0] if self.size else None,
                "height": self.size[1] if self.size else None, "message": self.message}


def _attr(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _head_id(graph: Any) -> str | None:
    head = _attr(graph, "head")
    return None if head is None else str(_attr(head, "id", head))


def _parent_id(graph: Any, node_id: str | None) -> str | None:
    nodes = _attr(graph, "nodes") or {}
    node = nodes.get(node_id) if isinstance(nodes, dict) else None
    parent = _attr(node, "parent") if node is not None else None
    return None if parent is None else str(_attr(parent, "id", parent))


def status_line(session: WebSession | None = None) -> str:
    """Which backend serves each role, and what the embedded default cannot do.

    Args:
        session: a web session with a photo (its EditSession reports its backends); without
            one, the configured defaults are described.

    Returns:
        One line of Markdown.
    """
    roles: dict[str, str] = {}
    try:
        if session is not None and session.has_image:
            roles = dict(session.edit.backends())
    except Exception as exc:  # noqa: BLE001 - the status line must never break the page
        log.debug("backends unavailable: %s", exc)
    if not roles:
        roles = _configured_backends()
    text = " · ".join(f"**{role}**: {name}" for role, name in roles.items())
    embedded = all(("classical" in v or "rule" in v or "embedded" in v or "measured" in v)
                   for v in roles.values()) if roles else True
    return text + ("\n\n" + _EMBEDDED_LIMITS if embedded else "")


def _configured_backends() -> dict[str, str]:
    roles = {"editor": "classical", "localiser": "embedded", "planner": "rule-based",
             "critic": "measured"}
    try:
        from agent.turn import is_available
        from pipelines.editors.registry import available_editors

        live = [name for name, state in available_editors().items()
                if name != "classical" and is_available(state)]
        if live:
            roles["editor"] = ", ".join(live) + " + classical"
    except Exception as exc:  # noqa: BLE001
        log.debug("editor registry unavailable: %s", exc)
    settings = get_settings()
    if settings.llm_base_url:
        roles["planner"] = f"{settings.llm_model or 'LLM'} @ {settings.llm_base_url}"
    return roles


def session_view(session: WebSession, *, message: str = "") -> SessionView:
    """Build the page state of a session (images downscaled for display)."""
    view = SessionView(session.id, chat=list(session.chat), message=message)
    if not session.has_image:
        from agent.graph_view import render_svg

        view.graph_svg = render_svg(None)
        view.status = status_line(None)
        return view
    from agent.graph_view import render_svg

    edit = session.edit
    graph = edit.graph
    view.head = _head_id(graph)
    current = edit.current_image()
    view.size = (int(current.shape[1]), int(current.shape[0]))
    view.image = preview(current)
    parent = _parent_id(graph, view.head)
    view.before = preview(edit.image_at(parent)) if parent is not None else view.image
    view.graph_svg = render_svg(graph, view.head)
    view.status = status_line(session)
    return view


def image_size(session_id: str | None) -> tuple[int, int] | None:
    """``(width, height)`` of the session's photo, or None before one is opened."""
    def run(session: WebSession) -> tuple[int, int] | None:
        return tuple(session.edit.graph.size) if session.has_image else None

    return with_session(session_id, run, create=False)


def get_view(session_id: str | None) -> SessionView:
    """The page state for ``session_id`` (a restored session after refresh or restart)."""
    return with_session(session_id, session_view)


# --------------------------------------------------------------------------- edit actions


def open_image(session_id: str | None, src: Any, filename: str | None = None) -> SessionView:
    """Start editing a new photo in this session (replacing the previous one).

    Args:
        session_id: the web session.
        src: path, bytes or array of the photo (any size up to the pixel limit).
        filename: the original file name, used to name downloads.

    Returns:
        The new page state. Raises ``SessionError`` for unreadable files.
    """
    from agent.session import EditSession

    def run(session: WebSession) -> SessionView:
        name = Path(filename or (str(src) if isinstance(src, (str, Path)) else "photo")).name
        edit = _new_edit(session, lambda folder: EditSession.create(src, folder))
        session.ui = {"chat": [], "filename": name, "edit_dir": edit.folder.name}
        session.save_ui()
        h, w = edit.current_image().shape[:2]
        return session_view(session, message=f"Opened {name} ({w}×{h}).")

    return with_session(session_id, run)


def _new_edit(session: WebSession, make: Callable[[Path], Any]) -> Any:
    """Create an EditSession in a fresh sub-folder, then drop the previous one."""
    old = session.edit_folder if session.ui.get("edit_dir") else None
    folder = session.folder / f"edit-{secrets.token_hex(4)}"
    try:
        edit = make(folder)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    session._edit = edit
    session.autopilot = None
    if old is not None and old != folder:
        shutil.rmtree(old, ignore_errors=True)
    return edit


def _plan_lines(plan: Any) -> str:
    if isinstance(plan, dict):
        items = plan.get("descriptions") or plan.get("actions") or []
        note = plan.get("message") or ""
    else:
        items, note = (plan or []), ""
    lines = []
    for i, action in enumerate(items, 1):
        if isinstance(action, dict):
            desc = action.get("description") or action.get("instruction") or " ".join(
                str(action.get(k) or "") for k in ("kind", "operation", "target")).strip()
        else:
            desc = str(action)
        lines.append(f"{i}. {desc}")
    return "\n".join(lines + ([note] if note else [])) or "(no edits planned)"


def _step_message(i: int, step: dict) -> dict:
    lines = []
    chosen = step.get("chosen")
    for attempt in step.get("attempts") or []:
        score = attempt.get("score")
        score_txt = f"{score:.1f}/10" if isinstance(score, (int, float)) else "—"
        fix = attempt.get("error") or "; ".join(attempt.get("fix") or [])
        mark = " ✓ chosen" if chosen is not None and attempt.get("index") == chosen else ""
        params = ", ".join(f"{k}={v}" for k, v in (attempt.get("params") or {}).items())
        lines.append(f"- attempt {attempt.get('index', '?')} ({attempt.get('editor', '?')}"
                     f"{': ' + params if params else ''}): score {score_txt}{mark}"
                     + (f" — {fix}" if fix else ""))
    if step.get("message"):
        lines.append(str(step["message"]))
    score = step.get("score")
    best = f", score {score:.1f}/10" if isinstance(score, (int, float)) else ""
    status = str(step.get("status") or "done").replace("_", " ")
    title = step.get("description") or "step"
    return {"role": "assistant", "content": "\n".join(lines) or status,
            "metadata": {"title": f"Step {i}: {title} — {status}{best}", "status": "done"}}


def turn_messages(instruction: str, result: dict) -> list[dict]:
    """Chat messages (Gradio 'messages' format) for one turn.

    Args:
        instruction: what the person asked.
        result: ``TurnResult.to_dict()``.

    Returns:
        The user message, the plan and each step (collapsible), and the outcome.
    """
    msgs = [{"role": "user", "content": instruction}]
    if result.get("plan"):
        msgs.append({"role": "assistant", "content": _plan_lines(result["plan"]),
                     "metadata": {"title": "Plan", "status": "done"}})
    for i, step in enumerate(result.get("steps") or [], 1):
        if isinstance(step, dict):
            msgs.append(_step_message(i, step))
    mark = "✔" if result.get("ok") else "⚠"
    text = result.get("message") or ("Done." if result.get("ok") else "Nothing changed.")
    msgs.append({"role": "assistant", "content": f"{mark} {text}"})
    return msgs


ProgressFn = Callable[[float, str], None]


def edit_turn(session_id: str | None, instruction: str, mask: np.ndarray | None = None, *,
              search: str = "none", progress: ProgressFn | None = None
              ) -> tuple[SessionView, dict]:
    """Run one instruction turn on the session's current state.

    Args:
        session_id: the web session (must hold a photo).
        instruction: plain-language request (empty text is refused with a message).
        mask: optional native-resolution ``bool`` mask from the brush.
        search: ``"none"`` or ``"tree"`` (multi-instruction tree search).
        progress: called with ``(fraction, text)`` while the turn runs.

    Returns:
        ``(page state, TurnResult.to_dict())``. A failing step never raises: the error is
        reported in the chat and the session stays usable.
    """
    text = (instruction or "").strip()
    if not text:
        raise SessionError("Type an instruction first (e.g. “make it warmer”).")

    def run(session: WebSession) -> tuple[SessionView, dict]:
        edit = session.edit
        try:
            result = edit.turn(text, mask=mask, search=search, progress=progress).to_dict()
        except ValueError as exc:  # the session's own refusals (bad mask, too long…)
            raise SessionError(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - shown in the chat, session stays usable
            log.exception("turn failed")
            result = {"ok": False, "message": f"That edit failed: {exc}", "steps": [],
                      "head": _head_id(edit.graph)}
        session.chat.extend(turn_messages(text, result))
        session.save_ui()
        view = session_view(session, message=result.get("message", ""))
        topology = (result.get("extra") or {}).get("topology")
        if topology:
            from agent.graph_view import render_svg

            best = topology.get("best") if isinstance(topology, dict) else None
            result["topology_svg"] = (
                "<p><b>Tree-search topology</b> — the chosen (best) state is marked.</p>"
                + render_svg(topology, None if best is None else str(best),
                             title="Tree-search topology"))
        return view, result

    return with_session(session_id, run, create=False)


def _graph_move(session_id: str | None, verb: str, node_id: str | None = None) -> SessionView:
    def run(session: WebSession) -> SessionView:
        edit = session.edit
        before = _head_id(edit.graph)
        try:
            if verb == "checkout":
                edit.checkout(str(node_id))
            else:
                getattr(edit, verb)()
        except ValueError as exc:
            raise SessionError(str(exc)) from exc
        after = _head_id(edit.graph)
        if verb == "checkout":
            note = f"Went to state {after}; a new edit from here starts a branch."
        else:
            note = f"{verb.capitalize()}: now at state {after}." if after != before else \
                f"Nothing to {verb}."
        session.chat.append({"role": "assistant", "content": note})
        session.save_ui()
        return session_view(session, message=note)

    return with_session(session_id, run, create=False)


def undo(session_id: str | None) -> SessionView:
    """Move the head to its parent state (nothing is deleted)."""
    return _graph_move(session_id, "undo")


def redo(session_id: str | None) -> SessionView:
    """Move the head forward again along the last undone edit."""
    return _graph_move(session_id, "redo")


def checkout(session_id: str | None, node_id: str) -> SessionView:
    """Make ``node_id`` the head; a later edit from there branches."""
    return _graph_move(session_id, "checkout", node_id)


def graph_json(session_id: str | None) -> dict:
    """The session's graph: nodes (id, parent, description, action) and the head."""
    def run(session: WebSession) -> dict:
        graph = session.edit.graph
        nodes = [{"id": n.id, "parent": n.parent, "description": n.description,
                  "action": n.action} for n in graph.nodes.values()]
        return {"head": _head_id(graph), "nodes": nodes}

    return with_session(session_id, run, create=False)


def download(session_id: str | None, fmt: str | None = None) -> Path:
    """Write the current state at full resolution in the original format (ICC/EXIF kept).

    Args:
        session_id: the web session.
        fmt: override the format (``"PNG"``, ``"JPEG"``…); default: the original's.

    Returns:
        Path of the written file inside the session's ``downloads/`` folder.
    """
    def run(session: WebSession) -> Path:
        edit = session.edit
        out = session.folder / "downloads"
        out.mkdir(exist_ok=True)
        stem = Path(session.ui.get("filename") or "photo").stem or "photo"
        suffix = _suffix(fmt or getattr(edit.original, "format", None),
                         session.ui.get("filename"))
        dest = out / f"{stem}-loupe-{_head_id(edit.graph) or 'n0'}{suffix}"
        written = edit.save_image(dest, format=fmt)
        return Path(written) if isinstance(written, (str, Path)) else dest

    return with_session(session_id, run, create=False)


_FORMAT_SUFFIX = {"JPEG": ".jpg", "MPO": ".jpg", "PNG": ".png", "WEBP": ".webp", "TIFF": ".tif",
                  "BMP": ".bmp", "GIF": ".png"}


def _suffix(fmt: str | None, filename: str | None) -> str:
    if fmt and fmt.upper() in _FORMAT_SUFFIX:
        return _FORMAT_SUFFIX[fmt.upper()]
    suffix = Path(filename or "").suffix.lower()
    return suffix if suffix in (".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp") \
        else ".png"


def export_archive(session_id: str | None) -> Path:
    """Export the whole session (graph, layers, original) as one zip archive."""
    def run(session: WebSession) -> Path:
        out = session.folder / "downloads"
        out.mkdir(exist_ok=True)
        stem = Path(session.ui.get("filename") or "photo").stem or "photo"
        return Path(session.edit.export(out / f"{stem}-session.zip"))

    return with_session(session_id, run, create=False)


def import_archive(session_id: str | None, archive: str | Path) -> SessionView:
    """Replace this session's photo and graph with an exported archive."""
    from agent.session import EditSession

    def run(session: WebSession) -> SessionView:
        try:
            edit = _new_edit(session, lambda folder: EditSession.import_archive(archive, folder))
        except ValueError as exc:
            raise SessionError(f"Could not import that archive: {exc}") from exc
        name = getattr(edit.original, "filename", None) or "photo.png"
        session.ui = {"chat": [{"role": "assistant", "content": "Imported a session archive."}],
                      "filename": name, "edit_dir": edit.folder.name}
        session.save_ui()
        return session_view(session, message="Imported the session archive.")

    return with_session(session_id, run)


# --------------------------------------------------------------------------- autopilot


@dataclass
class AutopilotView:
    """What the Autopilot tab shows after a run."""

    slider: tuple[np.ndarray, np.ndarray]
    rows: list[list[Any]]
    tree_svg: str
    summary: dict


def _progress_adapter(progress: ProgressFn | None) -> Callable[..., None]:
    """Accept ``(done, total[, text])`` or ``(fraction, text)``; report ``(fraction, text)``."""
    def call(*args: Any) -> None:
        if progress is None or not args:
            return
        first, second = args[0], args[1] if len(args) > 1 else ""
        if isinstance(second, (int, float)) and not isinstance(second, bool) and second:
            text = str(args[2]) if len(args) > 2 else f"simulation {int(first)}/{int(second)}"
            progress(min(1.0, float(first) / float(second)), text)
        elif isinstance(first, (int, float)):
            progress(min(1.0, float(first)), str(second or ""))

    return call


def cancel_autopilot(session_id: str | None) -> None:
    """Ask this session's running Autopilot to stop (it keeps the best found so far)."""
    if isinstance(session_id, str) and get_manager().exists(session_id):
        get_manager().get(session_id).cancel.set()


def _step_rows(steps: Any) -> list[list[Any]]:
    rows = []
    for i, step in enumerate(steps or [], 1):
        desc = _attr(step, "description") or str(_attr(step, "action", ""))
        before, after = _attr(step, "score_before"), _attr(step, "score_after")
        change = round(after - before, 4) if isinstance(before, (int, float)) and isinstance(
            after, (int, float)) else None
        rows.append([i, desc, _round(before), _round(after), change])
    return rows


def _round(value: Any) -> Any:
    return round(float(value), 4) if isinstance(value, (int, float)) else value


def run_autopilot(session_id: str | None, image_src: Any = None, *, mood: str = "",
                  iterations: int = 2, simulations: int = 8, depth: int = 2, top_k: int = 3,
                  seed: int = 0, progress: ProgressFn | None = None) -> AutopilotView:
    """Improve a photo by MCTS over candidate edits (``agent.mcts.autopilot``).

    The run commits its kept steps to a scratch EditSession inside the web session, so
    "send to Edit" can later land each step, at full resolution, as an undoable node.

    Args:
        session_id: the web session (its Edit photo is used when ``image_src`` is empty).
        image_src: an uploaded photo (path/bytes/array) or None.
        mood: optional intent ("warm and cosy").
        iterations, simulations, depth, top_k, seed: the search budget.
        progress: called with ``(fraction, text)`` after each simulation.

    Returns:
        The before/after previews, executed steps with score changes, the tree drawing and
        a JSON summary.
    """
    from agent.graph_view import render_svg
    from agent.mcts import autopilot
    from agent.session import EditSession

    session = get_manager().get(session_id)
    scratch_dir = session.folder / f"autopilot-{secrets.token_hex(4)}"
    with session.lock:
        head = None
        if image_src is None:
            edit = session.edit
            head = _head_id(edit.graph)
            image_src = np.array(edit.current_image())
        try:
            scratch = EditSession.create(image_src, scratch_dir)
        except ValueError as exc:
            shutil.rmtree(scratch_dir, ignore_errors=True)
            raise SessionError(str(exc)) from exc
    session.cancel.clear()
    before = np.array(scratch.current_image())
    try:
        result = autopilot(before, mood=(mood or "").strip() or None, iterations=iterations,
                           simulations=simulations, depth=depth, top_k=top_k, seed=seed,
                           session=scratch, progress=_progress_adapter(progress),
                           cancel=session.cancel.is_set)
    except ValueError as exc:
        shutil.rmtree(scratch_dir, ignore_errors=True)
        raise SessionError(str(exc)) from exc
    summary = {"score_before": _round(result.score_before),
               "score_after": _round(result.score_after),
               "steps": [row[1] for row in _step_rows(result.steps)],
               "cancelled": bool(getattr(result, "cancelled", False))}
    with session.lock:
        old = session.ui.get("autopilot") or {}
        if old.get("scratch"):
            shutil.rmtree(session.folder / old["scratch"], ignore_errors=True)
        session.ui["autopilot"] = {
            "scratch": scratch_dir.name, "head": head,
            "filename": Path(str(image_src)).name if isinstance(image_src, (str, Path))
            else None,
            "steps": [{"node": s.node_id, "action": s.action, "description": s.description}
                      for s in result.steps]}
        session.save_ui()
    tree = render_svg(result.tree, title="MCTS tree")
    return AutopilotView((preview(before), preview(np.asarray(result.image))),
                         _step_rows(result.steps), tree, summary)


def send_autopilot_to_edit(session_id: str | None) -> SessionView:
    """Land the last Autopilot run in the Edit session, one undoable node per kept step.

    A run on an uploaded photo first opens that photo in the Edit tab; a run on the Edit
    photo branches from the state it started from.
    """
    from agent.session import EditSession

    session = get_manager().get(session_id)
    info = session.ui.get("autopilot")
    if not info:
        raise SessionError("Run Autopilot first.")
    if not info["steps"]:
        raise SessionError("Autopilot kept no step (nothing improved the score).")
    scratch = EditSession.open(session.folder / info["scratch"])
    parent = info.get("head")
    if parent is None:  # a run on an uploaded photo: open it (under its own name) first
        name = info.get("filename") or "autopilot" + Path(scratch.root_file).suffix
        staged = session.folder / "incoming" / Path(name).name
        staged.parent.mkdir(exist_ok=True)
        shutil.copyfile(scratch.folder / scratch.root_file, staged)
        try:
            open_image(session_id, staged, staged.name)
        finally:
            staged.unlink(missing_ok=True)

    def run(s: WebSession) -> SessionView:
        edit, node_parent = s.edit, parent
        for step in info["steps"]:
            image = scratch.image_at(step["node"])
            node = edit.commit(np.asarray(image), step["action"],
                               f"Autopilot: {step['description']}", node_parent)
            node_parent = node.id
        note = f"Autopilot's {len(info['steps'])} step(s) landed as undoable states."
        s.chat.append({"role": "assistant", "content": note})
        s.save_ui()
        return session_view(s, message=note)

    return with_session(session_id, run, create=False)


# --------------------------------------------------------------------------- scoring


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist() if value.size <= 64 else f"array{value.shape}"
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def parse_bbox(text: str | None) -> tuple[int, int, int, int] | None:
    """Parse ``"x0,y0,x1,y1"`` (empty → None); raise ``SessionError`` when malformed."""
    if not text or not str(text).strip():
        return None
    parts = re.split(r"[,\s]+", str(text).strip())
    try:
        x0, y0, x1, y1 = (int(float(p)) for p in parts)
    except ValueError as exc:
        raise SessionError("The box must be four numbers: x0,y0,x1,y1.") from exc
    if x1 <= x0 or y1 <= y0:
        raise SessionError("The box must have x1 > x0 and y1 > y0.")
    return x0, y0, x1, y1


def score_files(before: Any, after: Any, *, mask: Any = None, bbox: str | None = "",
                instruction: str = "") -> dict:
    """Score one before/after pair with ``eval.metrics.score_pair``.

    Args:
        before, after: images (paths/bytes/arrays) of the same size.
        mask: optional mask image of the edited area (white = edited, any size).
        bbox: optional ``"x0,y0,x1,y1"``.
        instruction: optional instruction text.

    Returns:
        The metrics as a JSON-able dict.
    """
    from pipelines.images import load_image

    if before is None or after is None:
        raise SessionError("Give both a before and an after image.")
    try:
        a, b = load_image(before).pixels, load_image(after).pixels
    except ValueError as exc:
        raise SessionError(str(exc)) from exc
    if a.shape[:2] != b.shape[:2]:
        raise SessionError(f"The images differ in size ({a.shape[1]}×{a.shape[0]} vs "
                           f"{b.shape[1]}×{b.shape[0]}).")
    m = load_mask_file(mask, a.shape[:2]) if mask else None
    from eval.metrics import score_pair

    scores = score_pair(a[..., :3], b[..., :3], mask=m, bbox=parse_bbox(bbox),
                        instruction=(instruction or None))
    return _jsonable(scores)


# --------------------------------------------------------------------------- benchmarks


MINI_HDD = {"sessions": 3, "turns": 2, "size": (384, 216), "seed": 0}
MAX_ARCHIVE_BYTES = 512 * 1024 ** 2
KEEP_BENCHMARK_RUNS = 10
_MINI_LOCK = threading.Lock()


@dataclass
class BenchmarkView:
    """What the Benchmark tab shows after a run."""

    table: list[list[Any]]
    headers: list[str]
    per_turn: list[list[Any]]
    per_turn_headers: list[str]
    plot: Path | None
    csv_path: Path
    json_path: Path
    summary: dict
    rows: list[dict] = field(default_factory=list)


def benchmark_agents() -> list[str]:
    """Agent configurations the benchmark can run (``eval.agents.AGENTS``)."""
    try:
        from eval.agents import AGENTS

        return list(AGENTS) or ["embedded"]
    except ImportError:
        return ["embedded"]


def mini_dataset() -> Path:
    """The bundled mini HDD set, rendered on first use under the data folder."""
    folder = get_settings().data_dir / "benchmarks" / "mini-hdd"
    with _MINI_LOCK:
        if not (folder / ".complete").exists():
            from eval.hdd import make_dataset

            shutil.rmtree(folder, ignore_errors=True)
            make_dataset(folder, **MINI_HDD)
            (folder / ".complete").touch()
    return folder


def unpack_dataset(archive: str | Path, dest: Path) -> Path:
    """Unzip an uploaded dataset safely (no paths outside ``dest``, size-capped).

    Returns:
        The dataset root (the single top folder when the archive has one).
    """
    import zipfile

    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as exc:
        raise SessionError("The dataset must be a .zip archive.") from exc
    with zf:
        infos = zf.infolist()
        if sum(i.file_size for i in infos) > MAX_ARCHIVE_BYTES:
            raise SessionError("The dataset archive is too large (512 MB unpacked at most).")
        dest.mkdir(parents=True, exist_ok=True)
        root = dest.resolve()
        for info in infos:
            target = (dest / info.filename).resolve()
            if info.filename.startswith(("/", "\\")) or not target.is_relative_to(root):
                raise SessionError(f"Unsafe path in the archive: {info.filename!r}")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    entries = [p for p in dest.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest


def run_benchmark(archive: Any = None, *, agent: str = "embedded",
                  progress: ProgressFn | None = None) -> BenchmarkView:
    """Run ``eval.runner`` on the bundled mini HDD set (``archive=None``) or an upload.

    Args:
        archive: a ``.zip`` of a dataset in any format ``eval.datasets`` reads, or None.
        agent: a name from :func:`benchmark_agents`.
        progress: called with ``(fraction, text)`` after each sample.

    Returns:
        Per-sample-and-turn table, per-turn means, the curves plot and CSV/JSON reports.
    """
    from eval import report, runner
    from eval.datasets import load_dataset

    if agent not in benchmark_agents():
        raise SessionError(f"Unknown agent configuration {agent!r}.")
    run_dir = get_settings().data_dir / "benchmarks" / f"run-{secrets.token_hex(6)}"
    try:
        dataset = mini_dataset() if not archive else unpack_dataset(archive, run_dir / "data")
        total = len(load_dataset(dataset))
        for i in range(1, total + 1):  # the runner resumes: one more sample per call
            if progress:
                progress((i - 1) / total, f"sample {i}/{total}")
            summary = runner.run(dataset, run_dir / "out", agent=agent, limit=i,
                                 lpips_side=256)
    except ValueError as exc:
        raise SessionError(f"Could not run that benchmark: {exc}") from exc
    written = report.write_reports(run_dir / "out")
    _prune_runs(run_dir.parent, keep=KEEP_BENCHMARK_RUNS)
    if progress:
        progress(1.0, "done")
    records = runner.read_results(run_dir / "out")
    headers, table = _turn_table(records)
    turn_headers = ["turn", *[k for k in runner.METRICS if any(
        k in t for t in summary["per_turn"].values())], "n"]
    per_turn = [[turn, *[t.get(k) for k in turn_headers[1:]]]
                for turn, t in summary["per_turn"].items()]
    by_name = {p.name: p for p in written}
    return BenchmarkView(table, headers, per_turn, turn_headers, by_name.get("curves.png"),
                         by_name["report.csv"], by_name["report.json"],
                         _jsonable({k: summary.get(k) for k in (
                             "samples", "errors", "overall", "agent", "run_seconds")}),
                         records)


def _prune_runs(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest benchmark runs."""
    runs = sorted(folder.glob("run-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in runs[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def _turn_table(records: list[dict]) -> tuple[list[str], list[list[Any]]]:
    keys = ["psnr_om", "ssim_om", "lpips_om", "if", "ic", "seconds", "ok"]
    headers = ["sample", "turn", "instruction", *keys]
    rows = []
    for record in records:
        for turn in record.get("turns", []):
            rows.append([record.get("sample"), turn.get("turn"),
                         str(turn.get("instruction", ""))[:80],
                         *[_round(turn.get(k)) if not isinstance(turn.get(k), bool)
                           else turn.get(k) for k in keys]])
        if record.get("error"):
            rows.append([record.get("sample"), "-", f"error: {record['error']}",
                         *[None] * len(keys)])
    return headers, rows
