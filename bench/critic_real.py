"""The critic on real photographs: correct edits pass, wrong-extent edits fail (issue 32).

Usage::

    .venv/bin/python bench/critic_real.py [--split tune|held_out|both] [--show] [--bad-words 3]
        [--cases id1,id2] [--kinds good,half] [--verdicts FILE.jsonl]

Pairs come from ``tests/critic_real_pairs.py``: on every labelled case (a real photo, the
phrase naming one thing, its true mask, its failure class) an operation is applied by the
agent's own planner and executor inside the TRUE mask (good), and through a grown mask, a
mask moved onto what lies beside it, a half mask and the whole frame (bad); a removal
whose fill was judged wrong by eye is a bad pair too ("wrong fill"). Each pair is
judged as the turn loop judges it: ``agent.brain.judge.critique_images`` with the mask the
edit was made with, the critic looking at the whole frame.

``--show`` lists the misjudged pairs of the tune split only; held-out figures are printed
as aggregates (nobody tunes on them). The last printed line is one JSON object:
``{"splits": {split: {"all": {...}, "classes": {cls: {...}}, "kinds": {...}}}}`` where each
``{...}`` holds ``good_pass_rate``, ``bad_fail_rate``, ``good``, ``bad`` (counts), and
``stale_fills`` lists the removals whose fill changed since it was judged by eye and
``unjudged_fills`` those never judged (left out of both rates; held-out: counts only).

``--cases`` and ``--kinds`` narrow a run to some tune cases (ids) and pair kinds ("good"
and the bad kinds of ``tests/critic_real_pairs.BAD_KINDS``); ``--verdicts`` writes one JSON
line per tune pair (name, good, passed, score, reasons) so two runs can be diffed pair by
pair.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.brain.judge import critique_images  # noqa: E402
from tests.critic_real_pairs import (  # noqa: E402
    BAD_WORDS,
    SIDE,
    STALE_FILLS,
    UNJUDGED_FILLS,
    pairs,
)


def _rates(rows: list[tuple[bool, bool]]) -> dict:
    good = [passed for is_good, passed in rows if is_good]
    bad = [passed for is_good, passed in rows if not is_good]
    return {"good_pass_rate": round(sum(good) / len(good), 3) if good else None,
            "bad_fail_rate": round(sum(not p for p in bad) / len(bad), 3) if bad else None,
            "good": len(good), "bad": len(bad)}


def judge_split(split: str, show: bool, bad_words: int = BAD_WORDS, *,
                ids: set[str] | None = None, kinds: tuple[str, ...] | None = None,
                verdicts=None) -> dict:
    by_class: dict[str, list] = defaultdict(list)
    by_kind: dict[str, list] = defaultdict(list)
    every: list = []
    narrow = {"ids": ids} if ids else {}
    if kinds:
        narrow["kinds"] = kinds
    for pair in pairs(split, bad_words=bad_words, **narrow):
        verdict = critique_images(pair.before, pair.after, pair.instruction, pair.used_mask)
        row = (pair.good, bool(verdict["passed"]))
        if verdicts is not None and split == "tune":
            verdicts.write(json.dumps({"name": pair.name, "cls": pair.case.cls,
                                       "kind": pair.kind, "good": pair.good,
                                       "passed": row[1], "score": verdict["score"],
                                       "reasons": verdict["reasons"]}) + "\n")
            verdicts.flush()
        every.append(row)
        by_class[pair.case.cls].append(row)
        by_kind[pair.kind].append(row)
        if show and split == "tune" and row[1] != pair.good:
            print(f"misjudged: {pair.name} score {verdict['score']}: "
                  + "; ".join(verdict["reasons"][:2]), flush=True)
    kinds = {k: _rates(v) for k, v in by_kind.items()}
    return {"all": _rates(every), "classes": {c: _rates(v) for c, v in sorted(by_class.items())},
            "kinds": {k: {"rate": v["good_pass_rate"] if k == "good" else v["bad_fail_rate"],
                          "n": v["good"] + v["bad"]} for k, v in kinds.items()}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="both", choices=("tune", "held_out", "both"))
    parser.add_argument("--show", action="store_true", help="list misjudged tune pairs")
    parser.add_argument("--bad-words", type=int, default=BAD_WORDS,
                        help="edit the wrong masks with this many of a case's instructions "
                             "(default 1, 'brighter'; 3 adds 'darker' and the colour)")
    parser.add_argument("--cases", default="", help="tune case ids, comma-separated")
    parser.add_argument("--kinds", default="", help="pair kinds, comma-separated")
    parser.add_argument("--verdicts", default="", help="write each tune pair's verdict here")
    args = parser.parse_args()
    ids = {c for c in args.cases.split(",") if c} or None
    kinds = tuple(k for k in args.kinds.split(",") if k) or None
    if ids and args.split != "tune":
        parser.error("--cases narrows the tune split only")
    out: dict = {"side": SIDE, "bad_words": args.bad_words, "splits": {}}
    start = time.perf_counter()
    verdicts = open(args.verdicts, "w") if args.verdicts else None  # noqa: SIM115
    for split in ("tune", "held_out") if args.split == "both" else (args.split,):
        out["splits"][split] = judge_split(split, args.show, args.bad_words, ids=ids,
                                           kinds=kinds, verdicts=verdicts)
    if verdicts is not None:
        verdicts.close()
    out["stale_fills"] = sorted(STALE_FILLS) if args.split == "tune" else len(STALE_FILLS)
    out["unjudged_fills"] = (sorted(UNJUDGED_FILLS) if args.split == "tune"
                             else len(UNJUDGED_FILLS))
    out["seconds"] = round(time.perf_counter() - start, 1)
    out["load_average"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
