"""Wave 27: a named thing's edit said as a wish or with a dial verb edits that thing.

"the sky would look better darker" was auto levels and vibrance of the whole photo, "turn
down the sky" a highlights edit of the whole photo: the thing dropped, said done (tune
cases ``*_said_otherwise``: 6 WRONG on 2b1deb3). ``agent.brain.wishes`` says them plainly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agent.brain.rules import RulePlanner
from eval import realphotos
from eval.localization import beyond_reach
from eval.realset_edits import cli_edit
from tests.planned import plan_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text,same_as", [
    ("the sky would look better darker", "make the sky darker"),
    ("the trunk would look better darker", "make the trunk darker"),
    ("i think the sky would look better a bit darker", "make the sky a bit darker"),
    ("the sky would be nicer bluer", "make the sky bluer"),
    ("the sky could be darker", "make the sky darker"),
    ("the tower might be a bit brighter", "make the tower a bit brighter"),
    ("the photo would look better darker", "make it darker"),
    ("turn down the sky", "darken the sky"),
    ("dial the sky down", "darken the sky"),
    ("turn the sky up a little", "brighten the sky a little"),
])
def test_a_wish_or_a_dial_is_the_plain_command(text: str, same_as: str) -> None:
    assert plan_of(text) == plan_of(same_as), text


def test_a_setting_is_not_a_thing() -> None:
    assert plan_of("turn up the saturation") == plan_of("increase the saturation")
    assert plan_of("turn down the contrast") == plan_of("decrease the contrast")
    # "tone down" stays a question: less saturation, or the highlights?
    assert not RulePlanner().plan("tone down the sky").is_edit


def test_the_cli_turns_down_the_sky_only(tmp_path: Path) -> None:
    """Through the command line on a real photo: the sky darker, every pixel beyond its
    labelled mask's reach bit-identical; on 2b1deb3 the whole photo's highlights moved."""
    photo = realphotos.photo_path("gc_eiffel_tower")
    out = tmp_path / "out.png"
    run = cli_edit(photo, "turn down the sky", tmp_path, timeout=300)
    assert run is not None, "timed out"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    sky = np.array(Image.open(ROOT / "eval/data/realphotos/masks/"
                                     "gc_eiffel_tower__sky.png")) > 0
    before = np.asarray(Image.open(photo).convert("RGB"))
    after = np.asarray(Image.open(out).convert("RGB"))
    far = beyond_reach(sky)
    assert np.array_equal(after[far], before[far]), run.stdout[-2000:]
    luma = np.array([0.299, 0.587, 0.114])
    assert (after[sky] @ luma).mean() < (before[sky] @ luma).mean() - 8


@pytest.mark.parametrize("text", ["brighten the lower half of the sky",
                                  "make the lower half of the sky brighter"])
def test_lower_said_of_a_place_is_the_bottom(text: str) -> None:
    """'lower' before a place is where, never the verb: it darkened the whole sky."""
    ((operation, phrase, params),) = plan_of(text)
    assert operation == "brightness" and params["amount"] > 0, (operation, params)
    assert phrase == "bottom half of the sky", phrase


def test_the_cli_never_darkens_the_sky_for_its_lower_half(tmp_path: Path) -> None:
    """On 2b1deb3 the whole sky was darkened and said done; now the lower half is
    brightened (or, the half's straight edge unsure, asked with nothing written)."""
    photo = realphotos.photo_path("gc_eiffel_tower")
    out = tmp_path / "out.png"
    run = cli_edit(photo, "brighten the lower half of the sky", tmp_path, timeout=300)
    assert run is not None, "timed out"
    if run.returncode == 1:
        assert not out.exists() and "Nothing was changed" in run.stdout, run.stdout[-2000:]
        return
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    half = np.array(Image.open(ROOT / "eval/data/realphotos/masks/"
                                      "gc_eiffel_tower__sky_lower_half.png")) > 0
    before = np.asarray(Image.open(photo).convert("RGB"))
    after = np.asarray(Image.open(out).convert("RGB"))
    far = beyond_reach(half)
    assert np.array_equal(after[far], before[far]), run.stdout[-2000:]
    luma = np.array([0.299, 0.587, 0.114])
    assert (after[half] @ luma).mean() > (before[half] @ luma).mean() + 8
