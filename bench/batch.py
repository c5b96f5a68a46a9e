"""Batch throughput: photos per minute at 12 MP as a plain single process (no Ray) and
with N Ray workers (default 1 and 2), for a global edit, an object removal and Autopilot,
and the CPU time every process burnt per photo.

Usage::

    .venv/bin/python bench/batch.py [--photos 12] [--size 4000x3000] [--threads 1]
        [--modes global,removal,autopilot] [--simulations 4] [--workers 1,2]
    # a many-core machine, the scaling curve in one command:
    .venv/bin/python bench/batch.py --modes global --photos 64 --workers 1,2,4,8,16

What is measured. Every run is a fresh process timed from its start to its exit
(interpreter, imports, Ray's start and its workers' first imports included: *cold*), with
the same thread settings (``--threads`` per process: OpenCV, BLAS, OpenMP, torch pinned by
``agent.batch_task.pin_threads``): ``single`` runs ``agent.batch_task.edit_photo`` on each
photo in one process and writes the results as the driver does; ``ray_N`` runs ``python -m
agent batch --workers N``; ``plain_xN`` (the ceiling; N = the most workers asked, when
above 1) runs N plain single processes side by side, each on every N-th photo: what N
cores give with no Ray at all. ``*_steady`` rates leave out Ray's start; ``*_warm`` rates
are what a long batch sees once every worker runs: the single process's photos over the
seconds spent on them (imports left out), a Ray run's photos finished after the N-th over
the time from the N-th to the last (``--photos`` must exceed N). Peak memory per worker is
each worker process's peak resident set.

CPU: while a run goes its process tree is sampled every 0.2 s (psutil) and each process's
CPU time (user + system) is kept, split into ``driver`` (``python -m agent batch``),
``workers`` (Ray's task processes) and ``ray_daemons`` (GCS, raylet, the dashboard head,
the autoscaler monitor, the log monitor, the dashboard and runtime-env agents, each also
by name), per photo. The driver's and the daemons' CPU is what keeps N workers from N
times one worker's rate on N otherwise idle cores. The load average is printed with every
run.

The photos are ``assets/scene-4k.jpg`` resized to ``--size`` with a little noise per copy
(so no two are the same file). The last printed line is one JSON object: ``size``,
``photos``, ``threads``, ``cpus``, ``workers``, ``loadavg_before``/``loadavg_after``, and
per mode ``photos_per_min_single`` (+ ``_warm``), ``photos_per_min_ray_N`` (+ ``_steady``,
``_warm``), ``photos_per_min_plain_xN``, ``speedup_1_to_N`` (+ ``_steady``, ``_warm``),
``ray_overhead`` (1 − ray_1 / single; + ``_steady``, ``_warm``; ``_cpu``: ray_1's total
CPU per photo over the single process's, − 1), ``ray_start_s_N``,
``cpu_per_photo_s`` (per run: driver, workers, ray_daemons, total; daemons by name),
``cpu_bound_speedup_1_to_N`` (min(N, cores) × ray_1's worker CPU per photo / ray_N's total
CPU per photo: the 1→N ratio a machine whose cores nothing else uses would give at this
batch size, from CPU times, which the load of other jobs hardly changes), ``loadavg_N``,
``peak_worker_mb``, ``peak_single_mb``; plus ``speedup_1_to_2_global``,
``ray_overhead_global`` (and ``_warm``) at the top level when those runs were made.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
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


def single(src: str, dest: str, mode: str, threads: int, simulations: int,
           part: str = "0/1") -> None:
    """The plain single process (no Ray): the batch's task, photo by photo (``part``
    ``i/n``: only every n-th photo from the i-th, for the side-by-side ceiling)."""
    from agent.batch import job_settings
    from agent.batch_files import scan
    from agent.batch_task import edit_photo, pin_threads
    from pipelines.files import atomic_write

    pin_threads(threads)
    index, parts = (int(v) for v in part.split("/"))
    job = job_settings(MODES[mode], autopilot=mode == "autopilot", threads=threads,
                       iterations=1, simulations=simulations, depth=1)
    failed, total, done = 0, 0.0, 0
    for photo in scan(src)[index::parts]:
        start = time.perf_counter()
        result = edit_photo(photo.path.read_bytes(), photo.path.name, job)
        if result["outcome"] != "done":
            failed += 1
            print(f"{photo.rel}: {result['reason']}", file=sys.stderr)
            continue
        atomic_write(Path(dest) / photo.rel, result["output"])
        total += time.perf_counter() - start
        done += 1
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"failed": failed, "done": done, "peak_mb": round(usage.ru_maxrss / 1024, 1),
                      "photo_seconds": round(total, 3),
                      "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}))


def _env(threads: int) -> dict[str, str]:
    # the repository first, anything the caller put on the path kept after it
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    env.update({v: str(threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                          "MKL_NUM_THREADS")})
    return env


_AGENTS = ("DashboardAgent", "RuntimeEnvAgent")
#: (a piece of the command line, the name reported), the first match wins
_DAEMONS = (("gcs_server", "gcs_server"), ("raylet/raylet", "raylet"),
            ("log_monitor.py", "log_monitor"), ("autoscaler/_private/monitor.py", "monitor"),
            ("dashboard/dashboard.py", "dashboard"), ("dashboard/agent.py", "DashboardAgent"),
            ("runtime_env/agent", "RuntimeEnvAgent"), ("ray_process_reaper.py", "reaper"))


def _kind(cmdline: list[str]) -> str:
    """``workers`` or the daemon's short name, from a Ray process's command line."""
    text = " ".join(cmdline)
    if text.startswith("ray::"):
        return next((a for a in _AGENTS if a in text), "workers")
    if "default_worker.py" in text:  # a worker before it renames itself
        return "workers"
    for piece, name in _DAEMONS:
        if piece in text:
            return name
    return Path(cmdline[0]).name if cmdline else ""


class TreeCPU:
    """Samples the CPU time of a process and all its descendants every ``interval``
    seconds, keeping each process's last value (a process that lives less than one
    interval may be missed; one that ends loses at most its last interval)."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        import psutil

        self.psutil, self.root = psutil, pid
        self.cpu: dict[int, tuple[str, float]] = {}
        self.interval = interval
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        try:
            root = self.psutil.Process(self.root)
            procs = [root, *root.children(recursive=True)]
        except self.psutil.Error:
            return
        for proc in procs:
            try:
                times = proc.cpu_times()
                kind = "driver" if proc.pid == self.root else _kind(proc.cmdline())
            except self.psutil.Error:
                continue
            prev = self.cpu.get(proc.pid, ("", 0.0))
            # a name once known stays (an ending process's command line reads empty); a
            # worker may turn out to be an agent once it renames itself
            if prev[0] not in ("", "other") and not (prev[0] == "workers" and kind in _AGENTS):
                kind = prev[0]
            self.cpu[proc.pid] = (kind or "other", max(prev[1], times.user + times.system))

    def _loop(self) -> None:
        while not self.stop.wait(self.interval):
            self._sample()

    def finish(self, photos: int) -> dict:
        """Stop; ``{driver, workers, ray_daemons, total}`` CPU seconds per photo and the
        daemons by name."""
        self.stop.set()
        self.thread.join()
        per: dict[str, float] = {}
        for kind, seconds in self.cpu.values():
            per[kind] = per.get(kind, 0.0) + seconds
        daemons = {k: v for k, v in per.items() if k not in ("driver", "workers")}
        n = max(1, photos)
        out = {"driver": per.get("driver", 0.0) / n, "workers": per.get("workers", 0.0) / n,
               "ray_daemons": sum(daemons.values()) / n}
        out["total"] = sum(out.values())
        out = {k: round(v, 3) for k, v in out.items()}
        out["daemons"] = {k: round(v / n, 3) for k, v in sorted(daemons.items())}
        return out


def _load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def _timed(cmd: list[str], threads: int, photos: int) -> tuple[float, dict, dict]:
    """Run ``cmd``: ``(wall seconds, its last line as JSON, CPU per photo)``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(threads), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    cpu = TreeCPU(proc.pid)
    out, err = proc.communicate(timeout=3600)
    wall = time.perf_counter() - start
    usage = cpu.finish(photos)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])}… failed ({proc.returncode}):\n{err[-3000:]}")
    return wall, json.loads(out.strip().splitlines()[-1]), usage


def _plain(src: Path, dest: Path, mode: str, count: int, threads: int, simulations: int,
           procs: int) -> tuple[float, list[dict]]:
    """``procs`` plain single processes side by side: ``(wall, their answers)``."""
    cmds = [[sys.executable, str(Path(__file__).resolve()), "--single", str(src), str(dest),
             "--mode", mode, "--threads", str(threads), "--simulations", str(simulations),
             "--part", f"{i}/{procs}"] for i in range(procs)]
    start = time.perf_counter()
    running = [subprocess.Popen(c, cwd=ROOT, env=_env(threads), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for c in cmds]
    answers = []
    for proc in running:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"single process failed ({proc.returncode}):\n{err[-3000:]}")
        answers.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - start
    if sum(a["done"] for a in answers) != count:
        raise SystemExit(f"{mode}: the single process(es) did not finish every photo")
    return wall, answers


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


def _say(line: str) -> None:
    print(f"{line}  [load {' '.join(map(str, _load()))}]", flush=True)


def run_mode(mode: str, src: Path, tmp: Path, count: int, threads: int, simulations: int,
             workers: list[int], ceiling: bool = True) -> dict:
    rate = lambda seconds: round(count * 60 / seconds, 2)  # noqa: E731
    wall, answers = _plain(src, tmp / f"{mode}-single", mode, count, threads, simulations, 1)
    info = answers[0]
    out: dict = {"photos_per_min_single": rate(wall),
                 "photos_per_min_single_warm": rate(info["photo_seconds"]),
                 "peak_single_mb": info["peak_mb"],
                 "cpu_per_photo_s": {"single": round(info["cpu_s"] / count, 3)},
                 "loadavg_single": _load()}
    _say(f"{mode} single: {out['photos_per_min_single']} photos/min "
         f"({out['photos_per_min_single_warm']} warm), CPU {info['cpu_s'] / count:.2f} s/photo")
    peaks = []
    for n in workers:
        dest = tmp / f"{mode}-ray{n}"
        options, instruction = _cli_args(mode, simulations)
        wall, summary, cpu = _timed([sys.executable, "-m", "agent", "batch", "--json",
                                     "--workers", str(n), "--threads", str(threads),
                                     *options, "--", str(src), str(dest), *instruction],
                                    threads, count)
        if summary["done"] != count:
            raise SystemExit(f"{mode} with {n} worker(s): {summary['failures']}")
        out[f"photos_per_min_ray_{n}"] = rate(wall)
        out[f"photos_per_min_ray_{n}_steady"] = rate(wall - summary["startup_s"])
        out[f"ray_start_s_{n}"] = round(summary["startup_s"], 2)
        peak, warm = _from_manifest(dest, n)
        peaks.append(peak)
        out[f"photos_per_min_ray_{n}_warm"] = warm
        out["cpu_per_photo_s"][f"ray_{n}"] = cpu
        out[f"loadavg_{n}"] = _load()
        _say(f"{mode} Ray {n} worker(s): {rate(wall)} photos/min ({warm} warm, start "
             f"{summary['startup_s']:.1f} s); CPU s/photo: driver {cpu['driver']}, workers "
             f"{cpu['workers']}, Ray daemons {cpu['ray_daemons']} {cpu['daemons']}")
    top = max(workers)
    if ceiling and top > 1:
        wall, answers = _plain(src, tmp / f"{mode}-plain{top}", mode, count, threads,
                               simulations, top)
        out[f"photos_per_min_plain_x{top}"] = rate(wall)
        _say(f"{mode} {top} plain processes side by side: {rate(wall)} photos/min")
    if 1 in workers:
        for n in workers:
            if n == 1:
                continue
            for suffix in ("", "_steady", "_warm"):
                one, many = out[f"photos_per_min_ray_1{suffix}"], \
                    out[f"photos_per_min_ray_{n}{suffix}"]
                if one and many:
                    out[f"speedup_1_to_{n}{suffix}"] = round(many / one, 2)
            # CPU-bound: one worker is limited by its own CPU (the driver and the daemons
            # fit on another core); N workers on N cores share them with everything
            total = out["cpu_per_photo_s"][f"ray_{n}"]["total"]
            if total:
                out[f"cpu_bound_speedup_1_to_{n}"] = round(
                    min(n, os.cpu_count() or 1) * out["cpu_per_photo_s"]["ray_1"]["workers"]
                    / total, 2)
        for suffix in ("", "_steady", "_warm"):
            one = out[f"photos_per_min_ray_1{suffix}"]
            base = out["photos_per_min_single_warm" if suffix == "_warm"
                       else "photos_per_min_single"]
            if one:
                out[f"ray_overhead{suffix}"] = round(1 - one / base, 3)
        cpu = out["cpu_per_photo_s"]
        if cpu["single"]:  # the CPU Ray adds per photo (driver, daemons, worker imports)
            out["ray_overhead_cpu"] = round(cpu["ray_1"]["total"] / cpu["single"] - 1, 3)
    out["peak_worker_mb"] = max(peaks)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--photos", type=int, default=12)
    parser.add_argument("--size", default="4000x3000")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--modes", default="global,removal,autopilot")
    parser.add_argument("--simulations", type=int, default=4)
    parser.add_argument("--workers", default="1,2",
                        help="Ray worker counts to run, e.g. 1,2,4,8,16")
    parser.add_argument("--no-ceiling", action="store_true",
                        help="skip the plain processes side by side")
    parser.add_argument("--single", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="global", help=argparse.SUPPRESS)
    parser.add_argument("--part", default="0/1", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single:
        single(*args.single, args.mode, args.threads, args.simulations, args.part)
        return
    workers = sorted({int(v) for v in args.workers.split(",") if v.strip()})
    if not workers or workers[0] < 1:
        parser.error("--workers takes counts of at least 1, e.g. 1,2")
    width, height = (int(v) for v in args.size.split("x"))
    load_before = _load()
    print(f"load average before: {load_before} on {os.cpu_count()} CPUs", flush=True)
    result: dict = {"size": args.size, "photos": args.photos, "threads": args.threads,
                    "cpus": os.cpu_count(), "workers": workers, "loadavg_before": load_before}
    with tempfile.TemporaryDirectory(prefix="loupe-bench-batch-") as tmp:
        src = Path(tmp) / "in"
        _photos(src, args.photos, (width, height))
        for mode in args.modes.split(","):
            result[mode] = run_mode(mode, src, Path(tmp), args.photos, args.threads,
                                    args.simulations, workers, not args.no_ceiling)
            print(f"{mode}: {json.dumps(result[mode])}", flush=True)
    if "global" in result:
        for key in ("speedup_1_to_2", "ray_overhead", "speedup_1_to_2_warm",
                    "ray_overhead_warm"):
            if key in result["global"]:
                result[f"{key.replace('_warm', '')}_global"
                       + ("_warm" if key.endswith("_warm") else "")] = result["global"][key]
    result["loadavg_after"] = _load()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
