"""Batch jobs for the app, the API and MCP: several photos (or a zip), one instruction.

A batch outlives the request that starts it: ``start_batch`` stages the uploads into a
job folder (``LOUPE_DATA_DIR/batches/<job_id>``), checks them against the limits
(``LOUPE_BATCH_MAX_PHOTOS``, ``LOUPE_BATCH_MAX_MB``, ``LOUPE_BATCH_MAX_MEGAPIXELS``,
``LOUPE_BATCH_MAX_JOBS``) and starts ``python -m agent batch`` on it, which runs the
photos as tasks on a local Ray sized to the machine (``LOUPE_BATCH_WORKERS``, 0 = every
core) or on ``LOUPE_BATCH_RAY``. ``batch_status`` reads the job's manifest (progress), and
once the job ended builds the results zip and a one-file report; ``batch_cancel`` asks
the job to stop (SIGTERM: nothing new starts, finished photos are kept, the report is
written) and kills it if it does not. A job id is 128 random bits: knowing it is what
lets a caller see the job. Every message names the user's files, never a server path.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from agent.batch import BatchSummary, job_settings, read_references
from agent.batch_files import BATCH_SUFFIXES, MANIFEST, STATE_DIR, BatchError, read_manifest
from agent.batch_report import (
    REPORT_CSV,
    REPORT_HTML,
    REPORT_JSON,
    render_html,
    sorted_rows,
    write_report,
)
from pipelines.archives import ArchiveError, check_members, extract, open_zip
from pipelines.config import get_settings
from pipelines.files import atomic_write, check_id, remove_stale, slug
from pipelines.images import image_header
from web.errors import SessionError

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
JOB_FILE, LOG_FILE, SUMMARY_FILE = "job.json", "log.txt", "summary.json"
RESULTS_ZIP, REPORT_PAGE = "loupe-batch-results.zip", "loupe-batch-report.html"
_JOBS: dict[str, subprocess.Popen] = {}
_LOCK = threading.Lock()


@dataclass
class BatchStatus:
    """A job's state for the API (``info``, JSON) and its files once it ended."""

    info: dict[str, Any]
    zip_path: Path | None = None
    report_path: Path | None = None


def _root() -> Path:
    return get_settings().data_dir / "batches"


def _job_dir(job_id: Any) -> Path:
    try:
        job_id = check_id(job_id, "batch job id")
    except ValueError:
        raise SessionError("There is no batch job with that id.") from None
    folder = _root() / job_id
    if not (folder / JOB_FILE).is_file():
        raise SessionError("There is no batch job with that id.")
    return folder


# --------------------------------------------------------------------------- start


def _name_of(item: Any) -> str:
    name = getattr(item, "orig_name", None) or getattr(item, "name", None) or str(item)
    return Path(str(name)).name


def _stage(files: list[Any], into: Path) -> list[str]:
    """Copy the uploads (photos, or zips of photos) into ``into``; the names kept."""
    settings = get_settings()
    limit = int(settings.batch_max_mb * 1024 ** 2)
    used, names = 0, []
    for item in files:
        path = Path(str(getattr(item, "path", None) or getattr(item, "name", None) or item))
        label = _name_of(item)
        if not path.is_file():
            raise SessionError(f"{label}: the upload is missing; send it again")
        size = path.stat().st_size
        suffix = path.suffix.lower()
        # a zip is known by its name, or by its bytes when the name says nothing of the
        # kind (an MCP client's data URL of type application/octet-stream)
        if suffix == ".zip" or (suffix not in BATCH_SUFFIXES and zipfile.is_zipfile(path)):
            used += _unzip(path, into / slug(Path(label).stem, "archive"), label, limit - used)
            continue
        if suffix not in BATCH_SUFFIXES:
            raise SessionError(f"{label} is not a JPEG, PNG, WebP or TIFF photo (or a .zip "
                               "of them)")
        used += size
        if used > limit:
            raise SessionError(f"the photos add up to more than the {settings.batch_max_mb:g}"
                               " MB a batch may hold (LOUPE_BATCH_MAX_MB)")
        dest = into / (slug(Path(label).stem) + path.suffix.lower())
        n = 1
        while dest.exists():
            n += 1
            dest = into / f"{slug(Path(label).stem)}-{n}{path.suffix.lower()}"
        shutil.copyfile(path, dest)
        names.append(dest.name)
    return names


def _unzip(path: Path, dest: Path, label: str, left: int) -> int:
    """Unpack the photos of an uploaded zip (safely: ``pipelines.archives``)."""
    if left <= 0:
        raise SessionError(f"{label}: the batch is already at its size limit "
                           "(LOUPE_BATCH_MAX_MB)")
    try:
        with open_zip(path, label) as zf:
            infos = [i for i in check_members(zf.infolist(), left, label=label)
                     if not i.is_dir() and PurePosixPath(i.filename).suffix.lower()
                     in BATCH_SUFFIXES and not PurePosixPath(i.filename).name.startswith(".")
                     and "__MACOSX" not in PurePosixPath(i.filename).parts]
            if not infos:
                raise SessionError(f"{label} holds no JPEG, PNG, WebP or TIFF photo")
            return extract(zf, infos, dest, left)
    except ArchiveError as err:
        raise SessionError(str(err)) from None


def _check_limits(folder: Path) -> int:
    """The number of photos staged, within the count and pixel limits."""
    settings = get_settings()
    photos = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
              and p.suffix.lower() in BATCH_SUFFIXES]
    if not photos:
        raise SessionError("Add at least one photo (JPEG, PNG, WebP or TIFF) or a zip of them.")
    if len(photos) > settings.batch_max_photos:
        raise SessionError(f"{len(photos)} photos is more than the {settings.batch_max_photos}"
                           " a batch may hold (LOUPE_BATCH_MAX_PHOTOS)")
    pixels = 0
    for photo in photos:
        with open(photo, "rb") as fh:
            header = image_header(fh.read(1 << 16))
        if header is not None:
            pixels += header[1] * header[2]
    if pixels > settings.batch_max_megapixels * 1e6:
        raise SessionError(f"the photos hold {pixels / 1e6:.0f} MP in all, more than the "
                           f"{settings.batch_max_megapixels:g} MP a batch may hold "
                           "(LOUPE_BATCH_MAX_MEGAPIXELS)")
    return len(photos)


def _running() -> int:
    with _LOCK:
        return sum(1 for p in _JOBS.values() if p.poll() is None)


def start_batch(files: list[Any] | None, instruction: str = "", *, autopilot: bool = False,
                mood: str = "", reference: Any = None) -> dict[str, Any]:
    """Start a batch job on uploaded photos and/or zips of photos.

    Args:
        files: the uploads (paths or Gradio file objects): photos or ``.zip`` archives.
        instruction: what to change in every photo (unless ``autopilot``).
        autopilot: run Autopilot on every photo instead (``mood`` optional).
        mood: Autopilot's intent, e.g. "warm evening light".
        reference: a reference photo (path or Gradio file) every photo is matched to
            ("match the look of the reference"); checked like an upload before the job
            starts.

    Returns:
        ``{"job_id", "state", "total", "finished", …}`` (see ``batch_status``).

    Raises:
        SessionError: no photo, too many or too large, a bad zip or instruction, or the
            server already running its most batches.
    """
    settings = get_settings()
    files = [f for f in (files or []) if f]
    if not files:
        raise SessionError("Add at least one photo (JPEG, PNG, WebP or TIFF) or a zip of them.")
    if autopilot and (mood or "").strip() and reference:
        raise SessionError("Give Autopilot a mood or a reference photo, not both.")
    try:
        job_settings(None if autopilot else instruction, autopilot=autopilot, mood=mood)
    except BatchError as err:
        raise SessionError(str(err)) from None
    if _running() >= settings.batch_max_jobs:
        raise SessionError("The server is running as many batches as it may; try again when "
                           "one has finished.")
    root = _root()
    root.mkdir(parents=True, exist_ok=True)
    remove_stale(root, settings.session_ttl_hours * 3600, prefix="")
    job_id = secrets.token_hex(16)
    folder = root / job_id
    (folder / "in").mkdir(parents=True)
    try:
        ref = _stage_reference(reference, folder / "ref")
        _stage(files, folder / "in")
        total = _check_limits(folder / "in")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    job = {"job_id": job_id, "instruction": None if autopilot else instruction.strip(),
           "autopilot": bool(autopilot), "mood": mood or None, "total": total,
           "reference": ref,
           "started": time.time()}
    atomic_write(folder / JOB_FILE, json.dumps(job))
    _launch(folder, job)
    return batch_status(job_id).info


def _stage_reference(reference: Any, folder: Path) -> str | None:
    """Copy the reference into the job (checked first); its file name, or None."""
    if not reference:
        return None
    path = Path(reference if isinstance(reference, (str, Path)) else
                getattr(reference, "path", None) or getattr(reference, "name", ""))
    try:
        [(raw, name)] = read_references([path])
    except BatchError as err:
        raise SessionError(str(err)) from None
    suffix = Path(name).suffix.lower()
    safe = "reference" + (suffix if re.fullmatch(r"\.[a-z0-9]{1,5}", suffix) else "")
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / safe, raw)
    return safe


def _launch(folder: Path, job: dict[str, Any]) -> None:
    settings = get_settings()
    cmd = [sys.executable, "-m", "agent", "batch", "--json", "--workers",
           str(settings.batch_workers or os.cpu_count() or 1)]
    if settings.batch_ray:
        cmd += ["--ray", settings.batch_ray]
    if job["autopilot"]:
        cmd += ["--autopilot"] + ([f"--mood={job['mood']}"] if job["mood"] else [])
    if job.get("reference"):
        cmd += ["--reference", str(folder / "ref" / job["reference"])]
    # after "--" nothing is an option: an instruction may start with a dash
    cmd += ["--", str(folder / "in"), str(folder / "out")]
    if not job["autopilot"]:
        cmd.append(job["instruction"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    with open(folder / SUMMARY_FILE, "wb") as out, open(folder / LOG_FILE, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    with _LOCK:
        _JOBS[folder.name] = proc
    log.info("batch job %s started (%d photos)", folder.name, job["total"])


# --------------------------------------------------------------------------- status


def _summary(folder: Path) -> dict[str, Any] | None:
    try:
        lines = (folder / SUMMARY_FILE).read_text(encoding="utf-8").strip().splitlines()
        data = json.loads(lines[-1]) if lines else None
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _state(folder: Path) -> str:
    proc = _JOBS.get(folder.name)
    if proc is not None and proc.poll() is None:
        return "cancelling" if (folder / "cancelled").exists() else "running"
    if (folder / "cancelled").exists():
        return "cancelled"
    summary = _summary(folder)
    if summary is not None:
        return "cancelled" if summary.get("cancelled") else "done"
    return "interrupted"  # the server restarted while it ran, or the job died


def _why_interrupted(folder: Path) -> str:
    """Why a job ended without its summary, in words (never a path or a log line)."""
    proc = _JOBS.get(folder.name)
    if proc is None:
        return "the server restarted while the job ran"
    code = proc.returncode
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        killed = " (killed: perhaps out of memory)" if -code == signal.SIGKILL else ""
        return f"the job was stopped by signal {name}{killed} before it finished"
    return f"the job ended (exit status {code}) before it wrote its summary"


def batch_status(job_id: str) -> BatchStatus:
    """A job's progress; once it ended, its results zip and its report page.

    Returns:
        ``BatchStatus`` whose ``info`` is ``{"job_id", "state"`` (``running``,
        ``cancelling``, ``done``, ``cancelled`` or ``interrupted``), ``"total"``,
        ``"finished"``, ``"done"``, ``"failed"``, ``"eta_s"``, ``"failures"``
        (``[{"photo", "reason"}]``: not "path", which API clients take for a file),
        ``"instruction"}``; an ``interrupted`` job adds ``"reason"`` (a signal or an
        exit status in words, or a server restart).
    """
    folder = _job_dir(job_id)
    job = json.loads((folder / JOB_FILE).read_text(encoding="utf-8"))
    state = _state(folder)
    entries = list(read_manifest(folder / "out").values())
    done = sum(1 for e in entries if e.get("outcome") == "done")
    failures = [{"photo": e["path"], "reason": e.get("reason", "")} for e in entries
                if e.get("outcome") == "failed"]
    elapsed = time.time() - float(job.get("started", time.time()))
    left = job["total"] - len(entries)
    eta = round(elapsed / len(entries) * left, 1) if entries and state == "running" else None
    info = {"job_id": folder.name, "state": state, "total": job["total"],
            "finished": len(entries), "done": done, "failed": len(failures), "eta_s": eta,
            "failures": failures, "instruction": job.get("instruction"),
            "autopilot": job.get("autopilot", False)}
    if state == "interrupted":
        info["reason"] = _why_interrupted(folder)
        log.warning("batch job %s interrupted: %s", folder.name, info["reason"])
    status = BatchStatus(info)
    if state in ("done", "cancelled", "interrupted"):
        status.zip_path, status.report_path = _results(folder, info)
    return status


def _results(folder: Path, info: dict[str, Any]) -> tuple[Path | None, Path | None]:
    """The results zip (edited photos + report + thumbnails) and a one-file report."""
    out = folder / "out"
    zip_path, page = folder / RESULTS_ZIP, folder / REPORT_PAGE
    if zip_path.is_file() and page.is_file():
        return zip_path, page
    entries = list(read_manifest(out).values())
    head = {k: info[k] for k in ("total", "done", "failed")}
    head.update(planned=0, cancelled=info["state"] != "done")
    atomic_write(page, render_html(sorted_rows(entries), head, out, inline=True))
    if not (out / REPORT_HTML).is_file():
        write_report(out, entries, BatchSummary(total=info["total"], done=info["done"],
                                                failed=info["failed"],
                                                cancelled=info["state"] != "done"))
    part = zip_path.with_name(zip_path.name + ".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_STORED) as zf:
        for entry in entries:
            if entry.get("outcome") == "done" and (out / entry["path"]).is_file():
                zf.write(out / entry["path"], entry["path"])
        for name in (REPORT_HTML, REPORT_CSV, REPORT_JSON):
            if (out / name).is_file():
                zf.write(out / name, name)
        thumbs = out / STATE_DIR / "thumbs"
        for thumb in sorted(thumbs.glob("*.jpg")) if thumbs.is_dir() else []:
            zf.write(thumb, f"{STATE_DIR}/thumbs/{thumb.name}")
        if (out / STATE_DIR / MANIFEST).is_file():
            zf.write(out / STATE_DIR / MANIFEST, f"{STATE_DIR}/{MANIFEST}")
    os.replace(part, zip_path)
    return zip_path, page


# --------------------------------------------------------------------------- cancel


def batch_cancel(job_id: str, *, wait_s: float = 60.0) -> BatchStatus:
    """Stop a job: nothing new starts, finished photos are kept (and in the zip).

    Args:
        job_id: the id ``start_batch`` returned.
        wait_s: how long the job may take to stop cleanly before it is killed.

    Returns:
        The job's ``BatchStatus`` after it stopped.
    """
    folder = _job_dir(job_id)
    proc = _JOBS.get(folder.name)
    if proc is None or proc.poll() is not None:
        return batch_status(job_id)  # already over: nothing to stop
    atomic_write(folder / "cancelled", b"")
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    return batch_status(job_id)


def batch_file(job_id: str, which: str) -> tuple[Path, str, str]:
    """An ended job's results zip (``which="results"``) or report page (``"report"``):
    ``(path, media type, download name)``.

    Raises:
        SessionError: no such job, not ended yet, or another ``which``.
    """
    status = batch_status(job_id)
    path = {"results": status.zip_path, "report": status.report_path}.get(which)
    if path is None:
        raise SessionError("That batch file does not exist (yet).")
    if which == "results":
        return path, "application/zip", RESULTS_ZIP
    return path, "text/html; charset=utf-8", REPORT_PAGE


def batch_url(job_id: str, which: str, root: str = "") -> str:
    """The app's own link to a job's ``results`` zip or ``report`` page (the job id is
    the key; served by ``ui.review_routes``)."""
    return f"{root.rstrip('/')}/batch/{check_id(job_id, 'batch job id')}/{which}"


def wait_for(job_id: str, timeout_s: float = 600.0, poll_s: float = 0.5) -> BatchStatus:
    """Block until a job ended (for scripts and tests); its final ``BatchStatus``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = batch_status(job_id)
        if status.info["state"] not in ("running", "cancelling"):
            return status
        time.sleep(poll_s)
    raise SessionError("the batch is still running")
