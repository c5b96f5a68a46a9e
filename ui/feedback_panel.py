"""The owner's side of review feedback, in the Edit tab: the count on *Share for review*,
the comments per state (show one on its state with the pin drawn, resolve, delete, use as
instruction) and the pinned area as the selection for the next instruction.

"Use as instruction" only fills the instruction box and holds the pin's area for the next
instruction on its state (``web.use_comment``; ``web.edit_turn`` takes it when nothing is
brushed): the owner reads the reviewer's text, changes it if they like, and sends it.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import numpy as np

import web
from ui.common import UI, Shell, edit_page, served, toast

FEEDBACK_JS = """
element.addEventListener('click', (e) => {
  const b = e.target.closest('button');
  if (!b) { return; }
  for (const k of ['go', 'use', 'resolve', 'delete']) {
    const id = b.dataset[k];
    if (!id) { continue; }
    if (k === 'delete' && !confirm('Delete this comment for good?')) { return; }
    trigger('click', {action: k, comment: id});
    return;
  }
});
"""
SHARE_LABEL = "Share for review"
PANEL_LABEL = "Reviewer feedback"


def build(c: dict) -> None:
    """The feedback panel (an accordion), into the Edit tab's components ``c``."""
    with gr.Accordion(PANEL_LABEL, open=False, elem_id="feedback-box") as c["feedback_box"]:
        gr.Markdown("What reviewers said on your review links, per state. *Show* goes to "
                    "the state with the pin drawn; *Use as instruction* puts the text in "
                    "the box and the pin as the selected area, for you to read and send.")
        c["feedback_refresh"] = gr.Button("↻ Check for new feedback", size="sm",
                                          elem_id="feedback-refresh")
        c["feedback"] = gr.HTML(value="", elem_id="feedback", js_on_load=FEEDBACK_JS)


def _labels(session_id: str) -> dict[str, str]:
    nodes = web.graph_json(session_id).get("nodes") or []
    return {str(n.get("id")): web.graph_view.node_label(n) for n in nodes}


def _count(summary: dict) -> str:
    n, left = summary["count"], summary["open"]
    return f"{n} comment{'s' if n != 1 else ''}, {left} open"


def ui_feedback(session_id: str | None) -> tuple:
    """The count on *Share for review*, the panel's title, the list and the note on a
    held pin area, for a session."""
    try:
        if not web.has_photo(session_id):
            raise web.SessionError("no photo")
        summary = web.review_comments(session_id)
    except Exception:  # noqa: BLE001 - no session or photo yet: nothing to show
        return (gr.update(label=SHARE_LABEL), gr.update(label=PANEL_LABEL),
                web.feedback.render_list({}), gr.update(visible=False, value=""))
    note = selection_note(session_id)
    if not summary["count"]:
        return (gr.update(label=SHARE_LABEL), gr.update(label=PANEL_LABEL),
                web.feedback.render_list(summary), note)
    count = _count(summary)
    return (gr.update(label=f"{SHARE_LABEL} · {count}"),
            gr.update(label=f"{PANEL_LABEL} ({count})"),
            web.feedback.render_list(summary, _labels(session_id)), note)


@toast
def ui_feedback_act(session_id: str | None, library: Any, compare: str,
                    evt: gr.EventData) -> tuple:
    """A button in the feedback list: show, use as instruction, resolve or delete."""
    data = evt._data or {}
    action, comment = str(data.get("action") or ""), str(data.get("comment") or "")
    box = gr.skip()
    if action in ("go", "use"):
        view, path, ask = (web.use_comment if action == "use" else web.go_to_comment)(
            session_id, comment)
        page = list(edit_page(view, library, compare))
        page[2] = served(path)  # the photo, with the pin drawn
        if action == "use":
            box = {"text": ask["text"], "files": []}
            gr.Info("The comment is in the instruction box"
                    + (" and its pin is the selected area" if ask["box"] else "")
                    + ": read it, change it if you like, then send it.")
    elif action == "resolve":
        web.resolve_comment(session_id, comment)
        page = list(edit_page(web.get_view(session_id), library, compare))
    elif action == "delete":
        web.delete_comment(session_id, comment)
        page = list(edit_page(web.get_view(session_id), library, compare))
    else:
        return gr.skip()
    return (*page, box, *ui_feedback(session_id))


def selection_note(session_id: str | None) -> dict:
    """The note under the instruction box on what the next instruction will change: the
    reviewer's pin area held for this state (it wins: ``web.edit_turn`` uses it), else the
    clicked selection; hidden when there is neither.

    Every event that changes either (a turn, a click on the photo, *Clear selection*, a
    feedback action) writes it in its own response, so the note is never a step behind.
    """
    try:
        if not web.has_photo(session_id):
            return gr.update(visible=False, value="")
        held = web.pending_selection(session_id)
        mask = None if held and held.get("box") else web.selection_mask(session_id)
    except Exception:  # noqa: BLE001 - no session yet: nothing is selected
        return gr.update(visible=False, value="")
    if held and held.get("box"):
        x0, y0, x1, y1 = held["box"]
        return gr.update(visible=True, value=(
            f"**Selected area** from the reviewer's pin: x {x0}–{x1}, y {y0}–{y1} "
            "(full-resolution pixels). The next instruction on this state changes only this "
            "area, unless you brush another one."))
    if mask is None or not mask.any():
        return gr.update(visible=False, value="")
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    return gr.update(visible=True, value=(
        f"**Selected area** you clicked (outlined): x {int(cols[0])}–{int(cols[-1]) + 1}, "
        f"y {int(rows[0])}–{int(rows[-1]) + 1} (full-resolution pixels). *This*, *that* and "
        "*it* in the next instruction mean it; *the whole photo* does not."))


def wire(shell: Shell) -> None:
    """Refresh the feedback after every page change; wire the list's buttons."""
    e, sid = shell.edit, shell.sid
    outs = [e["share_box"], e["feedback_box"], e["feedback"], e["selection_note"]]
    e["graph"].change(ui_feedback, [sid], outs, api_name="ui_feedback", **UI)
    e["feedback_box"].expand(ui_feedback, [sid], outs, api_name="ui_feedback", **UI)
    e["feedback_refresh"].click(ui_feedback, [sid], outs, api_name="ui_feedback", **UI)
    e["feedback"].click(ui_feedback_act, shell.state,
                        [*shell.page, e["box"], *outs],
                        api_name="ui_feedback_act", **shell.quiet)
