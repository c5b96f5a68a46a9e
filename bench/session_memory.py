"""Session memory and disk: 30 turns of ~1-MP patch edits on a 5460×3640 image.

Run in a fresh process (peak RSS is the process's high-water mark)::

    .venv/bin/python bench/session_memory.py [--turns 30] [--cache-mb 128]

Each turn sends a brush mask of about one megapixel (an ellipse at a new place) with an
instruction from a fixed cycle, through the real ``EditSession.turn`` (rule planner,
classical editor, measured critic). The last printed line is one JSON object with
``peak_rss_mb`` and ``disk_mb`` (targets: RSS ≤ 400 MB, disk ≤ 120 MB).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WIDTH, HEIGHT = 5460, 3640
INSTRUCTIONS = ["brighten this area", "make this area warmer", "add contrast here",
                "darken this area slightly", "make this area cooler", "desaturate this area"]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _source(folder: Path) -> Path:
    """A 5460×3640 JPEG upscaled from a bundled photo, with fine noise so it is photo-like.

    Made in a child process so its buffers do not count in this process's peak RSS.
    """
    path = folder / "big.jpg"
    subprocess.run([sys.executable, __file__, "--make-source", str(path)], check=True)
    return path


def _make_source(path: Path) -> None:
    from skimage import data

    small = data.astronaut()
    image = cv2.resize(small, (WIDTH, HEIGHT), interpolation=cv2.INTER_CUBIC)
    noise = np.random.default_rng(0).normal(0, 3, image.shape[:2]).astype(np.int16)
    image = np.clip(image.astype(np.int16) + noise[..., None], 0, 255).astype(np.uint8)
    cv2.imwrite(str(path), cv2.cvtColor(image, cv2.COLOR_RGB2BGR),
                [cv2.IMWRITE_JPEG_QUALITY, 92])


def _mask(turn: int) -> np.ndarray:
    """An ellipse of about 1 MP (axes 640×500) at a different place each turn."""
    rng = np.random.default_rng(turn)
    cx = int(rng.integers(700, WIDTH - 700))
    cy = int(rng.integers(600, HEIGHT - 600))
    mask = np.zeros((HEIGHT, WIDTH), np.uint8)
    cv2.ellipse(mask, (cx, cy), (640, 500), 0, 0, 360, 1, -1)
    return mask.view(bool)  # 0/1 bytes: a bool view, no second 20-MB array


def _disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--cache-mb", type=int, default=96)
    parser.add_argument("--make-source", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make_source:
        return _make_source(Path(args.make_source))
    logging.basicConfig(level=logging.WARNING)
    from agent.session import EditSession

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = _source(tmp)
        rss_start = _rss_mb()
        start = time.perf_counter()
        session = EditSession.create(src, tmp / "session", cache_bytes=args.cache_mb << 20)
        times, ok = [], 0
        for turn in range(args.turns):
            t = time.perf_counter()
            result = session.turn(INSTRUCTIONS[turn % len(INSTRUCTIONS)], _mask(turn))
            session.current_image()  # what a UI does after each turn: show the new head
            times.append(time.perf_counter() - t)
            ok += bool(result.ok)
            print(f"turn {turn + 1:2d}: {result.ok} {times[-1]:.2f}s head={result.head} "
                  f"rss={_rss_mb():.0f}MB disk={_disk_mb(session.folder):.1f}MB", flush=True)
        peak = _rss_mb()  # before the check below, which opens a second session
        reopened = EditSession.open(session.folder)
        same = bool(np.array_equal(reopened.current_image(), session.current_image()))
        out = {"peak_rss_mb": round(peak, 1), "disk_mb": round(_disk_mb(session.folder), 1),
               "rss_before_session_mb": round(rss_start, 1), "turns": args.turns,
               "turns_ok": ok, "image": f"{WIDTH}x{HEIGHT}",
               "root_file_mb": round(src.stat().st_size / 1e6, 1),
               "seconds_per_turn": round(float(np.median(times)), 2),
               "total_s": round(time.perf_counter() - start, 1),
               "cache_mb": args.cache_mb, "reopen_identical": same,
               "targets": {"peak_rss_mb": 400, "disk_mb": 120}}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
