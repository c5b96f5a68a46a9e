""""The left half of the sky" ends on a straight line, as asked (issue 32, part 4; wave 33).

The critic fails an edit whose border runs straight through one region (a half mask cut
through a thing), and a sky's border straight across open sky. When the words name the
half themselves, that line is the one asked for: "make the left half of the sky darker"
done right ends on a vertical line through open blue sky, and failed "a straight line in
the middle of one colour". The stretches along the line the words divide the region by
(vertical for a left or right half, level for a top or bottom one) are now left out of
the straight-cut readings (``agent.brain.extent._off_division``); every other stretch is
read as before, so the same region cut the other way still fails.

Photo: the labelled real set's Eiffel tower (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

IDS = {"gc_eiffel_tower__sky_left_half", "gc_eiffel_tower__sky_lower_half"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


@pytest.mark.parametrize("case_id, words", [
    ("gc_eiffel_tower__sky_left_half", "make the left half of the sky darker"),
    ("gc_eiffel_tower__sky_lower_half", "make the lower half of the sky brighter"),
])
def test_the_half_the_words_name_passes(cases, case_id, words):
    verdict = judged(cases[case_id], words, cases[case_id].mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]


@pytest.mark.parametrize("case_id, words, says", [
    # the left half cut again, level: the line the words did not ask for
    ("gc_eiffel_tower__sky_left_half", "make the left half of the sky darker",
     "runs straight through"),
    # the lower half cut again, upright
    ("gc_eiffel_tower__sky_lower_half", "make the lower half of the sky brighter",
     "straight line in the middle"),
])
def test_a_half_of_the_named_half_cut_the_other_way_fails(cases, case_id, words, says):
    verdict = judged(cases[case_id], words, wrong_mask(cases[case_id].mask, "half"),
                     right=False)
    assert verdict["passed"] is False, verdict["reasons"]
    assert any(says in r for r in verdict["reasons"]), verdict["reasons"]


def test_only_a_half_the_words_cut_the_region_into_leaves_its_line_out():
    from agent.brain.extent import _off_division  # noqa: PLC0415 — the rule itself
    from agent.brain.extent_lines import Stretch  # noqa: PLC0415 — what it filters

    upright, level = Stretch(0.2, 1.0, 1.0, 1.0, True), Stretch(0.2, 1.0, 1.0, 1.0, False)
    lines = [upright, level]
    assert _off_division(lines, "left half of the sky") == [level]
    assert _off_division(lines, "the bottom half of the sky") == [upright]
    # a thing found in a half of the photo is a thing: its cuts are all read
    assert _off_division(lines, "the dog in the left half of the photo") == lines
    assert _off_division(lines, "the man on the left") == lines
