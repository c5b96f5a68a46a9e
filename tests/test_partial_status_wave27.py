"""Wave 27: a plan carried out only in part is not reported done.

"make the sky darker and the boat red" on a photo of the Eiffel tower (a sky, no boat):
the sky is darkened and the boat step asks where the boat is. Until wave 27 the command
line exited 0, as for a finished edit, so a script reading the exit status took the
request as done. Now the exit status is 1 ("asked"), the applied steps are still written
to --out (the session goes on from them), and the turn's ``status`` (the Python call, the
JSON API and the MCP tools carry it) is ``partial``, never ``done``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from agent.session.results import StepResult, TurnResult
from eval import realphotos

ROOT = Path(__file__).resolve().parents[1]


def _luma(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def _turn(*statuses: str, ok: bool = True, **extra) -> TurnResult:
    steps = [StepResult(i, {}, f"step {i}", status=s) for i, s in enumerate(statuses)]
    return TurnResult("x", ok, ok, "m", {}, steps, "n1", **extra)


def test_a_turn_says_done_only_when_every_step_applied() -> None:
    assert _turn("applied", "applied").status == "done"
    assert _turn("applied", "needs_mask").status == "partial"
    assert _turn("applied", "rolled_back").status == "partial"
    assert _turn("applied", "unsupported").status == "partial"
    assert _turn("applied", "unchanged").status == "partial"
    assert _turn("needs_mask", ok=False).status == "asked"
    assert _turn("pending", ok=False, candidates=[{"id": "1"}]).status == "asked"
    assert _turn("unsupported", ok=False).status == "refused"
    assert _turn("applied", "needs_mask").to_dict()["status"] == "partial"


def test_the_cli_exits_1_when_a_step_of_the_plan_asked(tmp_path: Path) -> None:
    photo = realphotos.photo_path("gc_eiffel_tower")
    out = tmp_path / "out.png"
    run = subprocess.run([sys.executable, "-m", "agent", "edit", str(photo),
                          "make the sky darker and the boat red", "--json",
                          "--session", str(tmp_path / "s"), "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode == 1, said[-3000:]
    result, _ = json.JSONDecoder().raw_decode(run.stdout)
    assert result["status"] == "partial", said[-3000:]
    statuses = {s["description"].split()[0]: s["status"] for s in result["steps"]}
    assert statuses == {"brightness": "applied", "recolor": "needs_mask"}, statuses
    assert "not done: recolor boat" in run.stdout
    # what was applied is written: the sky (the top rows) is darker, nothing turned red
    before = np.asarray(Image.open(photo).convert("RGB"))
    after = np.asarray(Image.open(out).convert("RGB"))
    top = slice(0, before.shape[0] // 6)
    assert _luma(after[top]).mean() < _luma(before[top]).mean() - 5


def test_the_python_call_says_partial_for_the_sky_and_the_tower(tmp_path: Path) -> None:
    from agent.session import EditSession

    session = EditSession.create(str(realphotos.photo_path("gc_eiffel_tower")),
                                 str(tmp_path / "s"))
    result = session.turn("make the sky and the tower darker")
    applied = [s.applied for s in result.steps]
    assert len(applied) == 2 and applied[0], result.message
    assert result.status == ("done" if all(applied) else "partial"), result.message
    assert result.to_dict()["status"] == result.status
    if not all(applied):
        # a pick would rerun the whole instruction on one mask: the step is asked for on
        # its own, no numbered candidate is promised
        asked = result.steps[1].message
        assert "Ask for it on its own" in asked and "numbered candidates" not in asked, asked
