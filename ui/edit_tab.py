"""The Edit tab: the start strip (examples, your sessions), the photo with its brush,
slider and crop panel, the conversation, the history graph, downloads and review links.

Every callback is a short call into ``web``; ``build`` lays the tab out and ``wire``
connects its events (each with the ``api_name`` the browser tests and scripts use).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

import web
from pipelines.editors.frame import ASPECTS
from ui import feedback_panel
from ui.common import ASSETS, UI, Shell, edit_page, private, root_url, served, toast

EXAMPLES = [
    [str(ASSETS / "scene-4k.jpg"), "make the red ball blue"],
    [str(ASSETS / "astronaut.jpg"), "make it warmer"],
    [str(ASSETS / "coffee.jpg"), "increase the contrast"],
    [str(ASSETS / "chelsea.jpg"), "convert it to black and white"],
]
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
def _shape(aspect: str) -> str:
    """A crop shape as people read it: "16:9 landscape", "1:1 square"."""
    w, h = (int(v) for v in aspect.split(":"))
    return f"{aspect} " + ("square" if w == h else "landscape" if w > h else "portrait")


#: the crop panel's shapes: (label, aspect) for ``web.crop``
CROP_SHAPES = [("Free (the box as typed)", "free"), ("Like the original", "original"),
               *((_shape(a), a) for a in ASPECTS if ":" in a)]


@toast
def ui_load(session_id: str | None, library: Any, compare: str) -> tuple:
    """Restore this browser's session and list (after a refresh or a server restart)."""
    return edit_page(web.get_view(web.ensure_session(session_id)), library, compare)


@toast
def ui_open(session_id: str | None, library: Any, compare: str,
            path: str | None) -> tuple:
    """Open the uploaded photo in a new session beside the current one."""
    if not path:
        return gr.skip()
    return edit_page(web.open_beside(session_id, path, Path(path).name), library, compare)


@toast
def ui_example(session_id: str | None, library: Any, compare: str,
               evt: gr.SelectData) -> tuple:
    """Open an example photo in a new session and put its instruction in the box."""
    path, text = EXAMPLES[int(evt.index)]
    view = web.open_beside(session_id, path, Path(path).name)
    return (*edit_page(view, library, compare), {"text": text, "files": []})


@toast
def ui_brush(session_id: str | None, loaded: str | None) -> tuple:
    """Load the current state into the brush canvas when its tab opens (once per state)."""
    current = web.current_preview(session_id) if web.has_photo(session_id) else None
    if current is None:
        return gr.skip()
    key = f"{session_id}:{current[0]}"
    if key == loaded:
        return gr.skip()  # keep the strokes already painted on this state
    return {"background": served(current[1]), "layers": [], "composite": None}, key


@toast
def ui_edit(session_id: str | None, library: Any, compare: str,
            message: dict | None, canvas: dict | None, loaded: str | None, tree: bool,
            reference: str | None = None, progress: gr.Progress = gr.Progress()) -> tuple:
    """Run the typed instruction (with the brushed mask, if any) as one turn.

    Strokes count only when they were painted on the current state (``loaded``), so a
    mask never leaks into a later edit. A photo attached to the message opens in a new
    session first (as if uploaded). A file in "Reference photo" is kept as the session's
    reference before the turn runs ("make it look like the reference").
    """
    message = message if isinstance(message, dict) else {"text": str(message or "")}
    text, files = message.get("text", ""), message.get("files") or []
    if files:
        first = files[0] if isinstance(files[0], str) else files[0].get("path")
        view = web.open_beside(session_id, first, Path(first).name)
        session_id, canvas = view.session_id, None
        if not text.strip():
            return (*edit_page(view, library, compare), "", {"text": "", "files": []},
                    gr.update(visible=False), _selection_line(view.session_id),
                    feedback_panel.selection_note(view.session_id))
    current = web.current_preview(session_id) if web.has_photo(session_id) else None
    if current is None:
        raise web.SessionError("Open a photo first (or pick an example above).")
    mask = None
    if loaded == f"{session_id}:{current[0]}":
        size = web.image_size(session_id)
        mask = web.mask_from_editor(canvas, (size[1], size[0])) if size else None
    view, result = web.edit_turn(session_id, text, mask, search="tree" if tree else "none",
                                 progress=lambda f, t: progress(f, desc=t or "editing"),
                                 reference=reference or None)
    return _after_turn(view, result, library, compare)


def _after_turn(view: web.SessionView, result: dict, library: Any, compare: str) -> tuple:
    """The page after a turn, its search tree, an empty box, the "did you mean" buttons
    (shown only when the request could mean two things) and the selection line; unsure
    targets are drawn numbered on the photo."""
    topology = web.graph_view.zoomable(result["topology_svg"]) \
        if result.get("topology_svg") else ""
    choices = [(c["label"], c["instruction"]) for c in result.get("choices") or []]
    asked = gr.update(choices=choices, value=None, visible=bool(choices))
    return (*_marked(edit_page(view, library, compare), view.session_id), topology,
            {"text": "", "files": []}, asked, _selection_line(view.session_id, result),
            feedback_panel.selection_note(view.session_id))


def _marked(page: tuple, session_id: str) -> tuple:
    """``page`` with its photo outlined (selection) and numbered (candidates) when needed."""
    marked = web.marked_preview(session_id)
    if marked is None:
        return page
    return (*page[:2], served(marked), *page[3:])


def _selection_line(session_id: str, result: dict | None = None) -> str:
    """The line under the photo: what is selected, or which candidates to click."""
    if result and result.get("candidates"):
        listed = ", ".join(f"**{c['id']}** {c['label']} ({c['score']:.2f})"
                           for c in result["candidates"])
        return f"Not sure which one you mean — click a numbered box on the photo: {listed}."
    mask = web.selection_mask(session_id) if web.has_photo(session_id) else None
    if mask is None:
        return ("Click an object on the photo to select it; then say *make this "
                "brighter*.")
    return ("**Selected** (outlined): *this*, *that* and *it* now mean the selection; "
            "*the whole photo* does not. Shift-click or tick *Add to selection* to add.")


@toast
def ui_photo_click(session_id: str | None, library: Any, compare: str, add: bool,
                   evt: gr.SelectData, progress: gr.Progress = gr.Progress()) -> tuple:
    """A click on the photo: on a numbered candidate, run the unsure edit on it; else
    select the object under the click (added to the selection with the toggle or shift)."""
    if not web.has_photo(session_id):
        return gr.skip()
    shown, full = web.preview_size(session_id), web.image_size(session_id)
    if not shown or not full or not isinstance(evt.index, (list, tuple)):
        return gr.skip()
    x = float(evt.index[0]) * full[0] / shown[0]
    y = float(evt.index[1]) * full[1] / shown[1]
    picked = web.candidate_at(session_id, x, y)
    if picked is not None:
        view, result = web.choose_region(session_id, picked,
                                         progress=lambda f, t: progress(f, desc=t or "editing"))
        return _after_turn(view, result, library, compare)
    web.select(session_id, x, y, add=bool(add))
    page = _marked(edit_page(web.get_view(session_id), library, compare), session_id)
    return (*page, gr.skip(), gr.skip(), gr.skip(), _selection_line(session_id),
            feedback_panel.selection_note(session_id))


@toast
def ui_clear_selection(session_id: str | None, library: Any, compare: str) -> tuple:
    """Drop the selection and its outline."""
    if web.has_photo(session_id):
        web.clear_selection(session_id)
    page = _marked(edit_page(web.get_view(session_id), library, compare), session_id)
    return (*page, _selection_line(session_id), feedback_panel.selection_note(session_id))


@toast
def ui_choose(session_id: str | None, library: Any, compare: str, evt: gr.SelectData,
              progress: gr.Progress = gr.Progress()) -> tuple:
    """One of the "did you mean" buttons: run its instruction as the next turn."""
    view, result = web.edit_turn(session_id, str(evt.value), None,
                                 progress=lambda f, t: progress(f, desc=t or "editing"))
    return _after_turn(view, result, library, compare)


@toast
def ui_crop_start(session_id: str | None, aspect: str) -> tuple:
    """Open the crop panel or pick a shape: the largest box of that shape, drawn."""
    if not web.has_photo(session_id):
        return gr.skip()
    box = web.suggest_crop(session_id, aspect or "free")
    path, kept = web.crop_preview(session_id, box, aspect or "free")
    return (served(path), *kept)


@toast
def ui_crop_show(session_id: str | None, aspect: str, x0: float, y0: float, x1: float,
                 y1: float) -> Any:
    """Show the box typed in the crop panel on the photo (nothing changes yet)."""
    if not web.has_photo(session_id) or None in (x0, y0, x1, y1):
        return gr.skip()
    path, _ = web.crop_preview(session_id, [x0, y0, x1, y1], aspect or "free")
    return served(path)


@toast
def ui_crop(session_id: str | None, library: Any, compare: str, aspect: str, x0: float,
            y0: float, x1: float, y1: float) -> tuple:
    """Crop to the panel's box: one undoable state in the history."""
    view, _ = web.crop(session_id, [x0, y0, x1, y1], aspect or "free")
    return (*edit_page(view, library, compare), gr.update(open=False))


@toast
def ui_crop_cancel(session_id: str | None, library: Any, compare: str) -> tuple:
    """Close the crop panel and show the photo as it is."""
    return (*edit_page(web.get_view(session_id), library, compare), gr.update(open=False))


@toast
def _move(fn, session_id: str | None, library: Any, compare: str, *args) -> tuple:
    return edit_page(fn(session_id, *args), library, compare)


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



@toast
def ui_compare(session_id: str | None, compare: str) -> Any:
    """Switch the slider's reference between the original and the previous state."""
    pair = web.get_view(session_id).compare_files(compare)
    return None if pair is None else (served(pair[0]), served(pair[1]))


@toast
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
        return edit_page(web.get_view(session_id), library, compare)
    return edit_page(web.get_view(web.find(library, str(data.get("open")))), library, compare)


@toast
def ui_download(session_id: str | None) -> Any:
    """Full-resolution file of the current state, original format, ICC/EXIF kept."""
    return gr.update(value=str(web.download(session_id, folder=private)), visible=True)


@toast
def ui_export(session_id: str | None) -> Any:
    """The whole session (chat included) as a zip archive."""
    return gr.update(value=str(web.export_archive(session_id, folder=private)), visible=True)


@toast
def ui_import(session_id: str | None, library: Any, compare: str,
              path: str | None) -> tuple:
    """Bring back an exported session, chat included, beside the current one."""
    if not path:
        return gr.skip()
    return edit_page(web.import_beside(session_id, path), library, compare)


@toast
def ui_share(session_id: str | None, request: gr.Request) -> tuple:
    """Make a read-only review link for the current session."""
    root = root_url(request)
    url = web.share_link(session_id, root)
    links = web.share_links(session_id, root)
    gr.Info("Review link ready: anyone with it can look and comment; nobody can edit.")
    return url, gr.update(choices=links, value=url)


@toast
def ui_revoke(session_id: str | None, url: str | None, request: gr.Request) -> tuple:
    """Revoke the review link picked in the list; it answers 404 from now on."""
    if not url:
        raise web.SessionError("Pick a review link to revoke.")
    if not web.revoke_share(session_id, url):
        raise web.SessionError("That link is not one of this session's review links.")
    links = web.share_links(session_id, root_url(request))
    gr.Info("Review link revoked.")
    return "", gr.update(choices=links, value=None)


def ui_links(session_id: str | None, request: gr.Request) -> Any:
    """The current session's live review links (after a switch of session)."""
    try:
        links = web.share_links(session_id, root_url(request)) \
            if web.has_photo(session_id) else []
    except Exception:  # noqa: BLE001 - an empty list is the honest fallback
        links = []
    return gr.update(choices=links, value=None)



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


def build() -> dict:
    """Lay out the Edit tab; returns its components by name (``wire`` connects them)."""
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
                    with gr.Row(elem_id="selection-row"):
                        c["add_selection"] = gr.Checkbox(
                            label="Add to selection", value=False, elem_id="add-selection",
                            container=False, scale=1, min_width=120)
                        c["clear_selection"] = gr.Button(
                            "Clear selection", elem_id="clear-selection", size="sm", scale=1,
                            min_width=110)
                    c["selection_info"] = gr.Markdown("", elem_id="selection-info")
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
            with gr.Row(equal_height=True):
                c["box"] = gr.MultimodalTextbox(
                    placeholder="Tell Loupe what to change… e.g. “make it warmer” (Enter sends)",
                    file_count="single", file_types=["image"], elem_id="instruction",
                    submit_btn=True, sources=[], show_label=False, scale=4)
                # the file as uploaded (ICC profile, EXIF orientation), never re-encoded
                c["reference"] = gr.File(label="Reference photo", file_types=["image"],
                                         type="filepath", elem_id="reference", height=70,
                                         scale=1, min_width=170)
            c["selection_note"] = gr.Markdown("", visible=False, elem_id="selection-note")
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
            with gr.Accordion(feedback_panel.SHARE_LABEL, open=False,
                              elem_id="share-box") as c["share_box"]:
                gr.Markdown("A review link shows the photo at any state, the history, the "
                            "conversation and a before/after slider, with a download. "
                            "Reviewers can comment, pin a spot and approve; nothing on it can "
                            "edit. Revoke it any time.")
                c["share"] = gr.Button("Create a review link", elem_id="share-btn", size="sm")
                c["share_url"] = gr.Textbox(label="Review link", elem_id="share-url",
                                            buttons=["copy"], interactive=False)
                with gr.Row():
                    c["links"] = gr.Dropdown([], label="Live review links",
                                             elem_id="share-links", scale=3)
                    c["revoke"] = gr.Button("Revoke", elem_id="revoke-btn", size="sm",
                                            variant="stop", scale=1)
            feedback_panel.build(c)
            with gr.Accordion("Import a session archive", open=False, elem_id="import-box"):
                c["import"] = gr.File(label="Session archive (.zip)", file_types=[".zip"],
                                      type="filepath", elem_id="import", height=80)
    return c



def wire(shell: Shell) -> None:
    """Connect the Edit tab's events (and the page load) to the callbacks above."""
    demo, sid, e = shell.demo, shell.sid, shell.edit
    page, state, quiet, then_links = shell.page, shell.state, shell.quiet, shell.then_links
    e["brush_tab"].select(ui_brush, [sid, e["loaded"]], [e["canvas"], e["loaded"]],
                          api_name="ui_brush", **UI)
    then_links(demo.load(ui_load, state, page, api_name="ui_load", **UI))
    then_links(e["upload"].upload(ui_open, [*state, e["upload"]], page, api_name="ui_open",
                                  **quiet))
    then_links(e["examples"].select(ui_example, state, [*page, e["box"]],
                                    api_name="ui_example", **quiet))
    turn_out = [*page, e["topology"], e["box"], e["choices"], e["selection_info"],
                e["selection_note"]]
    e["box"].submit(ui_edit, [*state, e["box"], e["canvas"], e["loaded"], e["tree"],
                              e["reference"]], turn_out, api_name="ui_edit", **quiet)
    e["choices"].select(ui_choose, state, turn_out, api_name="ui_choose", **quiet)
    e["photo"].select(ui_photo_click, [*state, e["add_selection"]], turn_out,
                      js="(sid, lib, cmp, add) => [sid, lib, cmp, add || !!window.loupeShift]",
                      api_name="ui_photo_click", **quiet)
    e["clear_selection"].click(ui_clear_selection, state,
                               [*page, e["selection_info"], e["selection_note"]],
                               api_name="ui_clear_selection", **quiet)
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
    feedback_panel.wire(shell)
