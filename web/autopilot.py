"""The Autopilot tab's calls: run the search, cancel it, land its steps in Edit."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.search.mcts import autopilot
from agent.search.reference_pilot import autopilot_like
from agent.search.suggestions import FULL_STRENGTH, accept_full_strength, accept_suggestion
from agent.session import EditSession, SessionError
from pipelines.files import tree_size
from pipelines.progress import ProgressFn
from web.edit import open_image
from web.graph_view import render_svg
from web.sessions import WebSession, get_manager, with_session
from web.views import SessionView, attr, preview, rounded, session_view
from web.wording import describe_action


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
        action = attr(step, "action")
        desc = describe_action(action) if isinstance(action, dict) and action.get(
            "operation") else attr(step, "description") or str(action or "")
        before, after = attr(step, "score_before"), attr(step, "score_after")
        change = round(after - before, 4) if isinstance(before, (int, float)) and isinstance(
            after, (int, float)) else None
        rows.append([i, desc, rounded(before), rounded(after), change])
    return rows


def _explanation(result: Any) -> dict[str, Any]:
    """The run's account of itself, as the API returns it (stable keys, JSON only).

    ``left_alone`` (no step kept), ``reason`` (one line), ``considered`` (each change run at
    full resolution: ``iteration``, ``description``, ``decision`` and, where measured,
    ``predicted_gain``, ``margin``, ``moves``), ``suggestions`` (offered, not applied:
    ``operation``, ``params``, ``description``, ``confidence``, ``cue``, ``reason``) and
    ``context`` (``flags``, ``reasons``: what makes the scene's colour or tone natural).
    """
    considered = []
    for c in getattr(result, "considered", None) or []:
        row = {"iteration": int(c.get("iteration", 0)),
               "description": describe_action(c["action"]) if isinstance(c.get("action"), dict)
               else str(c.get("description", "")), "decision": str(c.get("decision", ""))}
        for key in ("predicted_gain", "margin", "moves"):
            if isinstance(c.get(key), (int, float)):
                row[key] = round(float(c[key]), 3)
        considered.append(row)
    context = getattr(result, "context", None) or {}
    return {"left_alone": not result.steps, "reason": str(getattr(result, "reason", "")),
            "considered": considered,
            "suggestions": [dict(s) for s in getattr(result, "suggestions", None) or []],
            "context": {"flags": list(context.get("flags", [])),
                        "reasons": list(context.get("reasons", []))}}


def accept_autopilot_suggestion(session_id: str | None, index: int = 0) -> AutopilotView:
    """Accept one of the last run's suggestions, so "send to Edit" lands it too.

    A straighten it did not apply by itself becomes one more kept step; a change the
    do-no-harm guard held back (``full_strength``) replaces the run's own steps with the
    whole changes, from the photo the run started from (straighten suggestions accepted
    before are applied again on top).

    Args:
        session_id: the session that ran Autopilot.
        index: which suggestion (0 = the first).

    Returns:
        The updated before/after previews, steps, an empty tree drawing and the summary.
    """
    session = get_manager().get(session_id)
    with session.lock:
        info = session.ui.get("autopilot")
        if not info:
            raise SessionError("Run Autopilot first.")
        suggestions = info.get("suggestions") or []
        if not isinstance(index, int) or isinstance(index, bool) or \
                not 0 <= index < len(suggestions):
            raise SessionError("That suggestion is not there (run Autopilot again).")
        chosen = suggestions[index]
        scratch = EditSession.open(session.folder / info["scratch"])
        root = scratch.graph.root
        before = np.array(scratch.image_at(root))
        accepted = list(info.get("accepted") or [])
        try:
            if chosen.get("operation") == FULL_STRENGTH:
                landed, parent = accept_full_strength(before, chosen), root
                image = landed[-1][0]
                for sugg in accepted:   # straighten suggestions accepted before, again on top
                    landed.append(accept_suggestion(image, sugg))
                    image = landed[-1][0]
                steps = []
            else:
                landed, parent = [accept_suggestion(np.array(scratch.current_image()),
                                                    chosen)], None
                accepted.append(chosen)
                steps = list(info["steps"])
        except ValueError as exc:
            raise SessionError(str(exc)) from exc
        get_manager().check_room(session, 3 * before.shape[0] * before.shape[1] * len(landed),
                                 what="Accepting the suggestion")
        for image, action in landed:
            node = scratch.commit(image, action, f"Autopilot: {action.describe()} (accepted)",
                                  parent)
            parent = node.id
            steps.append({"node": node.id, "action": action.model_dump(mode="json"),
                          "description": action.describe()})
        info["steps"], info["accepted"] = steps, accepted
        info["suggestions"] = [s for i, s in enumerate(suggestions) if i != index]
        session.save_ui()
    rows = [[i, describe_action(s["action"]), None, None, None]
            for i, s in enumerate(info["steps"], 1)]
    what = "; ".join(a.describe() for _, a in landed)
    summary = {"steps": [r[1] for r in rows], "accepted": chosen,
               "suggestions": info["suggestions"], "left_alone": False,
               "reason": f"changed: {what} (suggestion accepted)"}
    return AutopilotView((preview(before), preview(image)), rows, "", summary)


def run_autopilot(session_id: str | None, image_src: Any = None, *, mood: str = "",
                  iterations: int = 2, simulations: int = 8, depth: int = 2, top_k: int = 3,
                  seed: int = 0, progress: ProgressFn | None = None,
                  reference: Any = None) -> AutopilotView:
    """Improve a photo by MCTS over candidate edits (``agent.search.mcts.autopilot``).

    The run commits its kept steps to a scratch EditSession inside the web session, so
    "send to Edit" can later land each step, at full resolution, as an undoable node.

    Args:
        session_id: the web session (its Edit photo is used when ``image_src`` is empty).
        image_src: an uploaded photo (path/bytes/array) or None.
        mood: optional intent ("warm and cosy").
        iterations, simulations, depth, top_k, seed: the search budget.
        progress: called with ``(fraction, text)`` after each simulation.
        reference: a reference photo (path or bytes) in place of the mood ("better, like
            this one": ``agent.search.reference_pilot``); refused like any upload.

    Returns:
        The before/after previews, executed steps with score changes, the tree drawing and
        a JSON summary.
    """
    session = get_manager().get(session_id)
    scratch_dir = session.folder / f"autopilot-{secrets.token_hex(4)}"
    with session.lock:
        head = None
        if image_src is None:
            edit = session.edit
            head = edit.graph.head
            image_src = np.array(edit.current_image())
        try:
            scratch = EditSession.create(image_src, scratch_dir)
            # the kept steps land as layers in the scratch session (at most one full
            # frame per step); the previous run's scratch folder is replaced
            width, height = scratch.graph.size
            old = (session.ui.get("autopilot") or {}).get("scratch")
            freed = tree_size(session.folder / old) if old else 0
            get_manager().check_room(session, 3 * width * height * max(1, int(depth)), freed,
                                     "This Autopilot run")
        except ValueError as exc:
            shutil.rmtree(scratch_dir, ignore_errors=True)
            raise SessionError(str(exc)) from exc
    session.cancel.clear()
    before = np.array(scratch.current_image())
    try:
        if reference is not None:
            result = _like_reference(scratch, before, reference)
        else:
            result = autopilot(before, mood=(mood or "").strip() or None,
                               iterations=iterations, simulations=simulations, depth=depth,
                               top_k=top_k, seed=seed, session=scratch,
                               progress=_progress_adapter(progress),
                               cancel=session.cancel.is_set)
    except ValueError as exc:
        shutil.rmtree(scratch_dir, ignore_errors=True)
        raise SessionError(str(exc)) from exc
    summary = {"score_before": rounded(result.score_before),
               "score_after": rounded(result.score_after),
               "steps": [row[1] for row in _step_rows(result.steps)],
               "cancelled": bool(getattr(result, "cancelled", False)),
               **_explanation(result)}
    with session.lock:
        old = session.ui.get("autopilot") or {}
        if old.get("scratch"):
            shutil.rmtree(session.folder / old["scratch"], ignore_errors=True)
        session.ui["autopilot"] = {
            "scratch": scratch_dir.name, "head": head,
            "filename": Path(str(image_src)).name if isinstance(image_src, (str, Path))
            else None,
            "steps": [{"node": s.node_id, "action": s.action, "description": s.description}
                      for s in result.steps],
            "suggestions": summary["suggestions"]}
        session.save_ui()
    tree = "" if result.tree.get("reference") else render_svg(result.tree, title="MCTS tree")
    return AutopilotView((preview(before), preview(np.asarray(result.image))),
                         _step_rows(result.steps), tree, summary)


def _like_reference(scratch: EditSession, before: np.ndarray, reference: Any) -> Any:
    """Autopilot with ``reference`` in place of the mood, kept in the scratch session."""
    entry = scratch.add_reference(reference)
    pixels = scratch.references.pixels(scratch.folder, entry["id"], scratch.original)
    return autopilot_like(before, pixels, session=scratch, ref_id=entry["id"])


def send_autopilot_to_edit(session_id: str | None, into: str | None = None) -> SessionView:
    """Land the last Autopilot run in the Edit session, one undoable node per kept step.

    A run on an uploaded photo first opens that photo in the Edit tab; a run on the Edit
    photo branches from the state it started from.

    Args:
        session_id: the session that ran Autopilot.
        into: where a run on an *uploaded* photo lands (e.g. a new session beside this
            one, so the photo being edited is kept); default: this session.
    """
    session = get_manager().get(session_id)
    info = session.ui.get("autopilot")
    if not info:
        raise SessionError("Run Autopilot first.")
    if not info["steps"]:
        raise SessionError("Autopilot kept no step (nothing improved the score).")
    scratch = EditSession.open(session.folder / info["scratch"])
    parent = info.get("head")
    target = session_id if parent is not None or into is None else into
    if parent is None:  # a run on an uploaded photo: open it (under its own name) first
        name = info.get("filename") or "autopilot" + Path(scratch.root_file).suffix
        staged = session.folder / "incoming" / Path(name).name
        staged.parent.mkdir(exist_ok=True)
        shutil.copyfile(scratch.folder / scratch.root_file, staged)
        try:
            open_image(target, staged, staged.name)
        finally:
            staged.unlink(missing_ok=True)

    def run(s: WebSession) -> SessionView:
        edit, node_parent = s.edit, parent
        width, height = edit.graph.size
        get_manager().check_room(s, 3 * width * height * len(info["steps"]),
                                 what="Sending Autopilot's steps")
        for step in info["steps"]:
            image = scratch.image_at(step["node"])
            node = edit.commit(np.asarray(image), step["action"],
                               f"Autopilot: {step['description']}", node_parent)
            node_parent = node.id
        note = f"Autopilot's {len(info['steps'])} step(s) landed as undoable states."
        s.chat.append({"role": "assistant", "content": note})
        s.save_ui()
        return session_view(s, message=note)

    return with_session(target, run, create=False)
