"""Nouns no detector class names, on the real-photo set (issue 34): what the localiser does.

Runs the default localiser (``PerceptionLocalizer``) at each photo's native size on 20
resolved cases of ``eval.realset`` whose noun is not one of the detector's COCO classes
(``NOUN_CASES``, both splits), and prints per case the answer, the mask IoU with the
hand-drawn mask and the localiser's reason (which says how the noun was understood when
the lexicon is installed). Run it on two checkouts to compare them.

Run: ``.venv/bin/python bench/lexicon_nouns.py``. The last line is one JSON object with
``cases``, ``resolved``, ``iou_ge_0_5`` and ``mean_iou``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval import realset  # noqa: E402
from pipelines.localizers.perception import PerceptionLocalizer  # noqa: E402

#: resolved cases naming something no COCO class names (the set's ids)
NOUN_CASES = (
    "aitzgorri__meadow", "appleflower__blossoms", "black_dog__tongue", "butterfly__butterfly",
    "butterfly__flower", "butterfly_kw__butterfly", "castle_maintenon__round_tower",
    "christmas_table__dish", "dog_on_floor__cabinet", "dragonfly__dragonfly",
    "dragonfly__dry_leaf", "drop__drop", "european_honey_bee__bee", "free__lamp_middle",
    "lake_hill__lake", "panther_chameleon_female__chameleon", "picture_0b__fig",
    "seeding__dandelion", "voc_2011_000003__kettle", "voc_2011_000006__armchair",
)


def main() -> None:
    cases = {c.id: c for c in realset.load_cases()}
    chosen = [cases[i] for i in NOUN_CASES if i in cases]
    outcomes = realset.evaluate(PerceptionLocalizer().locate, chosen)
    for o in outcomes:
        print(f"{o.case.id:40s} {o.case.phrase!r:38s} {o.kind:8s} IoU {o.iou:.2f}  "
              f"{o.reason[:150]}")
    ious = [o.iou for o in outcomes]
    print(json.dumps({"cases": len(outcomes),
                      "resolved": sum(o.kind == "resolved" for o in outcomes),
                      "iou_ge_0_5": sum(i >= 0.5 for i in ious),
                      "mean_iou": round(sum(ious) / max(1, len(ious)), 3)}))


if __name__ == "__main__":
    main()
