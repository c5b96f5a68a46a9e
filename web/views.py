"""What the pages show: previews, the Edit tab's state, the chat, the status line.

Browsers get previews, never full frames: each state's preview (long side
``LOUPE_PREVIEW_SIDE``, JPEG, WebP when the photo has transparency) is written once to
``<session>/previews/<edit folder>/<state>-<side>.jpg`` (or ``.webp``) and reused by undo,
redo, the slider, the
session list and review pages. States never change once made, so the cache needs no
invalidation. The chat and the status line are written in plain words
(:mod:`web.wording`): no parameter syntax, no state ids, no endpoint addresses.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from agent.brain.critic import get_critic
from agent.brain.planner import get_planner
from agent.session.results import name_of
from pipelines.config import get_settings
from pipelines.editors.registry import available_editors
from pipelines.files import atomic_write
from pipelines.images import downscale
from pipelines.localizers import get_localizer
from pipelines.redact import redact
from web.feedback import open_counts
from web.graph_view import render_svg
from web.sessions import WebSession, with_session
from web.wording import (
    backends_sentence,
    describe_action,
    editor_name,
    plain_sentence,
    score_text,
    scrub,
    step_status,
)

log = logging.getLogger(__name__)

PREVIEW_DIR = "previews"
THUMB_FILE = "thumb.jpg"
THUMB_SIDE = 192
JPEG_QUALITY = 88

_LIMITS = ("Without AI models it cannot create new objects from words; when it cannot find "
           "something, brush over it and ask again.")


def preview(image: np.ndarray, max_side: int | None = None) -> np.ndarray:
    """Downscale an image for display so its longer side is at most ``max_side``.

    Args:
        image: ``uint8`` HWC image.
        max_side: longest side of the result in pixels (default: ``LOUPE_PREVIEW_SIDE``).

    Returns:
        The image itself when already small enough, else an area-resampled copy.
    """
    return downscale(image, max_side or get_settings().preview_side)


def encode_preview(pixels: np.ndarray, quality: int = JPEG_QUALITY) -> tuple[bytes, str]:
    """Encode a display image: JPEG, or WebP when it has transparency.

    Returns:
        ``(bytes, suffix)`` with suffix ``".jpg"`` or ``".webp"``.
    """
    image = Image.fromarray(np.ascontiguousarray(pixels))
    buf = io.BytesIO()
    if image.mode == "RGBA":
        image.save(buf, "WEBP", quality=quality)
        return buf.getvalue(), ".webp"
    image.convert("RGB").save(buf, "JPEG", quality=quality)
    return buf.getvalue(), ".jpg"


def preview_file(session: WebSession, node_id: str) -> Path:
    """The cached display preview of one state of the session's photo (made on first use).

    Args:
        session: a web session holding a photo.
        node_id: a state id of its graph.

    Returns:
        Path of a JPEG/WebP whose long side is at most ``LOUPE_PREVIEW_SIDE``.
    """
    folder = session.folder / PREVIEW_DIR / session.edit_folder.name
    side = get_settings().preview_side
    for suffix in (".jpg", ".webp"):
        path = folder / f"{node_id}-{side}{suffix}"
        if path.is_file():
            return path
    data, suffix = encode_preview(preview(session.edit.image_at(node_id), side))
    path = folder / f"{node_id}-{side}{suffix}"
    atomic_write(path, data)
    return path


def _write_thumb(session: WebSession, head: str, source: Path) -> None:
    """Keep ``previews/thumb.jpg`` showing the head (the session list reads it)."""
    folder = session.folder / PREVIEW_DIR
    key = f"{session.edit_folder.name}/{head}"
    marker = folder / "thumb.of"
    try:
        if marker.is_file() and marker.read_text() == key and (folder / THUMB_FILE).is_file():
            return
        with Image.open(source) as im:
            im = im.convert("RGB")
            im.thumbnail((THUMB_SIDE, THUMB_SIDE))
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=80)
        atomic_write(folder / THUMB_FILE, buf.getvalue())
        atomic_write(marker, key)
    except OSError as exc:  # a thumbnail must never break the page
        log.warning("session %s…: thumbnail not written (%s)", session.id[:6], exc)


@dataclass
class SessionView:
    """What the Edit tab shows for a session.

    The ``*_file`` fields are display previews on disk (what the browser gets); ``image``,
    ``before`` and ``original`` are the same previews as lossless arrays, computed only
    when asked for (API callers).
    """

    session_id: str
    graph_svg: str = ""
    chat: list[dict] = field(default_factory=list)
    head: str | None = None
    parent: str | None = None
    root: str | None = None
    size: tuple[int, int] | None = None
    status: str = ""
    message: str = ""
    filename: str = ""
    image_file: Path | None = None
    before_file: Path | None = None
    original_file: Path | None = None
    _pixels: Callable[[str], np.ndarray] | None = field(default=None, repr=False)
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def _array(self, node: str | None) -> np.ndarray | None:
        if node is None or self._pixels is None:
            return None
        if node not in self._cache:
            self._cache[node] = preview(self._pixels(node))
        return self._cache[node]

    @property
    def image(self) -> np.ndarray | None:
        """The current state as a display-size array (None before a photo is opened)."""
        return self._array(self.head)

    @property
    def before(self) -> np.ndarray | None:
        """The previous state (the head's parent; the head itself at the original)."""
        return self._array(self.parent if self.parent is not None else self.head)

    @property
    def original(self) -> np.ndarray | None:
        """The original photo as a display-size array."""
        return self._array(self.root)

    def compare_files(self, against: str = "original") -> tuple[Path, Path] | None:
        """``(reference, current)`` preview files for the before/after slider.

        Args:
            against: ``"original"`` (the photo as opened) or ``"previous"`` (the parent).
        """
        if self.image_file is None:
            return None
        ref = self.before_file if against == "previous" else self.original_file
        return (ref or self.image_file), self.image_file

    def info(self) -> dict:
        """A JSON-able summary (for API callers)."""
        return {"session_id": self.session_id, "head": self.head,
                "width": self.size[0] if self.size else None,
                "height": self.size[1] if self.size else None, "message": self.message}


def rounded(value: Any, digits: int = 4) -> Any:
    """A number rounded for display; anything else as it is."""
    return round(float(value), digits) if isinstance(value, (int, float)) else value


def attr(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a dict, else ``getattr(obj, name)``: JSON and objects alike."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def current_backends(session: WebSession | None = None) -> dict[str, str]:
    """The facts behind the status line: which backend serves each role.

    A session with a photo reports its own (its planner may be in a fallback); otherwise
    the backends a session opened now would get, from the same getters ``EditSession``
    uses (``get_planner``, ``get_critic``, ``get_localizer``, ``available_editors``), so the
    line reads the same at page load and after an edit.
    """
    try:
        if session is not None and session.has_image:
            return dict(session.edit.backends())
    except Exception as exc:  # noqa: BLE001 - the status line must never break the page
        log.debug("session backends unavailable: %s", exc)
    settings = get_settings()
    roles: dict[str, str] = {}
    for role, make in (("planner", lambda: get_planner(settings)),
                       ("critic", lambda: get_critic(settings)),
                       ("localizer", get_localizer)):
        try:
            roles[role] = name_of(make())
        except Exception as exc:  # noqa: BLE001 - a broken backend is reported as built-in
            log.debug("%s unavailable: %s", role, exc)
    try:
        live = [n for n, s in available_editors().items() if s["available"]]
        roles["editor"] = ", ".join(live) or "none"
    except Exception as exc:  # noqa: BLE001
        log.debug("editor registry unavailable: %s", exc)
    return roles


def status_line(session: WebSession | None = None) -> str:
    """How this Loupe works right now, in plain words (no addresses, no keys): the one
    place the status line is written, at page load and after every action.

    Args:
        session: a web session with a photo, or None (a session opened now).

    Returns:
        One or two short sentences of Markdown.
    """
    sentence, embedded = backends_sentence(current_backends(session))
    return redact(sentence + (" " + _LIMITS if embedded else ""))  # never a secret


def chat_messages(session: WebSession) -> list[dict]:
    """The chat for the page: each message as stored; a message that added a
    reference photo is followed by its picture (``{"path": …}`` of its preview, inside the
    session folder: the UI serves a private copy)."""
    out: list[dict] = []
    for msg in session.chat:
        out.append({k: v for k, v in msg.items() if k != "reference"})
        path = reference_preview_file(session, msg.get("reference"))
        if path is not None:
            out.append({"role": msg.get("role", "assistant"), "content": {"path": str(path)}})
    return out


#: a reference photo's id ("ref1"), as chat messages and turns name it
REFERENCE_ID = re.compile(r"ref[1-9][0-9]?")
#: long side of a reference's picture (the chat, the review page)
REFERENCE_PREVIEW_SIDE = 320


def reference_preview_file(session: WebSession, ref_id: Any) -> Path | None:
    """The cached picture of one of the session's reference photos (made on first use,
    e.g. after an archive was imported), or None when the photo keeps no such reference.

    Args:
        session: a web session.
        ref_id: a reference id ("ref1") as a turn or a chat message names it.
    """
    if not (isinstance(ref_id, str) and REFERENCE_ID.fullmatch(ref_id)
            and session.has_image):
        return None
    edit = session.edit
    if ref_id not in {item["id"] for item in edit.references.items}:
        return None
    folder = session.folder / PREVIEW_DIR / session.edit_folder.name
    for suffix in (".jpg", ".webp"):
        if (folder / f"reference-{ref_id}{suffix}").is_file():
            return folder / f"reference-{ref_id}{suffix}"
    try:
        pixels = edit.references.pixels(edit.folder, ref_id, edit.original)
    except (OSError, ValueError) as exc:  # SessionError is a ValueError: a damaged file
        log.warning("no picture of %s: %s", ref_id, exc)
        return None
    data, suffix = encode_preview(preview(pixels, REFERENCE_PREVIEW_SIDE))
    atomic_write(folder / f"reference-{ref_id}{suffix}", data)
    return folder / f"reference-{ref_id}{suffix}"


def session_view(session: WebSession, *, message: str = "") -> SessionView:
    """Build the page state of a session (images as cached display previews)."""
    view = SessionView(session.id, chat=chat_messages(session), message=message,
                       filename=str(session.ui.get("filename") or ""))
    if not session.has_image:
        view.graph_svg = render_svg(None)
        view.status = status_line(None)
        return view
    edit = session.edit
    graph = edit.graph
    view.head, view.root = graph.head, graph.root
    view.parent = graph.nodes[view.head].parent
    w, h = graph.size
    view.size = (int(w), int(h))
    view.image_file = preview_file(session, view.head)
    view.original_file = preview_file(session, graph.root)
    view.before_file = preview_file(session, view.parent) if view.parent else view.image_file
    view._pixels = edit.image_at
    view.graph_svg = render_svg(graph, view.head, notes=open_counts(session))
    view.status = status_line(session)
    _write_thumb(session, view.head, view.image_file)
    return view


def image_size(session_id: str | None) -> tuple[int, int] | None:
    """``(width, height)`` of the session's photo, or None before one is opened."""
    def run(session: WebSession) -> tuple[int, int] | None:
        return tuple(session.edit.graph.size) if session.has_image else None

    return with_session(session_id, run, create=False)


def get_view(session_id: str | None) -> SessionView:
    """The page state for ``session_id`` (a restored session after refresh or restart)."""
    return with_session(session_id, session_view)


# ----------------------------------------------------------------------------- the chat


def _plan_message(actions: list[dict]) -> dict | None:
    if not actions:
        return None
    lines = [f"{i}. {describe_action(a)}" for i, a in enumerate(actions, 1)]
    return {"role": "assistant", "content": "**Plan**\n" + "\n".join(lines)}


def _reasons(attempt: dict) -> str:
    lines = [f"✓ {r}" for r in attempt.get("keep") or []]
    lines += [f"✗ {r}" for r in attempt.get("fix") or []]
    if attempt.get("error"):
        lines.append(f"✗ {scrub(attempt['error'])}")
    lines.append(f"Made with {editor_name(attempt.get('editor'))}.")
    return "\n".join(lines)


def _attempt_messages(number: int | None, step: dict) -> list[dict]:
    out = []
    chosen = step.get("chosen")
    for attempt in step.get("attempts") or []:
        kept = chosen is not None and attempt.get("index") == chosen
        prefix = f"Step {number} · attempt" if number else "Attempt"
        title = (f"{prefix} {attempt.get('index', '?')} — {score_text(attempt.get('score'))}"
                 + (" · kept" if kept else ""))
        out.append({"role": "assistant", "content": _reasons(attempt),
                    "metadata": {"title": title, "status": "done"}})
    return out


def _outcome(result: dict, steps: list[dict]) -> str:
    # a step of a relative word that changed nothing on this photo is no change to count
    real = [s for s in steps if s.get("status") not in ("undo", "not_needed")]
    applied = [s for s in real if s.get("status") == "applied"]
    if any(s.get("status") == "undo" for s in steps) and not real:
        return "↶ Went back, as asked."
    if result.get("ok") and real and len(applied) == len(real):
        return "✔ Done." if len(real) == 1 else f"✔ Done: all {len(real)} changes are made."
    if applied:
        missed = [s for s in real if s.get("status") != "applied"]
        why = "; ".join(f"“{describe_action(s.get('action'))}”: {_step_why(s)}"
                        for s in missed)
        return f"⚠ Partly done: {len(applied)} of {len(real)} changes made. {why}."
    reasons = [_step_why(s) for s in real if s.get("status") not in ("pending", "applied")]
    text = "; ".join(r for r in reasons if r) or _reword(result.get("message") or "", steps)
    text = text or "That did not work"
    if "nothing" not in text.lower():
        text = text.rstrip(". ") + ". Nothing was changed."
    return f"⚠ {text[:1].upper() + text[1:]}"


def _reword(text: str, steps: list[dict]) -> str:
    """An agent sentence in plain words, its own step descriptions replaced by ours."""
    text = plain_sentence(text)
    for step in steps:
        theirs = plain_sentence(str(step.get("description") or ""))
        if theirs and theirs in text:
            text = text.replace(theirs, describe_action(step.get("action")).lower())
    return text


def _step_why(step: dict) -> str:
    status = step.get("status")
    if status in ("failed", "needs_mask", "unsupported", "skipped") and step.get("message"):
        return _reword(step["message"], [step])
    return step_status(status)


def turn_messages(instruction: str, result: dict) -> list[dict]:
    """Chat messages (Gradio 'messages' format) for one turn, in plain words.

    Each thing is said once: the request, the plan as a short list, each attempt as a
    collapsible entry with its score and the critic's reasons, and one closing line.

    Args:
        instruction: what the person asked.
        result: ``TurnResult.to_dict()``.

    Returns:
        The messages to append to the chat.
    """
    msgs: list[dict] = [{"role": "user", "content": instruction}]
    plan = result.get("plan") if isinstance(result.get("plan"), dict) else {}
    steps = [s for s in result.get("steps") or [] if isinstance(s, dict)]
    actions = [s.get("action") or {} for s in steps if s.get("status") != "undo"] or [
        a for a in plan.get("actions") or [] if a.get("operation")]
    if plan.get("is_edit", True) and actions:
        planned = _plan_message(actions)
        if planned:
            msgs.append(planned)
    several = len([s for s in steps if s.get("attempts")]) > 1
    for number, step in enumerate(steps, 1):
        msgs.extend(_attempt_messages(number if several else None, step))
    if plan and not plan.get("is_edit", True):
        msgs.append({"role": "assistant", "content": _reword(
            result.get("message") or plan.get("message") or "", steps)})
    else:
        msgs.append({"role": "assistant", "content": _outcome(result, steps)})
    return msgs


def state_words(action: dict | None, description: str = "") -> str:
    """A state of the graph in plain words: from its action, else its stored description."""
    if isinstance(action, dict) and (action.get("operation") or action.get("kind") == "undo"):
        return describe_action(action)
    return scrub(description)[:80] or "that state"


def move_note(verb: str, moved: bool, what: str = "") -> str:
    """The chat line after undo, redo or going to a state of the graph.

    Args:
        verb: ``"undo"``, ``"redo"`` or ``"checkout"``.
        moved: whether the current state changed.
        what: the state undone, redone or gone to, in words (:func:`state_words`).
    """
    if not moved:
        return {"undo": "Nothing to undo.", "redo": "Nothing to redo."}.get(
            verb, "Already there.")
    quoted = f" “{what}”" if what else ""
    if verb == "undo":
        return f"↶ Undid{quoted}."
    if verb == "redo":
        return f"↷ Redid{quoted}."
    return f"Went back to{quoted or ' that state'}. A new edit from here starts a branch."


def current_preview(session_id: str | None) -> tuple[str, Path] | None:
    """``(head id, preview file)`` of a session's current state; None without a photo."""
    def run(session: WebSession) -> tuple[str, Path] | None:
        if not session.has_image:
            return None
        head = session.edit.graph.head
        return head, preview_file(session, head)

    return with_session(session_id, run, create=False)
