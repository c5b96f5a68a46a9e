"""Loupe's web app: the Edit, Autopilot and Benchmark tabs, plus an API and MCP tools.

UI only: every callback is a short call into ``web`` (sessions, edits, autopilot,
benchmarks), so the same actions are plain Python calls, ``gradio_client`` endpoints and
MCP tools. Nothing heavy happens at import time; models load on first use. Errors from
the service layer become one ``gr.Error`` each, in ``_friendly``.

Run ``python app.py`` (``make demo``) for http://127.0.0.1:7860; ``LOUPE_HOST`` /
``LOUPE_PORT`` / ``LOUPE_APP_CONCURRENCY`` / ``LOUPE_MAX_UPLOAD_MB`` tune the server
(``pipelines.config.Settings``).
"""

from __future__ import annotations

import functools
import inspect
import logging
from pathlib import Path
from typing import Any

import gradio as gr
import spaces  # noqa: F401  (on a ZeroGPU Space it must be imported before CUDA starts)
from gradio import utils as gradio_utils
from starlette.middleware import Middleware

import web
from pipelines.config import get_settings
from pipelines.redact import install_log_redaction

log = logging.getLogger("loupe.app")
ASSETS = Path(__file__).resolve().parent / "assets"
EXAMPLES = [
    [str(ASSETS / "scene-4k.jpg"), "make the red ball blue"],
    [str(ASSETS / "astronaut.jpg"), "make it warmer"],
    [str(ASSETS / "coffee.jpg"), "increase the contrast"],
    [str(ASSETS / "chelsea.jpg"), "convert it to black and white"],
]
AUTOPILOT_EXAMPLES = [[str(ASSETS / "coffee.jpg"), "warm and cosy"],
                      [str(ASSETS / "chelsea.jpg"), ""]]
GRAPH_JS = """
element.addEventListener('click', (e) => {
  const g = e.target.closest('[data-node]');
  if (g) { trigger('click', {node: g.getAttribute('data-node')}); }
});
"""
CSS = """
.loupe-graph-box { overflow: auto; max-height: 420px; }
.loupe-graph .node:hover circle { stroke-width: 3; }
#status-line { font-size: 0.85em; opacity: 0.85; }
"""
UI = {"api_visibility": "undocumented"}


def _friendly(fn):
    """Turn any error of a service call into one ``gr.Error`` with a message for people."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure reaches the user as a message
            raise gr.Error(web.user_message(exc), print_exception=False) from exc

    return call


# ----------------------------------------------------------------------------- UI callbacks


def _edit_outputs(view: web.SessionView) -> tuple:
    log.info("session %s… at %s", view.session_id[:6], view.head)
    canvas = None if view.image is None else {
        "background": view.image, "layers": [], "composite": None}
    slider = None if view.image is None else (view.before, view.image)
    return (view.session_id, canvas, slider, view.chat, view.graph_svg, view.status,
            view.message)


@_friendly
def ui_load(session_id: str | None) -> tuple:
    """Restore this browser's session (after a refresh or a server restart)."""
    return _edit_outputs(web.get_view(web.ensure_session(session_id)))


@_friendly
def ui_open(session_id: str | None, path: str | None) -> tuple:
    """Open the uploaded photo in this browser's session."""
    session_id = web.ensure_session(session_id)
    if not path:
        return _edit_outputs(web.get_view(session_id))
    return _edit_outputs(web.open_image(session_id, path, Path(path).name))


@_friendly
def ui_edit(session_id: str | None, message: dict | None, canvas: dict | None, tree: bool,
            progress: gr.Progress = gr.Progress()) -> tuple:
    """Run the typed instruction (with the brushed mask, if any) as one turn.

    A photo attached to the message is opened first (as if uploaded).
    """
    message = message if isinstance(message, dict) else {"text": str(message or "")}
    text, files = message.get("text", ""), message.get("files") or []
    session_id = web.ensure_session(session_id)
    if files:
        first = files[0] if isinstance(files[0], str) else files[0].get("path")
        view = web.open_image(session_id, first, Path(first).name)
        if not text.strip():
            return (*_edit_outputs(view), "", {"text": "", "files": []})
        canvas = None
    size = web.image_size(session_id)
    mask = web.mask_from_editor(canvas, (size[1], size[0])) if size else None
    view, result = web.edit_turn(session_id, text, mask, search="tree" if tree else "none",
                                 progress=lambda f, t: progress(f, desc=t or "editing"))
    return (*_edit_outputs(view), result.get("topology_svg", ""), {"text": "", "files": []})


@_friendly
def _move(fn, *args) -> tuple:
    log.info("%s starts", fn.__name__)
    return _edit_outputs(fn(*args))


def ui_undo(session_id: str | None) -> tuple:
    """Undo: move to the parent state."""
    return _move(web.undo, session_id)


def ui_redo(session_id: str | None) -> tuple:
    """Redo the last undone edit."""
    return _move(web.redo, session_id)


def ui_checkout(session_id: str | None, evt: gr.EventData) -> tuple:
    """Check out the node clicked in the graph."""
    node = getattr(evt, "node", None) or (evt._data or {}).get("node")
    return _move(web.checkout, session_id, str(node))


def _private() -> Path:
    """A new unguessable folder in Gradio's own file cache: only the caller gets its URL,
    and ``delete_cache`` removes it (see ``web.files``)."""
    return web.private_folder(gradio_utils.get_upload_folder())


@_friendly
def ui_download(session_id: str | None) -> str:
    """Full-resolution file of the current state, original format, ICC/EXIF kept."""
    return str(web.download(session_id, folder=_private))


@_friendly
def ui_export(session_id: str | None) -> str:
    """The whole session as a zip archive."""
    return str(web.export_archive(session_id, folder=_private))


@_friendly
def ui_import(session_id: str | None, path: str | None) -> tuple:
    """Replace the session with an exported archive."""
    if not path:
        return _edit_outputs(web.get_view(web.ensure_session(session_id)))
    return _move(web.import_archive, web.ensure_session(session_id), path, Path(path).name)


@_friendly
def ui_autopilot(session_id: str | None, path: str | None, mood: str, iterations: float,
                 simulations: float, depth: float, top_k: float, seed: float,
                 progress: gr.Progress = gr.Progress()) -> tuple:
    """Run Autopilot (MCTS over candidate edits) with a progress bar counting simulations."""
    def report(fraction: float, text: str) -> None:
        progress(fraction, desc=text or "simulations")

    result = web.run_autopilot(
        web.ensure_session(session_id), path, mood=mood, iterations=int(iterations),
        simulations=int(simulations), depth=int(depth), top_k=int(top_k), seed=int(seed),
        progress=report)
    return (result.slider, result.rows, result.tree_svg, result.summary)


def ui_autopilot_cancel(session_id: str | None) -> str:
    """Ask a running Autopilot to stop after the current simulation."""
    web.cancel_autopilot(session_id)
    return "Cancelling…"


@_friendly
def ui_send_to_edit(session_id: str | None) -> tuple:
    """Land the Autopilot steps in the Edit session as undoable nodes."""
    return _move(web.send_autopilot_to_edit, session_id)


@_friendly
def ui_score(before: str | None, after: str | None, mask: str | None, bbox: str,
             instruction: str) -> dict:
    """Score one before/after pair (optionally inside a mask or box)."""
    return web.score_files(before, after, mask=mask, bbox=bbox, instruction=instruction)


@_friendly
def ui_benchmark(dataset: str, archive: str | None, agent_name: str,
                 progress: gr.Progress = gr.Progress()) -> tuple:
    """Run a benchmark (bundled mini HDD set or an uploaded archive)."""
    import pandas as pd

    if dataset == "uploaded archive" and not archive:
        raise gr.Error("Upload a dataset archive (.zip) first, or pick the bundled mini set.")
    res = web.run_benchmark(archive if dataset == "uploaded archive" else None,
                            agent=agent_name, label=Path(archive or "dataset.zip").name,
                            progress=lambda f, t: progress(f, desc=t or "benchmark"))
    root = gradio_utils.get_upload_folder()
    return (pd.DataFrame(res.table, columns=res.headers),
            pd.DataFrame(res.per_turn, columns=res.per_turn_headers),
            str(web.publish(res.plot, root)) if res.plot else None,
            [str(web.publish(res.csv_path, root)), str(web.publish(res.json_path, root))],
            res.summary)


# ----------------------------------------------------------------------------- API / MCP


@_friendly
def new_session(image: str) -> tuple[str, dict]:
    """Start an editing session with a photo.

    Args:
        image: the photo (JPEG, PNG, WebP or TIFF, up to the pixel limit).

    Returns:
        The session id to pass to the other tools, and the photo's size.
    """
    session_id, view = web.in_new_session(
        lambda sid: web.open_image(sid, image, Path(image).name))
    return session_id, view.info()


@_friendly
def edit(session_id: str, instruction: str, mask: str | None = None,
         tree_search: bool = False) -> tuple[Any, dict]:
    """Apply a plain-language edit to the session's current photo (one undoable turn).

    Args:
        session_id: the id returned by new_session.
        instruction: what to change, e.g. "make the sky bluer" or "remove the red ball".
        mask: optional mask image (white = area to edit, any size; scaled to the photo).
        tree_search: treat a multi-part instruction with tree search.

    Returns:
        A preview of the result, and the turn's plan, steps, scores and new head.
    """
    def run() -> tuple[Any, dict]:
        size = web.image_size(session_id)
        native_mask = web.load_mask_file(mask, (size[1], size[0])) if mask and size else None
        view, result = web.edit_turn(session_id, instruction, native_mask,
                                     search="tree" if tree_search else "none")
        return view.image, result

    return run()


@_friendly
def crop(session_id: str, box: str, aspect: str = "free") -> tuple[Any, dict]:
    """Crop the session's current photo to a box (one undoable state).

    Args:
        session_id: the id returned by new_session.
        box: "x0,y0,x1,y1" in the current photo's full-resolution pixels.
        aspect: "free" for exactly the box, or a ratio such as "1:1" or "16:9" for the
            smallest box of that ratio around it.

    Returns:
        A preview of the cropped photo, and the turn's plan, steps and new head.
    """
    view, result = web.crop(session_id, box, aspect or "free")
    return view.image, result


@_friendly
def undo(session_id: str) -> tuple[Any, dict]:
    """Undo the last edit of a session (the state stays in the graph).

    Args:
        session_id: the id returned by new_session.

    Returns:
        A preview of the now-current state, and the session summary.
    """
    view = web.undo(session_id)
    return view.image, view.info()


@_friendly
def redo(session_id: str) -> tuple[Any, dict]:
    """Redo the last undone edit of a session.

    Args:
        session_id: the id returned by new_session.

    Returns:
        A preview of the now-current state, and the session summary.
    """
    view = web.redo(session_id)
    return view.image, view.info()


@_friendly
def checkout(session_id: str, node_id: str) -> tuple[Any, dict]:
    """Go to any earlier state of a session; the next edit from there starts a branch.

    Args:
        session_id: the id returned by new_session.
        node_id: a state id from the graph tool or an edit's "head".

    Returns:
        A preview of that state, and the session summary.
    """
    view = web.checkout(session_id, node_id)
    return view.image, view.info()


@_friendly
def graph(session_id: str) -> dict:
    """The session's state graph: every node (id, parent, description) and the head.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The graph as JSON.
    """
    return web.graph_json(session_id)


@_friendly
def download(session_id: str) -> str:
    """The current state at full resolution, in the original format with ICC/EXIF.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The image file.
    """
    return str(web.download(session_id, folder=_private))


@_friendly
def export_session(session_id: str) -> str:
    """Export a session (graph, layers, original) as a zip archive.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The archive file.
    """
    return str(web.export_archive(session_id, folder=_private))


@_friendly
def import_session(archive: str) -> tuple[str, dict]:
    """Open an exported session archive as a new session.

    Args:
        archive: a zip made by export_session.

    Returns:
        The new session id and its summary.
    """
    session_id, view = web.in_new_session(
        lambda sid: web.import_archive(sid, archive, Path(archive).name))
    return session_id, view.info()


@_friendly
def autopilot(image: str, mood: str = "", iterations: int = 2, simulations: int = 8,
              depth: int = 2, top_k: int = 3, seed: int = 0) -> tuple[Any, dict]:
    """Improve a photo automatically (Monte-Carlo tree search over candidate edits).

    Args:
        image: the photo.
        mood: optional intent, e.g. "warm and cosy" or "crisp daylight".
        iterations: search iterations (each executes the best next step).
        simulations: simulations per iteration.
        depth: look-ahead depth of each simulation.
        top_k: candidate edits expanded per node.
        seed: random seed (same inputs and seed give the same result).

    Returns:
        A preview of the improved photo, and the executed steps with score changes.
    """
    session_id, res = web.in_new_session(lambda sid: web.run_autopilot(
        sid, image, mood=mood, iterations=int(iterations), simulations=int(simulations),
        depth=int(depth), top_k=int(top_k), seed=int(seed)))
    return res.slider[1], {"session_id": session_id, **res.summary}


@_friendly
def score(before: str, after: str, mask: str | None = None, bbox: str = "",
          instruction: str = "") -> dict:
    """Score an edit: fidelity outside the edited area, change inside it, perceptual metrics.

    Args:
        before: the original image.
        after: the edited image (same size).
        mask: optional mask image of the edited area (white = edited).
        bbox: optional edited box "x0,y0,x1,y1" in pixels.
        instruction: optional instruction the edit followed.

    Returns:
        The metrics as JSON.
    """
    return web.score_files(before, after, mask=mask, bbox=bbox,
                       instruction=instruction)


@_friendly
def benchmark(archive: str | None = None, agent_name: str = "embedded") -> tuple[dict, str]:
    """Run a benchmark: the bundled mini HDD set, or an uploaded dataset archive.

    Args:
        archive: optional zip of a dataset; empty runs the bundled mini set.
        agent_name: which agent configuration to evaluate.

    Returns:
        The summary and per-session results as JSON, and a CSV file of the results.
    """
    res = web.run_benchmark(archive or None, agent=agent_name,
                            label=Path(archive or "dataset.zip").name)
    return {"summary": res.summary, "per_turn": [dict(zip(res.per_turn_headers, row))
                                                 for row in res.per_turn],
            "rows": [dict(zip(res.headers, row)) for row in res.table]}, \
        str(web.publish(res.csv_path, gradio_utils.get_upload_folder()))


# ----------------------------------------------------------------------------- layout


def _edit_tab() -> dict:
    c: dict[str, Any] = {}
    with gr.Row():
        with gr.Column(scale=3):
            c["upload"] = gr.File(label="Open a photo (JPEG/PNG/WebP/TIFF, up to 100 MP)",
                                  file_types=["image"], type="filepath", elem_id="upload",
                                  height=100)
            c["canvas"] = gr.ImageEditor(
                label="Brush the area to edit (optional) — shown downscaled, applied at full "
                      "resolution", type="numpy", image_mode="RGBA", sources=[], transforms=[],
                layers=False, format="png", elem_id="canvas", height=480,
                brush=gr.Brush(colors=["#ff2d55"], color_mode="fixed"),
                buttons=["fullscreen"])
            c["slider"] = gr.ImageSlider(label="Before / after (latest state)", type="numpy",
                                         elem_id="slider", max_height=480)
        with gr.Column(scale=2):
            c["chat"] = gr.Chatbot(label="Conversation", height=380, elem_id="chat",
                                   buttons=["copy"])
            c["box"] = gr.MultimodalTextbox(
                placeholder="Tell Loupe what to change… (Enter to send)", file_count="single",
                file_types=["image"], elem_id="instruction", submit_btn=True, sources=[],
                show_label=False)
            c["tree"] = gr.Checkbox(label="Multi-instruction mode (tree search)", value=False,
                                    elem_id="tree-mode")
            c["message"] = gr.Markdown(elem_id="edit-message")
            with gr.Row():
                c["undo"] = gr.Button("↶ Undo", elem_id="undo-btn", size="sm")
                c["redo"] = gr.Button("↷ Redo", elem_id="redo-btn", size="sm")
            gr.Markdown("**State graph** — click a state to go back to it; editing from an "
                        "older state starts a branch. HEAD is the current state.")
            c["graph"] = gr.HTML(value="", js_on_load=GRAPH_JS, elem_id="graph",
                                 elem_classes=["loupe-graph-box"])
            c["topology"] = gr.HTML(value="", elem_id="topology", js_on_load=None,
                                    elem_classes=["loupe-graph-box"])
            with gr.Row():
                c["download"] = gr.Button("Download full resolution", elem_id="download-btn",
                                          size="sm", variant="primary")
                c["export"] = gr.Button("Export session", elem_id="export-btn", size="sm")
            c["file_out"] = gr.File(label="Files", elem_id="file-out", interactive=False,
                                    height=60)
            with gr.Accordion("Import a session archive", open=False):
                c["import"] = gr.File(label="Session archive (.zip)", file_types=[".zip"],
                                      type="filepath", elem_id="import", height=80)
    gr.Examples(examples=[[p, {"text": t, "files": []}] for p, t in EXAMPLES],
                inputs=[c["upload"], c["box"]], label="Examples (work on the embedded default)")
    return c


def _autopilot_tab() -> dict:
    c: dict[str, Any] = {}
    with gr.Row():
        with gr.Column(scale=2):
            c["upload"] = gr.File(label="Photo (empty: the Edit tab's current state)",
                                  file_types=["image"], type="filepath", elem_id="ap-upload",
                                  height=110)
            c["mood"] = gr.Textbox(label="Mood / intent (optional)", elem_id="ap-mood",
                                   placeholder="e.g. warm and cosy, crisp daylight")
            with gr.Accordion("Budget", open=True):
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
            c["summary"] = gr.JSON(label="Summary", elem_id="ap-summary")
        with gr.Column(scale=3):
            c["slider"] = gr.ImageSlider(label="Before / after", type="numpy",
                                         elem_id="ap-slider", max_height=480)
            c["steps"] = gr.Dataframe(headers=["#", "step", "score before", "score after",
                                               "change"], label="Executed steps",
                                      elem_id="ap-steps", interactive=False)
            c["tree"] = gr.HTML(value="", elem_id="ap-tree", js_on_load=None,
                                elem_classes=["loupe-graph-box"])
    gr.Examples(examples=AUTOPILOT_EXAMPLES, inputs=[c["upload"], c["mood"]])
    return c


def _benchmark_tab() -> dict:
    c: dict[str, Any] = {}
    with gr.Accordion("Score one pair", open=True):
        with gr.Row():
            c["before"] = gr.File(label="Before", file_types=["image"], type="filepath",
                                  elem_id="sc-before", height=120)
            c["after"] = gr.File(label="After", file_types=["image"], type="filepath",
                                 elem_id="sc-after", height=120)
            c["mask"] = gr.File(label="Mask (optional)", file_types=["image"], type="filepath",
                                elem_id="sc-mask", height=120)
        with gr.Row():
            c["bbox"] = gr.Textbox(label="Box x0,y0,x1,y1 (optional)", elem_id="sc-bbox")
            c["instruction"] = gr.Textbox(label="Instruction (optional)", elem_id="sc-instr")
        c["score_btn"] = gr.Button("Score", elem_id="sc-run")
        c["scores"] = gr.JSON(label="Scores", elem_id="sc-out")
    with gr.Accordion("Run a benchmark", open=True):
        with gr.Row():
            c["dataset"] = gr.Radio(["bundled mini HDD set", "uploaded archive"],
                                    value="bundled mini HDD set", label="Dataset",
                                    elem_id="bm-dataset")
            c["archive"] = gr.File(label="Dataset archive (.zip)", file_types=[".zip"],
                                   type="filepath", elem_id="bm-archive", height=120)
            c["agent"] = gr.Dropdown(web.benchmark_agents(), value=web.benchmark_agents()[0],
                                     label="Agent configuration", elem_id="bm-agent")
        c["run"] = gr.Button("Run benchmark", variant="primary", elem_id="bm-run")
        c["summary"] = gr.JSON(label="Summary", elem_id="bm-summary")
        c["table"] = gr.Dataframe(label="Results", elem_id="bm-table", interactive=False)
        c["per_turn"] = gr.Dataframe(label="Per turn", elem_id="bm-per-turn", interactive=False)
        c["plot"] = gr.Image(label="Per-turn curves", type="filepath", elem_id="bm-plot",
                             interactive=False)
        c["files"] = gr.File(label="CSV / JSON", file_count="multiple", elem_id="bm-files",
                             interactive=False)
    return c


FILE_PARAMS = {"image", "mask", "before", "after", "archive"}


def _hidden_inputs(fn) -> list[gr.components.Component]:
    """Hidden input components for an API function, defaults taken from its signature."""
    comps: list[gr.components.Component] = []
    for name, param in inspect.signature(fn).parameters.items():
        default = None if param.default is inspect.Parameter.empty else param.default
        if name in FILE_PARAMS:
            comps.append(gr.File(visible=False, type="filepath", label=name))
        elif param.annotation in (bool, "bool"):
            comps.append(gr.Checkbox(value=bool(default), visible=False, label=name))
        elif param.annotation in (int, "int"):
            comps.append(gr.Number(value=default, precision=0, visible=False, label=name))
        else:
            comps.append(gr.Textbox(value=default, visible=False, label=name))
    return comps


def _api_section() -> None:
    """Endpoints for gradio_client and MCP tools (hidden components, no visible UI)."""
    img = gr.Image(visible=False, type="numpy", format="png", label="image")
    out_json, out_file = gr.JSON(visible=False, label="result"), gr.File(visible=False)
    out_text = gr.Textbox(visible=False, label="session_id")
    outputs = {new_session: [out_text, out_json], edit: [img, out_json], crop: [img, out_json],
               undo: [img, out_json], redo: [img, out_json], checkout: [img, out_json],
               graph: [out_json], download: [out_file], export_session: [out_file],
               import_session: [out_text, out_json], autopilot: [img, out_json],
               score: [out_json], benchmark: [out_json, out_file]}
    for fn, outs in outputs.items():
        gr.Button(visible=False).click(fn, _hidden_inputs(fn), outs, api_name=fn.__name__)


def build_app() -> gr.Blocks:
    """Build the Blocks app (no model is loaded and nothing is launched here).

    Returns:
        The ``gr.Blocks`` with the three tabs and the API/MCP endpoints.
    """
    with gr.Blocks(title="Loupe", delete_cache=web.cache_policy()) as demo:
        sid = gr.BrowserState(None, storage_key="loupe-session",
                              secret=web.browser_secret())
        gr.Markdown("# Loupe\nAgentic, multi-turn photo editing at native resolution.")
        status = gr.Markdown(web.status_line(None), elem_id="status-line")
        with gr.Tabs():
            with gr.Tab("Edit", id="edit"):
                e = _edit_tab()
            with gr.Tab("Autopilot", id="autopilot"):
                a = _autopilot_tab()
            with gr.Tab("Benchmark", id="benchmark"):
                b = _benchmark_tab()
        _api_section()
        _wire(demo, sid, status, e, a, b)
    return demo


def _wire(demo: gr.Blocks, sid: gr.BrowserState, status: gr.Markdown, e: dict, a: dict,
          b: dict) -> None:
    view_out = [sid, e["canvas"], e["slider"], e["chat"], e["graph"], status, e["message"]]
    demo.load(ui_load, [sid], view_out, api_name="ui_load", **UI)
    e["upload"].change(ui_open, [sid, e["upload"]], view_out, api_name="ui_open", **UI)
    e["box"].submit(ui_edit, [sid, e["box"], e["canvas"], e["tree"]],
                    [*view_out, e["topology"], e["box"]], api_name="ui_edit", **UI)
    e["undo"].click(ui_undo, [sid], view_out, api_name="ui_undo", **UI)
    e["redo"].click(ui_redo, [sid], view_out, api_name="ui_redo", **UI)
    e["graph"].click(ui_checkout, [sid], view_out, api_name="ui_checkout", **UI)
    e["download"].click(ui_download, [sid], e["file_out"], api_name="ui_download", **UI)
    e["export"].click(ui_export, [sid], e["file_out"], api_name="ui_export", **UI)
    e["import"].upload(ui_import, [sid, e["import"]], view_out, api_name="ui_import", **UI)

    run = a["run"].click(ui_autopilot, [sid, a["upload"], a["mood"], a["iterations"],
                                        a["simulations"], a["depth"], a["top_k"], a["seed"]],
                         [a["slider"], a["steps"], a["tree"], a["summary"]],
                         api_name="ui_autopilot", **UI)
    a["cancel"].click(ui_autopilot_cancel, [sid], None, cancels=[run],
                      api_name="ui_autopilot_cancel", **UI)
    a["send"].click(ui_send_to_edit, [sid], view_out, api_name="ui_send_to_edit", **UI)

    b["score_btn"].click(ui_score, [b["before"], b["after"], b["mask"], b["bbox"],
                                    b["instruction"]], b["scores"], api_name="ui_score", **UI)
    b["run"].click(ui_benchmark, [b["dataset"], b["archive"], b["agent"]],
                   [b["table"], b["per_turn"], b["plot"], b["files"], b["summary"]],
                   api_name="ui_benchmark", **UI)


def launch_options() -> dict:
    """``launch()`` keyword arguments from the environment (also used by tests/benches)."""
    settings = get_settings()
    settings.sessions_dir.mkdir(parents=True, exist_ok=True)
    private = [settings.sessions_dir, settings.data_dir / "benchmarks",
               settings.data_dir / "browser-secret"]
    return {
        "server_name": settings.host or ("0.0.0.0" if settings.space_id else "127.0.0.1"),
        "server_port": settings.port,
        # Nothing of ours is served by path: files go out through web.private_folder.
        "allowed_paths": [str(ASSETS)],
        "blocked_paths": [str(p.resolve()) for p in private],
        "app_kwargs": {"middleware": [Middleware(web.NotFoundForRefused)]},
        "max_file_size": f"{settings.max_upload_mb}mb",
        "mcp_server": True,
        "css": CSS,
        "show_error": True,
    }


def make_demo() -> gr.Blocks:
    """The app with its queue configured (concurrency from ``LOUPE_APP_CONCURRENCY``)."""
    demo = build_app()
    settings = get_settings()
    demo.queue(default_concurrency_limit=settings.app_concurrency, max_size=settings.queue_size)
    return demo


if __name__ == "__main__":
    logging.basicConfig(level=get_settings().log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per internal request
    install_log_redaction()  # no key, token or password in the logs
    make_demo().launch(**launch_options())
