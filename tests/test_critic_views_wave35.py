"""One instance seen by two views: the critic reads its extent as either saw it (issue 32,
part 4; wave 35).

The detector route (``agent.brain.independent``) finds the named thing again twice: on
the whole frame and on a zoomed crop around what changed. The two boxes of one instance
often differ, and ``seen_boxes.dedupe`` kept only the surer one. The toucan's crop box
ends above its tail, which the frame's box holds; a "vase" detected on that tail then
read as another thing the edit changed, and the three correct edits of the bird failed.
The sailboat's frame box holds its hull only, the crop's its hull and sail: the change
"reached well beyond 'sailboat'". The boxes ``dedupe`` dropped as the same instance are
now views of it (``seen_boxes.views_of``): what changed may lie on either, and a thing
inside either is a part of it.

Photos: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from agent.brain.seen_boxes import Seen, dedupe, views_of
from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

IDS = {"gc_toucan__bird", "jz_helicopter__sailboat"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


def test_the_other_views_box_of_the_picked_instance_is_a_view_and_a_part_is_not():
    crop = Seen("bird", (19, 54, 307, 318), 0.69, "crop")        # without the tail
    frame = Seen("bird", (14, 61, 306, 421), 0.41, "object")     # with it
    part = Seen("bird", (40, 80, 120, 160), 0.35, "crop")        # the head, inside
    other = Seen("bird", (400, 60, 600, 300), 0.5, "object")     # another bird
    kept = dedupe([crop, frame, part, other])
    assert kept == [crop, other]
    assert views_of([crop, frame, part, other], [crop]) == [frame]


def test_the_toucans_correct_edit_passes_and_its_tail_is_no_other_thing(cases):
    case = cases["gc_toucan__bird"]
    verdict = judged(case, "make the bird brighter", case.mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]


@pytest.mark.parametrize("kind", ["moved", "half"])
def test_the_toucans_wrong_extents_still_fail(cases, kind):
    case = cases["gc_toucan__bird"]
    verdict = judged(case, "make the bird brighter", wrong_mask(case.mask, kind), right=False)
    assert verdict["passed"] is False, verdict["reasons"]


def test_the_sailboat_seen_with_its_sail_holds_the_change(cases):
    case = cases["jz_helicopter__sailboat"]
    verdict = judged(case, "make the sailboat brighter", case.mask, right=True)
    assert not any("reaches well beyond" in r for r in verdict["reasons"]), verdict["reasons"]
