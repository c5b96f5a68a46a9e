"""A batch job that dies says why (web.batch): its state is ``interrupted`` and its
``reason`` names the signal in words, never a server path or a log line."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
from PIL import Image

from web import batch


def test_a_killed_job_is_interrupted_and_says_it_was_killed(tmp_path, monkeypatch):
    monkeypatch.setenv("LOUPE_DATA_DIR", str(tmp_path / "data"))
    photo = tmp_path / "upload.png"
    Image.fromarray(np.full((64, 96, 3), 120, np.uint8)).save(photo)
    info = batch.start_batch([str(photo)], "make it warmer")
    proc = batch._JOBS[info["job_id"]]
    os.killpg(proc.pid, signal.SIGKILL)  # the job (and its workers) die before its summary
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    status = batch.batch_status(info["job_id"]).info
    assert status["state"] == "interrupted", status
    assert "SIGKILL" in status["reason"] and "memory" in status["reason"]
    assert str(tmp_path) not in str(status) and "/" not in status["reason"]

