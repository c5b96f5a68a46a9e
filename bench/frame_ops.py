"""Frame edits at 20 MP: the pixel work alone and as a whole session turn.

A 5472x3648 (20 MP) photo is rendered from scikit-image's astronaut with a horizon,
the whole frame tilted by 3°. For crop (to a square), rotate (90° clockwise), flip (horizontal),
straighten (auto: the tilt measured, then rotated and cropped) and resize (half size):

* ``op_s``: ``agent.session.frames.run_frame_action`` (measure, resample, and for the
  resampling edits the layer of the new frame's pixels), best of ``--repeats``;
* ``turn_s``: ``EditSession.turn`` with a plain request (plan, run, commit, save the
  session folder), then undone.

It also checks that undo returns the original bit-exact and that an edit after the crop
runs at the cropped frame's native size. Run: ``.venv/bin/python bench/frame_ops.py``.
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skimage import data  # noqa: E402

from agent.actions import Action  # noqa: E402
from agent.session.edit_session import EditSession  # noqa: E402
from agent.session.frames import run_frame_action  # noqa: E402

WIDTH, HEIGHT = 5472, 3648
CASES = [("crop", {"aspect": "1:1"}, "crop to a square"),
         ("rotate", {"degrees": 90}, "rotate right"),
         ("flip", {"axis": "horizontal"}, "mirror it"),
         ("straighten", {"auto": True}, "straighten the horizon"),
         ("resize", {"scale": 0.5}, "make it half size for email")]


def render() -> np.ndarray:
    """The 20-MP test photo: the astronaut and a horizon, the camera tilted by 3 degrees."""
    img = cv2.resize(data.astronaut(), (WIDTH, HEIGHT), interpolation=cv2.INTER_CUBIC)
    img[int(HEIGHT * 0.72):] = (img[int(HEIGHT * 0.72):] * 0.3 +
                                np.array([40, 90, 30]) * 0.7).astype(np.uint8)
    matrix = cv2.getRotationMatrix2D((WIDTH / 2, HEIGHT / 2), -3.0, 1.0)
    return cv2.warpAffine(img, matrix, (WIDTH, HEIGHT), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REFLECT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    photo = render()
    result: dict[str, object] = {"megapixels": round(WIDTH * HEIGHT / 1e6, 1)}
    for op, params, _ in CASES:
        action = Action(kind="adjust", operation=op, params=params)
        best = min(_timed(lambda a=action: run_frame_action(photo, a))
                   for _ in range(args.repeats))
        result[f"{op}_op_s"] = round(best, 3)
        print(f"{op}: {best:.3f} s (pixel work)")
    with tempfile.TemporaryDirectory() as tmp:
        session = EditSession.create(photo, Path(tmp) / "s")
        for op, _, text in CASES:
            seconds = _timed(lambda t=text: _ok(session.turn(t)))
            result[f"{op}_turn_s"] = round(seconds, 3)
            print(f"{op}: {seconds:.3f} s (turn: {session.graph.size[0]}x"
                  f"{session.graph.size[1]})")
            session.undo()
        result["undo_bit_exact"] = bool(np.array_equal(session.current_image(), photo))
        _ok(session.turn("crop to a square"))
        _ok(session.turn("make it warmer"))
        result["edit_after_crop_size"] = list(session.current_image().shape[:2])
    print(json.dumps(result))


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _ok(result) -> None:
    if not result.ok:
        raise SystemExit(f"turn failed: {result.message}")


if __name__ == "__main__":
    main()
