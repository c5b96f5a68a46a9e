"""The Benchmark tab's calls: score one pair, run a benchmark on a dataset."""

from __future__ import annotations

import secrets
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import agent.systems  # noqa: F401  (registers the embedded and direct systems)
from agent.session import SessionError
from eval import report, runner
from eval.datasets import load_dataset
from eval.hdd import make_dataset
from eval.metrics import score_pair
from eval.systems import system_names
from pipelines.archives import ArchiveError, check_members, extract, open_zip
from pipelines.config import get_settings
from pipelines.images import image_header, load_image
from pipelines.progress import ProgressFn
from pipelines.redact import hide_paths
from web.masks import load_mask_file, parse_bbox
from web.views import rounded


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist() if value.size <= 64 else f"array{value.shape}"
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def score_files(before: Any, after: Any, *, mask: Any = None, bbox: str | None = "",
                instruction: str = "") -> dict:
    """Score one before/after pair with ``eval.metrics.score_pair``.

    Args:
        before, after: images (paths/bytes/arrays) of the same size.
        mask: optional mask image of the edited area (white = edited, any size).
        bbox: optional ``"x0,y0,x1,y1"``.
        instruction: optional instruction text.

    Returns:
        The metrics as a JSON-able dict.
    """
    if before is None or after is None:
        raise SessionError("Give both a before and an after image.")
    try:
        a, b = load_image(before).pixels, load_image(after).pixels
    except ValueError as exc:
        raise SessionError(str(exc)) from exc
    if a.shape[:2] != b.shape[:2]:
        raise SessionError(f"The images differ in size ({a.shape[1]}×{a.shape[0]} vs "
                           f"{b.shape[1]}×{b.shape[0]}).")
    m = load_mask_file(mask, a.shape[:2]) if mask else None
    scores = score_pair(a[..., :3], b[..., :3], mask=m, bbox=parse_bbox(bbox),
                        instruction=(instruction or None))
    return _jsonable(scores)


MINI_HDD = {"sessions": 3, "turns": 2, "size": (384, 216), "seed": 0}


#: most samples an uploaded dataset may hold (the CLI runs any number)
MAX_UPLOAD_SAMPLES = 200


IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".bmp", ".gif"})


KEEP_BENCHMARK_RUNS = 10


_MINI_LOCK = threading.Lock()


@dataclass
class BenchmarkView:
    """What the Benchmark tab shows after a run."""

    table: list[list[Any]]
    headers: list[str]
    per_turn: list[list[Any]]
    per_turn_headers: list[str]
    plot: Path | None
    csv_path: Path
    json_path: Path
    summary: dict
    rows: list[dict] = field(default_factory=list)


#: what each edit system is, for the Benchmark tab's choice (the agent first, baselines
#: labelled as such); a system registered by a plugin is listed under its own name
SYSTEM_LABELS = {
    "embedded": "Loupe's agent (embedded)",
    "direct": "direct — baseline: one whole-frame edit at about 1 MP per turn",
    "identity": "identity — baseline: returns the photo unchanged",
    "oracle": "oracle — reference: the dataset's own targets (checks the measures)",
}
#: the configuration a newcomer's first run measures
DEFAULT_AGENT = "embedded"


def benchmark_agents() -> list[str]:
    """Edit systems the benchmark can run (registered in ``eval.systems``), the agent first."""
    names = system_names()
    return sorted(names, key=lambda n: (n != DEFAULT_AGENT, n not in SYSTEM_LABELS, n))


def benchmark_choices() -> list[tuple[str, str]]:
    """``(label, name)`` for each edit system, the agent first and baselines labelled."""
    return [(SYSTEM_LABELS.get(n, n), n) for n in benchmark_agents()]


def mini_dataset() -> Path:
    """The bundled mini HDD set, rendered on first use under the data folder."""
    folder = get_settings().data_dir / "benchmarks" / "mini-hdd"
    with _MINI_LOCK:
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            make_dataset(folder, **MINI_HDD)
            (folder / ".complete").touch()
    return folder


def unpack_dataset(archive: str | Path, dest: Path, label: str | None = None) -> Path:
    """Unzip an uploaded dataset safely (``pipelines.archives``: no paths outside ``dest``,
    no links or duplicates, inflated bytes capped, image headers within the pixel limit,
    staged so that a refusal leaves nothing behind).

    Args:
        archive: the ``.zip`` on disk.
        dest: the folder to create.
        label: the archive's name as the user gave it (default: its file name).

    Returns:
        The dataset root (the single top folder when the archive has one).
    """
    label = label or Path(str(archive)).name
    limit = int(get_settings().max_dataset_mb * 1024 ** 2)   # LOUPE_MAX_DATASET_MB
    try:
        with open_zip(archive, label) as zf:
            infos = check_members(zf.infolist(), limit, label=label)
            extract(zf, infos, dest, limit, inspect=_image_within_limit)
    except ArchiveError as exc:
        raise SessionError(str(exc)) from exc
    entries = [p for p in dest.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest


def _image_within_limit(info: Any, head: bytes) -> None:
    """Refuse an archived image whose header is over the pixel limit (before it inflates)."""
    header = image_header(head) if Path(info.filename).suffix.lower() in IMAGE_SUFFIXES \
        else None
    limit = get_settings().max_pixels
    if header is not None and header[1] * header[2] > limit:
        raise ArchiveError(f"the archive's {info.filename} is {header[1]}x{header[2]}, more "
                           f"than the {limit / 1e6:g}-MP limit (LOUPE_MAX_PIXELS)")


def run_benchmark(archive: Any = None, *, agent: str = "embedded",
                  progress: ProgressFn | None = None, label: str | None = None
                  ) -> BenchmarkView:
    """Run ``eval.runner`` on the bundled mini HDD set (``archive=None``) or an upload.

    Args:
        archive: a ``.zip`` of a dataset in any format ``eval.datasets`` reads, or None.
        agent: a name from :func:`benchmark_agents`.
        progress: called with ``(fraction, text)`` after each sample.
        label: the archive's name as the user gave it (messages never name server paths).

    Returns:
        Per-sample-and-turn table, per-turn means, the curves plot and CSV/JSON reports.
        A run that fails leaves no files behind.
    """
    if agent not in benchmark_agents():
        raise SessionError(f"Unknown agent configuration {str(agent)[:40]!r}.")
    run_dir = get_settings().data_dir / "benchmarks" / f"run-{secrets.token_hex(6)}"
    try:
        dataset = mini_dataset() if not archive else unpack_dataset(archive, run_dir / "data",
                                                                   label)
        total = len(load_dataset(dataset))
        if archive and total > MAX_UPLOAD_SAMPLES:
            raise SessionError(f"The dataset has {total} samples; the app runs at most "
                               f"{MAX_UPLOAD_SAMPLES} (use `python -m eval run` for more).")
        for i in range(1, total + 1):  # the runner resumes: one more sample per call
            if progress:
                progress((i - 1) / total, f"sample {i}/{total}")
            summary = runner.run(dataset, run_dir / "out", agent=agent, limit=i,
                                 lpips_side=256)
        written = report.write_reports(run_dir / "out")
    except BaseException as exc:
        shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(exc, SessionError):
            raise
        if isinstance(exc, ValueError):
            raise SessionError(f"Could not run that benchmark: {hide_paths(exc)}") from None
        raise
    _prune_runs(run_dir.parent, keep=KEEP_BENCHMARK_RUNS)
    if progress:
        progress(1.0, "done")
    records = runner.read_results(run_dir / "out")
    headers, table = _turn_table(records)
    turn_headers = ["turn", *[k for k in runner.METRICS if any(
        k in t for t in summary["per_turn"].values())], "n"]
    per_turn = [[turn, *[t.get(k) for k in turn_headers[1:]]]
                for turn, t in summary["per_turn"].items()]
    by_name = {p.name: p for p in written}
    return BenchmarkView(table, headers, per_turn, turn_headers, by_name.get("curves.png"),
                         by_name["report.csv"], by_name["report.json"],
                         _jsonable({k: summary.get(k) for k in (
                             "samples", "errors", "overall", "agent", "run_seconds")}),
                         records)


def _prune_runs(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest benchmark runs."""
    runs = sorted(folder.glob("run-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in runs[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def _turn_table(records: list[dict]) -> tuple[list[str], list[list[Any]]]:
    keys = ["psnr_om", "ssim_om", "lpips_om", "if", "ic", "seconds", "ok"]
    headers = ["sample", "turn", "instruction", *keys]
    rows = []
    for record in records:
        for turn in record.get("turns", []):
            rows.append([record.get("sample"), turn.get("turn"),
                         str(turn.get("instruction", ""))[:80],
                         *[rounded(turn.get(k)) if not isinstance(turn.get(k), bool)
                           else turn.get(k) for k in keys]])
        if record.get("error"):
            rows.append([record.get("sample"), "-", f"error: {hide_paths(record['error'])}",
                         *[None] * len(keys)])
    return headers, rows


# ----------------------------------------------------------------------------- display

#: Column names people read, for the keys of ``eval.runner`` results.
HEADERS = {
    "sample": "Sample", "turn": "Turn", "instruction": "Instruction",
    "psnr_om": "PSNR outside the edit (dB)", "ssim_om": "SSIM outside the edit",
    "lpips_om": "LPIPS outside the edit (lower is better)", "if": "Instruction followed",
    "ic": "Image consistency", "psnr": "PSNR (dB)", "ssim": "SSIM",
    "lpips": "LPIPS (lower is better)", "psnr_gt": "PSNR vs target (dB)",
    "ssim_gt": "SSIM vs target", "dle_if": "Small-object instruction score",
    "dle_vc": "Small-object visual consistency", "seconds": "Time (s)", "ok": "Done",
    "n": "Turns", "om_background": "Share of the photo judged unchanged",
    "st_lpips": "ST-LPIPS (lower is better)", "st_lpips_om": "ST-LPIPS outside the edit",
    "st_lpips_outside": "ST-LPIPS outside the box", "psnr_outside": "PSNR outside the box (dB)",
    "ssim_outside": "SSIM outside the box", "edit_area": "Edited share of the photo",
    "clip_i": "CLIP image similarity", "dino": "DINO image similarity",
    "clip_t": "CLIP text match", "vqascore": "VQAScore", "cif": "Instruction check (CIF)",
}
_DIGITS = {"psnr": 1, "ssim": 3, "lpips": 3, "st_lpips": 3, "if": 2, "ic": 2, "dle": 2,
           "seconds": 2, "ok": 2, "om_background": 2, "edit_area": 3}
INFINITY_NOTE = ("∞: nothing changed outside the edit (identical pixels). Means count ∞ "
                 f"as {runner.PSNR_CAP:g} dB.")


def header(key: str) -> str:
    """A column's name in words (the key itself when unknown)."""
    return HEADERS.get(key, key.replace("_", " ").capitalize())


def display_value(key: str, value: Any, *, mean: bool = False) -> Any:
    """One figure as shown: rounded for its metric, ∞ for infinite PSNR, — for none.

    Args:
        key: the metric's key (``psnr_om``, ``ssim``…).
        value: the value (number, ``"inf"``, bool, text or None).
        mean: the value is a mean in which ∞ counted as ``PSNR_CAP``.
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value in ("inf", float("inf")) or (
            mean and key.startswith("psnr") and isinstance(value, (int, float))
            and value >= runner.PSNR_CAP):
        return "∞"
    if isinstance(value, (int, float)):
        if key in ("turn", "n", "sample"):
            return int(value)
        digits = next((d for prefix, d in _DIGITS.items() if key.startswith(prefix)), 3)
        return f"{float(value):.{digits}f}"
    return value


def display_tables(view: BenchmarkView) -> tuple[list[str], list[list[Any]], list[str],
                                                 list[list[Any]]]:
    """The results and per-turn tables with headers in words and rounded figures.

    Returns:
        ``(headers, rows, per-turn headers, per-turn rows)``.
    """
    rows = [[display_value(k, v) for k, v in zip(view.headers, row)] for row in view.table]
    turns = [[display_value(k, v, mean=True) for k, v in zip(view.per_turn_headers, row)]
             for row in view.per_turn]
    return ([header(k) for k in view.headers], rows,
            [header(k) for k in view.per_turn_headers], turns)


def summary_markdown(summary: dict) -> str:
    """The run's summary in a few lines of Markdown (rounded, ∞ where PSNR is unbounded)."""
    overall = summary.get("overall") or {}
    lines = [f"**{summary.get('samples', 0)} sample(s)**, {summary.get('errors', 0)} error(s)"
             f" · agent: {summary.get('agent', '?')}"
             + (f" · {float(summary['run_seconds']):.1f} s" if isinstance(
                 summary.get("run_seconds"), (int, float)) else "")]
    shown = [(header(k), display_value(k, v, mean=True)) for k, v in overall.items()
             if k in runner.METRICS]
    if shown:
        lines.append("| " + " | ".join(h for h, _ in shown) + " |")
        lines.append("|" + "---|" * len(shown))
        lines.append("| " + " | ".join(str(v) for _, v in shown) + " |")
    if any(v == "∞" for _, v in shown) or any(
            display_value(k, v, mean=True) == "∞" for k, v in overall.items()):
        lines.append("")
        lines.append(INFINITY_NOTE)
    return "\n".join(lines)


def score_rows(scores: dict) -> list[list[Any]]:
    """One pair's scores as ``[measure, value]`` rows in words (∞ for identical pixels).

    ``score_files`` reports an infinite PSNR as null (JSON has no infinity); here it is ∞.
    """
    rows = []
    for key, value in scores.items():
        if value is None and key.startswith("psnr"):
            shown: Any = "∞"
        elif value == "unavailable":
            shown = "not available (no model)"
        else:
            shown = display_value(key, value)
        rows.append([header(key), shown])
    return rows
