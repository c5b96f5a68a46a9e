"""The critic counts "the second person from the right" from the right, and a mask of
that man without his head fails (issue 32; wave 38).

The critic's second route lets the words pick among the instances the detector finds
again. Ranked place words were read as an ordinal counted from the left: on the aquarium
photo the second person from the right was taken to be the second from the left, and the
correct edit failed. They now count from the end they name (``pipelines.localizers.row``,
as the localiser does; an unclear order picks no one). Picking the right man made the
critic agree with the localiser's mask of him that leaves his head out (0.83 of him: a
silent failure, wave 37): the covers check now wants the change of a standing person to
reach the top of the box (``HEAD_GAP``).

Photo: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.brain.independent import _pick
from agent.brain.seen_boxes import Seen
from pipelines.localizers.phrases import parse_phrase
from tests.critic_real_pairs import Case, judged, labelled_by_id

CASE = "aquarium__second_person_right"
WORDS = "make the second person from the right brighter"


@pytest.fixture(scope="module")
def case() -> Case:
    return labelled_by_id({CASE})[CASE]


def _row(*xs: float) -> list[Seen]:
    return [Seen("person", (x, 10.0, x + 20.0, 80.0), 0.8, "object") for x in xs]


def test_ranked_words_count_from_the_end_they_name():
    row = _row(300, 10, 200, 100)            # not in reading order
    changed = np.zeros((100, 400), bool)
    assert _pick(row, parse_phrase("the second person from the right"), changed) == [row[2]]
    assert _pick(row, parse_phrase("the second person from the left"), changed) == [row[3]]
    assert _pick(row, parse_phrase("the person on the far right"), changed) == [row[0]]
    # the two at the right end stand one behind the other: which is second is unclear
    crowd = _row(10, 100, 300, 305)
    assert _pick(crowd, parse_phrase("the second person from the right"), changed) == []


def test_the_correct_edit_of_the_second_from_the_right_passes(case):
    verdict = judged(case, WORDS, case.mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]


def test_a_mask_of_him_without_his_head_fails(case):
    ys = np.nonzero(case.mask)[0]
    headless = case.mask.copy()
    headless[: ys.min() + int(0.15 * (ys.max() - ys.min()))] = False   # his head left out
    verdict = judged(case, WORDS, headless, right=False)
    assert verdict["passed"] is False, verdict["reasons"]
    step = verdict["steps"][0]
    assert step["checks"]["covers"] is False, verdict["reasons"]
    assert step["measures"]["change_gap_head"] > 0.11
