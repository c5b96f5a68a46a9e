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
import io
import json
import logging
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from agent.search.autopilot_memory import AutopilotMemory
from agent.search.mcts import autopilot as run_autopilot
from agent.session import EditSession, SessionError
from agent.session.edit_session import check_instruction
from pipelines.files import atomic_write
from pipelines.images import ImageLoadError, downscale, save_image
from pipelines.masks import MaskError, load_mask

log = logging.getLogger(__name__)

#: photo suffixes a batch reads (RAW files are left alone)
BATCH_SUFFIXES = frozenset({".jpg", ".jpeg", ".jpe", ".png", ".webp", ".tif", ".tiff"})
#: the batch's own folder inside OUT (never read as input)
STATE_DIR = ".loupe-batch"
MANIFEST = "manifest.jsonl"
THUMB_SIDE = 320
#: the thread-count variables every worker pins (read when a library starts)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: the driver's settings that travel to every worker (on a cluster too), so that models,
#: limits and the planner's endpoint are the same for every photo
FORWARDED_ENV = ("LOUPE_", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_VERSION = 1  # bump when the task's output for the same inputs changes


class BatchError(ValueError):
    """A batch that cannot start (bad folders, instruction, point or limits)."""


# --------------------------------------------------------------------------- the task


def pin_threads(threads: int) -> None:
    """Pin this process's thread pools (OpenCV, BLAS/OpenMP, torch) to ``threads``."""
    n = max(1, int(threads))
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    import cv2

    cv2.setNumThreads(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)


def edit_photo(data: bytes, name: str, job: dict[str, Any]) -> dict[str, Any]:
    """Edit one photo: the batch's task, a pure function of its arguments.

    Args:
        data: the photo file's bytes.
        name: its file name (for messages; never a path).
        job: ``instruction`` or ``autopilot`` (+ ``mood``, ``iterations``,
            ``simulations``, ``depth``, ``seed``), optional ``mask`` (bytes) and
            ``mask_name``, ``point`` (``[x, y]``, fractions when both are ≤ 1),
            ``dry_run`` and ``threads``.

    Returns:
        ``{"outcome": "done"|"failed"|"planned", "reason", "output" (bytes or None),
        "steps", "score", "verdict", "record", "thumbs", "seconds", "pid",
        "peak_rss_mb"}`` (the worker process's peak resident memory so far).
    """
    start = time.perf_counter()
    pin_threads(job.get("threads", 1))
    out: dict[str, Any] = {"outcome": "failed", "reason": "", "output": None, "steps": [],
                           "score": None, "verdict": [], "record": None, "thumbs": None,
                           "pid": os.getpid()}
    scratch = Path(tempfile.mkdtemp(prefix="loupe-batch-"))
    try:
        upload = io.BytesIO(data)
        upload.name = name
        session = EditSession.create(upload, scratch / "s")
        out["thumbs"] = [_thumb(session.original.pixels)]
        out.update(_run(session, job))
        if out["outcome"] == "done":
            out["output"] = session.save_image(None)
            out["thumbs"].append(_thumb(session.current_image()))
    except (ImageLoadError, SessionError) as err:
        out["reason"] = str(err)
    except MemoryError:
        out["reason"] = f"{name} needs more memory than this worker has"
    except Exception as err:  # noqa: BLE001 - one bad photo must not stop a batch
        log.exception("batch photo %s failed", name)
        out["reason"] = f"the edit failed ({type(err).__name__}: {err})"[:500]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out["seconds"] = round(time.perf_counter() - start, 3)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def _thumb(pixels: np.ndarray) -> bytes:
    small = np.ascontiguousarray(downscale(np.asarray(pixels)[..., :3], THUMB_SIDE))
    return save_image(small, None, format="JPEG", quality=80)  # type: ignore[return-value]


def _run(session: EditSession, job: dict[str, Any]) -> dict[str, Any]:
    """Plan, edit or Autopilot ``session``'s photo; the task's outcome fields."""
    width, height = session.graph.size
    mask = None
    if job.get("mask_required") and job.get("mask") is None:
        return {"reason": f"no mask named like {session.original.filename or 'this photo'} "
                          "in the mask folder (a/b.jpg → a/b.png, any image suffix)"}
    if job.get("mask") is not None:
        try:
            mask = load_mask(job["mask"], (height, width), label=job.get("mask_name"))
        except (MaskError, ImageLoadError) as err:
            return {"reason": str(err)}
    if job.get("point") is not None:
        mask, why = _point_mask(session, job)
        if mask is None:
            return {"reason": why}
    if job.get("autopilot"):
        return _autopilot(session, job)
    instruction = job["instruction"]
    if job.get("dry_run"):
        plan = session.planner.plan(instruction, memory=session.memory,
                                    has_mask=mask is not None, image_size=session.graph.size)
        steps = [a.describe() for a in plan.actions]
        if not plan.is_edit or not steps:
            return {"reason": plan.message or "that does not read as a change to the photo",
                    "steps": steps}
        return {"outcome": "planned", "steps": steps}
    result = session.turn(instruction, mask)
    record = result.to_dict()
    steps = [f"{s.description} [{s.status}]" for s in result.steps]
    scores = [s.score for s in result.steps if s.applied and s.score is not None]
    verdict = [{"step": s.description, "status": s.status, "score": s.score,
                "reasons": [f for a in s.attempts for f in a.fix][:6],
                "message": s.message} for s in result.steps]
    base = {"steps": steps, "verdict": verdict, "record": record,
            "score": round(min(scores), 2) if scores else None}
    if not result.ok:
        reason = result.message
        options = list(result.choices or []) + list(getattr(result, "candidates", None) or [])
        if options:
            reason += " A choice is needed: " + " / ".join(str(c.get("label", ""))
                                                          for c in options)
        return {**base, "reason": reason}
    return {**base, "outcome": "done", "reason": result.message}


def _point_mask(session: EditSession, job: dict[str, Any]) -> tuple[np.ndarray | None, str]:
    """The object under ``job["point"]`` (click-to-select), as a brush mask."""
    width, height = session.graph.size
    x, y = (float(v) for v in job["point"])
    if x <= 1 and y <= 1:
        x, y = x * (width - 1), y * (height - 1)
    if not (0 <= x < width and 0 <= y < height):
        return None, f"the point ({x:.0f}, {y:.0f}) is outside the {width}x{height} photo"
    try:
        session.select(x, y)  # click-to-select, as ``python -m agent edit --point``
    except SessionError as err:
        return None, str(err)
    return session.selection, "nothing was selected at the point"


def _autopilot(session: EditSession, job: dict[str, Any]) -> dict[str, Any]:
    if job.get("dry_run"):
        return {"outcome": "planned", "steps": ["Autopilot (tree search over edits)"]}
    result = run_autopilot(np.array(session.current_image()), mood=job.get("mood") or None,
                           iterations=int(job.get("iterations", 2)),
                           simulations=int(job.get("simulations", 8)),
                           depth=int(job.get("depth", 2)), top_k=3,
                           seed=int(job.get("seed", 0)), session=session,
                           memory=AutopilotMemory())
    steps = [f"{s.description} ({s.score_before:.2f} → {s.score_after:.2f})"
             for s in result.steps]
    return {"outcome": "done", "steps": steps, "score": round(float(result.score_after), 3),
            "verdict": [{"step": "Autopilot", "status": "applied",
                         "score": round(float(result.score_after), 3),
                         "reasons": [f"score {result.score_before:.2f} → "
                                     f"{result.score_after:.2f}"], "message": ""}],
            "record": {"steps": [{"description": s.description, "action": s.action,
                                  "score_before": s.score_before,
                                  "score_after": s.score_after} for s in result.steps],
                       "score_before": result.score_before,
                       "score_after": result.score_after},
            "reason": f"{len(result.steps)} step(s) kept"}


# --------------------------------------------------------------------------- folders


@dataclass
class Photo:
    """One input photo: its path relative to IN (posix) and on disk."""

    rel: str
    path: Path
    size: int
    sha256: str = ""


def scan(src: str | os.PathLike, dest: str | os.PathLike | None = None) -> list[Photo]:
    """The photos under ``src`` (recursively, sorted), skipping links, ``dest`` when it
    lies inside ``src``, and every batch's own ``.loupe-batch`` folder."""
    root = Path(src)
    skip = Path(dest).resolve() if dest is not None else None
    photos: list[Photo] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d != STATE_DIR
                         and not (here / d).is_symlink()
                         and (skip is None or (here / d).resolve() != skip))
        for name in sorted(files):
            path = here / name
            if path.suffix.lower() not in BATCH_SUFFIXES or path.is_symlink():
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            photos.append(Photo(path.relative_to(root).as_posix(), path, size))
    return photos


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _remove_torn_writes(dest: Path) -> None:
    """Delete the hidden temporary files of writes a kill interrupted (``atomic_write``
    names them ``.NAME.*.tmp``; the file ``NAME`` itself is whole or absent)."""
    for folder, _dirs, files in os.walk(dest, followlinks=False):
        for name in files:
            if name.startswith(".") and name.endswith(".tmp"):
                Path(folder, name).unlink(missing_ok=True)


def _mask_for(photo: Photo, masks: Path | None) -> Path | None:
    """The mask named like ``photo`` in the mask folder: the same relative path with any
    image suffix (``a/b.jpg`` → ``a/b.png``…), else the same stem at the top level."""
    if masks is None:
        return None
    rel = Path(photo.rel)
    for folder in (masks / rel.parent, masks):
        for suffix in (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".bmp"):
            for stem in (rel.stem, rel.name):
                path = folder / (stem + suffix)
                if path.is_file() and not path.is_symlink():
                    return path
    return None


# --------------------------------------------------------------------------- manifest


def read_manifest(dest: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The latest manifest entry per photo (a torn last line, from a kill, is skipped)."""
    path = Path(dest) / STATE_DIR / MANIFEST
    entries: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return entries
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            entries[entry["path"]] = entry
    return entries


def _append(dest: Path, entry: dict[str, Any]) -> None:
    path = dest / STATE_DIR / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = False
    if path.is_file() and path.stat().st_size:
        with open(path, "rb") as tail:
            tail.seek(-1, os.SEEK_END)
            torn = tail.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(("\n" if torn else "") + json.dumps(entry, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def thumb_names(rel: str) -> tuple[str, str]:
    """The before/after thumbnail files (under ``OUT/.loupe-batch/thumbs``) of a photo."""
    key = hashlib.sha1(rel.encode("utf-8")).hexdigest()[:20]
    return f"{key}-before.jpg", f"{key}-after.jpg"


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
                "threads": int(threads), "version": _VERSION}
    try:
        text = check_instruction(instruction)
    except SessionError as err:
        raise BatchError(str(err)) from None
    return {"instruction": text, "point": point, "dry_run": bool(dry_run),
            "threads": int(threads), "version": _VERSION}


def _fingerprint(settings: dict[str, Any], mask_sha: str | None) -> str:
    keep = {k: v for k, v in settings.items() if k != "threads"}
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
            photo.sha256 = _sha256(photo.path)
        except OSError:  # unreadable: the task's read fails and records why
            photo.sha256 = ""
        mask = _mask_for(photo, mask_from)
        mask_sha = _sha256(mask) if mask else None
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
    dest_path.mkdir(parents=True, exist_ok=True)
    todo, finished, manifest = plan_batch(src_path, dest_path, settings, mask_from=masks,
                                          resume=resume, retry_failed=retry_failed)
    total = len(todo) + len(finished)
    if max_photos is not None and total > max_photos:
        raise BatchError(f"{total} photos is more than the {max_photos} a batch may hold")
    if not resume:  # a fresh run: a fresh manifest
        atomic_write(dest_path / STATE_DIR / MANIFEST, b"")
    _remove_torn_writes(dest_path)
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
        from agent.batch_report import write_report  # it imports this module

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
             "settings": {k: v for k, v in settings.items() if k not in ("instruction",)},
             "mask": mask.name if mask else None, "outcome": result.get("outcome", "failed"),
             "reason": result.get("reason", ""), "score": result.get("score"),
             "seconds": result.get("seconds"), "pid": result.get("pid"),
             "peak_rss_mb": result.get("peak_rss_mb"), "steps": result.get("steps", []),
             "verdict": result.get("verdict", []), "record": result.get("record"),
             "thumbs": len(thumbs), "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
             "finished_at": round(time.time(), 3)}
    _append(dest, entry)
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

    ray.shutdown()
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


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
