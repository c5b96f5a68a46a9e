"""Issue 33's fog, as a class: real validation photos seen through a depth-dependent haze.

Usage: ``python bench/haze_check.py [--draws 4] [--model eval/data/restore.json]``

Each ``eval.photos.REAL_VALIDATION`` photo (whole, at ``eval.restore.SIZE``) is seen through
``--draws`` seeded draws of ``eval.photos.atmospheric_haze`` (dim to bright air, depth
mostly up the frame): a scene as a photographer would have taken it in haze or fog, so
an untouched photo. The restore judge should not be sure it is degraded. Reports how many
would have their inverse applied in full (``p`` ≥ 0.9 and explained by the fault model),
how many reach 0.9 and 0.5, and the highest ``p``; renders, so the mechanics only (the
real-photo figures are ``bench/autopilot_quality.py``'s). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval import restore  # noqa: E402
from eval.photos import REAL_VALIDATION, atmospheric_haze, load_photo  # noqa: E402
from pipelines.images import downscale  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4)
    parser.add_argument("--model", default="")
    args = parser.parse_args()
    model = restore.load_model(args.model or None)
    rows = []
    for name in REAL_VALIDATION:
        rng = random.Random(f"check:{name}")
        img = np.ascontiguousarray(downscale(load_photo(name, 512), restore.SIZE))
        for _ in range(args.draws):
            est = restore.estimate(atmospheric_haze(img, rng), model)
            if est is not None:
                rows.append((est.probability, est.explained))
    print(json.dumps({"hazy_scenes": len(rows),
                      "fixed_in_full": sum(p >= 0.9 and ok for p, ok in rows),
                      "p>=0.9": sum(p >= 0.9 for p, _ in rows),
                      "p>=0.5": sum(p >= 0.5 for p, _ in rows),
                      "p_max": round(max(p for p, _ in rows), 3)}))


if __name__ == "__main__":
    main()
