"""The Autopilot tab: a photo and a mood in, MCTS over candidate edits, the executed
steps, the search tree and a hand-over to the Edit tab as undoable states."""

from __future__ import annotations

from typing import Any

import gradio as gr

import web
from ui.common import ASSETS, UI, Shell, edit_page, toast

AUTOPILOT_EXAMPLES = [[str(ASSETS / "coffee.jpg"), "warm and cosy"],
                      [str(ASSETS / "chelsea.jpg"), ""]]


def _summary_md(summary: dict) -> str:
    before, after = summary.get("score_before"), summary.get("score_after")
    if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return ""
    steps = summary.get("steps") or []
    kept = (f"{len(steps)} step(s) kept: " + "; ".join(web.wording.scrub(str(s))
                                                        for s in steps)) if steps \
        else "no step improved the photo"
    note = " (cancelled: the best found so far)" if summary.get("cancelled") else ""
    text = (f"**Quality score {before:.2f} → {after:.2f}** ({after - before:+.2f}){note}. "
            f"{kept}.")
    return text + _explanation_md(summary)


def _explanation_md(summary: dict) -> str:
    """Why it changed the photo or left it alone, and what it offers but did not apply."""
    parts = []
    if summary.get("reason"):
        parts.append(web.wording.scrub(str(summary["reason"])).capitalize() + ".")
    for s in summary.get("suggestions") or []:
        how = "to apply it instead of the held-back steps" if s.get("operation") == \
            "full_strength" else "to add it"
        parts.append(f"**Suggestion (not applied):** {web.wording.scrub(str(s['description']))}"
                     f" — {web.wording.scrub(str(s['reason']))}. Press *Accept suggestion* "
                     f"{how} (suggestions are accepted in the order listed).")
    return ("\n\n" + "\n\n".join(parts)) if parts else ""


def _considered_rows(summary: dict) -> list[list[Any]]:
    return [[c.get("iteration", ""), web.wording.scrub(str(c.get("description", ""))),
             web.wording.scrub(str(c.get("decision", "")))]
            for c in summary.get("considered") or []]


@toast
def ui_autopilot(session_id: str | None, path: str | None, mood: str, iterations: float,
                 simulations: float, depth: float, top_k: float, seed: float,
                 reference: str | None = None, progress: gr.Progress = gr.Progress()) -> tuple:
    """Run Autopilot (MCTS over candidate edits) with a progress bar counting simulations;
    a reference photo takes the mood's place ("better, like this one")."""
    def report(fraction: float, text: str) -> None:
        progress(fraction, desc=text or "simulations")

    session_id = web.ensure_session(session_id)  # a page still loading has none yet
    if not path and not web.has_photo(session_id):
        raise web.SessionError("Add a photo here, or open one in the Edit tab first.")
    result = web.run_autopilot(
        session_id, path, mood=mood, iterations=int(iterations),
        simulations=int(simulations), depth=int(depth), top_k=int(top_k), seed=int(seed),
        progress=report, reference=reference or None)
    rows = [[i, web.wording.scrub(str(desc)), *(f"{v:.3f}" if isinstance(v, (int, float))
                                                else "—" for v in vals)]
            for i, desc, *vals in result.rows]
    return (session_id, result.slider, rows, web.graph_view.zoomable(result.tree_svg),
            _summary_md(result.summary), _considered_rows(result.summary))


@toast
def ui_accept_suggestion(session_id: str | None) -> tuple:
    """Accept the last run's first suggestion (a straighten it offered but did not apply)."""
    view = web.accept_autopilot_suggestion(session_id, 0)
    rows = [[i, web.wording.scrub(str(desc)), "—", "—", "—"] for i, desc, *_ in view.rows]
    return view.slider, rows, _explanation_md(view.summary).strip()


def ui_autopilot_cancel(session_id: str | None) -> str:
    """Ask a running Autopilot to stop after the current simulation."""
    web.cancel_autopilot(session_id)
    return "Cancelling… the best result so far is kept."


@toast
def ui_send_to_edit(session_id: str | None, library: Any, compare: str) -> tuple:
    """Land the Autopilot steps in the Edit tab as undoable states, never over a photo."""
    spare = web.empty_slot(session_id) if web.has_photo(session_id) else None
    try:
        view = web.send_autopilot_to_edit(session_id, into=spare)
    finally:
        if spare and spare != session_id and not web.has_photo(spare):
            web.delete_session(spare)
    gr.Info("Autopilot's steps are in the Edit tab; each one can be undone.")
    return edit_page(view, library, compare)



def build() -> dict:
    """Lay out the Autopilot tab; returns its components by name."""
    c: dict[str, Any] = {}
    with gr.Row():
        with gr.Column(scale=2, min_width=280):
            # a thumbnail of the photo, not a file row; the file itself is passed on as
            # uploaded (type "filepath" with no image_mode: no re-encoding, EXIF kept)
            c["upload"] = gr.Image(label="Photo (empty: the Edit tab's current state)",
                                   type="filepath", sources=["upload"], elem_id="ap-upload",
                                   height=220, buttons=[])
            c["mood"] = gr.Textbox(label="Mood / intent (optional)", elem_id="ap-mood",
                                   placeholder="e.g. warm and cosy, crisp daylight")
            c["reference"] = gr.File(label="Reference photo (in place of the mood)",
                                     file_types=["image"], type="filepath",
                                     elem_id="ap-reference", height=70)
            with gr.Accordion("Budget", open=False, elem_id="ap-budget"):
                c["iterations"] = gr.Slider(1, 10, value=2, step=1, label="Iterations")
                c["simulations"] = gr.Slider(1, 64, value=8, step=1, label="Simulations",
                                             elem_id="ap-simulations")
                c["depth"] = gr.Slider(1, 5, value=2, step=1, label="Depth")
                c["top_k"] = gr.Slider(1, 8, value=3, step=1, label="Top-K candidates")
                c["seed"] = gr.Number(value=0, precision=0, label="Seed")
            with gr.Row():
                c["run"] = gr.Button("Run Autopilot", variant="primary", elem_id="ap-run")
                c["cancel"] = gr.Button("Cancel", variant="stop", elem_id="ap-cancel")
            c["send"] = gr.Button("Send to Edit (as undoable steps)", elem_id="ap-send")
            c["accept"] = gr.Button("Accept suggestion", elem_id="ap-accept", size="sm")
            c["summary"] = gr.Markdown(elem_id="ap-summary")
        with gr.Column(scale=3, min_width=300):
            c["slider"] = gr.ImageSlider(label="Before / after", type="numpy",
                                         elem_id="ap-slider", max_height=460)
            c["steps"] = gr.Dataframe(headers=["#", "Step", "Score before", "Score after",
                                               "Change"], label="Executed steps",
                                      elem_id="ap-steps", interactive=False)
            c["considered"] = gr.Dataframe(headers=["Iteration", "Change considered",
                                                    "Decision"], label="What it considered",
                                           elem_id="ap-considered", interactive=False)
            gr.Markdown("**Search tree** — use the zoom buttons to look closer.")
            c["tree"] = gr.HTML(value="", elem_id="ap-tree", js_on_load=web.ZOOM_JS,
                                elem_classes=["loupe-graph-box"])
    gr.Examples(examples=AUTOPILOT_EXAMPLES, inputs=[c["upload"], c["mood"]])
    return c



def wire(shell: Shell, a: dict) -> None:
    """Connect the Autopilot tab's buttons (its hand-over lands in the Edit tab's page)."""
    sid = shell.sid
    run = a["run"].click(ui_autopilot, [sid, a["upload"], a["mood"], a["iterations"],
                                        a["simulations"], a["depth"], a["top_k"], a["seed"],
                                        a["reference"]],
                         [sid, a["slider"], a["steps"], a["tree"], a["summary"],
                          a["considered"]],
                         api_name="ui_autopilot", **UI)
    a["accept"].click(ui_accept_suggestion, [sid], [a["slider"], a["steps"], a["summary"]],
                      api_name="ui_autopilot_accept", **UI)
    a["cancel"].click(ui_autopilot_cancel, [sid], a["summary"], cancels=[run],
                      api_name="ui_autopilot_cancel", **UI)
    shell.then_links(a["send"].click(ui_send_to_edit, shell.state, shell.page,
                                     api_name="ui_send_to_edit", **shell.quiet))
