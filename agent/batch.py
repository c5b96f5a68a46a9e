"""Batch editing: a folder in, a folder out, resumable, on one machine or a Ray cluster.

``run_batch(IN, OUT, "make it warmer")`` edits every photo under ``IN`` (recursively:
JPEG, PNG, WebP and TIFF; links are not followed; an ``OUT`` inside ``IN`` is never read)
with the same agent, planner, localiser and critic as the Edit tab, and writes each result
to ``OUT`` under the same relative path, in the original format and JPEG quality, with
its ICC profile and EXIF (pixels upright, Orientation 1), exactly the bytes a single-photo
edit (``python -m agent edit PHOTO "…" --out X``) writes.

One code path: each photo is one Ray task, ``edit_photo(bytes, name, job)``, a pure
function of the photo's bytes, the instruction and the settings that returns the encoded
result and its turn record. Ray runs locally by default (one worker per core, or
``workers``) or joins a cluster (``ray_address``; ``"auto"`` finds a running one). Ray
retries a task whose worker died; a photo that fails (unreadable, too large, target not
found, a choice needed, the critic failed after retries) is recorded with its reason and
the others go on. Every worker pins its thread counts (OpenCV, BLAS, OpenMP, torch) to
``threads`` so that workers do not fight over cores.

Only the driver writes into ``OUT``, each file atomically (``pipelines.files
.atomic_write``), and it appends one line per finished photo to the manifest
``OUT/.loupe-batch/manifest.jsonl`` (input checksum, instruction, settings, outcome,
critic score, seconds, the turn record), fsynced, after the photo's file. A kill -9 of
the driver or a worker at any moment leaves no half-written output and loses no finished
photo: ``resume=True`` skips the photos already recorded with the same checksum and
settings, redoes changed ones, and with nothing left returns at once without starting
Ray. The report (``OUT/batch-report.{html,csv,json}``, ``agent.batch_report``) lists
failures first, with before/after thumbnails, each step and the critic's verdict.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from agent.batch_files import (
    FORWARDED_ENV,
    MANIFEST,
    STATE_DIR,
    TASK_VERSION,
    THREAD_VARS,
    BatchError,
    Photo,
    append_entry,
    mask_for,
    read_manifest,
    remove_torn_writes,
    scan,
    sha256_file,
    thumb_names,
)
from agent.batch_report import write_report
from agent.session import SessionError
from agent.session.inputs import check_instruction
from pipelines.files import atomic_write

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- the driver


@dataclass
class BatchSummary:
    """What a batch did (also the API's answer)."""

    total: int = 0
    done: int = 0
    failed: int = 0
    planned: int = 0
    skipped: int = 0
    ran: int = 0
    seconds: float = 0.0
    startup_s: float = 0.0
    cancelled: bool = False
    ray: str = ""
    failures: list[dict[str, str]] = field(default_factory=list)
    report: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.cancelled

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "done": self.done, "failed": self.failed,
                "planned": self.planned, "skipped": self.skipped, "ran": self.ran,
                "seconds": round(self.seconds, 3), "startup_s": round(self.startup_s, 3),
                "cancelled": self.cancelled,
                "ray": self.ray, "failures": self.failures, "report": self.report}


ProgressCall = Callable[[int, int, str], None]


def parse_point(text: str | None) -> list[float] | None:
    """``"X,Y"`` → ``[x, y]`` (fractions of the width/height when both are ≤ 1, else
    pixels of the upright photo); None for None/empty."""
    if text is None or not str(text).strip():
        return None
    try:
        x, y = (float(v) for v in str(text).split(","))
    except ValueError:
        raise BatchError(f"--point must be X,Y (two numbers), got {str(text)[:40]!r}") from None
    if not (np.isfinite(x) and np.isfinite(y)) or x < 0 or y < 0:
        raise BatchError("--point must be two non-negative numbers")
    return [x, y]


def job_settings(instruction: str | None, *, autopilot: bool = False, mood: str | None = None,
                 point: list[float] | None = None, dry_run: bool = False, threads: int = 1,
                 iterations: int = 2, simulations: int = 8, depth: int = 2,
                 seed: int = 0) -> dict[str, Any]:
    """The settings every photo's task gets (and the manifest records), checked."""
    if autopilot:
        if mood is not None and len(str(mood)) > 200:
            raise BatchError("the mood is too long (200 characters at most)")
        return {"autopilot": True, "mood": (mood or "").strip() or None, "point": point,
                "iterations": int(iterations), "simulations": int(simulations),
                "depth": int(depth), "seed": int(seed), "dry_run": bool(dry_run),
                "threads": int(threads), "version": TASK_VERSION}
    try:
        text = check_instruction(instruction)
    except SessionError as err:
        raise BatchError(str(err)) from None
    return {"instruction": text, "point": point, "dry_run": bool(dry_run),
            "threads": int(threads), "version": TASK_VERSION}


def read_references(paths: list[str | os.PathLike] | None) -> list[tuple[bytes, str]]:
    """The reference photos' bytes and names, each checked like an upload (size, pixels,
    format) before any photo is touched.

    Raises:
        BatchError: a missing or refused reference (the message names the user's file).
    """
    out = []
    for path in paths or []:
        name = Path(path).name
        if not Path(path).is_file():
            raise BatchError(f"the reference {name} does not exist")
        raw = Path(path).read_bytes()
        from agent.session.references import check_reference  # edit stack: only with one
        try:
            check_reference(raw, name)
        except SessionError as err:
            raise BatchError(str(err)) from None
        out.append((raw, name))
    return out


def with_references(settings: dict[str, Any], references: list[tuple[bytes, str]]
                    ) -> dict[str, Any]:
    """``settings`` naming the references by file name and checksum (what the manifest
    records and ``--resume`` compares); their bytes ride in ``REFERENCE_DATA``, which the
    tasks read and the manifest never stores."""
    if not references:
        return settings
    return {**settings, "references": [{"name": name, "sha256": hashlib.sha256(raw).hexdigest()}
                                       for raw, name in references],
            REFERENCE_DATA: references}


#: the settings key that carries the references' bytes to the tasks (never recorded)
REFERENCE_DATA = "reference_data"


def _fingerprint(settings: dict[str, Any], mask_sha: str | None) -> str:
    keep = {k: v for k, v in settings.items() if k not in ("threads", REFERENCE_DATA)}
    blob = json.dumps({"settings": keep, "mask": mask_sha}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def plan_batch(src: Path, dest: Path, settings: dict[str, Any], *, mask_from: Path | None,
               resume: bool, retry_failed: bool) -> tuple[list[tuple[Photo, Path | None, str]],
                                                           list[Photo], dict[str, Any]]:
    """Which photos to run: ``(todo, finished, manifest)``; ``todo`` holds
    ``(photo, mask file, fingerprint)``."""
    photos = scan(src, dest)
    manifest = read_manifest(dest) if resume else {}
    todo, finished = [], []
    for photo in photos:
        try:
            photo.sha256 = sha256_file(photo.path)
        except OSError:  # unreadable: the task's read fails and records why
            photo.sha256 = ""
        mask = mask_for(photo, mask_from)
        mask_sha = sha256_file(mask) if mask else None
        fp = _fingerprint(settings, mask_sha)
        entry = manifest.get(photo.rel)
        if entry and entry.get("sha256") == photo.sha256 and entry.get("fingerprint") == fp \
                and _still_finished(entry, dest, retry_failed):
            finished.append(photo)
        else:
            todo.append((photo, mask, fp))
    return todo, finished, manifest


def _still_finished(entry: dict[str, Any], dest: Path, retry_failed: bool) -> bool:
    outcome = entry.get("outcome")
    if outcome == "done":
        return (dest / entry["path"]).is_file()
    if outcome == "failed":
        return not retry_failed
    return outcome == "planned"


def run_batch(src: str | os.PathLike, dest: str | os.PathLike, instruction: str | None = None,
              *, autopilot: bool = False, mood: str | None = None,
              mask_from: str | os.PathLike | None = None, point: str | list[float] | None = None,
              workers: int | None = None, ray_address: str | None = None,
              resume: bool = False, dry_run: bool = False, retry_failed: bool = False,
              threads: int = 1, iterations: int = 2, simulations: int = 8, depth: int = 2,
              seed: int = 0, max_photos: int | None = None, report: bool = True,
              references: list[str | os.PathLike] | None = None,
              progress: ProgressCall | None = None,
              cancel: Callable[[], bool] | None = None) -> BatchSummary:
    """Edit every photo under ``src`` into ``dest`` (see the module doc).

    Args:
        src: the input folder.
        dest: the output folder (created; may lie inside ``src``).
        instruction: what to change (unless ``autopilot``).
        autopilot: run Autopilot (``mood``, ``iterations``, ``simulations``, ``depth``,
            ``seed``) instead of an instruction.
        mask_from: a folder of masks named like the photos (white = edit area).
        point: click-to-select: ``"X,Y"`` or ``[x, y]`` (fractions when both ≤ 1).
        workers: Ray workers (local: CPUs of the local Ray, default all cores; cluster:
            photos in flight, default the cluster's CPUs).
        ray_address: join this Ray cluster (``"auto"``: the running one); None: local.
        resume: skip photos finished with the same bytes and settings.
        dry_run: plan only (no output photos).
        retry_failed: with ``resume``, run failed photos again.
        threads: threads per worker (OpenCV, BLAS, torch).
        max_photos: refuse a folder with more photos.
        references: reference photos ("match the look of the reference"); checked first,
            their checksums recorded in the manifest (``--resume`` re-runs on a change).
        report: write ``batch-report.{html,csv,json}`` into ``dest``.
        progress: ``progress(finished, total, name)`` after each photo.
        cancel: ``cancel()`` → True stops: nothing new starts, finished photos are kept.

    Returns:
        The ``BatchSummary``.

    Raises:
        BatchError: a missing input folder, an output that is the input, a bad
            instruction, point or mask folder, or more photos than ``max_photos``.
    """
    start = time.perf_counter()
    src_path, dest_path = Path(src), Path(dest)
    if not src_path.is_dir():
        raise BatchError(f"{src_path.name or src}: no such folder")
    if dest_path.exists() and dest_path.resolve() == src_path.resolve():
        raise BatchError("the output folder must not be the input folder")
    masks = Path(mask_from) if mask_from else None
    if masks is not None and not masks.is_dir():
        raise BatchError(f"the mask folder {masks.name} does not exist")
    pt = parse_point(point) if not isinstance(point, list) else point
    settings = job_settings(instruction, autopilot=autopilot, mood=mood, point=pt,
                            dry_run=dry_run, threads=threads, iterations=iterations,
                            simulations=simulations, depth=depth, seed=seed)
    if masks is not None:
        settings["mask_required"] = True
    settings = with_references(settings, read_references(references))
    dest_path.mkdir(parents=True, exist_ok=True)
    todo, finished, manifest = plan_batch(src_path, dest_path, settings, mask_from=masks,
                                          resume=resume, retry_failed=retry_failed)
    total = len(todo) + len(finished)
    if max_photos is not None and total > max_photos:
        raise BatchError(f"{total} photos is more than the {max_photos} a batch may hold")
    if not resume:  # a fresh run: a fresh manifest
        atomic_write(dest_path / STATE_DIR / MANIFEST, b"")
    remove_torn_writes(dest_path)
    summary = BatchSummary(total=total, skipped=len(finished))
    entries = {p.rel: manifest[p.rel] for p in finished}
    log.info("batch: %d photos, %d finished before, %d to run", total, len(finished), len(todo))
    if todo:
        summary.ray = _run_on_ray(todo, src_path, dest_path, settings, entries, summary,
                                  workers=workers, address=ray_address, progress=progress,
                                  cancel=cancel, done_before=len(finished))
    for entry in entries.values():
        outcome = entry.get("outcome")
        if outcome == "done":
            summary.done += 1
        elif outcome == "planned":
            summary.planned += 1
        elif outcome == "failed":
            summary.failed += 1
            summary.failures.append({"path": entry["path"], "reason": entry.get("reason", "")})
    summary.seconds = time.perf_counter() - start
    if report:
        summary.report = write_report(dest_path, list(entries.values()), summary)
    return summary


def _run_on_ray(todo: list[tuple[Photo, Path | None, str]], src: Path, dest: Path,
                settings: dict[str, Any], entries: dict[str, dict[str, Any]],
                summary: BatchSummary, *, workers: int | None, address: str | None,
                progress: ProgressCall | None, cancel: Callable[[], bool] | None,
                done_before: int) -> str:
    """Run the photos as Ray tasks; the driver writes every result as it arrives."""
    if address:
        _token_auth_like_ray_start()  # before Ray reads its configuration
    import ray

    started = time.perf_counter()
    ray_tmp, where = start_ray(address, workers, int(settings.get("threads", 1)))
    summary.startup_s = time.perf_counter() - started
    try:
        task = ray.remote(num_cpus=1, max_retries=3)(edit_photo)
        slots = max(1, int(workers or ray.cluster_resources().get("CPU", 1)))
        queue = sorted(todo, key=lambda item: -item[0].size)  # the longest first
        pending: dict[Any, tuple[Photo, Path | None, str]] = {}
        finished = done_before
        total = done_before + len(todo)
        queue_iter: Iterator[tuple[Photo, Path | None, str]] = iter(queue)
        stopped = False
        while True:
            while not stopped and len(pending) < 2 * slots:
                item = next(queue_iter, None)
                if item is None:
                    break
                try:
                    args = _task_args(item, settings)
                except OSError as err:  # vanished or unreadable since the scan
                    entries[item[0].rel] = _land(dest, *item, settings, {
                        "outcome": "failed", "reason": f"{Path(item[0].rel).name} cannot be "
                        f"read ({err.strerror or err})"})
                    finished += 1
                    continue
                pending[task.remote(*args)] = item
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            if cancel is not None and cancel() and not stopped:
                stopped, summary.cancelled = True, True
                for ref in list(pending):
                    if ref not in done:
                        ray.cancel(ref, force=True)
                        pending.pop(ref)
            for ref in done:
                photo, mask, fp = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as err:  # noqa: BLE001 - the worker died past its retries
                    result = {"outcome": "failed", "reason": _ray_reason(err), "output": None,
                              "steps": [], "score": None, "verdict": [], "record": None,
                              "thumbs": None, "seconds": 0.0}
                entries[photo.rel] = _land(dest, photo, mask, fp, settings, result)
                summary.ran += 1
                finished += 1
                if progress is not None:
                    progress(finished, total, photo.rel)
    finally:
        stop_ray(ray_tmp)
    return where


def edit_photo(data: bytes, name: str, job: dict[str, Any]) -> dict[str, Any]:
    """The Ray task: ``agent.batch_task.edit_photo``, imported where it runs, so that the
    driver (which only hands out photos and writes results) never loads the edit stack
    (~0.5 s before Ray could start)."""
    from agent.batch_task import edit_photo as edit  # on the worker, never the driver

    return edit(data, name, job)


def _task_args(item: tuple[Photo, Path | None, str],
               settings: dict[str, Any]) -> tuple[bytes, str, dict[str, Any]]:
    photo, mask, _ = item
    job = dict(settings)
    if mask is not None:
        job.update(mask=mask.read_bytes(), mask_name=mask.name)
    return photo.path.read_bytes(), Path(photo.rel).name, job


def _ray_reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"the worker running it died and Ray's retries ran out ({type(err).__name__}" \
           + (f": {text[:200]})" if text else ")")


def _land(dest: Path, photo: Photo, mask: Path | None, fp: str, settings: dict[str, Any],
          result: dict[str, Any]) -> dict[str, Any]:
    """Write one photo's output and thumbnails atomically, then its manifest line."""
    output = result.get("output")
    if result.get("outcome") == "done" and output:
        atomic_write(dest / photo.rel, output)
    thumbs = result.get("thumbs") or []
    for data, name in zip(thumbs, thumb_names(photo.rel)):
        atomic_write(dest / STATE_DIR / "thumbs" / name, data)
    entry = {"path": photo.rel, "sha256": photo.sha256, "fingerprint": fp,
             "instruction": settings.get("instruction"),
             "settings": {k: v for k, v in settings.items()
                          if k not in ("instruction", REFERENCE_DATA)},
             "mask": mask.name if mask else None, "outcome": result.get("outcome", "failed"),
             "reason": result.get("reason", ""), "score": result.get("score"),
             "seconds": result.get("seconds"), "pid": result.get("pid"),
             "peak_rss_mb": result.get("peak_rss_mb"), "steps": result.get("steps", []),
             "verdict": result.get("verdict", []), "record": result.get("record"),
             "thumbs": len(thumbs), "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
             "finished_at": round(time.time(), 3)}
    append_entry(dest, entry)
    return entry


def start_ray(address: str | None, workers: int | None, threads: int = 1) -> tuple[str | None,
                                                                                   str]:
    """Start a local Ray (``workers`` CPUs, a private temp dir) or join ``address``.

    Returns:
        ``(the private temp dir to delete after, a description of where tasks run)``.
    """
    import ray

    root = str(Path(__file__).resolve().parents[1])
    env = {"PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", ""))
                                         if p)}
    env.update({k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)})
    env.update({var: str(max(1, threads)) for var in THREAD_VARS})
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        _token_auth_like_ray_start()
        ray.init(address=address, runtime_env={"env_vars": env}, **quiet)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return None, f"cluster {address} ({cpus} CPUs)"
    cpus = max(1, int(workers or os.cpu_count() or 1))
    tmp = tempfile.mkdtemp(prefix="lray-", dir="/tmp" if os.path.isdir("/tmp") else None)
    # A local Ray's workers inherit the environment the raylet starts with: set there
    # (and put back after), no runtime_env is needed and the pre-started workers serve.
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        ray.init(num_cpus=cpus, include_dashboard=False, _temp_dir=tmp,
                 _node_ip_address="127.0.0.1", object_store_memory=512 * 1024 * 1024,
                 **quiet)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return tmp, f"local Ray ({cpus} workers)"


def _token_auth_like_ray_start() -> None:
    """Send the token when one is at hand: ``ray start`` turns token authentication on
    when a token exists (``~/.ray/auth_token``), but a joining driver only sends it
    when ``RAY_AUTH_MODE=token``. An explicit ``RAY_AUTH_MODE`` is left as it is."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH") \
            or (Path.home() / ".ray" / "auth_token").is_file():
        os.environ["RAY_AUTH_MODE"] = "token"
        if "ray" in sys.modules:  # Ray read its configuration already: refresh it
            try:
                from ray._raylet import Config

                Config.initialize("")
            except (ImportError, AttributeError):  # pragma: no cover - another Ray
                log.warning("set RAY_AUTH_MODE=token to join a cluster with a token")


def stop_ray(tmp: str | None) -> None:
    """Shut Ray down (and delete a local run's temp dir)."""
    import ray

    if tmp:  # a local Ray of our own (never a cluster's monitor)
        _stop_autoscaler_monitor()
    ray.shutdown()
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


def _stop_autoscaler_monitor() -> None:
    """Kill a local Ray's autoscaler monitor before ``ray.shutdown``, which asks each of
    its processes in turn to stop and waits up to 1 s for each: the monitor never
    answers SIGTERM in time, so that wait was 1 of the 1.35 s a shutdown took."""
    try:
        from ray._private import ray_constants
        from ray._private import worker as ray_worker

        node = ray_worker._global_node
        infos = node.all_processes.get(ray_constants.PROCESS_TYPE_MONITOR, []) if node else []
    except (ImportError, AttributeError):  # pragma: no cover - another Ray
        return
    for info in infos:
        if info.process.poll() is None:
            info.process.kill()
            info.process.wait(timeout=5)


# --------------------------------------------------------------------------- progress


class ProgressBar:
    """A one-line progress bar with an ETA for a terminal (one line per photo otherwise)."""

    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.start = time.perf_counter()
        self.first: int | None = None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int, name: str) -> None:
        if self.first is None:
            self.first = done - 1
        ran = max(1, done - self.first)
        elapsed = time.perf_counter() - self.start
        eta = elapsed / ran * (total - done)
        filled = int(self.width * done / max(1, total))
        bar = "#" * filled + "." * (self.width - filled)
        line = (f"[{bar}] {done}/{total} {100 * done / max(1, total):3.0f}% "
                f"ETA {int(eta) // 60}:{int(eta) % 60:02d}  {name[-40:]}")
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done >= total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
