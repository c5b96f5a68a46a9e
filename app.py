"""Loupe's web app: the Edit, Autopilot and Benchmark tabs, review pages, an API and MCP tools.

UI only: every callback is a short call into ``web`` (sessions, edits, the session list,
review links, autopilot, benchmarks), so the same actions are plain Python calls,
``gradio_client`` endpoints and MCP tools. Nothing heavy happens at import time; models
load on first use.

Errors reach people as a toast (``gr.Warning``) and leave every component as it was
(``_toast``); API and MCP callers get one ``gr.Error`` each (``_friendly``). Review links
open ``/review/<token>``, a read-only page served by the same server (``review_router``).

Run ``python app.py`` (``make demo``) for http://127.0.0.1:7860, ``python app.py --share``
(or ``LOUPE_SHARE=1``) for a temporary public link as well; ``LOUPE_HOST`` /
``LOUPE_PORT`` / ``LOUPE_APP_CONCURRENCY`` / ``LOUPE_MAX_UPLOAD_MB`` tune the server
(``pipelines.config.Settings``).
"""

from __future__ import annotations

import argparse
import functools
import html
import inspect
import json
import logging
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import quote

import gradio as gr
import spaces  # noqa: F401  (on a ZeroGPU Space it must be imported before CUDA starts)
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from gradio import route_utils
from gradio import utils as gradio_utils
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware

import web
from pipelines.config import get_settings
from pipelines.editors.frame import ASPECTS
from pipelines.perception import store as perception_store
from pipelines.redact import install_log_redaction
from pipelines.weights import downloads_allowed

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
""" + web.ZOOM_JS
SESSIONS_JS = """
const act = (e) => {
  const del = e.target.closest('[data-delete]');
  if (del) {
    e.stopPropagation();
    if (confirm('Delete this session for good? Its photo, history, chat and review links go.')) {
      trigger('click', {delete: del.dataset.delete});
    }
    return;
  }
  const card = e.target.closest('[data-key]');
  if (card) { trigger('click', {open: card.dataset.key}); }
};
element.addEventListener('click', act);
element.addEventListener('keydown', (e) => { if (e.key === 'Enter') { act(e); } });
"""
CHAT_HINT = ("**What to type:** *make it warmer*, *make the red ball blue*, *remove the "
             "cup*. To change one area only, open **Brush an area**, paint over it and say "
             "*brighten this*. No photo yet? Open one, or click an example above.")
UI = {"api_visibility": "undocumented"}


def _shape(aspect: str) -> str:
    """A crop shape as people read it: "16:9 landscape", "1:1 square"."""
    w, h = (int(v) for v in aspect.split(":"))
    return f"{aspect} " + ("square" if w == h else "landscape" if w > h else "portrait")


#: the crop panel's shapes: (label, aspect) for ``web.crop``
CROP_SHAPES = [("Free (the box as typed)", "free"), ("Like the original", "original"),
               *((_shape(a), a) for a in ASPECTS if ":" in a)]
COMPARE = ["original", "previous"]


def _friendly(fn):
    """API/MCP calls: turn any error of a service call into one ``gr.Error`` for people."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure reaches the user as a message
            raise gr.Error(html.escape(web.user_message(exc)), print_exception=False) from exc

    return call


def _toast(fn):
    """UI calls: show any error as a toast and leave every output as it was.

    Raising would paint an error badge over each output component and block the
    instruction box; a warning toast plus ``gr.skip()`` says what went wrong and keeps
    the page usable.
    """
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure reaches the user as a toast
            text = str(exc.message if isinstance(exc, gr.Error) else web.user_message(exc))
            gr.Warning(html.escape(text[:1].upper() + text[1:]), title="That did not work")
            return gr.skip()

    return call


def _root_url(request: gr.Request | None) -> str:
    """The app's public address as the caller sees it (behind proxies and share links)."""
    try:
        req = request.request  # the underlying starlette request
        return route_utils.get_root_url(req, route_utils.get_api_call_path(req), None)
    except Exception as exc:  # noqa: BLE001 - a relative link still works in the browser
        log.debug("no root url (%s); review links will be relative", exc)
        return ""


# ----------------------------------------------------------------------------- UI callbacks


def _page(view: web.SessionView, library: Any, compare: str = "original") -> tuple:
    """Every output of the Edit tab for one session (previews are files, never arrays).

    The photo view is a plain image (it updates at once, whatever the photo's size); the
    brush canvas loads only when its tab is opened (``ui_brush``) and is never an output
    here: redrawing it takes seconds in a browser without a GPU. The page's script
    (``assets/loupe.js``) leaves the brush tab for the photo when a change is sent.
    """
    log.info("session %s… at %s", view.session_id[:6], view.head)
    photo = None if view.image_file is None else _served(view.image_file)
    pair = view.compare_files(compare)
    slider = None if pair is None else (_served(pair[0]), _served(pair[1]))
    library = web.remember(library, view.session_id)
    cards = web.render_cards(web.cards(library, view.session_id))
    return (view.session_id, library, photo, slider, view.chat, view.graph_svg, view.status,
            cards)


@_toast
def ui_load(session_id: str | None, library: Any, compare: str) -> tuple:
    """Restore this browser's session and list (after a refresh or a server restart)."""
    return _page(web.get_view(web.ensure_session(session_id)), library, compare)


@_toast
def ui_open(session_id: str | None, library: Any, compare: str,
            path: str | None) -> tuple:
    """Open the uploaded photo in a new session beside the current one."""
    if not path:
        return gr.skip()
    return _page(web.open_beside(session_id, path, Path(path).name), library, compare)


@_toast
def ui_example(session_id: str | None, library: Any, compare: str,
               evt: gr.SelectData) -> tuple:
    """Open an example photo in a new session and put its instruction in the box."""
    path, text = EXAMPLES[int(evt.index)]
    view = web.open_beside(session_id, path, Path(path).name)
    return (*_page(view, library, compare), {"text": text, "files": []})


@_toast
def ui_brush(session_id: str | None, loaded: str | None) -> tuple:
    """Load the current state into the brush canvas when its tab opens (once per state)."""
    current = web.current_preview(session_id) if web.has_photo(session_id) else None
    if current is None:
        return gr.skip()
    key = f"{session_id}:{current[0]}"
    if key == loaded:
        return gr.skip()  # keep the strokes already painted on this state
    return {"background": _served(current[1]), "layers": [], "composite": None}, key


@_toast
def ui_edit(session_id: str | None, library: Any, compare: str,
            message: dict | None, canvas: dict | None, loaded: str | None, tree: bool,
            progress: gr.Progress = gr.Progress()) -> tuple:
    """Run the typed instruction (with the brushed mask, if any) as one turn.

    Strokes count only when they were painted on the current state (``loaded``), so a
    mask never leaks into a later edit. A photo attached to the message opens in a new
    session first (as if uploaded).
    """
    message = message if isinstance(message, dict) else {"text": str(message or "")}
    text, files = message.get("text", ""), message.get("files") or []
    if files:
        first = files[0] if isinstance(files[0], str) else files[0].get("path")
        view = web.open_beside(session_id, first, Path(first).name)
        session_id, canvas = view.session_id, None
        if not text.strip():
            return (*_page(view, library, compare), "", {"text": "", "files": []},
                    gr.update(visible=False))
    current = web.current_preview(session_id) if web.has_photo(session_id) else None
    if current is None:
        raise web.SessionError("Open a photo first (or pick an example above).")
    mask = None
    if loaded == f"{session_id}:{current[0]}":
        size = web.image_size(session_id)
        mask = web.mask_from_editor(canvas, (size[1], size[0])) if size else None
    view, result = web.edit_turn(session_id, text, mask, search="tree" if tree else "none",
                                 progress=lambda f, t: progress(f, desc=t or "editing"))
    return _after_turn(view, result, library, compare)


def _after_turn(view: web.SessionView, result: dict, library: Any, compare: str) -> tuple:
    """The page after a turn, its search tree, an empty box and the "did you mean" buttons
    (shown only when the request could mean two things)."""
    topology = web.graph_view.zoomable(result["topology_svg"]) \
        if result.get("topology_svg") else ""
    choices = [(c["label"], c["instruction"]) for c in result.get("choices") or []]
    asked = gr.update(choices=choices, value=None, visible=bool(choices))
    return (*_page(view, library, compare), topology, {"text": "", "files": []}, asked)


@_toast
def ui_choose(session_id: str | None, library: Any, compare: str, evt: gr.SelectData,
              progress: gr.Progress = gr.Progress()) -> tuple:
    """One of the "did you mean" buttons: run its instruction as the next turn."""
    view, result = web.edit_turn(session_id, str(evt.value), None,
                                 progress=lambda f, t: progress(f, desc=t or "editing"))
    return _after_turn(view, result, library, compare)


@_toast
def ui_crop_start(session_id: str | None, aspect: str) -> tuple:
    """Open the crop panel or pick a shape: the largest box of that shape, drawn."""
    if not web.has_photo(session_id):
        return gr.skip()
    box = web.suggest_crop(session_id, aspect or "free")
    path, kept = web.crop_preview(session_id, box, aspect or "free")
    return (_served(path), *kept)


@_toast
def ui_crop_show(session_id: str | None, aspect: str, x0: float, y0: float, x1: float,
                 y1: float) -> Any:
    """Show the box typed in the crop panel on the photo (nothing changes yet)."""
    if not web.has_photo(session_id) or None in (x0, y0, x1, y1):
        return gr.skip()
    path, _ = web.crop_preview(session_id, [x0, y0, x1, y1], aspect or "free")
    return _served(path)


@_toast
def ui_crop(session_id: str | None, library: Any, compare: str, aspect: str, x0: float,
            y0: float, x1: float, y1: float) -> tuple:
    """Crop to the panel's box: one undoable state in the history."""
    view, _ = web.crop(session_id, [x0, y0, x1, y1], aspect or "free")
    return (*_page(view, library, compare), gr.update(open=False))


@_toast
def ui_crop_cancel(session_id: str | None, library: Any, compare: str) -> tuple:
    """Close the crop panel and show the photo as it is."""
    return (*_page(web.get_view(session_id), library, compare), gr.update(open=False))


@_toast
def _move(fn, session_id: str | None, library: Any, compare: str, *args) -> tuple:
    return _page(fn(session_id, *args), library, compare)


def ui_undo(session_id: str | None, library: Any, compare: str) -> tuple:
    """Undo: move to the parent state."""
    return _move(web.undo, session_id, library, compare)


def ui_redo(session_id: str | None, library: Any, compare: str) -> tuple:
    """Redo the last undone edit."""
    return _move(web.redo, session_id, library, compare)


def ui_checkout(session_id: str | None, library: Any, compare: str,
                evt: gr.EventData) -> tuple:
    """Check out the node clicked in the graph."""
    node = getattr(evt, "node", None) or (evt._data or {}).get("node")
    return _move(web.checkout, session_id, library, compare, str(node))


def _served(path: Path) -> str:
    """A session's preview as the browser may fetch it: a private copy in Gradio's cache
    (session folders are never served; see ``web.files``)."""
    return str(web.serve(path, gradio_utils.get_upload_folder()))


def _private() -> Path:
    """A new unguessable folder in Gradio's own file cache: only the caller gets its URL,
    and ``delete_cache`` removes it (see ``web.files``)."""
    return web.private_folder(gradio_utils.get_upload_folder())


@_toast
def ui_compare(session_id: str | None, compare: str) -> Any:
    """Switch the slider's reference between the original and the previous state."""
    pair = web.get_view(session_id).compare_files(compare)
    return None if pair is None else (_served(pair[0]), _served(pair[1]))


@_toast
def ui_sessions(session_id: str | None, library: Any, compare: str,
                evt: gr.EventData) -> tuple:
    """A click in "Your sessions": open that session, or delete it (after a confirm)."""
    data = evt._data or {}
    if data.get("delete"):
        doomed = web.find(library, str(data["delete"]))
        web.delete_session(doomed)
        library = [s for s in web.known_sessions(library) if s != doomed]
        if doomed == session_id:
            session_id = library[0] if library else web.ensure_session(None)
        gr.Info("Session deleted.")
        return _page(web.get_view(session_id), library, compare)
    return _page(web.get_view(web.find(library, str(data.get("open")))), library, compare)


@_toast
def ui_download(session_id: str | None) -> Any:
    """Full-resolution file of the current state, original format, ICC/EXIF kept."""
    return gr.update(value=str(web.download(session_id, folder=_private)), visible=True)


@_toast
def ui_export(session_id: str | None) -> Any:
    """The whole session (chat included) as a zip archive."""
    return gr.update(value=str(web.export_archive(session_id, folder=_private)), visible=True)


@_toast
def ui_import(session_id: str | None, library: Any, compare: str,
              path: str | None) -> tuple:
    """Bring back an exported session, chat included, beside the current one."""
    if not path:
        return gr.skip()
    return _page(web.import_beside(session_id, path), library, compare)


@_toast
def ui_share(session_id: str | None, request: gr.Request) -> tuple:
    """Make a read-only review link for the current session."""
    root = _root_url(request)
    url = web.share_link(session_id, root)
    links = web.share_links(session_id, root)
    gr.Info("Review link ready: anyone with it can look, nobody can edit.")
    return url, gr.update(choices=links, value=url)


@_toast
def ui_revoke(session_id: str | None, url: str | None, request: gr.Request) -> tuple:
    """Revoke the review link picked in the list; it answers 404 from now on."""
    if not url:
        raise web.SessionError("Pick a review link to revoke.")
    if not web.revoke_share(session_id, url):
        raise web.SessionError("That link is not one of this session's review links.")
    links = web.share_links(session_id, _root_url(request))
    gr.Info("Review link revoked.")
    return "", gr.update(choices=links, value=None)


def ui_links(session_id: str | None, request: gr.Request) -> Any:
    """The current session's live review links (after a switch of session)."""
    try:
        links = web.share_links(session_id, _root_url(request)) \
            if web.has_photo(session_id) else []
    except Exception:  # noqa: BLE001 - an empty list is the honest fallback
        links = []
    return gr.update(choices=links, value=None)


def _summary_md(summary: dict) -> str:
    before, after = summary.get("score_before"), summary.get("score_after")
    if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return ""
    steps = summary.get("steps") or []
    kept = (f"{len(steps)} step(s) kept: " + "; ".join(web.wording.scrub(str(s))
                                                        for s in steps)) if steps \
        else "no step improved the photo"
    note = " (cancelled: the best found so far)" if summary.get("cancelled") else ""
    return (f"**Quality score {before:.2f} → {after:.2f}** ({after - before:+.2f}){note}. "
            f"{kept}.")


@_toast
def ui_autopilot(session_id: str | None, path: str | None, mood: str, iterations: float,
                 simulations: float, depth: float, top_k: float, seed: float,
                 progress: gr.Progress = gr.Progress()) -> tuple:
    """Run Autopilot (MCTS over candidate edits) with a progress bar counting simulations."""
    def report(fraction: float, text: str) -> None:
        progress(fraction, desc=text or "simulations")

    session_id = web.ensure_session(session_id)  # a page still loading has none yet
    if not path and not web.has_photo(session_id):
        raise web.SessionError("Add a photo here, or open one in the Edit tab first.")
    result = web.run_autopilot(
        session_id, path, mood=mood, iterations=int(iterations),
        simulations=int(simulations), depth=int(depth), top_k=int(top_k), seed=int(seed),
        progress=report)
    rows = [[i, web.wording.scrub(str(desc)), *(f"{v:.3f}" if isinstance(v, (int, float))
                                                else "—" for v in vals)]
            for i, desc, *vals in result.rows]
    return (session_id, result.slider, rows, web.graph_view.zoomable(result.tree_svg),
            _summary_md(result.summary))


def ui_autopilot_cancel(session_id: str | None) -> str:
    """Ask a running Autopilot to stop after the current simulation."""
    web.cancel_autopilot(session_id)
    return "Cancelling… the best result so far is kept."


@_toast
def ui_send_to_edit(session_id: str | None, library: Any, compare: str) -> tuple:
    """Land the Autopilot steps in the Edit tab as undoable states, never over a photo."""
    spare = web.empty_slot(session_id) if web.has_photo(session_id) else None
    try:
        view = web.send_autopilot_to_edit(session_id, into=spare)
    finally:
        if spare and spare != session_id and not web.has_photo(spare):
            web.delete_session(spare)
    gr.Info("Autopilot's steps are in the Edit tab; each one can be undone.")
    return _page(view, library, compare)


@_toast
def ui_score(before: str | None, after: str | None, mask: str | None, bbox: str,
             instruction: str) -> Any:
    """Score one before/after pair (optionally inside a mask or box)."""
    import pandas as pd  # heavy; only the Benchmark tab needs it

    scores = web.score_files(before, after, mask=mask, bbox=bbox, instruction=instruction)
    return pd.DataFrame(web.score_rows(scores), columns=["Measure", "Value"])


@_toast
def ui_benchmark(dataset: str, archive: str | None, agent_name: str,
                 progress: gr.Progress = gr.Progress()) -> tuple:
    """Run a benchmark (bundled mini HDD set or an uploaded archive)."""
    import pandas as pd  # heavy; only the Benchmark tab needs it

    if dataset == "uploaded archive" and not archive:
        raise web.SessionError("Upload a dataset archive (.zip) first, or pick the bundled "
                               "mini set.")
    res = web.run_benchmark(archive if dataset == "uploaded archive" else None,
                            agent=agent_name, label=Path(archive or "dataset.zip").name,
                            progress=lambda f, t: progress(f, desc=t or "benchmark"))
    root = gradio_utils.get_upload_folder()
    headers, rows, turn_headers, turns = web.display_tables(res)
    return (pd.DataFrame(rows, columns=headers), pd.DataFrame(turns, columns=turn_headers),
            str(web.publish(res.plot, root)) if res.plot else None,
            [str(web.publish(res.csv_path, root)), str(web.publish(res.json_path, root))],
            web.summary_markdown(res.summary))


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


@_friendly
def share_link(session_id: str, request: gr.Request) -> str:
    """Make a read-only review link for a session: the image at any state, the graph, the
    chat and a before/after slider, with a download; nothing on it can edit.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The review URL (its token is not the session id and cannot edit).
    """
    return web.share_link(session_id, _root_url(request))


@_friendly
def revoke_share(session_id: str, url: str) -> dict:
    """Revoke a review link of a session; it answers 404 from then on.

    Args:
        session_id: the id returned by new_session.
        url: the review URL returned by share_link.

    Returns:
        {"revoked": true} when the link existed, else {"revoked": false}.
    """
    return {"revoked": bool(web.revoke_share(session_id, url))}


# ----------------------------------------------------------------------------- layout


def _start_strip() -> dict:
    """Examples (with thumbnails) and "Your sessions", at the top of the Edit tab."""
    c: dict[str, Any] = {}
    with gr.Row(equal_height=False):
        with gr.Column(scale=2, min_width=280):
            c["examples"] = gr.Gallery(
                [(str(ASSETS / "thumbs" / Path(p).name), t) for p, t in EXAMPLES],
                label="Try an example (click one)", elem_id="examples", columns=4,
                rows=1, height=150, allow_preview=False, object_fit="cover",
                interactive=False, buttons=[])
        with gr.Column(scale=3, min_width=280):
            gr.Markdown("**Your sessions** — each photo keeps its own history; click one to "
                        "go back to it.", elem_id="sessions-title")
            c["sessions"] = gr.HTML(value=web.render_cards([]), elem_id="sessions",
                                    js_on_load=SESSIONS_JS)
    return c


def _edit_tab() -> dict:
    c: dict[str, Any] = _start_strip()
    with gr.Row(elem_id="main-row", equal_height=False):
        with gr.Column(scale=3, min_width=300):
            with gr.Row(elem_id="toolbar"):
                with gr.Column(elem_id="upload", scale=2, min_width=110):
                    c["upload"] = gr.UploadButton("Open a photo…", file_types=["image"],
                                                  type="filepath", elem_id="upload-btn",
                                                  size="sm", variant="primary")
                c["undo"] = gr.Button("↶ Undo", elem_id="undo-btn", size="sm", scale=1,
                                      min_width=70)
                c["redo"] = gr.Button("↷ Redo", elem_id="redo-btn", size="sm", scale=1,
                                      min_width=70)
            with gr.Tabs(elem_id="photo-tabs", selected="photo") as c["tabs"]:
                with gr.Tab("Photo", id="photo") as c["photo_tab"]:
                    c["photo"] = gr.Image(type="filepath", interactive=False, elem_id="photo",
                                          height=460, show_label=False,
                                          buttons=["fullscreen"])
                with gr.Tab("Brush an area", id="brush") as c["brush_tab"]:
                    c["canvas"] = gr.ImageEditor(
                        label="Brush the area to change", type="numpy", image_mode="RGBA",
                        sources=[], transforms=[], layers=False, format="png",
                        elem_id="canvas", height=460, show_label=False, interactive=True,
                        brush=gr.Brush(colors=["#ff2d55"], color_mode="fixed"),
                        buttons=["fullscreen"])
                with gr.Tab("Before / after", id="compare") as c["compare_tab"]:
                    c["slider"] = gr.ImageSlider(label="Before / after", type="filepath",
                                                 elem_id="slider", max_height=460,
                                                 show_label=False)
                    c["compare"] = gr.Radio(
                        [("Left: the original", "original"),
                         ("Left: the previous state", "previous")], value="original",
                        elem_id="compare", label="Compare with", container=False)
            c["loaded"] = gr.State(None)  # "<session>:<state>" shown in the brush canvas
            c["box"] = gr.MultimodalTextbox(
                placeholder="Tell Loupe what to change… e.g. “make it warmer” (Enter sends)",
                file_count="single", file_types=["image"], elem_id="instruction",
                submit_btn=True, sources=[], show_label=False)
            c["tree"] = gr.Checkbox(label="Several changes in one message: try orders and "
                                          "keep the best (slower)", value=False,
                                    elem_id="tree-mode")
            c["choices"] = gr.Radio([], label="Which did you mean?", visible=False,
                                    interactive=True, elem_id="choices")
            with gr.Accordion("Crop", open=False, elem_id="crop-panel") as c["crop_panel"]:
                with gr.Row():
                    c["aspect"] = gr.Dropdown(CROP_SHAPES, value="free", label="Shape",
                                              elem_id="crop-aspect", scale=2)
                    c["crop"] = gr.Button("Crop", elem_id="crop-btn", variant="primary",
                                          size="sm", scale=1, min_width=70)
                    c["crop_cancel"] = gr.Button("Cancel", elem_id="crop-cancel", size="sm",
                                                 scale=1, min_width=70)
                with gr.Row():
                    c["crop_box"] = [
                        gr.Number(label=name, precision=0, minimum=0, elem_id=f"crop-{key}",
                                  min_width=70)
                        for key, name in (("x0", "Left"), ("y0", "Top"), ("x1", "Right"),
                                          ("y1", "Bottom"))]
        with gr.Column(scale=2, min_width=300):
            c["chat"] = gr.Chatbot(label="Conversation", height=440, elem_id="chat",
                                   buttons=["copy"], placeholder=CHAT_HINT,
                                   feedback_options=None)
            with gr.Accordion("History — click a state to go back to it", open=True):
                c["graph"] = gr.HTML(value="", js_on_load=GRAPH_JS, elem_id="graph",
                                     elem_classes=["loupe-graph-box"])
                c["topology"] = gr.HTML(value="", elem_id="topology", js_on_load=web.ZOOM_JS,
                                        elem_classes=["loupe-graph-box"])
            with gr.Row():
                c["download"] = gr.Button("Download full resolution", elem_id="download-btn",
                                          size="sm", variant="primary")
                c["export"] = gr.Button("Export session", elem_id="export-btn", size="sm")
            c["file_out"] = gr.File(label="Your file", elem_id="file-out", interactive=False,
                                    visible=False)
            with gr.Accordion("Share for review (read-only link)", open=False,
                              elem_id="share-box"):
                gr.Markdown("A review link shows the photo at any state, the history, the "
                            "conversation and a before/after slider, with a download. "
                            "Nothing on it can edit. Revoke it any time.")
                c["share"] = gr.Button("Create a review link", elem_id="share-btn", size="sm")
                c["share_url"] = gr.Textbox(label="Review link", elem_id="share-url",
                                            buttons=["copy"], interactive=False)
                with gr.Row():
                    c["links"] = gr.Dropdown([], label="Live review links",
                                             elem_id="share-links", scale=3)
                    c["revoke"] = gr.Button("Revoke", elem_id="revoke-btn", size="sm",
                                            variant="stop", scale=1)
            with gr.Accordion("Import a session archive", open=False, elem_id="import-box"):
                c["import"] = gr.File(label="Session archive (.zip)", file_types=[".zip"],
                                      type="filepath", elem_id="import", height=80)
    return c


def _autopilot_tab() -> dict:
    c: dict[str, Any] = {}
    with gr.Row():
        with gr.Column(scale=2, min_width=280):
            c["upload"] = gr.File(label="Photo (empty: the Edit tab's current state)",
                                  file_types=["image"], type="filepath", elem_id="ap-upload",
                                  height=110)
            c["mood"] = gr.Textbox(label="Mood / intent (optional)", elem_id="ap-mood",
                                   placeholder="e.g. warm and cosy, crisp daylight")
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
            c["summary"] = gr.Markdown(elem_id="ap-summary")
        with gr.Column(scale=3, min_width=300):
            c["slider"] = gr.ImageSlider(label="Before / after", type="numpy",
                                         elem_id="ap-slider", max_height=460)
            c["steps"] = gr.Dataframe(headers=["#", "Step", "Score before", "Score after",
                                               "Change"], label="Executed steps",
                                      elem_id="ap-steps", interactive=False)
            gr.Markdown("**Search tree** — use the zoom buttons to look closer.")
            c["tree"] = gr.HTML(value="", elem_id="ap-tree", js_on_load=web.ZOOM_JS,
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
        c["scores"] = gr.Dataframe(headers=["Measure", "Value"], label="Scores",
                                   elem_id="sc-out", interactive=False)
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
        c["summary"] = gr.Markdown(elem_id="bm-summary")
        c["plot"] = gr.Image(label="Per-turn curves", type="filepath", elem_id="bm-plot",
                             interactive=False, height=360)
        c["per_turn"] = gr.Dataframe(headers=[web.benchmark.header(k) for k in (
            "turn", "psnr_om", "ssim_om", "lpips_om", "if", "ic", "n")], label="Means per turn",
            elem_id="bm-per-turn", interactive=False)
        c["table"] = gr.Dataframe(headers=[web.benchmark.header(k) for k in (
            "sample", "turn", "instruction", "psnr_om", "ssim_om", "lpips_om", "if", "ic",
            "seconds", "ok")], label="Results per sample and turn", elem_id="bm-table",
            interactive=False)
        c["files"] = gr.File(label="CSV / JSON", file_count="multiple", elem_id="bm-files",
                             interactive=False)
    return c


FILE_PARAMS = {"image", "mask", "before", "after", "archive"}


def _hidden_inputs(fn) -> list[gr.components.Component]:
    """Hidden input components for an API function, defaults taken from its signature."""
    comps: list[gr.components.Component] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.annotation in (gr.Request, "gr.Request"):
            continue  # filled in by Gradio, not an input
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
    out_url = gr.Textbox(visible=False, label="url")
    outputs = {new_session: [out_text, out_json], edit: [img, out_json], crop: [img, out_json],
               undo: [img, out_json], redo: [img, out_json], checkout: [img, out_json],
               graph: [out_json], download: [out_file], export_session: [out_file],
               import_session: [out_text, out_json], autopilot: [img, out_json],
               score: [out_json], benchmark: [out_json, out_file],
               share_link: [out_url], revoke_share: [out_json]}
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
        library = gr.BrowserState([], storage_key="loupe-library",
                                  secret=web.browser_secret())
        gr.Markdown("# Loupe\nEdit photos by saying what to change — at full resolution, "
                    "with every step undoable.")
        status = gr.Markdown(web.status_line(None), elem_id="status-line")
        with gr.Tabs():
            with gr.Tab("Edit", id="edit"):
                e = _edit_tab()
            with gr.Tab("Autopilot", id="autopilot"):
                a = _autopilot_tab()
            with gr.Tab("Benchmark", id="benchmark"):
                b = _benchmark_tab()
        _api_section()
        _wire(demo, sid, library, status, e, a, b)
    return demo


def _wire(demo: gr.Blocks, sid: gr.BrowserState, library: gr.BrowserState,
          status: gr.Markdown, e: dict, a: dict, b: dict) -> None:
    page = [sid, library, e["photo"], e["slider"], e["chat"], e["graph"], status,
            e["sessions"]]
    state = [sid, library, e["compare"]]
    quiet = {"show_progress_on": [e["chat"]], **UI}  # no spinner over the photo

    def then_links(event: Any) -> None:
        event.then(ui_links, [sid], [e["links"]], api_name="ui_links", **UI)

    e["brush_tab"].select(ui_brush, [sid, e["loaded"]], [e["canvas"], e["loaded"]],
                          api_name="ui_brush", **UI)
    then_links(demo.load(ui_load, state, page, api_name="ui_load", **UI))
    then_links(e["upload"].upload(ui_open, [*state, e["upload"]], page, api_name="ui_open",
                                  **quiet))
    then_links(e["examples"].select(ui_example, state, [*page, e["box"]],
                                    api_name="ui_example", **quiet))
    turn_out = [*page, e["topology"], e["box"], e["choices"]]
    e["box"].submit(ui_edit, [*state, e["box"], e["canvas"], e["loaded"], e["tree"]],
                    turn_out, api_name="ui_edit", **quiet)
    e["choices"].select(ui_choose, state, turn_out, api_name="ui_choose", **quiet)
    crop_box = e["crop_box"]
    for trigger in (e["crop_panel"].expand, e["aspect"].input):
        trigger(ui_crop_start, [sid, e["aspect"]], [e["photo"], *crop_box],
                api_name="ui_crop_start", **UI)
    for number in crop_box:
        number.submit(ui_crop_show, [sid, e["aspect"], *crop_box], e["photo"],
                      api_name="ui_crop_show", **UI)
        number.blur(ui_crop_show, [sid, e["aspect"], *crop_box], e["photo"],
                    api_name="ui_crop_show", **UI)
    e["crop"].click(ui_crop, [*state, e["aspect"], *crop_box], [*page, e["crop_panel"]],
                    api_name="ui_crop", **quiet)
    e["crop_cancel"].click(ui_crop_cancel, state, [*page, e["crop_panel"]],
                           api_name="ui_crop_cancel", **quiet)
    e["undo"].click(ui_undo, state, page, api_name="ui_undo", **quiet)
    e["redo"].click(ui_redo, state, page, api_name="ui_redo", **quiet)
    e["graph"].click(ui_checkout, state, page, api_name="ui_checkout", **quiet)
    e["compare"].change(ui_compare, [sid, e["compare"]], e["slider"], api_name="ui_compare",
                        **UI)
    then_links(e["sessions"].click(ui_sessions, state, page, api_name="ui_sessions", **quiet))
    e["download"].click(ui_download, [sid], e["file_out"], api_name="ui_download", **UI)
    e["export"].click(ui_export, [sid], e["file_out"], api_name="ui_export", **UI)
    then_links(e["import"].upload(ui_import, [*state, e["import"]], page, api_name="ui_import",
                                  **quiet))
    e["share"].click(ui_share, [sid], [e["share_url"], e["links"]], api_name="ui_share", **UI)
    e["revoke"].click(ui_revoke, [sid, e["links"]], [e["share_url"], e["links"]],
                      api_name="ui_revoke", **UI)

    run = a["run"].click(ui_autopilot, [sid, a["upload"], a["mood"], a["iterations"],
                                        a["simulations"], a["depth"], a["top_k"], a["seed"]],
                         [sid, a["slider"], a["steps"], a["tree"], a["summary"]],
                         api_name="ui_autopilot", **UI)
    a["cancel"].click(ui_autopilot_cancel, [sid], a["summary"], cancels=[run],
                      api_name="ui_autopilot_cancel", **UI)
    then_links(a["send"].click(ui_send_to_edit, state, page, api_name="ui_send_to_edit",
                               **quiet))

    b["score_btn"].click(ui_score, [b["before"], b["after"], b["mask"], b["bbox"],
                                    b["instruction"]], b["scores"], api_name="ui_score", **UI)
    b["run"].click(ui_benchmark, [b["dataset"], b["archive"], b["agent"]],
                   [b["table"], b["per_turn"], b["plot"], b["files"], b["summary"]],
                   api_name="ui_benchmark", **UI)


# ----------------------------------------------------------------------------- review pages

REVIEW_NOT_FOUND = ("<!doctype html><meta charset='utf-8'><title>Not found</title>"
                    "<p>This review link does not exist or has been revoked.</p>")


def _review_headers(nonce: str = "") -> dict[str, str]:
    script = f"'nonce-{nonce}'" if nonce else "'none'"
    return {
        "Content-Security-Policy": (f"default-src 'none'; img-src 'self' data:; "
                                    f"style-src 'unsafe-inline'; script-src {script}; "
                                    "connect-src 'self'; "
                                    "base-uri 'none'; form-action 'none'; "
                                    "frame-ancestors 'self'"),
        "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex, nofollow",
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store",
    }


def _not_found() -> HTMLResponse:
    return HTMLResponse(REVIEW_NOT_FOUND, status_code=404, headers=_review_headers())


review_router = APIRouter()


@review_router.get("/review/{token}", response_class=HTMLResponse)
def review(token: str, state: str = "", compare: str = "original") -> Response:
    """The read-only review page of a review link (404 when unknown or revoked)."""
    nonce = secrets.token_urlsafe(16)
    try:
        page = web.review_page(token, state or None, compare if compare in COMPARE
                               else "original", nonce=nonce)
    except web.ReviewNotFound:
        return _not_found()
    return HTMLResponse(page, headers=_review_headers(nonce))


@review_router.get("/review/{token}/preview/{node}")
def review_preview(token: str, node: str) -> Response:
    """A state's display preview, for the review page."""
    try:
        path, media = web.review_preview(token, node)
    except web.ReviewNotFound:
        return _not_found()
    return FileResponse(path, media_type=media, headers=_review_headers())


@review_router.get("/review/{token}/download/{node}")
def review_download(token: str, node: str) -> Response:
    """A state at full resolution in the original format (ICC/EXIF kept)."""
    try:
        file = web.review_download(token, node)
    except web.ReviewNotFound:
        return _not_found()
    disposition = f"attachment; filename*=UTF-8''{quote(file.filename)}"
    return Response(file.data, media_type=file.media_type,
                    headers={**_review_headers(), "Content-Disposition": disposition})


@review_router.post("/review/{token}/comments")
async def review_comment(token: str, request: Request) -> Response:
    """A reviewer's comment, pin and/or verdict on one state (JSON in, JSON out).

    Only the review token reaches ``web.add_feedback``: nothing here can edit the session.
    Refused (with ``{"error": "..."}`` and the status of ``web.FeedbackRefused``): another
    site's request (403), a body that is not JSON or too big (415, 413), an unknown or
    revoked link (404), text too long, a pin outside the photo (400/413), a flood (429).
    """
    headers = {**_review_headers(), "Content-Type": "application/json"}
    try:
        web.feedback.check_origin(request.headers)
        if request.headers.get("content-type", "").split(";")[0].strip() != \
                "application/json":
            raise web.FeedbackRefused(415, "Send the comment as JSON, as the review page does.")
        body = await _capped_body(request, web.feedback.MAX_BODY_BYTES)
        try:
            data = json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError):
            raise web.FeedbackRefused(400, "The comment could not be read (not JSON).") \
                from None
        if not isinstance(data, dict):
            raise web.FeedbackRefused(400, "The comment could not be read (not an object).")
        comment = await run_in_threadpool(
            web.add_feedback, token, data.get("state"), data.get("text"), data.get("name"),
            data.get("pin"), data.get("verdict"))
    except web.FeedbackRefused as exc:
        return JSONResponse({"error": web.user_message(exc)}, status_code=exc.status,
                            headers=headers)
    return JSONResponse({"comment": comment}, status_code=201, headers=headers)


async def _capped_body(request: Request, cap: int) -> bytes:
    """The request body, refused (413) as soon as it passes ``cap`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise web.FeedbackRefused(413, f"The comment is too big: {cap // 1024} KB at most.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise web.FeedbackRefused(413, f"The comment is too big: {cap // 1024} KB at most.")
        chunks.append(chunk)
    return b"".join(chunks)


# ----------------------------------------------------------------------------- launch


def launch_options(share: bool | None = None) -> dict:
    """``launch()`` keyword arguments from the environment (also used by tests/benches).

    Args:
        share: also open a temporary public Gradio link (default: ``LOUPE_SHARE``).
    """
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
        "app_kwargs": {"middleware": [Middleware(web.NotFoundForRefused)],
                       "routes": list(review_router.routes)},
        "max_file_size": f"{settings.max_upload_mb}mb",
        "mcp_server": True,
        "css_paths": [str(ASSETS / "loupe.css")],
        "js": (ASSETS / "loupe.js").read_text(encoding="utf-8"),
        "show_error": True,
        "share": settings.share if share is None else share,
    }


def make_demo() -> gr.Blocks:
    """The app with its queue configured (concurrency from ``LOUPE_APP_CONCURRENCY``)."""
    demo = build_app()
    settings = get_settings()
    demo.queue(default_concurrency_limit=settings.app_concurrency, max_size=settings.queue_size)
    return demo


def main(argv: list[str] | None = None) -> None:
    """``python app.py [--share]``: serve the app (and a public share link if asked)."""
    parser = argparse.ArgumentParser(description="Serve Loupe's web app.")
    parser.add_argument("--share", action="store_true", default=None,
                        help="also open a temporary public Gradio share link "
                             "(same as LOUPE_SHARE=1)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=get_settings().log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per internal request
    install_log_redaction()  # no key, token or password in the logs
    settings = get_settings()
    log.info(perception_store.ensure(downloads_allowed(settings)))  # a Space's first start
    make_demo().launch(**launch_options(share=args.share))


if __name__ == "__main__":
    main()
