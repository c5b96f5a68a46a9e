"""The critic's own reading of an edit's extent on real photographs, wave 11 (issue 32,
part 4): a half edit cut along a faint line inside the thing (a fruit's segment wall)
fails, the whole thing passes; a mask grown past a flower onto the grass around it fails
where the flower's own outline lies well inside the edited area; the agent's own removal of
a dark dog on dark ground passes (its outline peaks twice as high as the ground beside it).

Photos: the labelled real set (``eval/data/realphotos``) at ``critic_real_pairs.SIDE``;
only the extent checks run (no detector), so each case costs well under a second.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.critic_real_pairs import _edit, labelled_cases, photo, wrong_mask

IDS = {"citrus_fruits__lime_middle", "flowers__pink_centre", "dogs_under_tree__dog_left"}


@pytest.fixture(scope="module")
def cases():
    found = {c.id: c for c in labelled_cases(IDS)}
    assert set(found) == IDS   # the labelled set ships these cases
    return found


def _extent(case, words, used):
    """The extent checks on an edit of ``words`` made through ``used`` (the agent's own
    planner and executor)."""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action

    image = photo(case.photo)
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    return extent_checks(image, _edit(image, words, used, right=True), action, used)


def test_half_a_lime_cut_along_a_segment_wall_fails_and_the_whole_lime_passes(cases):
    """The cut runs along a faint wall between two segments: the photo peaks a little
    on the line, but both sides of it are the same lime flesh."""
    lime = cases["citrus_fruits__lime_middle"]   # a lime slice among citrus slices
    half = _extent(lime, "make the lime slice brighter", wrong_mask(lime.mask, "half"))
    assert half.checks["extent"] is False, half.measures
    assert any("runs straight through" in f for f in half.fix)
    ok = _extent(lime, "make the lime slice brighter", lime.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_a_flower_grown_onto_the_grass_fails_where_its_outline_lies_well_inside(cases):
    """The grown border runs through grass blades (texture on both sides, so the border
    alone reads as edges here and there); the flower's own outline, a third of the way
    in, follows the photo's edges all round."""
    flower = cases["flowers__pink_centre"]   # a pink flower among grass and flowers
    grown = _extent(flower, "make the pink flower brighter", wrong_mask(flower.mask,
                                                                         "grown"))
    assert grown.checks["extent"] is False, grown.measures
    assert any("ends inside the edited area" in f for f in grown.fix)
    ok = _extent(flower, "make the pink flower brighter", flower.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_the_agents_removal_of_a_dark_dog_on_dark_ground_passes(cases):
    """The localiser's mask of the dog (IoU 0.87 with the true one), removed by the
    executor: the border inside the mask's grown edge runs straight along the dog's back,
    where both sides are dark (3-9 px out) but the outline peaks twice as high as the
    ground beside it. It was read as a cut and the CLI asked instead of removing."""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.judge import _target  # noqa: PLC0415 — the mask as the judge grows it
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action
    from agent.executor import execute  # noqa: PLC0415 — the agent's own removal
    from pipelines.localizers import PerceptionLocalizer  # noqa: PLC0415 — its own mask

    dog = cases["dogs_under_tree__dog_left"]   # two dark dogs in a tree's shade
    image = photo(dog.photo)
    found = np.asarray(PerceptionLocalizer().locate(image, "dog on the left").masks[0].mask,
                       bool)
    assert (found & dog.mask).sum() / (found | dog.mask).sum() > 0.8   # the right dog
    action = get_planner(name="rules").plan("remove the dog on the left", has_mask=True,
                                            image_size=(image.shape[1],
                                                        image.shape[0])).actions[0]
    after = execute(image, action, found).paste(image)
    judged = extent_checks(image, after, action, _target(image, action, found, None))
    assert judged.checks["extent"] is True, judged.fix
