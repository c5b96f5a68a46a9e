"""The critic's extent rules of wave 20 on the real tune photos that showed them (issue 32,
part 4).

- A small connector on a motherboard (motherboard, 0.6 MP): its side wall is a strip about
  6 px wide at the critic's work size; the lines read 5-9 px in from its long straight
  sides lie mostly past it, on the board on its other side, and read as the same stuff
  on both sides of the border (a cut). Where the area covers less than half of those
  lines, the stretch is no evidence; the masks grown onto and moved onto the board still
  fail on their own straight cuts.
- A sky seen through a tree's leaves (solvay_1927, a grainy 1927 group photo): its own
  outline is an edge, and over 7 px that made 38 % of the correct sky read "textured"; read
  4 px inside its outline it is 29 %, and a mask grown onto the trees still reads 65 %.
- "A deeper blue" on a grey sky (the same photo: it has no colour to deepen) painted as
  the named colour at full strength drove few pixels to the saturation limit (a pale
  blue), so it passed; its colour strength rose by 84 C*, where the adjustment the words
  ask for moves it by 0-3.

Photos: the labelled real set at ``critic_real_pairs.SIDE``; only the extent checks run.
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import _edit, extent_of, labelled_by_id, photo, wrong_mask

IDS = {"solvay_1927__sky", "motherboard__connector"}


@pytest.fixture(scope="module")
def cases():
    return labelled_by_id(IDS)


@pytest.fixture(scope="module")
def sky(cases):
    return cases["solvay_1927__sky"]


def test_a_connector_with_a_thin_side_wall_passes_and_masks_off_it_fail(cases):
    connector = cases["motherboard__connector"]
    for words in ("make the small white connector on the left brighter",
                  "make the small white connector on the left darker"):
        ok = extent_of(connector, words, connector.mask)
        assert ok.checks["extent"] is True, (words, ok.fix, ok.measures)
    words = "make the small white connector on the left brighter"
    for kind in ("grown", "moved"):
        wrong = extent_of(connector, words, wrong_mask(connector.mask, kind))
        assert wrong.checks["extent"] is False, (kind, wrong.measures)


def test_a_sky_seen_through_leaves_is_one_region_and_a_grown_one_is_not(sky):
    for words in ("make the sky darker", "make the sky brighter"):
        ok = extent_of(sky, words, sky.mask)
        assert ok.checks["one_region"] is True, (words, ok.measures)
    grown = extent_of(sky, "make the sky darker", wrong_mask(sky.mask, "grown"))
    assert grown.checks["one_region"] is False, grown.measures


def test_a_deeper_blue_painted_on_a_grey_sky_fails_and_the_adjustment_passes(sky):
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action

    image = photo(sky.photo)
    words = "make the sky a deeper blue"
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    painted = extent_checks(image, _edit(image, words, sky.mask), action, sky.mask)
    assert painted.checks["relative_size"] is False, painted.measures
    # painted to its edges (wave 29's recolour unmixes only the grown rim), 17 % of the
    # grey sky reaches full saturation: that reason is given first, the C* jump (83) too
    assert any("new colour" in f or "full saturation" in f for f in painted.fix)
    assert painted.measures["chroma_jump"] > 40, painted.measures
    adjusted = extent_checks(image, _edit(image, words, sky.mask, right=True), action,
                             sky.mask)
    assert adjusted.checks.get("relative_size", True) is True, adjusted.measures
