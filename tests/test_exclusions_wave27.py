"""Wave 27: a thing left out in other words than "except" is left out.

"make the car red, not the wheels" recoloured the wheels with the car (the front end
dropped "not the wheels" as a negated alternative); "brighten the photo, don't touch the
sky" brightened the sky too, said done; "... without touching the clouds" became a
generation of the whole photo; "make only the sky bluer" looked for a thing called 'only'.
Each now reads as "X except Y" (``agent.brain.exclusions``), the target less Y; a negated
value ("make the car red, not blue") keeps today's reading.
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

ROOT = Path(__file__).resolve().parents[1]


def _plan(text: str) -> list[tuple[str, str]]:
    plan = RulePlanner().plan(text)
    assert plan.is_edit, plan.message
    return [(a.operation, a.region.phrase or "") for a in plan.actions]


@pytest.mark.parametrize("text", [
    "make the car red, not the wheels", "make the car red but not the wheels",
    "make the car red and not the wheels", "make the car red without the wheels",
    "make the car red except the wheels", "make the car red, but not its wheels"])
def test_the_wheels_are_left_out_of_the_car(text: str) -> None:
    steps = _plan(text)
    assert len(steps) == 1 and steps[0][0] == "recolor", steps
    assert steps[0][1] in ("car except the wheels", "car except its wheels"), steps


def test_a_negated_value_is_still_dropped() -> None:
    assert _plan("make the car red, not blue") == _plan("make the car red")
    plan = RulePlanner().plan("make the car red, not blue")
    assert plan.actions[0].params["color"] == "red"
    assert _plan("make the dog brighter, not darker") == _plan("make the dog brighter")
    # the whole photo is no part of the dog to leave out
    assert _plan("brighten the dog, not the whole photo") == _plan("brighten the dog")


def test_the_background_but_not_the_dog_is_one_step() -> None:
    for text in ("darken the background but not the dog", "darken the background, not the dog"):
        assert _plan(text) == [("brightness", "background except the dog")], text


@pytest.mark.parametrize("text", [
    "brighten the photo, don't touch the sky", "brighten the photo but leave the sky alone",
    "brighten the photo, keep the sky as it is", "make it brighter but not the sky",
    "brighten the whole photo but not the sky", "brighten everything but the sky"])
def test_the_photo_less_the_sky(text: str) -> None:
    assert _plan(text) == [("brightness", "everything except the sky")], text


def test_keep_y_and_edit_x() -> None:
    steps = _plan("keep the clouds white and make the sky bluer")
    assert steps and all(phrase == "sky except the clouds" for _, phrase in steps), steps
    steps = _plan("make the sky bluer without touching the clouds")
    assert steps and all(op != "generate" and phrase == "sky except the clouds"
                         for op, phrase in steps), steps


@pytest.mark.parametrize("text", ["make only the sky bluer", "make the sky bluer only",
                                  "make just the sky bluer",
                                  "make the sky bluer and nothing else"])
def test_only_x_is_x(text: str) -> None:
    assert _plan(text) == _plan("make the sky bluer"), text


def test_the_cli_leaves_the_sky_alone(tmp_path: Path) -> None:
    """Through the command line on a real photo: the sky (its labelled mask, beyond the
    edit's feather) is bit-identical, the rest brighter; on 2b1deb3 the sky was brightened
    with the rest and the command said done."""
    photo = realphotos.photo_path("gc_eiffel_tower")
    out = tmp_path / "out.png"
    run = cli_edit(photo, "brighten the photo, don't touch the sky", tmp_path, timeout=300)
    assert run is not None, "timed out"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    rest = np.array(Image.open(ROOT / "eval/data/realphotos/masks/"
                                      "gc_eiffel_tower__all_but_sky.png")) > 0
    before = np.asarray(Image.open(photo).convert("RGB"))
    after = np.asarray(Image.open(out).convert("RGB"))
    sky = beyond_reach(rest)
    assert sky.sum() > 0.5 * (~rest).sum()
    assert np.array_equal(after[sky], before[sky]), run.stdout[-2000:]
    luma = np.array([0.299, 0.587, 0.114])
    assert (after[rest] @ luma).mean() > (before[rest] @ luma).mean() + 8


@pytest.mark.parametrize("text,same_as", [
    ("brighten the photo while keeping the sky as it is", "brighten everything but the sky"),
    ("darken the sky, leaving the tower as it is", "darken the sky except the tower"),
    ("brighten the tower without changing anything else", "brighten the tower"),
    ("brighten the tower and leave the rest alone", "brighten the tower"),
    ("brighten the tower, keep everything else the same", "brighten the tower"),
])
def test_keeping_and_leaving(text: str, same_as: str) -> None:
    """'while keeping Y' leaves Y out; 'without changing anything else' and 'leave the
    rest alone' say only X (both were words the localiser was asked to find)."""
    assert _plan(text) == _plan(same_as), text
