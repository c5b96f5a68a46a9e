"""How much of a photo the gains inverse pushes past white (issue 33, the fog follow-up).

The fault model's check on "under-exposed by g": a photo darkened by a gain g has no pixel
above 1/g, so a photo with a real share (1–2 %) above the estimate's white is not one. This
reads, on training and validation photos only (every third ``REAL_TRAIN`` photo and all of
``REAL_VALIDATION``, untouched and one stop dark, 512 px), each input the judge reads as
gains: the share of pixels above the estimate's white point (each channel's q99.9 at
``restore.SIZE``) and the share the full inverse newly clips to 255.

    .venv/bin/python bench/gains_clip.py

The last line is one JSON object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval import restore  # noqa: E402
from eval.photos import BENCH_DEGRADATIONS, REAL_TRAIN, REAL_VALIDATION, load_photo  # noqa: E402
from pipelines.color import srgb_to_linear  # noqa: E402
from pipelines.operations import registry  # noqa: E402


def main() -> None:
    op = registry.get(restore.INVERSE_OP)
    rows = []
    for name in REAL_TRAIN[::3] + REAL_VALIDATION:
        clean = load_photo(name, 512)
        for label, img in (("untouched", clean),
                           ("one_stop_dark", BENCH_DEGRADATIONS["one_stop_dark"](clean))):
            est = restore.estimate(img)
            if est is None or est.family != "gains":
                continue
            lin = srgb_to_linear(img.astype(np.float32) / 255.0)
            white = 2.0 ** np.asarray(est.stops, np.float32)
            above = float((lin > white * 1.0001).any(axis=2).mean())
            full = op.apply(img, np.ones(img.shape[:2], bool), op.validate(est.params))
            newly = float((full == 255).any(axis=2).mean() - (img == 255).any(axis=2).mean())
            rows.append({"photo": name, "input": label,
                         "probability": round(est.probability, 2),
                         "stops": round(max(est.stops), 2),
                         "above_white_pct": round(100 * above, 3),
                         "newly_clipped_pct": round(100 * newly, 3)})
            print(json.dumps(rows[-1]))
    print(json.dumps({"inputs": len(rows),
                      "max_above_white_pct": max(r["above_white_pct"] for r in rows),
                      "max_newly_clipped_pct": max(r["newly_clipped_pct"] for r in rows)}))


if __name__ == "__main__":
    main()
