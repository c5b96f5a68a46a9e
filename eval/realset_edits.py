"""The real-photo set's edits through the command line a user types (issue 32).

Every case's ``edits`` run as ``python -m agent edit PHOTO "…" --out X`` (no brush), one
fresh process each, and each is classified:

* ``right`` — exit 0 (reported done), nothing changed beyond the true mask's reach
  (``eval.localization.beyond_reach``: its feather plus the most an edge may grow) and
  the named thing changed as asked (``changed_as_asked``);
* ``WRONG`` — a silent failure: reported done, but pixels beyond the reach changed, the
  named thing did not change as asked, or the thing was ambiguous / not in the photo;
* ``honest`` — exit 1: the agent asked or refused (right for ``ask``/``refuse`` cases,
  not done for the others);
* ``error`` — exit 2, a crash or a timeout.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from eval import realphotos
from eval.localization import beyond_reach
from eval.realset import RealCase, photo, printed, upscaled

ROOT = Path(__file__).resolve().parents[1]
#: a pixel changed when a channel moved more than this (JPEG-free PNG out, so 0 is exact)
CHANGED = 0


@dataclass
class EditOutcome:
    """One edit of one case through the CLI."""

    case: RealCase
    instruction: str
    verdict: str
    exit: int
    leaked_px: int
    why: str
    seconds: float
    after: np.ndarray | None = None


def _luma(rgb: np.ndarray) -> np.ndarray:
    return rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def _saturation(rgb: np.ndarray) -> np.ndarray:
    return rgb.max(axis=-1).astype(np.float32) - rgb.min(axis=-1)


COLOURS = {"blue": 2, "red": 0, "green": 1}
#: an adjustment of a region must reach this share of it (a removal: its own rule)
COVERED = 0.85
#: ... a recolour ("make the car red") to a named colour: its glass, tyres and lights keep
#: theirs, and the named colour must then lead on most of the thing (below)
COVERED_RECOLOUR = 0.6
#: "a deeper blue" may raise the mean saturation to at most this factor (+30 levels)
RELATIVE = 1.6
#: a tonal or colour change is a gain: a pixel darker than this (luma) moves 2 levels or
#: less under a warmth or brightness of a few per cent (the Chichen Itza pyramid made
#: warmer: 0 % of its pixels under luma 60 moved more than 2, 96-98 % of those over 100),
#: so coverage counts the pixels at least this bright, unless they are under
#: ``VISIBLE_LEAST`` of the thing (a black dog): then all of them
VISIBLE_LUMA = 56
VISIBLE_LEAST = 0.25


def changed_as_asked(instruction: str, before: np.ndarray, after: np.ndarray,
                     truth: np.ndarray) -> tuple[bool, str]:
    """Whether the named thing (``truth``) changed the way the instruction asks:
    removed (most of it changed); otherwise at least ``COVERED`` of it changed (of its
    pixels bright enough to show a gain: ``VISIBLE_LUMA``) and:
    brighter / darker (mean luma ±8), "a deeper / more blue", "bluer" (saturation and the colour's
    lead up, but by a relative amount: at most ``RELATIVE`` times + 30, and not driven to
    the limit), "make it <colour>" (``COVERED_RECOLOUR`` of it changed, and the colour's
    channel leads on most of it). Returns (ok, why)."""
    text = instruction.lower()
    b, a = before[truth], after[truth]
    moved = np.abs(a.astype(int) - b.astype(int)).max(axis=-1) > 2
    share = float(moved.mean())
    if re.search(r"\b(remove|erase|delete|get rid of)\b", text):
        return share > 0.6, f"{share:.0%} of the thing changed"
    visible = _luma(b) >= VISIBLE_LUMA
    if visible.mean() >= VISIBLE_LEAST:
        share = float(moved[visible].mean())
    recolour = any(re.search(rf"\b{name}\b", text) for name in COLOURS) and not \
        re.search(r"\b(deeper|richer|more|less|bluer|greener|redder)\b", text)
    if share < (COVERED_RECOLOUR if recolour else COVERED):
        return False, f"only {share:.0%} of the thing changed"
    if re.search(r"\b(deeper|richer|more (saturated|vivid|blue|green|red)|bluer|greener|"
                 r"redder)\b", text):
        ch = next((COLOURS[c] for c in COLOURS if c in text), 2)
        lead_b = float((b[:, ch].astype(float) - b.mean(axis=-1)).mean())
        lead_a = float((a[:, ch].astype(float) - a.mean(axis=-1)).mean())
        sat_a, sat_b = float(_saturation(a).mean()), float(_saturation(b).mean())
        clipped = float((_saturation(a) >= 250).mean())
        ok = sat_b + 3 < sat_a <= RELATIVE * sat_b + 30 and lead_a > lead_b and clipped < 0.2
        return ok, f"saturation {sat_b:.0f}->{sat_a:.0f} (a relative word allows up to " \
                   f"{RELATIVE * sat_b + 30:.0f}), {clipped:.0%} at the limit"
    if re.search(r"\b(brighter|brighten|lighter|lighten)\b", text):
        d = float(_luma(a).mean() - _luma(b).mean())
        return d > 8, f"luma {d:+.1f}"
    if re.search(r"\b(darker|darken)\b", text):
        d = float(_luma(a).mean() - _luma(b).mean())
        return d < -8, f"luma {d:+.1f}"
    for name, ch in COLOURS.items():
        if re.search(rf"\b{name}\b", text):
            lead = a[:, ch].astype(float) - np.delete(a, ch, axis=-1).max(axis=-1)
            share = float((lead > 0).mean())
            return share > 0.6, f"{share:.0%} of the thing now {name}"
    return share > 0.3, f"{share:.0%} of the thing changed (no specific check)"


def edited_print(case: RealCase, instruction: str = "", print_as: str | None = None,
                 upscale_mp: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray | None, str]:
    """The photo, true mask and words an edit of ``case`` runs on (``run_edit``): as shot,
    or another print of it (``eval.realset.printed``), enlarged to ``upscale_mp``
    (``eval.realset.upscaled``) when given."""
    before, truth = photo(case.photo), case.truth()
    if print_as:
        before, truth, instruction = printed(before, truth, instruction, print_as)
    if upscale_mp:
        before, truth = upscaled(before, truth, upscale_mp)
    return before, truth, instruction


def cli_edit(source: Path, instruction: str, folder: Path, timeout: float = 600
             ) -> subprocess.CompletedProcess | None:
    """``python -m agent edit SOURCE "instruction" --out FOLDER/out.png`` with a fresh
    session in ``folder`` and no brush, as a user types it; None when it timed out."""
    try:
        return subprocess.run([sys.executable, "-m", "agent", "edit", str(source),
                               instruction, "--session", str(folder / "s"),
                               "--out", str(folder / "out.png")], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def run_edit(case: RealCase, instruction: str, timeout: float = 600,
             print_as: str | None = None, upscale_mp: float | None = None) -> EditOutcome:
    """One instruction on the case's photo through ``python -m agent edit`` (module doc);
    ``print_as`` runs it on another print of the photo (``eval.realset.printed``: the
    photo, its true mask and the instruction's "left"/"right" go together);
    ``upscale_mp`` on the photo (or print) enlarged as ``eval.realset.upscaled`` does, so
    that a small photo goes through the native-resolution path of a 12-20 MP one."""
    source = realphotos.photo_path(case.photo)
    before, truth, instruction = edited_print(case, instruction, print_as, upscale_mp)
    with tempfile.TemporaryDirectory(prefix="loupe-realset-") as tmp:
        out = Path(tmp) / "out.png"
        if print_as or before.shape != photo(case.photo).shape:
            source = Path(tmp) / "print.png"   # lossless: the CLI reads this print exactly
            Image.fromarray(before).save(source)
        start = time.perf_counter()
        run = cli_edit(source, instruction, Path(tmp), timeout)
        seconds = time.perf_counter() - start
        if run is None:
            return EditOutcome(case, instruction, "error", -1, 0, "timed out", seconds)
        said = (run.stdout.strip().splitlines() or [""])
        tail = next((line for line in reversed(said) if line and not
                     line.strip().startswith(("session:", "saved:", "head:", "candidate"))), "")
        if run.returncode == 1:
            return EditOutcome(case, instruction, "honest", 1, 0, tail[:200], seconds)
        if run.returncode != 0 or not out.is_file():
            why = (run.stderr.strip().splitlines() or [tail])[-1][:200]
            return EditOutcome(case, instruction, "error", run.returncode, 0, why, seconds)
        with Image.open(out) as img:
            after = np.asarray(img.convert("RGB"))
    if case.expect != "resolved" or truth is None:
        return EditOutcome(case, instruction, "WRONG", 0, 0,
                           f"done, but the case expects {case.expect}: {tail[:150]}",
                           seconds, after)
    if after.shape != before.shape:
        return EditOutcome(case, instruction, "WRONG", 0, 0,
                           f"size changed {before.shape} -> {after.shape}", seconds, after)
    far = beyond_reach(truth)
    leaked = int((np.abs(after.astype(int) - before.astype(int)).max(axis=-1) > CHANGED)[far]
                 .sum())
    ok, why = changed_as_asked(instruction, before, after, truth)
    if leaked:
        return EditOutcome(case, instruction, "WRONG", 0, leaked,
                           f"{leaked} px changed beyond the reach; {why}", seconds, after)
    return EditOutcome(case, instruction, "right" if ok else "WRONG", 0, 0, why, seconds,
                       after)
