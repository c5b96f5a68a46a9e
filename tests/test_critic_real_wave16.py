"""Correct edits on real photographs pass the critic, wrong extents still fail (issue 32,
part 4; wave 16).

Each rule here was found on a good tune pair the critic failed, looked at as a picture,
and each test keeps a wrong extent of the same thing failing:

- **the outline of a thing under a grown mask lies anywhere in the grown band**: an
  operation on a whole object (a recolour) is handed the object's mask grown over its soft
  edge by up to a quarter of its radius, so its border lies on the surroundings (the
  ground under a plane's belly, the canyon behind a man's dark coat). The critic read that
  border and one contour a fifth of the radius inside it; the plane's outline lay between
  the two, where neither followed the photo's edges ("does not end where 'plane in front'
  ends: 44 %"). A contour across the band that clearly follows the photo's edges (at most
  a quarter of it through one region) is the outline; a mask grown past the thing by more
  than the band still fails.

Photos: the labelled real set (``eval/data/realphotos``), at ``critic_real_pairs.SIDE``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.critic_real_pairs import Case, _edit, labelled_by_id, photo, wrong_mask

IDS = {"kpa_snow__front_plane", "kpa_grand_canyon_2__man"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


def _extent(case: Case, words: str, used: np.ndarray) -> dict[str, bool]:
    """The extent checks on ``words`` done through ``used``, handed the mask the judge
    hands them (grown over the object's soft edge for an object operation)."""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action
    from pipelines.editors.objects import grow_object_mask  # noqa: PLC0415 — as the judge

    image = photo(case.photo)
    after = _edit(image, words, used, right=True)
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    grown, _ = grow_object_mask(image, used, fade=False)
    return extent_checks(image, after, action, grown).checks


@pytest.mark.parametrize("cid, words", [
    ("kpa_snow__front_plane", "make the plane in front blue"),
    ("kpa_grand_canyon_2__man", "make the man blue"),
])
def test_a_recolour_inside_the_true_outline_passes_and_a_grown_one_fails(cases, cid, words):
    case = cases[cid]
    assert _extent(case, words, case.mask).get("extent") is True
    assert _extent(case, words, wrong_mask(case.mask, "grown")).get("extent") is False
