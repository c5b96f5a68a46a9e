"""A digest of the localiser's answers, to show a speed-up changes none of them, bit for bit.

``PerceptionLocalizer.locate`` runs on a fixed list of scenes (each with the nets' memos
forgotten, as a new photo): the bench's two 20-MP scenes (``bench/perception.py``: the
small cup the zoom search finds, the cup the frame pass finds), the zoom renders of
``tests/perception_cases.json``, 14 tune cases of the real set through the object path at
their own size, and three of them enlarged to 20 MP (cubic), where the zoom search runs.
Each answer is written as its status and reason and, per candidate (shown and offered),
a hash of its mask's bits, its pixel count, box, score, label, source and evidence.

Run it on two checkouts and compare: ``--vs OTHER.json`` prints the scenes whose answers
differ, field by field (tune cases only: never the held-out split).

Usage: ``python bench/answers_digest.py OUT.json [--only a,b] [--vs OTHER.json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval.realset import case_shot, load_cases  # noqa: E402
from pipelines.localizers import PerceptionLocalizer  # noqa: E402
from pipelines.perception.detectors import forget_memos  # noqa: E402
from tests.perception_cases import load_cases as box_cases  # noqa: E402
from tests.perception_cases import photo_by_name, render_zoom_case  # noqa: E402

#: tune cases that go through the detector, the zoom search and the box cut
OBJECT_CASES = ("city_rail__train", "city_rail__white_car", "city_rail__the_car",
                "dogs_under_tree__the_dog", "gc_chichen_itza__person", "gc_cow__cow",
                "gc_lincoln_memorial__person", "gc_neuschwanstein__car",
                "gc_christ_the_redeemer__person", "gc_great_pyramid__person",
                "cat_watching_tv__cat", "cat_watching_tv__wine_glass", "globe_phone__cup",
                "picture_1a__cup")
#: of them, enlarged to 20 MP
ENLARGED = ("globe_phone__cup", "cat_watching_tv__wine_glass", "gc_cow__cow")
SIZE_20MP = (5472, 3648)


def digest(found) -> dict:  # noqa: ANN001 - a Localization
    """The answer's status, reason and every candidate's exact mask and numbers."""
    out: dict = {"status": found.status, "reason": found.reason, "candidates": []}
    for cand in [*found.masks, *(found.candidates or [])]:
        mask = np.ascontiguousarray(cand.mask, bool)
        bits = hashlib.blake2b(np.packbits(mask).tobytes() + repr(mask.shape).encode(),
                               digest_size=8).hexdigest()
        out["candidates"].append([bits, int(mask.sum()), repr(cand.box), repr(cand.score),
                                  cand.label, cand.source,
                                  repr(sorted((cand.evidence or {}).items()))])
    return out


def scenes() -> Iterator[tuple[str, np.ndarray, str]]:
    """(name, image, phrase) of every scene, in a fixed order."""
    zooms = [c for c in box_cases() if c.split == "zoom"]
    coffee = next(c for c in zooms if c.image_name == "coffee")
    yield "bench_zoom_20mp", render_zoom_case(photo_by_name("coffee"),
                                              {**coffee.render, "canvas": list(SIZE_20MP)}), \
        "the cup"
    yield "bench_frame_20mp", cv2.resize(photo_by_name("coffee"), SIZE_20MP,
                                         interpolation=cv2.INTER_CUBIC), "the cup"
    for case in zooms:
        yield case.id, case.image(), case.phrase
    phrases = {c.id: c.phrase for c in load_cases("tune")}
    for case_id in OBJECT_CASES:
        yield case_id, np.ascontiguousarray(case_shot(case_id)[0][..., :3]), phrases[case_id]
    for case_id in ENLARGED:
        image = np.ascontiguousarray(case_shot(case_id)[0][..., :3])
        yield f"{case_id}@20mp", cv2.resize(image, SIZE_20MP,
                                            interpolation=cv2.INTER_CUBIC), phrases[case_id]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="JSON file to write")
    parser.add_argument("--only", help="comma-separated scene names")
    parser.add_argument("--vs", help="another run's JSON: print the scenes that differ")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    loc = PerceptionLocalizer()
    got: dict = {}
    for name, image, phrase in scenes():
        if only and name not in only:
            continue
        forget_memos()
        start = time.process_time()
        got[name] = digest(loc.locate(image, phrase))
        print(f"{name}: {got[name]['status']}, {len(got[name]['candidates'])} candidate(s), "
              f"{time.process_time() - start:.1f} s CPU", flush=True)
    Path(args.out).write_text(json.dumps(got, indent=1, sort_keys=True))
    if args.vs:
        other = json.loads(Path(args.vs).read_text())
        differ = [name for name in got if got[name] != other.get(name)]
        for name in differ:
            print(f"DIFFERS {name}: {json.dumps(other.get(name))[:300]} -> "
                  f"{json.dumps(got[name])[:300]}")
        print(f"{len(got) - len(differ)} of {len(got)} scenes answer the same, bit for bit")


if __name__ == "__main__":
    main()
