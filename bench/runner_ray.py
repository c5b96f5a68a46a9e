"""Runner throughput: Ray with 1 worker vs 2 workers (and the local engine) on a small
rendered HDD set, embedded agent, full metrics.

Usage::

    .venv/bin/python bench/runner_ray.py [--sessions 8] [--turns 2] [--size 1920x1080]
        [--agent embedded] [--lpips-side 512]

The last printed line is one JSON object: ``samples``, ``turns``, ``size``, ``agent``,
``local_s``, ``ray_1_worker_s``, ``ray_2_workers_s``, ``speedup_1_to_2`` (wall times
include Ray's start-up).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval import hdd, runner  # noqa: E402


def _timed(**kwargs) -> float:
    start = time.perf_counter()
    summary = runner.run(**kwargs)
    if summary["errors"]:
        raise SystemExit(f"{summary['errors']} samples failed in {kwargs['out']}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--agent", default="embedded")
    parser.add_argument("--lpips-side", type=int, default=512)
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        data = hdd.make_dataset(Path(tmp) / "hdd", args.sessions, args.turns, size, seed=7,
                                targets=False)
        common = {"dataset": data, "agent": args.agent, "lpips_side": args.lpips_side}
        local = _timed(out=Path(tmp) / "local", **common)
        one = _timed(out=Path(tmp) / "ray1", engine="ray", workers=1, **common)
        two = _timed(out=Path(tmp) / "ray2", engine="ray", workers=2, **common)
    print(json.dumps({"samples": args.sessions, "turns": args.turns, "size": args.size,
                      "agent": args.agent, "local_s": round(local, 2),
                      "ray_1_worker_s": round(one, 2), "ray_2_workers_s": round(two, 2),
                      "speedup_1_to_2": round(one / two, 2)}))


if __name__ == "__main__":
    main()
