"""A batch's report: ``batch-report.json``, ``batch-report.csv`` and ``batch-report.html``.

One row per photo, failures first (then by path): the outcome and its reason, the
critic's score, the seconds it took and each step. The HTML page shows the before and
after thumbnails (``.loupe-batch/thumbs``, relative links, so the folder can be zipped
or moved) and the critic's verdict and reasons per step. Every text on the page is
escaped: file names and model output are strangers' text.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
from pathlib import Path
from typing import Any

from agent.batch_files import STATE_DIR, read_manifest, thumb_names
from pipelines.files import atomic_write

REPORT_HTML, REPORT_CSV, REPORT_JSON = "batch-report.html", "batch-report.csv", \
    "batch-report.json"
_ORDER = {"failed": 0, "planned": 1, "done": 2}
_CSV_FIELDS = ("path", "outcome", "reason", "score", "seconds", "steps", "instruction")


def sorted_rows(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries, failures first, then by path."""
    return sorted(entries, key=lambda e: (_ORDER.get(str(e.get("outcome")), 0),
                                          str(e.get("path"))))


def report_from_manifest(dest: Path, summary: Any) -> dict[str, str]:
    """Rewrite the report from ``dest``'s manifest (after a cancelled or killed run)."""
    return write_report(dest, list(read_manifest(dest).values()), summary)


def write_report(dest: Path, entries: list[dict[str, Any]], summary: Any) -> dict[str, str]:
    """Write the three report files into ``dest`` (atomically).

    Args:
        dest: the batch's output folder.
        entries: the manifest entries of the photos in this batch.
        summary: the ``BatchSummary`` (its counts head the page).

    Returns:
        ``{"html", "csv", "json"}``: the files' names, relative to ``dest``.
    """
    rows = sorted_rows(entries)
    head = summary.to_dict() if hasattr(summary, "to_dict") else dict(summary)
    head = {k: v for k, v in head.items() if k != "report"}
    public = [{k: v for k, v in row.items() if k not in ("fingerprint",)} for row in rows]
    atomic_write(dest / REPORT_JSON, json.dumps({"summary": head, "photos": public},
                                                indent=1, default=str))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        cells = {**{k: row.get(k) for k in _CSV_FIELDS},
                 "steps": " | ".join(str(s) for s in row.get("steps") or [])}
        writer.writerow({k: _cell(v) for k, v in cells.items()})
    atomic_write(dest / REPORT_CSV, buffer.getvalue())
    atomic_write(dest / REPORT_HTML, render_html(rows, head, dest))
    return {"html": REPORT_HTML, "csv": REPORT_CSV, "json": REPORT_JSON}


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text (a file name starting with ``=`` is no
    formula)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _thumb(dest: Path, rel: str, which: int, inline: bool) -> str:
    name = thumb_names(rel)[which]
    path = dest / STATE_DIR / "thumbs" / name
    if not path.is_file():
        return "<div class='none'>—</div>"
    label = "before" if which == 0 else "after"
    src = ("data:image/jpeg;base64," + base64.b64encode(path.read_bytes()).decode()
           if inline else f"{STATE_DIR}/thumbs/{name}")
    return f"<img src='{_e(src)}' alt='{label}: {_e(rel)}' loading='lazy'>"


def render_html(rows: list[dict[str, Any]], head: dict[str, Any], dest: Path, *,
                inline: bool = False) -> str:
    """The report page; its thumbnails are files beside it, or ``inline`` (one file to
    hand out on its own)."""
    counts = (f"{head.get('total', 0)} photos: {head.get('done', 0)} done, "
              f"{head.get('failed', 0)} failed, {head.get('planned', 0)} planned"
              + (", cancelled" if head.get("cancelled") else ""))
    out = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
           "<title>Loupe batch report</title><style>",
           "body{font:14px system-ui,sans-serif;margin:1.5em}"
           "table{border-collapse:collapse;width:100%}"
           "td,th{border-bottom:1px solid #ddd;padding:6px;vertical-align:top;text-align:left}"
           "img{max-width:240px;max-height:240px}.failed{background:#fff1f0}"
           ".outcome{font-weight:600}.failed .outcome{color:#b00020}"
           "ol{margin:0;padding-left:1.2em}.none{color:#999}",
           "</style></head><body><h1>Loupe batch report</h1>",
           f"<p id='counts'>{_e(counts)}</p>"]
    instruction = next((r.get("instruction") for r in rows if r.get("instruction")), None)
    if instruction:
        out.append(f"<p>Instruction: <q>{_e(instruction)}</q></p>")
    out.append("<table><thead><tr><th>Photo</th><th>Before</th><th>After</th><th>Outcome"
               "</th><th>Steps</th><th>Critic</th><th>Seconds</th></tr></thead><tbody>")
    for row in rows:
        rel = str(row.get("path"))
        outcome = str(row.get("outcome"))
        steps = "".join(f"<li>{_e(s)}</li>" for s in row.get("steps") or [])
        verdict = []
        for v in row.get("verdict") or []:
            if not isinstance(v, dict):
                continue
            score = v.get("score")
            reasons = "; ".join(str(r) for r in v.get("reasons") or [])
            verdict.append(f"<li>{_e(v.get('status'))}"
                           + (f", {_e(score)}/10" if score is not None else "")
                           + (f" — {_e(reasons)}" if reasons else "") + "</li>")
        score = row.get("score")
        out.append(
            f"<tr class='{_e(outcome)}' data-path='{_e(rel)}'><td>{_e(rel)}</td>"
            f"<td>{_thumb(dest, rel, 0, inline)}</td><td>{_thumb(dest, rel, 1, inline)}</td>"
            f"<td><span class='outcome'>{_e(outcome)}</span><br>{_e(row.get('reason'))}</td>"
            f"<td><ol>{steps}</ol></td>"
            f"<td>{'' if score is None else _e(score)}<ol>{''.join(verdict)}</ol></td>"
            f"<td>{_e(row.get('seconds'))}</td></tr>")
    out.append("</tbody></table></body></html>")
    return "\n".join(out)
