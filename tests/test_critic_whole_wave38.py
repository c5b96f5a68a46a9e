"""The critic's covers check reads a person as far as any view saw them (issue 32; wave 38).

The covers check asks that the change span most of the one instance the detector finds
again. The zoomed crop the second route looks at is cut around what changed: around the
upper half of the pool's man in the white sweater it sees a person box of that half
alone, surer than the frame's box of the whole man, and the half spanned 0.83 of it and
passed. A person now reaches as far as any view of them saw them (the frame's box too):
the half spans 0.49 of the man and fails; his correct edit still spans 0.97 of him. (Only
a person: another view of scikit-image's coffee cup takes its saucer.)

Photo: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

MAN = "kpa_pool__man_white"
WORDS = "make the man in the white sweater brighter"


@pytest.fixture(scope="module")
def case() -> Case:
    return labelled_by_id({MAN})[MAN]


def test_the_half_of_the_man_fails_as_part_of_him(case):
    verdict = judged(case, WORDS, wrong_mask(case.mask, "half"), right=False)
    assert verdict["passed"] is False, verdict["reasons"]
    step = verdict["steps"][0]
    assert step["checks"]["covers"] is False, verdict["reasons"]
    assert step["measures"]["change_spans_along"] < 0.6   # half of him, not of the crop's box


def test_the_correct_edit_of_the_man_still_passes(case):
    verdict = judged(case, WORDS, case.mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]
    assert verdict["steps"][0]["checks"]["covers"] is True
