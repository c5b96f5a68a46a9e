"""Correct recolours on real photographs pass the critic (issue 32, part 4; wave 31).

Each test is a good tune pair the critic failed (``bench/critic_real.py --split tune
--show``), looked at as a picture, and kept failing what is wrong:

- **a recolour's hue and strength are read on the thing, not on the band grown around
  it**: the judge hands a recolour its mask grown over the edge onto the surroundings
  (leaves around a lizard, the grey dial around thin clock hands, a red grille around a
  badge). Read over that band, a lizard painted blue was "32° away from blue" and blue
  clock hands "too little colour"; the colour's distance in ΔE2000 was already read on
  the thing's core;
- **a seam is a new step where the photo had none**: a statue recoloured to blue's
  lightness against a pale sky steepens its own outline, which the seam check took for a
  hard mask edge;

Photos: the labelled real set (``eval/data/realphotos``) at ``critic_real_pairs.SIDE``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.critic_real_pairs import Case, _edit, labelled_by_id, photo, wrong_mask

IDS = {"gc_garden_lizard__lizard", "greentock__hands", "voc_2011_000025__sign",
       "gc_statue_of_liberty__statue"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


def _judge(case: Case, words: str, used: np.ndarray, asked: str | None = None) -> dict:
    """The critique the turn loop makes of ``words`` done by the agent through ``used``
    (judged as ``asked`` when given)."""
    from agent.brain.judge import critique_images  # noqa: PLC0415 — the judge itself

    image = photo(case.photo)
    after = _edit(image, words, used, right=True)
    return critique_images(image, after, asked or words, used)


@pytest.mark.parametrize("case_id, words", [
    ("gc_garden_lizard__lizard", "make the lizard blue"),
    ("greentock__hands", "make the clock hands blue"),
    ("voc_2011_000025__sign", "make the LEYLAND sign above the grille blue"),
])
def test_a_recolour_is_read_on_the_thing_not_its_grown_band(cases, case_id, words):
    """Blue on the thing itself: the hue within 25° of blue and enough colour, read on
    its core (the band grown onto leaves, a grey dial or a red grille read 32-38° off,
    or too little colour, and failed the edit)."""
    case = cases[case_id]
    verdict = _judge(case, words, case.mask)
    assert verdict["passed"], verdict["reasons"]
    measures = verdict["steps"][0]["measures"]
    assert measures["hue_distance_deg"] <= 25
    # the same blue edit asked to be red is still failed by the colour check
    red = _judge(case, words, case.mask, asked=words.replace(" blue", " red"))
    assert not red["passed"]
    assert red["steps"][0]["checks"]["colour_hit"] is False


def test_a_recoloured_outline_is_no_seam(cases):
    """The statue painted blue against a pale sky: its outline is steeper than before,
    which is the new colour, not a seam; a hard-edged brightening of half of it still
    shows one across the statue (and the half fails)."""
    statue = cases["gc_statue_of_liberty__statue"]
    verdict = _judge(statue, "make the statue blue", statue.mask)
    assert verdict["passed"], verdict["reasons"]
    assert not any("seam" in r for r in verdict["reasons"])
    half = _judge(statue, "make the statue blue", wrong_mask(statue.mask, "half"))
    assert any("seam" in r for r in half["reasons"])
    assert not half["passed"]

