"""Batch throughput: photos per minute at 12 MP as a plain single process (no Ray) and
with 1 and 2 Ray workers, for a global edit, an object removal and Autopilot.

Usage::

    .venv/bin/python bench/batch.py [--photos 4] [--size 4000x3000] [--threads 1]
        [--modes global,removal,autopilot] [--simulations 4]

Every run is a fresh process timed from its start to its exit (interpreter, imports,
Ray's start and its workers' first imports included), with the same thread settings
(``--threads`` per process: OpenCV, BLAS, OpenMP, torch pinned by
``agent.batch_task.pin_threads``): ``single`` runs ``agent.batch_task.edit_photo`` on each photo in
one process and writes the results as the driver does; ``ray_1``/``ray_2`` run
``python -m agent batch --workers N``. ``*_steady`` rates leave out Ray's start (the
cluster's, which a long batch pays once); ``*_warm`` rates are what a long batch sees
once every worker is running: the single process's photos over the seconds spent on them
(imports left out), a Ray run's photos finished after the N-th (N workers) over the time
from the N-th to the last (``--photos`` must exceed 2 for them). Peak memory per worker
is each worker process's peak resident set. The photos are ``assets/scene-4k.jpg`` resized to
``--size`` with a little noise per copy (so no two are the same file).

The last printed line is one JSON object: ``size``, ``photos``, ``threads``, ``cpus``,
``loadavg`` (before and after), and per mode ``photos_per_min_single``,
``photos_per_min_ray_1``, ``photos_per_min_ray_2``, ``photos_per_min_ray_1_steady``,
``photos_per_min_ray_2_steady``, ``speedup_1_to_2``, ``speedup_1_to_2_steady``,
``ray_overhead`` (1 − ray_1 / single), ``ray_overhead_steady``, ``ray_start_s``,
``photos_per_min_*_warm``, ``speedup_1_to_2_warm``, ``ray_overhead_warm``,
``peak_worker_mb`` and ``peak_single_mb``; plus ``speedup_1_to_2_global`` and
``ray_overhead_global`` at the top level.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODES = {"global": "make it warmer", "removal": "remove the red ball", "autopilot": None}


def _photos(folder: Path, count: int, size: tuple[int, int]) -> None:
    import cv2
    import numpy as np
    from PIL import Image

    base = np.asarray(Image.open(ROOT / "assets/scene-4k.jpg").convert("RGB"))
    base = cv2.resize(base, size, interpolation=cv2.INTER_CUBIC)
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    for i in range(count):
        noise = rng.integers(-2, 3, base.shape[:2] + (1,), dtype=np.int16)
        img = np.clip(base.astype(np.int16) + noise, 0, 255).astype(np.uint8)
        Image.fromarray(img).save(folder / f"photo-{i:02d}.jpg", quality=92)


def _cli_args(mode: str, simulations: int) -> tuple[list[str], list[str]]:
    """``(options, the instruction after IN OUT)`` for ``python -m agent batch``."""
    if mode == "autopilot":
        return ["--autopilot", "--iterations", "1", "--simulations", str(simulations),
                "--depth", "1"], []
    return [], [MODES[mode]]


def single(src: str, dest: str, mode: str, threads: int, simulations: int) -> None:
    """The plain single process (no Ray): the batch's task, photo by photo."""
    from agent.batch import job_settings
    from agent.batch_files import scan
    from agent.batch_task import edit_photo, pin_threads
    from pipelines.files import atomic_write

    pin_threads(threads)
    job = job_settings(MODES[mode], autopilot=mode == "autopilot", threads=threads,
                       iterations=1, simulations=simulations, depth=1)
    failed, total = 0, 0.0
    for photo in scan(src):
        start = time.perf_counter()
        result = edit_photo(photo.path.read_bytes(), photo.path.name, job)
        if result["outcome"] != "done":
            failed += 1
            print(f"{photo.rel}: {result['reason']}", file=sys.stderr)
            continue
        atomic_write(Path(dest) / photo.rel, result["output"])
        total += time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"failed": failed, "peak_mb": round(peak, 1),
                      "photo_seconds": round(total, 3)}))


def _env(threads: int) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.update({v: str(threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                          "MKL_NUM_THREADS")})
    return env


def _timed(cmd: list[str], threads: int) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(threads), capture_output=True, text=True,
                          timeout=3600)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])}… failed ({proc.returncode}):\n"
                         f"{proc.stderr[-3000:]}")
    return wall, json.loads(proc.stdout.strip().splitlines()[-1])


def _from_manifest(out: Path, workers: int) -> tuple[float, float | None]:
    """The peak memory of any worker, and the warm rate: photos per minute between the
    ``workers``-th finished photo and the last (every worker started and warm)."""
    peaks: dict[int, float] = {}
    times = []
    manifest = out / ".loupe-batch" / "manifest.jsonl"
    for line in manifest.read_text().splitlines():
        entry = json.loads(line)
        times.append(float(entry["finished_at"]))
        if entry.get("pid") is not None and entry.get("peak_rss_mb") is not None:
            peaks[entry["pid"]] = max(peaks.get(entry["pid"], 0.0), entry["peak_rss_mb"])
    times.sort()
    warm = None
    if len(times) > workers and times[-1] > times[workers - 1]:
        warm = round((len(times) - workers) * 60 / (times[-1] - times[workers - 1]), 2)
    return (max(peaks.values()) if peaks else 0.0), warm


def run_mode(mode: str, src: Path, tmp: Path, count: int, threads: int,
             simulations: int) -> dict:
    rate = lambda seconds: round(count * 60 / seconds, 2)  # noqa: E731
    wall, info = _timed([sys.executable, str(Path(__file__).resolve()), "--single", str(src),
                         str(tmp / f"{mode}-single"), "--mode", mode, "--threads",
                         str(threads), "--simulations", str(simulations)], threads)
    out: dict = {"photos_per_min_single": rate(wall),
                 "photos_per_min_single_warm": rate(info["photo_seconds"]),
                 "peak_single_mb": info["peak_mb"]}
    peaks = []
    for workers in (1, 2):
        dest = tmp / f"{mode}-ray{workers}"
        options, instruction = _cli_args(mode, simulations)
        wall, summary = _timed([sys.executable, "-m", "agent", "batch", "--json",
                                "--workers", str(workers), "--threads", str(threads),
                                *options, "--", str(src), str(dest), *instruction], threads)
        if summary["done"] != count:
            raise SystemExit(f"{mode} with {workers} worker(s): {summary['failures']}")
        out[f"photos_per_min_ray_{workers}"] = rate(wall)
        out[f"photos_per_min_ray_{workers}_steady"] = rate(wall - summary["startup_s"])
        out[f"ray_start_s_{workers}"] = round(summary["startup_s"], 2)
        peak, warm = _from_manifest(dest, workers)
        peaks.append(peak)
        out[f"photos_per_min_ray_{workers}_warm"] = warm
    out["speedup_1_to_2"] = round(out["photos_per_min_ray_2"] / out["photos_per_min_ray_1"], 2)
    out["speedup_1_to_2_steady"] = round(out["photos_per_min_ray_2_steady"]
                                         / out["photos_per_min_ray_1_steady"], 2)
    out["ray_overhead"] = round(1 - out["photos_per_min_ray_1"]
                                / out["photos_per_min_single"], 3)
    out["ray_overhead_steady"] = round(1 - out["photos_per_min_ray_1_steady"]
                                       / out["photos_per_min_single"], 3)
    if out["photos_per_min_ray_1_warm"] and out["photos_per_min_ray_2_warm"]:
        out["speedup_1_to_2_warm"] = round(out["photos_per_min_ray_2_warm"]
                                           / out["photos_per_min_ray_1_warm"], 2)
        out["ray_overhead_warm"] = round(1 - out["photos_per_min_ray_1_warm"]
                                         / out["photos_per_min_single_warm"], 3)
    out["peak_worker_mb"] = max(peaks)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--photos", type=int, default=4)
    parser.add_argument("--size", default="4000x3000")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--modes", default="global,removal,autopilot")
    parser.add_argument("--simulations", type=int, default=4)
    parser.add_argument("--single", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="global", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single:
        single(*args.single, args.mode, args.threads, args.simulations)
        return
    width, height = (int(v) for v in args.size.split("x"))
    load_before = [round(v, 2) for v in os.getloadavg()]
    print(f"load average before: {load_before} on {os.cpu_count()} CPUs", flush=True)
    result: dict = {"size": args.size, "photos": args.photos, "threads": args.threads,
                    "cpus": os.cpu_count(), "loadavg_before": load_before}
    with tempfile.TemporaryDirectory(prefix="loupe-bench-batch-") as tmp:
        src = Path(tmp) / "in"
        _photos(src, args.photos, (width, height))
        for mode in args.modes.split(","):
            result[mode] = run_mode(mode, src, Path(tmp), args.photos, args.threads,
                                    args.simulations)
            print(f"{mode}: {json.dumps(result[mode])}", flush=True)
    if "global" in result:
        result["speedup_1_to_2_global"] = result["global"]["speedup_1_to_2"]
        result["ray_overhead_global"] = result["global"]["ray_overhead"]
        result["speedup_1_to_2_global_warm"] = result["global"].get("speedup_1_to_2_warm")
        result["ray_overhead_global_warm"] = result["global"].get("ray_overhead_warm")
    result["loadavg_after"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
