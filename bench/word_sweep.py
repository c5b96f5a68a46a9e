"""A label-free sweep: one plain instruction over every photo of a split, through the CLI.

The labelled set asks each photo only about what it shows. A user also names what a photo
does not show ("make the water bluer" on a meadow), or names it loosely ("the grass" for
tidal sand). This runs ``python -m agent edit PHOTO "<instruction>" --out X`` on every
photo of the split (fresh process and session each, no brush) and, for every edit reported
done (exit 0), saves a picture to judge by eye: the photo beside it with what changed tinted
magenta. An edit done on a photo without the named thing is a silent failure; found ones
are added to the labelled set as ``refuse`` (or ``ask``) cases, where the benches count
them.

Usage::

    .venv/bin/python bench/word_sweep.py "make the grass greener" [--split tune]
        [--photos a,b] [--pictures DIR]

Per photo: the exit code (0 done, 1 asked or refused, 2 error) and the share of the frame
changed. The last printed line is one JSON object: ``{"instruction", "split", "photos",
"done", "asked", "errors", "done_photos": {id: changed share}, "seconds"}``. Held-out
photos are never swept (they are not looked at).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval import realphotos  # noqa: E402
from eval.realset import load_cases, overlay  # noqa: E402
from eval.realset_edits import cli_edit  # noqa: E402

#: the most seconds one CLI edit may run
TIMEOUT = 300


def picture(before: np.ndarray, changed: np.ndarray, side: int = 700) -> np.ndarray:
    """The photo beside itself with the changed pixels tinted magenta, fitted to ``side``."""
    return np.concatenate([overlay(before, None, None, side),
                           overlay(before, None, changed, side)], axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("instruction")
    parser.add_argument("--split", choices=["tune"], default="tune",
                        help="only tune: held-out photos are never looked at")
    parser.add_argument("--photos", help="comma-separated photo ids (default: all)")
    parser.add_argument("--pictures", help="folder for the pictures of the done edits")
    args = parser.parse_args()
    start = time.perf_counter()
    ids = sorted({c.photo for c in load_cases(args.split)})
    if args.photos:
        ids = [p for p in ids if p in args.photos.split(",")]
    realphotos.fetch(ids)
    exits: dict[str, int] = {}
    done: dict[str, float] = {}
    for pid in ids:
        before = realphotos.load(pid)
        with tempfile.TemporaryDirectory(prefix="loupe-sweep-") as tmp:
            source, out = Path(tmp) / "photo.png", Path(tmp) / "out.png"   # cli_edit's
            Image.fromarray(before).save(source)     # as the bench reads it (upright)
            run = cli_edit(source, args.instruction, Path(tmp), TIMEOUT)
            code = 2 if run is None else run.returncode
            exits[pid] = code
            share = 0.0
            if code == 0 and out.is_file():
                after = np.asarray(Image.open(out).convert("RGB"))
                changed = np.abs(after.astype(np.int16) - before.astype(np.int16)).max(
                    axis=-1) > 0
                share = float(changed.mean())
                done[pid] = round(share, 3)
                if args.pictures:
                    folder = Path(args.pictures)
                    folder.mkdir(parents=True, exist_ok=True)
                    Image.fromarray(picture(before, changed)).save(folder / f"{pid}.png")
        print(f"{pid:28s} exit {code}  changed {share:.1%}", flush=True)
    print(json.dumps({"instruction": args.instruction, "split": args.split,
                      "photos": len(ids), "done": sum(c == 0 for c in exits.values()),
                      "asked": sum(c == 1 for c in exits.values()),
                      "errors": sum(c not in (0, 1) for c in exits.values()),
                      "done_photos": done,
                      "seconds": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
