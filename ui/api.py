"""The API endpoints: hidden components, one named endpoint per function.

The functions here keep the ``gradio_client`` shapes scripts rely on (``/new_session``
returns ``(session_id, info)``, ``/edit`` returns ``(image, result)`` …). The MCP tools,
each answering with one JSON object, are ``ui.tools``; ``build`` registers both.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import utils as gradio_utils

import web
from ui import tools
from ui.common import friendly, private, root_url


@friendly
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


@friendly
def edit(session_id: str, instruction: str, mask: str | None = None,
         tree_search: bool = False, reference: str | None = None) -> tuple[Any, dict]:
    """Apply a plain-language edit to the session's current photo (one undoable turn).

    Args:
        session_id: the id returned by new_session.
        instruction: what to change, e.g. "make the sky bluer" or "remove the red ball".
        mask: optional mask image (white = area to edit, any size; scaled to the photo).
        tree_search: treat a multi-part instruction with tree search.
        reference: optional photo to match ("make it look like the reference"); the last
            argument, so calls without it keep working.

    Returns:
        A preview of the result, and the turn's plan, steps, scores and new head.
    """
    size = web.image_size(session_id)
    native_mask = web.load_mask_file(mask, (size[1], size[0])) if mask and size else None
    view, result = web.edit_turn(session_id, instruction, native_mask,
                                 search="tree" if tree_search else "none",
                                 reference=reference or None)
    return view.image, result


@friendly
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


@friendly
def undo(session_id: str) -> tuple[Any, dict]:
    """Undo the last edit of a session (the state stays in the graph).

    Args:
        session_id: the id returned by new_session.

    Returns:
        A preview of the now-current state, and the session summary.
    """
    view = web.undo(session_id)
    return view.image, view.info()


@friendly
def redo(session_id: str) -> tuple[Any, dict]:
    """Redo the last undone edit of a session.

    Args:
        session_id: the id returned by new_session.

    Returns:
        A preview of the now-current state, and the session summary.
    """
    view = web.redo(session_id)
    return view.image, view.info()


@friendly
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


@friendly
def graph(session_id: str) -> dict:
    """The session's state graph: every node (id, parent, description) and the head.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The graph as JSON.
    """
    return web.graph_json(session_id)


@friendly
def download(session_id: str) -> str:
    """The current state at full resolution, in the original format with ICC/EXIF.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The image file.
    """
    return str(web.download(session_id, folder=private))


@friendly
def export_session(session_id: str) -> str:
    """Export a session (graph, layers, original) as a zip archive.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The archive file.
    """
    return str(web.export_archive(session_id, folder=private))


@friendly
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


@friendly
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


@friendly
def accept_autopilot_suggestion(session_id: str, index: int = 0) -> tuple[Any, dict]:
    """Accept one of an Autopilot run's suggestions: a straighten it offered, or the whole
    change its do-no-harm guard held back ("full_strength").

    Args:
        session_id: the id the autopilot call returned.
        index: which entry of the run's ``suggestions`` (0 = the first).

    Returns:
        A preview of the photo with the suggestion applied, and the summary (``steps``,
        ``accepted``, ``suggestions`` left, ``reason``).
    """
    view = web.accept_autopilot_suggestion(session_id, int(index))
    return view.slider[1], {"session_id": session_id, **view.summary}


@friendly
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


@friendly
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


@friendly
def share_link(session_id: str, request: gr.Request) -> str:
    """Make a read-only review link for a session: the image at any state, the graph, the
    chat and a before/after slider, with a download; nothing on it can edit.

    Args:
        session_id: the id returned by new_session.

    Returns:
        The review URL (its token is not the session id and cannot edit).
    """
    return web.share_link(session_id, root_url(request))


@friendly
def revoke_share(session_id: str, url: str) -> dict:
    """Revoke a review link of a session; it answers 404 from then on.

    Args:
        session_id: the id returned by new_session.
        url: the review URL returned by share_link.

    Returns:
        {"revoked": true} when the link existed, else {"revoked": false}.
    """
    return {"revoked": bool(web.revoke_share(session_id, url))}



@friendly
def batch(photos: list[str], instruction: str = "", autopilot: bool = False,
          mood: str = "") -> dict:
    """Start a batch: the same edit (or Autopilot) on several photos, as a background job.

    Args:
        photos: the photos (JPEG, PNG, WebP, TIFF) and/or .zip archives of photos.
        instruction: what to change in every photo, e.g. "make it warmer".
        autopilot: run Autopilot on every photo instead of an instruction.
        mood: Autopilot's optional intent, e.g. "warm evening light".

    Returns:
        {"job_id", "state", "total", "finished", "done", "failed", "eta_s", "failures"}:
        pass job_id to batch_status and batch_cancel.
    """
    return web.start_batch(list(photos or []), instruction or "", autopilot=bool(autopilot),
                           mood=mood or "")


def _batch_files(status: Any) -> tuple[dict, str | None, str | None]:
    root = gradio_utils.get_upload_folder()
    return (status.info,
            str(web.publish(status.zip_path, root)) if status.zip_path else None,
            str(web.publish(status.report_path, root)) if status.report_path else None)


@friendly
def batch_status(job_id: str) -> tuple[dict, str | None, str | None]:
    """A batch's progress; once it has ended, the results zip and the report.

    Args:
        job_id: the id returned by batch.

    Returns:
        The progress ({"job_id", "state": running/cancelling/done/cancelled/interrupted,
        "total", "finished", "done", "failed", "eta_s", "failures": [{"photo", "reason"}]};
        an interrupted job adds "reason", why it stopped), then the zip of the edited
        photos with the report, and the report page (both empty while it runs).
    """
    return _batch_files(web.batch_status(job_id))


@friendly
def batch_cancel(job_id: str) -> tuple[dict, str | None, str | None]:
    """Stop a batch: nothing new starts; the photos already finished are kept.

    Args:
        job_id: the id returned by batch.

    Returns:
        As batch_status, once the job has stopped: the zip holds the finished photos.
    """
    return _batch_files(web.batch_cancel(job_id))


class ApiBlocks(gr.Blocks):
    """``gr.Blocks`` whose endpoints may be called without their trailing optional arguments.

    ``gradio_client`` fills in a left-out argument only for documented endpoints (it reads
    the defaults from ``/info``); the tuple endpoints here are undocumented (not MCP tools),
    so without this an old 4-argument ``/edit`` call fails once ``reference`` is added.
    The server fills in the same defaults the client would have sent (Gradio's own rule
    in ``get_api_info``: the input's initial value, or the parameter's ``None`` default);
    a call that leaves out a required argument is refused by Gradio as before.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._api_defaults: dict[str, list[tuple[bool, Any]]] | None = None

    async def preprocess_data(self, block_fn: Any, inputs: list[Any], *args: Any,
                              **kwargs: Any) -> list[Any]:
        """Gradio's preprocessing, after filling in left-out trailing arguments."""
        return await super().preprocess_data(block_fn, self._with_defaults(block_fn, inputs),
                                             *args, **kwargs)

    def _with_defaults(self, block_fn: Any, inputs: list[Any]) -> list[Any]:
        if not block_fn.api_name or len(inputs) >= len(block_fn.inputs):
            return inputs
        if self._api_defaults is None:  # once: the endpoints are fixed when the app is built
            self._api_defaults = {
                name.lstrip("/"): [(p["parameter_has_default"], p["parameter_default"])
                                   for p in endpoint["parameters"]]
                for name, endpoint in self.get_api_info(all_endpoints=True)[
                    "named_endpoints"].items()}
        params = self._api_defaults.get(block_fn.api_name, [])
        if len(params) != len(block_fn.inputs):  # an input Gradio leaves out: no guess
            return inputs
        tail = params[len(inputs):]
        if not tail or not all(has for has, _ in tail):
            return inputs
        return [*inputs, *(value for _, value in tail)]


FILE_PARAMS = {"image", "mask", "before", "after", "archive", "reference"}
MULTI_FILE_PARAMS = {"photos"}


def _hidden_inputs(fn) -> list[gr.components.Component]:
    """Hidden input components for an API function, defaults taken from its signature."""
    comps: list[gr.components.Component] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.annotation in (gr.Request, "gr.Request"):
            continue  # filled in by Gradio, not an input
        default = None if param.default is inspect.Parameter.empty else param.default
        if name in FILE_PARAMS:
            comps.append(gr.File(visible=False, type="filepath", label=name))
        elif name in MULTI_FILE_PARAMS:
            comps.append(gr.File(visible=False, type="filepath", file_count="multiple",
                                 label=name))
        elif param.annotation in (bool, "bool"):
            comps.append(gr.Checkbox(value=bool(default), visible=False, label=name))
        elif param.annotation in (int, "int"):
            comps.append(gr.Number(value=default, precision=0, visible=False, label=name))
        elif param.annotation in (float, "float"):
            comps.append(gr.Number(value=default, visible=False, label=name))
        else:
            comps.append(gr.Textbox(value=default, visible=False, label=name))
    return comps


def build() -> None:
    """The API/MCP endpoints (hidden components, no visible UI).

    The JSON tools (``ui.tools``) are the public endpoints: the MCP server lists exactly
    these, and ``gradio_client`` calls them as ``/<tool>_json``. The endpoints above keep
    the names and tuple shapes scripts already use (``/new_session``, ``/edit`` …); they
    are callable by ``gradio_client`` but undocumented, so they are not MCP tools. A new
    argument goes last, with a default (``edit``'s ``reference``): ``ApiBlocks`` fills it
    in for older calls that leave it out.
    """
    img = gr.Image(visible=False, type="numpy", format="png", label="image")
    out_json, out_file = gr.JSON(visible=False, label="result"), gr.File(visible=False)
    out_text = gr.Textbox(visible=False, label="session_id")
    out_url = gr.Textbox(visible=False, label="url")
    outputs = {new_session: [out_text, out_json], edit: [img, out_json], crop: [img, out_json],
               undo: [img, out_json], redo: [img, out_json], checkout: [img, out_json],
               graph: [out_json], download: [out_file], export_session: [out_file],
               import_session: [out_text, out_json], autopilot: [img, out_json],
               accept_autopilot_suggestion: [img, out_json],
               score: [out_json], benchmark: [out_json, out_file],
               share_link: [out_url], revoke_share: [out_json], batch: [out_json],
               batch_status: [out_json, out_file, gr.File(visible=False, label="report")],
               batch_cancel: [out_json, out_file, gr.File(visible=False, label="report")]}
    for fn, outs in outputs.items():
        gr.Button(visible=False).click(fn, _hidden_inputs(fn), outs, api_name=fn.__name__,
                                       api_visibility="undocumented")
    answer = gr.Textbox(visible=False, label="result (JSON)")
    for fn in tools.TOOLS:
        gr.Button(visible=False).click(fn, _hidden_inputs(fn), [answer],
                                       api_name=f"{fn.__name__}_json")
