"""What the pages show: previews, the Edit tab's state, the chat, the status line."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipelines.config import get_settings
from pipelines.editors.registry import available_editors
from pipelines.images import downscale
from pipelines.redact import redact, redact_url
from web.graph_view import render_svg
from web.sessions import WebSession, with_session

log = logging.getLogger(__name__)


_EMBEDDED_LIMITS = (
    "Embedded default (no model weights): edits are classical (exposure, colour, recolour, "
    "blur/sharpen, remove by inpainting from surroundings, paste a reference, text). It cannot "
    "generate new objects from words, and it finds targets only by colour words, positions "
    "or your brush mask — brush the area for anything else."
)


def preview(image: np.ndarray, max_side: int | None = None) -> np.ndarray:
    """Downscale an image for display so its longer side is at most ``max_side``.

    Args:
        image: ``uint8`` HWC image.
        max_side: longest side of the result in pixels (default: ``LOUPE_PREVIEW_SIDE``).

    Returns:
        The image itself when already small enough, else an area-resampled copy.
    """
    return downscale(image, max_side or get_settings().preview_side)


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


def rounded(value: Any, digits: int = 4) -> Any:
    """A number rounded for display; anything else as it is."""
    return round(float(value), digits) if isinstance(value, (int, float)) else value


def attr(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a dict, else ``getattr(obj, name)``: JSON and objects alike."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


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
    return redact(text + ("\n\n" + _EMBEDDED_LIMITS if embedded else ""))  # never a secret


def _configured_backends() -> dict[str, str]:
    roles = {"editor": "classical", "localiser": "embedded", "planner": "rule-based",
             "critic": "measured"}
    try:
        live = [name for name, state in available_editors().items()
                if name != "classical" and state["available"]]
        if live:
            roles["editor"] = ", ".join(live) + " + classical"
    except Exception as exc:  # noqa: BLE001
        log.debug("editor registry unavailable: %s", exc)
    settings = get_settings()
    if settings.llm_base_url:
        roles["planner"] = f"{settings.llm_model or 'LLM'} @ {redact_url(settings.llm_base_url)}"
    return roles


def session_view(session: WebSession, *, message: str = "") -> SessionView:
    """Build the page state of a session (images downscaled for display)."""
    view = SessionView(session.id, chat=list(session.chat), message=message)
    if not session.has_image:
        view.graph_svg = render_svg(None)
        view.status = status_line(None)
        return view
    edit = session.edit
    graph = edit.graph
    view.head = graph.head
    current = edit.current_image()
    view.size = (int(current.shape[1]), int(current.shape[0]))
    view.image = preview(current)
    parent = graph.nodes[view.head].parent
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
