"""The Benchmark tab: score one before/after pair, or run a benchmark over the bundled
mini HDD set or an uploaded dataset archive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr
from gradio import utils as gradio_utils

import web
from ui.common import UI, toast


@toast
def ui_score(before: str | None, after: str | None, mask: str | None, bbox: str,
             instruction: str) -> Any:
    """Score one before/after pair (optionally inside a mask or box)."""
    import pandas as pd  # heavy; only the Benchmark tab needs it

    scores = web.score_files(before, after, mask=mask, bbox=bbox, instruction=instruction)
    return pd.DataFrame(web.score_rows(scores), columns=["Measure", "Value"])


@toast
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



def build() -> dict:
    """Lay out the Benchmark tab; returns its components by name."""
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



def wire(b: dict) -> None:
    """Connect the Benchmark tab's two buttons."""
    b["score_btn"].click(ui_score, [b["before"], b["after"], b["mask"], b["bbox"],
                                    b["instruction"]], b["scores"], api_name="ui_score", **UI)
    b["run"].click(ui_benchmark, [b["dataset"], b["archive"], b["agent"]],
                   [b["table"], b["per_turn"], b["plot"], b["files"], b["summary"]],
                   api_name="ui_benchmark", **UI)
