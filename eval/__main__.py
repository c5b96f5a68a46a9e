"""``python -m eval make-hdd|score|run|report`` — the evaluation command line."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.hdd import make_dataset
from eval.metrics import load_mask, score_pair
from eval.report import write_reports
from eval.runner import run
from eval.systems import get_judge
from pipelines.cli import guarded
from pipelines.images import load_image
from pipelines.redact import install_log_redaction

log = logging.getLogger("eval")


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 3840x2160, got {text!r}") from None
    if width < 32 or height < 32:
        raise argparse.ArgumentTypeError("size must be at least 32x32")
    return width, height


def _bbox(text: str) -> tuple[int, int, int, int]:
    try:
        x0, y0, x1, y1 = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bbox must be x0,y0,x1,y1, got {text!r}") from None
    return x0, y0, x1, y1


def _emit(data: Any) -> None:
    """Print one JSON object on stdout (non-finite floats as strings)."""
    sys.stdout.write(json.dumps(_jsonable(data)) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _cmd_make_hdd(args: argparse.Namespace) -> int:
    root = make_dataset(args.out, sessions=args.sessions, turns=args.turns, size=args.size,
                        seed=args.seed, targets=not args.no_targets)
    _emit({"dataset": str(root), "sessions": args.sessions, "turns": args.turns,
           "size": list(args.size), "seed": args.seed})
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    before = load_image(args.before).pixels
    after = load_image(args.after).pixels
    mask = load_mask(args.mask, before.shape[:2]) if args.mask else None
    judge = get_judge() if args.instruction else None
    _emit(score_pair(before, after, mask=mask, bbox=args.bbox, instruction=args.instruction,
                     judge=judge))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    summary = run(args.dataset, args.out, agent=args.agent, engine=args.engine,
                  workers=args.workers, limit=args.limit, kind=args.kind,
                  lpips_side=None if args.lpips_side < 0 else args.lpips_side,
                  save_images=args.save_images, judge=args.judge)
    if args.report:
        summary["reports"] = [str(p) for p in write_reports(args.out)]
    _emit(summary)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    _emit({"written": [str(p) for p in write_reports(args.results, args.out)]})
    return 0


def _cmd_photos(args: argparse.Namespace) -> int:
    from eval import realphotos  # only this command needs the photo catalogue
    ids = args.ids or None
    if args.action == "fetch":
        paths = realphotos.fetch(ids)
        _emit({"fetched": len(paths), "folder": str(realphotos.photos_dir())})
        return 0
    if args.action == "verify":
        bad = realphotos.verify(ids)
        _emit({"bad": bad})
        return 1 if bad else 0
    table = realphotos.catalogue()
    _emit([{"id": p.id, "package": p.package, "size": [p.width, p.height],
            "license": p.license} for p in table.values() if not ids or p.id in ids])
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m eval``."""
    parser = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    hdd = sub.add_parser("make-hdd", help="write a rendered multi-turn HDD dataset")
    hdd.add_argument("out", type=Path)
    hdd.add_argument("--sessions", type=int, default=96)
    hdd.add_argument("--turns", type=int, default=3)
    hdd.add_argument("--size", type=_size, default=(3840, 2160))
    hdd.add_argument("--seed", type=int, default=0)
    hdd.add_argument("--no-targets", action="store_true",
                     help="write only each session's source image (targets re-render)")
    hdd.set_defaults(func=_cmd_make_hdd)

    score = sub.add_parser("score", help="score an edit: before and after images")
    score.add_argument("before")
    score.add_argument("after")
    where = score.add_mutually_exclusive_group()
    where.add_argument("--mask", help="edit-area mask image (white = edited)")
    where.add_argument("--bbox", type=_bbox, help="edit area x0,y0,x1,y1")
    score.add_argument("--instruction", default=None)
    score.set_defaults(func=_cmd_score)

    run = sub.add_parser("run", help="evaluate an agent on a dataset, turn by turn")
    run.add_argument("out", type=Path)
    run.add_argument("--dataset", required=True)
    run.add_argument("--agent", default="embedded")
    run.add_argument("--engine", choices=("local", "ray"), default="local")
    run.add_argument("--workers", type=int, default=1)
    run.add_argument("--limit", type=int, default=None, help="first N samples only")
    run.add_argument("--kind", default=None, help="dataset format (detected when omitted)")
    run.add_argument("--lpips-side", type=int, default=1024,
                     help="LPIPS working long side; -1 native, 0 skip LPIPS")
    run.add_argument("--save-images", action="store_true")
    run.add_argument("--judge", default=None,
                     help="also score instruction following offline with a registered "
                          "judge ('critic': the agent's critic; no VLM needed)")
    run.add_argument("--report", action="store_true", help="also write the reports")
    run.set_defaults(func=_cmd_run)

    report = sub.add_parser("report", help="write JSON/CSV/Markdown/PNG reports")
    report.add_argument("results", type=Path, nargs="+",
                        help="run folders (with results.jsonl), compared side by side")
    report.add_argument("--out", type=Path, default=None)
    report.set_defaults(func=_cmd_report)
    photos = sub.add_parser("photos", help="real photographs from Debian packages "
                                           "(fetch by package name, verify, list)")
    photos.add_argument("action", choices=("fetch", "verify", "list"))
    photos.add_argument("ids", nargs="*", help="photo ids (all when omitted)")
    photos.set_defaults(func=_cmd_photos)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction()
    return guarded(lambda: args.func(args), (ValueError, OSError, RuntimeError))


if __name__ == "__main__":
    sys.exit(main())
