"""Reports of one or more runs: JSON, CSV, a Markdown table and per-turn PNG curves.

The curves plot PSNR_OM, SSIM_OM, LPIPS_OM, IF and IC against the turn number, one line
per run, which is where drift across turns (Agent Banana's PIED) shows.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.runner import SUMMARY, read_results, summarize

CURVES = (("psnr_om", "PSNR_OM (dB)"), ("ssim_om", "SSIM_OM"), ("lpips_om", "LPIPS_OM"),
          ("if", "IF"), ("ic", "IC"))
COLUMNS = ("psnr_om", "ssim_om", "lpips_om", "if", "ic", "psnr_gt", "ssim_gt", "dle_if",
           "dle_vc", "seconds", "ok")


def load_run(folder: str | Path) -> dict[str, Any]:
    """A run's summary, recomputed from its ``results.jsonl`` (labelled by its agent).

    Raises:
        FileNotFoundError: the folder has no results.
    """
    folder = Path(folder)
    records = read_results(folder)
    if not records:
        raise FileNotFoundError(f"no results.jsonl records in {folder}")
    summary = summarize(records)
    config = folder / "run.json"
    meta = json.loads(config.read_text()) if config.is_file() else {}
    summary["label"] = meta.get("agent") or records[0].get("agent") or folder.name
    summary["folder"] = str(folder)
    return summary


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"
    return "" if value is None else str(value)


def _rows(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for summary in runs:
        for turn, table in summary["per_turn"].items():
            rows.append({"run": summary["label"], "turn": turn, **table})
        rows.append({"run": summary["label"], "turn": "all", **summary["overall"]})
    return rows


def markdown_table(runs: Sequence[dict[str, Any]]) -> str:
    """A Markdown table: one row per run and turn (plus ``all``)."""
    present = [c for c in COLUMNS if any(c in r for r in _rows(runs))]
    header = ["run", "turn", *present, "n"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in _rows(runs):
        lines.append("| " + " | ".join(_fmt(row.get(c)) for c in header) + " |")
    kinds = sorted({r.get("lpips_kind", "") for r in runs} - {""})
    if kinds:
        lines.append("")
        lines.append(f"LPIPS_OM column computed with: {', '.join(kinds)}; PSNR of identical "
                     "pixels is capped at 100 dB in means.")
    return "\n".join(lines) + "\n"


def plot_curves(runs: Sequence[dict[str, Any]], path: Path) -> Path:
    """Per-turn curves of PSNR_OM, SSIM_OM, LPIPS_OM, IF and IC, one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CURVES), figsize=(4 * len(CURVES), 3.4))
    for ax, (key, title) in zip(axes, CURVES):
        for summary in runs:
            turns = sorted(summary["per_turn"], key=int)
            points = [(int(t), summary["per_turn"][t][key]) for t in turns
                      if key in summary["per_turn"][t]]
            if points:
                ax.plot(*zip(*points), marker="o", label=summary["label"])
                ax.set_xticks([p[0] for p in points])
        ax.set_title(title)
        ax.set_xlabel("turn")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_reports(results: str | Path | Sequence[str | Path],
                  out: str | Path | None = None) -> list[Path]:
    """Write ``report.json``, ``report.csv``, ``report.md`` and ``curves.png``.

    Args:
        results: one run folder or several (compared side by side).
        out: where to write (default: the first run folder).

    Returns:
        The written paths.
    """
    folders = [Path(results)] if isinstance(results, (str, Path)) else [Path(r) for r in results]
    runs = [load_run(f) for f in folders]
    out = Path(out) if out else folders[0]
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "report.json", out / "report.csv", out / "report.md", out / "curves.png"]
    written[0].write_text(json.dumps(runs, indent=1))
    rows = _rows(runs)
    fields = ["run", "turn", *[c for c in COLUMNS if any(c in r for r in rows)], "n"]
    with open(written[1], "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    written[2].write_text(markdown_table(runs))
    plot_curves(runs, written[3])
    if len(runs) == 1 and not (folders[0] / SUMMARY).is_file():
        (folders[0] / SUMMARY).write_text(json.dumps(runs[0], indent=1))
    return written
