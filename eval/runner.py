"""The resumable evaluation runner: an agent over a dataset, turn by turn, local or Ray.

Each sample's record (all its turns) is appended to ``OUT/results.jsonl`` as soon as the
sample finishes, so a rerun skips the samples already there. Per turn the runner scores
the edit (PSNR/SSIM/LPIPS, their Otsu-masked forms, against the turn's input), the
ground truth when the dataset has one, HDD's IF/IC from the perceived state, and DLE's
measured rubric. ``summarize`` aggregates per turn and per type.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from eval import dle, hdd
from eval.datasets import Sample, Turn, load_dataset
from eval.hdd import SceneState, render
from eval.metrics import instruction_following, psnr, score_pair, ssim
from eval.systems import EditSystem, TurnContext, get_judge, get_system, system_name
from pipelines.images import load_image

log = logging.getLogger(__name__)

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
#: PSNR of identical images is infinite; averages cap it here (dB).
PSNR_CAP = 100.0
#: Metrics averaged in summaries (when present).
METRICS = ("psnr_om", "ssim_om", "lpips_om", "if", "ic", "psnr", "ssim", "lpips",
           "psnr_gt", "ssim_gt", "dle_if", "dle_vc", "seconds", "ok")


def _read_image(path: Path) -> np.ndarray:
    pixels = load_image(path).pixels
    return np.ascontiguousarray(pixels[..., :3]) if pixels.ndim == 3 else \
        np.stack([pixels] * 3, axis=-1)


def _read_mask(path: Path | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if path is None:
        return None
    pixels = _read_image(path)
    if pixels.shape[:2] != shape[:2]:
        pixels = cv2.resize(pixels, (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST)
    return pixels.max(axis=2) > 127


def _finite(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def score_turn(before: np.ndarray, after: np.ndarray, turn: Turn, sample: Sample,
               index: int, target: np.ndarray | None, lpips_side: int | None,
               judge: Any = None) -> dict[str, Any]:
    """Every measure of one turn (see the module doc); infinite values as ``"inf"``.
    With a ``judge`` (``eval.systems.get_judge``), also the offline instruction-following
    score of the turn: ``critic_if`` (0–1 or "cannot decide") and ``critic_followed``."""
    if after.shape[:2] != before.shape[:2]:
        after = cv2.resize(after, (before.shape[1], before.shape[0]),
                           interpolation=cv2.INTER_CUBIC)
    pair = score_pair(before, after, lpips_side=lpips_side, models=False)
    out: dict[str, Any] = {}
    for key, value in pair.items():
        out[key.replace("st_lpips", "lpips")] = value
    if "st_lpips" in pair:
        out["lpips_kind"] = "st_lpips"
    elif "lpips" in pair and pair["lpips"] != "unavailable":
        out["lpips_kind"] = "lpips"
    if target is not None:
        if target.shape[:2] != after.shape[:2]:
            target = cv2.resize(target, (after.shape[1], after.shape[0]),
                                interpolation=cv2.INTER_AREA)
        out["psnr_gt"], out["ssim_gt"] = psnr(target, after), ssim(target, after)
    if turn.state is not None and sample.meta.get("states"):
        out.update(_hdd_scores(after, sample.meta["states"][index - 1], turn.state))
    if sample.dataset == "dle" and target is not None:
        boxes = [tuple(b) for b in sample.meta.get("boxes", [])]
        graded = dle.evaluate(before, after, turn.instruction, boxes, reference=target)
        out.update(dle_if=graded["if_score"], dle_vc=graded["vc_score"],
                   dle_if_label=graded["if_label"], dle_vc_label=graded["vc_label"])
    if judge is not None:
        verdict = instruction_following(before, after, turn.instruction, judge,
                                        _read_mask(turn.mask, before.shape))
        out["critic_if"], out["critic_followed"] = verdict["if_score"], verdict["if_followed"]
    return {k: _finite(v) for k, v in out.items()}


def _hdd_scores(after: np.ndarray, previous: dict, target: dict) -> dict[str, Any]:
    aspect = after.shape[1] / after.shape[0]
    predicted = hdd.perceive(after)
    prev, goal = hdd.SceneState.from_json(previous), hdd.SceneState.from_json(target)
    return {"if": hdd.instruction_following(predicted, goal, prev, aspect),
            "ic": hdd.image_consistency(predicted, goal, prev, aspect),
            "objects_seen": len(predicted.objects)}


def evaluate_sample(sample: Sample, agent: str | EditSystem, *,
                    lpips_side: int | None = 1024,
                    save_images: Path | None = None,
                    agent_options: dict[str, Any] | None = None,
                    judge: str | None = None) -> dict[str, Any]:
    """Run one agent on one sample, turn by turn, and score every turn.

    Args:
        sample: the sample.
        agent: an ``EditSystem`` or a name registered in ``eval.systems``.
        lpips_side: LPIPS working long side (None = native).
        save_images: folder to write each turn's output into (``<id>/turn_<t>.png``).
        agent_options: keyword arguments for the agent's constructor.
        judge: a judge registered in ``eval.systems`` (e.g. ``"critic"``): each turn also
            gets its offline instruction-following score (no VLM needed).

    Returns:
        ``{"sample", "type", "dataset", "agent", "turns": [...], "error"}``; an agent
        failure is recorded (``error``) rather than raised.
    """
    record: dict[str, Any] = {"sample": sample.id, "type": sample.type,
                              "dataset": sample.dataset, "agent": system_name(agent),
                              "turns": [],
                              "error": None}
    judging = get_judge(judge) if judge else None
    if judge and judging is None:
        raise ValueError(f"no judge {judge!r} is registered")
    scratch = Path(tempfile.mkdtemp(prefix="loupe-eval-"))
    try:
        image = _read_image(sample.source)
        size = (image.shape[1], image.shape[0])
        run = get_system(agent, **(agent_options or {})).start(image, scratch)
        for index, turn in enumerate(sample.turns, start=1):
            target = _ground_truth(turn, size)
            started = time.perf_counter()
            output = run.turn(turn.instruction, _read_mask(turn.mask, image.shape),
                              TurnContext(index, target, turn.state, size))
            seconds = time.perf_counter() - started
            after = np.ascontiguousarray(output.image[..., :3])
            entry = {"turn": index, "instruction": turn.instruction, "ok": bool(output.ok),
                     "message": output.message[:500], "seconds": round(seconds, 3),
                     "type": _turn_type(turn, sample)}
            entry.update(score_turn(image, after, turn, sample, index, target, lpips_side,
                                    judging))
            record["turns"].append(entry)
            if save_images is not None:
                _save(after, save_images / sample.id / f"turn_{index}.png")
            image = after
    except Exception as exc:  # noqa: BLE001 - one bad sample must not stop a benchmark
        log.warning("sample %s failed: %s", sample.id, exc)
        record["error"] = f"{type(exc).__name__}: {exc}"[:1000]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return record


def _ground_truth(turn: Turn, size: tuple[int, int]) -> np.ndarray | None:
    """The turn's target image: the dataset's file, or an HDD state rendered at ``size``."""
    if turn.target:
        return _read_image(turn.target)
    if turn.state is not None:
        return render(SceneState.from_json(turn.state), size)
    return None


def _turn_type(turn: Turn, sample: Sample) -> str:
    if turn.commands:
        return "+".join(sorted({c["kind"] for c in turn.commands}))
    return sample.type or "all"


def _save(image: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    ok, data = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if ok:
        path.write_bytes(data.tobytes())


# --- results file ----------------------------------------------------------------------


def read_results(out: Path) -> list[dict[str, Any]]:
    """The records in ``out/results.jsonl`` (a torn last line from a crash is skipped)."""
    path = Path(out) / RESULTS
    if not path.is_file():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            log.warning("%s:%d is not JSON (an interrupted write?); skipped", path, number)
    return records


def _append(out: Path, record: dict[str, Any]) -> None:
    path = out / RESULTS
    torn = False
    if path.is_file() and path.stat().st_size:
        with open(path, "rb") as tail:
            tail.seek(-1, os.SEEK_END)
            torn = tail.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(("\n" if torn else "") + json.dumps(record) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


# --- engines ---------------------------------------------------------------------------


def _run_local(samples: list[Sample], agent: str | EditSystem, options: dict[str, Any],
               sink: Callable[[dict[str, Any]], None]) -> None:
    for sample in samples:
        sink(evaluate_sample(sample, agent, **options))


def _run_ray(samples: list[Sample], agent: str | EditSystem, options: dict[str, Any],
             sink: Callable[[dict[str, Any]], None], workers: int) -> None:
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        root = str(Path(__file__).resolve().parents[1])
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": path,
                                           "OMP_NUM_THREADS": "1"}})
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(evaluate_sample)
        pending = [task.remote(s, agent, **options) for s in samples]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                sink(ray.get(ref))
    finally:
        if started_here:
            ray.shutdown()


def run(dataset: str | Path, out: str | Path, *, agent: str | EditSystem = "embedded",
        engine: str = "local", workers: int = 1, limit: int | None = None,
        kind: str | None = None, lpips_side: int | None = 1024, save_images: bool = False,
        agent_options: dict[str, Any] | None = None, judge: str | None = None
        ) -> dict[str, Any]:
    """Evaluate ``agent`` on ``dataset``, resuming from ``out/results.jsonl``.

    Args:
        dataset: dataset folder or JSON file (see ``eval.datasets``).
        out: the run folder (created); holds ``results.jsonl`` and ``summary.json``.
        agent: an ``EditSystem``, or a name registered in ``eval.systems`` (results are
            recorded under the system's name).
        engine: ``"local"`` (in process, one sample at a time) or ``"ray"``.
        workers: Ray workers (CPUs given to the local Ray cluster).
        limit: only the first ``limit`` samples.
        kind: dataset format (detected when None).
        lpips_side: LPIPS working long side (None = native, 0 = skip LPIPS).
        save_images: also write every turn's output image under ``out/images``.
        agent_options: keyword arguments for the agent.
        judge: also score each turn's instruction following offline with this registered
            judge (``"critic"``: the agent's critic), for runs without a VLM.

    Returns:
        The summary (also written to ``out/summary.json``).
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"engine must be 'local' or 'ray', got {engine!r}")
    if workers < 1:
        raise ValueError("workers must be at least 1")
    get_system(agent, **(agent_options or {}))  # fail fast on an unknown system
    name = system_name(agent)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    samples = load_dataset(dataset, kind, limit=limit)
    done = {r["sample"] for r in read_results(out) if r.get("agent") == name}
    todo = [s for s in samples if s.id not in done]
    log.info("%d samples, %d already done, %d to run", len(samples), len(done), len(todo))
    if judge and get_judge(judge) is None:
        raise ValueError(f"no judge {judge!r} is registered")
    options = {"lpips_side": lpips_side, "agent_options": agent_options, "judge": judge,
               "save_images": (out / "images") if save_images else None}
    config = {"dataset": str(dataset), "agent": name, "engine": engine, "workers": workers,
              "limit": limit, "lpips_side": lpips_side}
    (out / "run.json").write_text(json.dumps(config, indent=1))
    started = time.perf_counter()
    sink = _sink(out)
    if engine == "ray":
        _run_ray(todo, agent, options, sink, workers)
    else:
        _run_local(todo, agent, options, sink)
    records = [r for r in read_results(out) if r.get("agent") == name]
    summary = summarize(records)
    summary.update(run_seconds=round(time.perf_counter() - started, 3), ran=len(todo),
                   resumed=len(done), **config)
    (out / SUMMARY).write_text(json.dumps(summary, indent=1))
    return summary


def _sink(out: Path) -> Callable[[dict[str, Any]], None]:
    def sink(record: dict[str, Any]) -> None:
        _append(out, record)
        log.info("sample %s done%s", record["sample"],
                 f" (error: {record['error']})" if record.get("error") else "")
    return sink


# --- aggregation -----------------------------------------------------------------------


def _number(value: Any, key: str) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if value == "inf" and key.startswith("psnr"):
        return PSNR_CAP
    return None


def _mean_table(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    sums: dict[str, list[float]] = defaultdict(list)
    count = 0
    for row in rows:
        count += 1
        for key in METRICS:
            value = _number(row.get(key), key)
            if value is not None:
                sums[key].append(min(value, PSNR_CAP) if key.startswith("psnr") else value)
    table: dict[str, Any] = {k: round(sum(v) / len(v), 6) for k, v in sums.items()}
    table["n"] = count
    return table


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Means per turn, per type and overall (PSNR capped at ``PSNR_CAP`` dB)."""
    turns = [t for r in records for t in r.get("turns", [])]
    per_turn: dict[int, list] = defaultdict(list)
    per_type: dict[str, list] = defaultdict(list)
    for turn in turns:
        per_turn[int(turn["turn"])].append(turn)
        per_type[str(turn.get("type") or "all")].append(turn)
    kinds = {t.get("lpips_kind") for t in turns if t.get("lpips_kind")}
    return {"samples": len(records), "errors": sum(1 for r in records if r.get("error")),
            "lpips_kind": ",".join(sorted(kinds)) or "unavailable",
            "overall": _mean_table(turns),
            "per_turn": {str(k): _mean_table(v) for k, v in sorted(per_turn.items())},
            "per_type": {k: _mean_table(v) for k, v in sorted(per_type.items())}}


def sample_to_json(sample: Sample) -> dict[str, Any]:
    """A sample as plain JSON (paths as strings), for logs and Ray payloads."""
    data = asdict(sample)
    data["source"] = str(sample.source)
    for turn in data["turns"]:
        for key in ("target", "mask"):
            turn[key] = str(turn[key]) if turn[key] else None
    return data
