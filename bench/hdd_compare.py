"""HDD at 4K: Loupe's embedded agent vs the direct (~1 MP whole-frame) baseline, per turn.

Usage::

    .venv/bin/python bench/hdd_compare.py OUT [--sessions 24] [--turns 3]
        [--size 3840x2160] [--seed 0] [--engine local|ray] [--workers 1]
        [--agents embedded,direct] [--dataset EXISTING_HDD_FOLDER] [--lpips-side 512]

Writes ``OUT/hdd`` (the dataset, unless ``--dataset``), ``OUT/<agent>/`` (results,
resumable) and ``OUT/report.{md,csv,json}`` + ``OUT/curves.png``. The last printed line
is one JSON object: ``per_turn`` → agent → turn → ``psnr_om``, ``ssim_om``, ``lpips_om``,
``if``, ``ic``, ``psnr_gt``, ``ssim_gt`` (against the rendered ground truth); plus
``overall``, ``lpips_kind``, ``sessions``, ``turns``, ``size``, ``seconds`` per agent.
Rerunning with a larger ``--sessions`` resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval import hdd, runner  # noqa: E402
from eval.report import write_reports  # noqa: E402

KEYS = ("psnr_om", "ssim_om", "lpips_om", "if", "ic", "psnr_gt", "ssim_gt")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--size", default="3840x2160")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine", default="local", choices=("local", "ray"))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--agents", default="embedded,direct")
    parser.add_argument("--dataset", type=Path, default=None)
    parser.add_argument("--lpips-side", type=int, default=512,
                        help="LPIPS working long side (ST-LPIPS is slow on CPU)")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    data = args.dataset
    if data is None:
        data = args.out / "hdd"
        if not (data / "manifest.json").is_file():
            hdd.make_dataset(data, args.sessions, args.turns, size, args.seed, targets=False)
    result = {"sessions": args.sessions, "turns": args.turns, "size": args.size,
              "per_turn": {}, "overall": {}, "seconds": {}, "errors": {}}
    folders = []
    for agent in args.agents.split(","):
        start = time.perf_counter()
        summary = runner.run(data, args.out / agent, agent=agent, engine=args.engine,
                             workers=args.workers, limit=args.sessions,
                             lpips_side=args.lpips_side)
        result["seconds"][agent] = round(time.perf_counter() - start, 1)
        result["errors"][agent] = summary["errors"]
        result["lpips_kind"] = summary["lpips_kind"]
        result["per_turn"][agent] = {t: {k: v.get(k) for k in KEYS}
                                     for t, v in summary["per_turn"].items()}
        result["overall"][agent] = {k: summary["overall"].get(k) for k in KEYS}
        folders.append(args.out / agent)
    write_reports(folders, args.out)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
