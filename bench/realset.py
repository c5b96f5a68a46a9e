"""Issue 32's real-photo set: how today's localiser (and the CLI's edits) do on real photos.

Runs ``PerceptionLocalizer.locate`` on every case of ``eval/data/realphotos/cases`` (one
split, or both; ``--photos`` or ``--cases`` narrows it) and prints one line per case, then
per split:
the share of right answers (IoU >= 0.8 when resolved, else the expected question or
refusal), mean mask IoU and boundary F-score (2 px) of the cases that name a thing, right
per class, and the silent failures (resolved and wrong). ``--upscale MP`` runs the photos
below 12 MP upscaled to MP (Lanczos). ``--overlays DIR`` saves a picture of every wrong
case (truth green, answer magenta). ``--print flip|gamma0.8|gamma1.25|scale0.6`` runs
each case on another print of its photo (``eval.realset.printed``: mirrored with "left"
and "right" swapped, lighter or darker mid-tones, a 0.6 × copy): the same scene, so an
answer right on one print and said found wrong on another was right by luck.

``--edits`` instead runs every case's ``edits`` through ``python -m agent edit PHOTO "…"
--out X`` (fresh process each; slow) and counts right / WRONG (silent failures) / honest
(asked or refused) / error edits per split (``eval.realset_edits``); with ``--upscale`` the
CLI edits the enlarged photo (its true mask enlarged with it) at that size.

Usage: ``python bench/realset.py [--split tune] [--upscale 16] [--overlays DIR] [--edits]``.
The last printed line is one JSON object: ``right_share``, ``mean_iou``, ``boundary_f``,
``by_class``, ``silent_failures``, ``cases``, ``one_click`` (the share of the cases naming
a thing that are right or asked with it among the candidates shown to click; each per
split), plus ``upscale_mp``,
``print`` and ``load_average`` (``REASON_CHARS=N`` in the environment prints N characters
of each reason instead of 90); with ``--edits``: ``edits`` (counts per split and verdict),
``silent_failures`` (per split), ``by_class`` (per split and failure class:
"right/honest/WRONG/error") and ``done_right_share`` (per split, of the edits whose
case expects a resolved target).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval.realset import (  # noqa: E402
    PRINTS,
    SPLITS,
    evaluate,
    load_cases,
    overlay,
    photo,
    printable,
    printed,
    summarise,
    upscaled,
)


def _localise(cases, args) -> dict:
    from agent.session.selection import MAX_CANDIDATES  # what a question shows to click
    from pipelines.localizers import PerceptionLocalizer
    from pipelines.localizers.steady import settle

    localizer = PerceptionLocalizer()
    got = evaluate(lambda image, phrase: settle(localizer, image, phrase), cases,
                   upscale_to=args.upscale, keep_masks=bool(args.overlays), print_as=args.print_as,
                   offer=MAX_CANDIDATES)
    for o in got:
        offered = f" (offered {o.offered:.2f})" if o.kind == "ask" and o.case.expect == \
            "resolved" else ""
        chars = int(os.environ.get("REASON_CHARS", "90"))
        print(f"{o.case.split:8s} {o.case.cls:13s} {o.case.id:44s} want {o.case.expect:8s} "
              f"got {o.kind:8s} IoU {o.iou:.3f} F {o.bf:.3f} "
              f"{'right' if o.right else 'WRONG'} {o.ms:6.0f} ms  {o.reason[:chars]}{offered}",
              flush=True)
        if args.overlays and not o.right:
            image, truth = photo(o.case.photo), o.case.truth()
            if args.upscale:
                image, truth = upscaled(image, truth, args.upscale)
            if args.print_as:
                image, truth, _ = printed(image, truth, "", args.print_as)
            folder = Path(args.overlays)
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(overlay(image, truth, o.found)).save(folder / f"{o.case.id}.png")
    summary = summarise(got)
    for split in SPLITS:
        if split in summary["cases"]:
            print(f"{split}: right {summary['right_share'][split]:.3f} of "
                  f"{summary['cases'][split]}, mean IoU {summary['mean_iou'][split]}, "
                  f"boundary F {summary['boundary_f'][split]}, silent failures "
                  f"{summary['silent_failures'][split]}, one click from right "
                  f"{summary['one_click'][split]}; by class "
                  f"{summary['by_class'][split]}", flush=True)
    return summary


#: the order of ``by_class``'s counts with ``--edits``
VERDICTS = ("right", "honest", "WRONG", "error")


def _edits(cases, args) -> dict:
    from eval.realset_edits import run_edit

    counts: dict = {}
    silent: dict = {}
    done_right: dict = {}
    by_class: dict = {}
    chars = int(os.environ.get("REASON_CHARS", "100"))
    for case in cases:
        for instruction in case.edits:
            o = run_edit(case, instruction, print_as=args.print_as,
                         upscale_mp=args.upscale)
            print(f"{case.split:8s} {case.cls:13s} {case.id:44s} {instruction[:40]:40s} "
                  f"{o.verdict:6s} exit {o.exit} {o.seconds:5.0f} s  {o.why[:chars]}",
                  flush=True)
            counts.setdefault(case.split, {}).setdefault(o.verdict, 0)
            counts[case.split][o.verdict] += 1
            silent[case.split] = silent.get(case.split, 0) + (o.verdict == "WRONG")
            tally = by_class.setdefault(case.split, {}).setdefault(case.cls, [0, 0, 0, 0])
            tally[VERDICTS.index(o.verdict)] += 1
            if case.expect == "resolved":
                done_right.setdefault(case.split, []).append(o.verdict == "right")
            if args.overlays and o.verdict == "WRONG" and o.after is not None:
                _edit_overlay(case, o, Path(args.overlays), args.print_as, args.upscale)
    return {"edits": counts, "silent_failures": silent,
            "by_class": {split: {c: "/".join(map(str, t)) for c, t in sorted(per.items())}
                         for split, per in by_class.items()},
            "done_right_share": {k: round(float(np.mean(v)), 3) for k, v in
                                 done_right.items()}}


def _edit_overlay(case, o, folder: Path, print_as: str | None, upscale_mp: float | None
                  ) -> None:
    """The result with what changed tinted red and the true mask outlined green."""
    from eval.realset_edits import edited_print

    before, truth, _ = edited_print(case, "", print_as, upscale_mp)
    changed = np.abs(o.after.astype(int) - before.astype(int)).max(axis=-1) > 0
    view = overlay(o.after, truth, changed)
    folder.mkdir(parents=True, exist_ok=True)
    slug = "".join(ch if ch.isalnum() else "_" for ch in o.instruction)[:40]
    Image.fromarray(view).save(folder / f"edit__{case.id}__{slug}.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=SPLITS)
    parser.add_argument("--photos", help="comma-separated photo ids (default: all)")
    parser.add_argument("--cases", help="comma-separated case ids (default: all)")
    parser.add_argument("--upscale", type=float, help="run photos < 12 MP upscaled to MP")
    parser.add_argument("--overlays", help="folder for pictures of the wrong cases")
    parser.add_argument("--edits", action="store_true", help="run the edits through the CLI")
    parser.add_argument("--print", dest="print_as", choices=PRINTS,
                        help="locate (or, with --edits, edit) on another print of each "
                        "photo (mirrored, lighter, darker, smaller, cropped round the "
                        "target: only the cases a crop keeps, eval.realset.printable)")
    args = parser.parse_args()
    print("load average at start:", os.getloadavg(), flush=True)
    cases = load_cases(args.split)
    if args.photos:
        wanted = set(args.photos.split(","))
        cases = [c for c in cases if c.photo in wanted]
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if c.id in wanted]
    cases = [c for c in cases if printable(c, args.print_as)]
    result = _edits(cases, args) if args.edits else _localise(cases, args)
    result["upscale_mp"] = args.upscale
    result["print"] = args.print_as
    result["load_average"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
