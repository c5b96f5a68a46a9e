"""Issue 23 through the command line a user types: ``python -m agent edit PHOTO "…" --out
X`` on the labelled real-photo set (12–20 MP), one fresh process per edit, no brush.
Each edit changes the named thing (removed, recoloured, brighter, darker, grey, warmer)
and every pixel farther from it than its feather plus the most an edge may grow is
bit-identical in the file written; the left of two touching cups is recoloured without a
pixel of the right one changing (its mask grows over its own edge, never into its
neighbour nor over the saucer they share).

Five edits run here (``SUITE``), each kind of target once at 12 and 20 MP: a removal, a
recolour, a thing no model knows brightened, a background turned grey, a sky brightened.
The same checks on all nine (``EDITS``: also the right cup darkened, the background
behind the flower and the horse darkened, the hazy sky warmed, the sky over water
darkened) run in ``bench/cli_edits_real.py``: each is ~25-70 s of a test worker, and the
suite keeps to 15 minutes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eval.localization import beyond_reach, load_cases, render
from pipelines.localizers import get_localizer

ROOT = Path(__file__).resolve().parents[1]
CASES = {c.id: c for c in load_cases()}


def _luma(rgb: np.ndarray) -> np.ndarray:
    return rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def _saturation(rgb: np.ndarray) -> np.ndarray:
    return rgb.max(axis=-1).astype(np.float32) - rgb.min(axis=-1)


def _removed(before, after, truth) -> None:
    changed = np.abs(after.astype(int) - before.astype(int)).max(axis=2) > 2
    assert changed[truth].mean() > 0.8
    found = get_localizer().locate(after, "the cup")     # the cup is gone from its place
    if found.status == "resolved":
        assert (found.union() & truth).sum() < 0.2 * truth.sum(), found.reason


def _bluer(before, after, truth) -> None:
    b, a = before[truth].astype(float), after[truth].astype(float)
    assert a[:, 2].mean() - a[:, 0].mean() > b[:, 2].mean() - b[:, 0].mean() + 30


def _warmer(before, after, truth) -> None:
    b, a = before[truth].astype(float), after[truth].astype(float)
    assert a[:, 0].mean() - a[:, 2].mean() > b[:, 0].mean() - b[:, 2].mean() + 5


def _brighter(before, after, truth) -> None:
    assert _luma(after[truth]).mean() > _luma(before[truth]).mean() + 8


def _darker(before, after, truth) -> None:
    assert _luma(after[truth]).mean() < _luma(before[truth]).mean() - 8


def _grey(before, after, truth) -> None:
    assert _saturation(after[truth]).mean() < 0.25 * _saturation(before[truth]).mean()


EDITS = [
    ("cup_low_score", "remove the cup", _removed),
    ("left_of_two_touching_cups", "make the left cup blue", _bluer),
    ("emblem_non_coco", "brighten the emblem", _brighter),
    ("right_of_two_touching_cups", "darken the right cup", _darker),
    ("background_behind_cup", "make the background black and white", _grey),
    ("background_behind_flower_and_horse", "darken the background", _darker),
    ("sky_dusk_over_road", "brighten the sky", _brighter),
    ("sky_over_water", "make the sky darker", _darker),
    ("sky_hazy", "make the sky warmer", _warmer),
]


#: how much of the target an edit must visibly change (by more than 2 levels), where
#: test_localization_set once checked the same edit through a session in-process
MOST_OF = {"left_of_two_touching_cups": 0.5, "background_behind_cup": 0.3,
           "background_behind_flower_and_horse": 0.3}


#: a removal (20 MP), a recolour of one of two touching cups, a thing no model knows
#: brightened once confirmed, a background turned grey (12 MP), a dusk sky brightened
#: (20 MP): each kind of target and of edit once
SUITE = [e for e in EDITS if e[0] in ("cup_low_score", "left_of_two_touching_cups",
                                      "emblem_non_coco", "background_behind_cup",
                                      "sky_dusk_over_road")]


@pytest.mark.parametrize("case_id,instruction,check", SUITE,
                         ids=[f"{c}:{i}" for c, i, _ in SUITE])
def test_a_cli_edit_changes_only_the_named_thing(tmp_path, case_id, instruction,
                                                 check) -> None:
    cli_edit(tmp_path, case_id, instruction, check)


def cli_edit(tmp_path: Path, case_id: str, instruction: str, check) -> str:
    """One edit through ``python -m agent edit``, every check asserted; what it did:
    ``"edited"``, or ``"refused"`` where the agent honestly said it could not."""
    shot = render(CASES[case_id])
    photo, out = tmp_path / "photo.png", tmp_path / "out.png"
    Image.fromarray(shot.image).save(photo, compress_level=1)
    # nothing here recognises an emblem: the user confirms the guess offered first
    confirm = ["--choose", "1"] if case_id == "emblem_non_coco" else []
    run = subprocess.run([sys.executable, "-m", "agent", "edit", str(photo), instruction,
                          "--session", str(tmp_path / "s"), "--out", str(out), *confirm],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    if run.returncode != 0 and "could not fill the hole convincingly" in run.stdout:
        # the cup (5 % of the frame) covers where a roof, the lake and a tree meet: the fill
        # check refuses so deep a hole among several regions (``fill.DEEP_HOLE``) and says
        # so, nothing is written (issue 32: no "done" on a fill it cannot vouch for)
        assert "brush a smaller area" in run.stdout and "Nothing was changed" in run.stdout
        assert not out.exists()
        return "refused"
    if run.returncode != 0 and case_id == "cup_low_score":
        # the localiser's cup stops in a straight line across the cup's body (its bottom
        # and handle left out): the critic's extent check says so and the agent asks
        # instead of reporting a partial removal "done" (issue 32: no silent failures)
        found = get_localizer().locate(shot.image, "the cup").union()
        assert (shot.truth & ~found).sum() > 0.1 * shot.truth.sum(), run.stdout[-2000:]
        assert "--point" in run.stdout, run.stdout[-2000:]
        assert "cut off" in run.stdout or "only part of 'cup'" in run.stdout, run.stdout[-2000:]
        assert not out.exists()
        return "refused"
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    after = np.asarray(Image.open(out).convert("RGB"))
    assert after.shape == shot.image.shape                 # native resolution kept
    truth = shot.truth
    far = beyond_reach(truth)
    assert np.array_equal(after[far], shot.image[far]), (
        f"{int((after[far] != shot.image[far]).any(axis=-1).sum())} px changed beyond "
        f"the feather: {run.stdout[-800:]}")
    check(shot.image, after, truth)
    if case_id in MOST_OF:
        changed = np.abs(after.astype(int) - shot.image.astype(int)).max(axis=2) > 2
        assert changed[truth].mean() > MOST_OF[case_id]
    if case_id == "left_of_two_touching_cups":      # never into the cup it touches
        (right,) = shot.others
        assert np.array_equal(after[right], shot.image[right])
    return "edited"
