""""Everything except the sky": the critic judges the part left as it was (issue 32,
part 4; wave 33).

The extent checks skipped any phrase whose head names the whole photo ("everything"),
so "make everything except the sky darker" was judged by nothing but the operation's own
check: the edit made through the whole frame, through the true mask grown into the sky,
or moved onto it, all passed at 10, said done with the sky darkened. The phrase names
the whole frame less a thing, and that thing is the edit's subject: it is now judged as
a background edit is (``agent.brain.extent._all_but``): the subject must be left, and
its outline must follow the photo's edges.

Photo: the labelled real set's Eiffel tower (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

CASE = "gc_eiffel_tower__all_but_sky"
WORDS = "make everything except the sky darker"


@pytest.fixture(scope="module")
def case() -> Case:
    return labelled_by_id({CASE})[CASE]


@pytest.mark.parametrize("kind, says", [
    ("whole frame", "the subject changed too"),
    ("grown", "everything except the sky"),
    ("moved", "everything except the sky"),
])
def test_a_wrong_extent_for_everything_but_a_thing_fails(case, kind, says):
    verdict = judged(case, WORDS, wrong_mask(case.mask, kind), right=False)
    assert verdict["passed"] is False, verdict["reasons"]
    assert verdict["score"] <= 3.0, verdict["reasons"]
    assert any(says in r for r in verdict["reasons"]), verdict["reasons"]


def test_everything_but_the_sky_done_right_passes(case):
    verdict = judged(case, WORDS, case.mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]
