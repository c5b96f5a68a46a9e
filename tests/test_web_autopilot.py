"""The Autopilot tab's calls: a cancelled run keeps its best state and Send to Edit lands it."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from PIL import Image

import web
from eval.photos import linear_gains, psnr
from tests.test_app import manager  # noqa: F401  (the session-manager fixture)


def test_cancel_keeps_the_best_so_far_and_send_to_edit_lands_it(manager, tmp_path: Path,  # noqa: F811
                                                                  astronaut: np.ndarray) -> None:
    # issue 28: a photo whose underexposure the evaluator is sure of (an uncertain fix is
    # held within the do-no-harm bound, cancelled or not: tests/test_do_no_harm.py)
    clean = cv2.resize(astronaut, (240, 240), interpolation=cv2.INTER_AREA)
    dark = linear_gains(clean, (0.45, 0.45, 0.45))
    src = tmp_path / "dark.png"
    Image.fromarray(dark).save(src)
    sid = web.ensure_session(None)
    seen: list[str] = []

    def progress(fraction: float, text: str) -> None:
        seen.append(text)
        if len(seen) == 4:
            web.cancel_autopilot(sid)

    view = web.run_autopilot(sid, str(src), iterations=3, simulations=40, depth=2,
                             progress=progress)
    assert view.summary["cancelled"] is True and len(seen) < 10
    after = view.slider[1]
    assert view.rows, "a cancelled run must keep the best state it had found"
    assert view.summary["score_after"] > view.summary["score_before"]
    assert psnr(after, clean) > psnr(dark, clean) + 3          # the kept state is better

    landed = web.send_autopilot_to_edit(sid)
    np.testing.assert_array_equal(landed.image, after)
    graph = web.graph_json(sid)
    assert len(graph["nodes"]) == 1 + len(view.rows)
    assert all(n["description"].startswith("Autopilot") for n in graph["nodes"][1:])
