"""The Batch tab: several photos (or a zip of them), one instruction or Autopilot, a
background job with its progress, and the edited photos and report to download.

Every button is a ``web.batch`` call, also the API/MCP tools ``batch``, ``batch_status``
and ``batch_cancel`` and the CLI ``python -m agent batch``.
"""

from __future__ import annotations

import html
from typing import Any

import gradio as gr
from gradio import utils as gradio_utils

import web
from ui.common import UI, toast

#: seconds between progress updates while a batch runs
POLL_S = 2.0


def status_markdown(info: dict[str, Any]) -> str:
    """The job's progress in words (file names and reasons escaped)."""
    state = info.get("state", "")
    line = (f"**{html.escape(str(state)).capitalize()}** — {info.get('finished', 0)} of "
            f"{info.get('total', 0)} photos finished: {info.get('done', 0)} edited, "
            f"{info.get('failed', 0)} failed")
    if info.get("eta_s") is not None:
        line += f", about {int(info['eta_s'])} s left"
    lines = [line + "."]
    for failure in (info.get("failures") or [])[:20]:
        lines.append(f"- {html.escape(str(failure.get('photo')))}: "
                     f"{html.escape(str(failure.get('reason')))}")
    return "\n".join(lines)


def _files(status: Any) -> Any:
    root = gradio_utils.get_upload_folder()
    files = [str(web.publish(p, root)) for p in (status.zip_path, status.report_path) if p]
    return gr.update(value=files or None, visible=bool(files))


@toast
def ui_batch_start(files: list[str] | None, instruction: str, autopilot: bool,
                   mood: str, reference: str | None = None) -> tuple:
    """Start a batch job on the uploads (every photo matched to ``reference`` when the
    instruction asks for it: "match the look of the reference")."""
    info = web.start_batch(list(files or []), instruction or "", autopilot=bool(autopilot),
                           mood=mood or "", reference=reference or None)
    return info["job_id"], status_markdown(info), gr.Timer(active=True), \
        gr.update(value=None, visible=False)


def ui_batch_poll(job_id: str | None) -> tuple:
    """Refresh the progress; when the job has ended, stop polling and offer the files."""
    if not job_id:
        return gr.skip(), gr.Timer(active=False), gr.skip()
    try:
        status = web.batch_status(job_id)
    except web.SessionError as err:
        return str(err), gr.Timer(active=False), gr.skip()
    running = status.info["state"] in ("running", "cancelling")
    return (status_markdown(status.info), gr.Timer(active=running),
            gr.skip() if running else _files(status))


@toast
def ui_batch_cancel(job_id: str | None) -> tuple:
    """Stop the job, keeping the photos already finished."""
    if not job_id:
        raise web.SessionError("No batch is running.")
    status = web.batch_cancel(job_id)
    return status_markdown(status.info), gr.Timer(active=False), _files(status)


def build() -> dict:
    """Lay out the Batch tab; returns its components by name."""
    c: dict[str, Any] = {}
    gr.Markdown("Edit many photos the same way: add photos (or a .zip of them), say what to "
                "change once, and download the results with a report.")
    c["files"] = gr.File(label="Photos or .zip", file_count="multiple", type="filepath",
                         file_types=["image", ".zip"], elem_id="batch-files", height=140)
    with gr.Row():
        c["instruction"] = gr.Textbox(label="Instruction", placeholder="make it warmer",
                                      elem_id="batch-instruction", scale=3)
        c["autopilot"] = gr.Checkbox(label="Autopilot instead", elem_id="batch-autopilot")
        c["mood"] = gr.Textbox(label="Mood (Autopilot, optional)", elem_id="batch-mood")
        c["reference"] = gr.File(label="Reference photo (optional)", file_types=["image"],
                                 type="filepath", elem_id="batch-reference", height=70)
    with gr.Row():
        c["start"] = gr.Button("Start batch", variant="primary", elem_id="batch-start")
        c["cancel"] = gr.Button("Cancel", elem_id="batch-cancel")
    c["status"] = gr.Markdown(elem_id="batch-status")
    c["results"] = gr.File(label="Results (zip) and report", file_count="multiple",
                           interactive=False, visible=False, elem_id="batch-results")
    c["job"] = gr.State(None)
    c["timer"] = gr.Timer(POLL_S, active=False)
    return c


def wire(c: dict) -> None:
    """Connect the Batch tab's buttons and its progress timer."""
    c["start"].click(ui_batch_start, [c["files"], c["instruction"], c["autopilot"], c["mood"],
                                      c["reference"]],
                     [c["job"], c["status"], c["timer"], c["results"]],
                     api_name="ui_batch_start", **UI)
    c["timer"].tick(ui_batch_poll, [c["job"]], [c["status"], c["timer"], c["results"]],
                    api_name="ui_batch_poll", show_progress="hidden", **UI)
    c["cancel"].click(ui_batch_cancel, [c["job"]], [c["status"], c["timer"], c["results"]],
                      api_name="ui_batch_cancel", **UI)
