"""Nouns no detector class names, on the real-photo set (issue 34): what the localiser does.

Runs the default localiser (``PerceptionLocalizer``) at each photo's native size on 20
resolved cases of the **tune** split of ``eval.realset`` (``NOUN_CASES``): one case per
noun, each a noun no COCO class names, each one that main at ``81b4f27`` got wrong (not
resolved, or IoU < 0.5; its answer then is in BENCHMARKS.md). It prints per case the
answer, the mask IoU with the hand-drawn mask and the localiser's reason (which says how
the noun was understood).

``--held-out`` instead runs the held-out split's resolved cases whose noun no detector
class, face or text detector names (chosen by rule, ``held_out_noun_cases``, never by
eye) and prints only the aggregate: these photos are never tuned on.

Run: ``.venv/bin/python bench/lexicon_nouns.py [--held-out]``. The last line is one JSON
object with ``cases``, ``resolved``, ``iou_ge_0_5``, ``mean_iou`` and ``silent_failures``
(resolved with IoU < 0.8, issue 32's measure).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval import realset  # noqa: E402
from pipelines.localizers.perception import NOT_NOUNS, PerceptionLocalizer  # noqa: E402
from pipelines.localizers.phrases import parse_phrase  # noqa: E402
from pipelines.perception.words import SALIENT, match_noun  # noqa: E402

#: tune-split cases naming something no COCO class names, one per noun, that main got
#: wrong at 81b4f27 (the set's ids)
NOUN_CASES = (
    "aitzgorri__meadow", "appleflower__blossoms", "appleflower__leaves", "beam__hills",
    "black_dog__tongue", "bridge__tubes", "butterfly_kw__white_flower",
    "circuit_board__pins", "circuit_board__screw_left", "dog_on_floor__cabinet",
    "drop__drop", "greentock__hands", "lake_hill__lake", "picosdeeuropa__big_rock",
    "picosdeeuropa__snow", "picture_0b__fig", "this_is_not_windows__cloud",
    "this_is_not_windows__field", "valendas__mountains", "voc_2011_000003__kettle",
)


def held_out_noun_cases() -> list[realset.RealCase]:
    """Held-out resolved cases whose noun no detector class names (the rule, not a
    choice: the noun words as the localiser reads them map to no COCO class, face or
    text, and the phrase is not the sky or the background)."""
    out = []
    for case in realset.load_cases("held_out"):
        if case.expect != "resolved":
            continue
        parsed = parse_phrase(case.phrase)
        nouns = [w for w in parsed.unknown if len(w) > 2 and w not in NOT_NOUNS]
        if not nouns or "sky" in parsed.words:
            continue
        noun = " ".join(nouns[-2:]) if len(nouns) > 1 else nouns[0]
        if match_noun(noun, use_embedding=False).label == SALIENT:
            out.append(case)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--held-out", action="store_true",
                        help="the held-out noun cases, aggregate only")
    args = parser.parse_args()
    print("load average at start:", os.getloadavg(), flush=True)
    if args.held_out:
        chosen = held_out_noun_cases()
    else:
        cases = {c.id: c for c in realset.load_cases("tune")}
        chosen = [cases[i] for i in NOUN_CASES]
    t0 = os.times()
    outcomes = realset.evaluate(PerceptionLocalizer().locate, chosen)
    t1 = os.times()
    if not args.held_out:
        for o in outcomes:
            print(f"{o.case.id:34s} {o.case.phrase!r:38s} {o.kind:8s} IoU {o.iou:.2f}  "
                  f"{o.reason[:150]}", flush=True)
    ious = [o.iou for o in outcomes]
    print(json.dumps({"split": "held_out" if args.held_out else "tune",
                      "cases": len(outcomes),
                      "resolved": sum(o.kind == "resolved" for o in outcomes),
                      "iou_ge_0_5": sum(i >= 0.5 for i in ious),
                      "mean_iou": round(sum(ious) / max(1, len(ious)), 3),
                      "silent_failures": sum(o.silent for o in outcomes),
                      "cpu_s": round(t1.user + t1.system - t0.user - t0.system, 1),
                      "load_average": [round(v, 2) for v in os.getloadavg()]}))


if __name__ == "__main__":
    main()
