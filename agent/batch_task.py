"""Batch editing's task: one photo's bytes, the instruction and the settings in, the
encoded result and its turn record out (a pure function Ray runs; ``agent.batch`` drives it)."""

from __future__ import annotations

import io
import logging
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agent.batch_files import THREAD_VARS
from agent.search.autopilot_memory import AutopilotMemory
from agent.search.mcts import autopilot as run_autopilot
from agent.search.reference_pilot import autopilot_like
from agent.session import EditSession, SessionError
from pipelines.images import ImageLoadError, downscale, save_image
from pipelines.masks import MaskError, load_mask

log = logging.getLogger(__name__)

THUMB_SIDE = 320


# --------------------------------------------------------------------------- the task


class BatchSession(EditSession):
    """An edit session whose states stay in memory: a batch keeps the result and its
    record, never the session, and writing every layer as PNG after each turn (then
    decoding it back to compose the result) cost ~40 % of a photo's CPU time, on a
    thread pool as wide as the machine, so one "single-threaded" worker used more than
    one core. The pixels are the same (PNG is lossless)."""

    def save_state(self) -> float:
        return 0.0


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
            ``dry_run`` and ``threads``, ``reference_data`` (``[(bytes, name)]``: the
            reference photos, added to the photo's session in order).

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
        session = BatchSession.create(upload, scratch / "s")
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
    for raw, ref_name in job.get("reference_data") or []:   # "reference 1", "reference 2"…
        session.add_reference(raw, ref_name)
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
    if result.status == "partial":   # some steps asked or failed: not what was asked for
        return {**base, "reason": "only part of the instruction could be done, so the "
                                  "photo was not written: " + result.message}
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
    if session.references.items:   # a reference in place of the mood
        pixels = session.references.pixels(session.folder, "", session.original)
        result = autopilot_like(np.array(session.current_image()), pixels, session=session)
    else:
        result = run_autopilot(np.array(session.current_image()),
                               mood=job.get("mood") or None,
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
