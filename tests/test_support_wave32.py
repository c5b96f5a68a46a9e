"""Issue 32, wave 32: the support itself named ("the branch" a kingfisher sits on, "the
trunk" a squirrel clings to). No detector class names them and the salient map marks the
animal, so the words fell to the animal (asked: IoU 0.02 and 0.00 offered). In a photo
with a shallow depth of field the one zone in focus beside the animal that runs out of
the frame is its support (``support_named``); a photo sharp throughout (a gibbon among
branches) stays a question, and a photo whose main subject is the log itself is not
read as an animal's support. Real tune photos (gcompris-qt-data, tux), hand-drawn masks."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers.perception import PerceptionLocalizer, _Models
from pipelines.localizers.support_named import find


@pytest.fixture(scope="module")
def localizer() -> PerceptionLocalizer:
    return PerceptionLocalizer()


@pytest.mark.parametrize(("case_id", "animal_id"), [
    ("gc_kingfisher__branch", "gc_kingfisher__kingfisher"),
    ("gc_squirrel__trunk", "gc_squirrel__squirrel")])
def test_the_support_in_focus_is_found(localizer, case_id: str, animal_id: str) -> None:
    case = realset.case(case_id)
    found = localizer.locate(realset.photo(case.photo), case.phrase)
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), case.truth()) >= 0.88
    animal = realset.case(animal_id).truth()
    # what the user edits is the support, not the animal on it
    assert (found.union() & animal).sum() < 0.03 * animal.sum()


def test_a_photo_sharp_throughout_still_asks_which_branch(localizer) -> None:
    case = realset.case("gc_gibbon__branch")       # labelled ask: branches everywhere
    found = localizer.locate(realset.photo(case.photo), case.phrase)
    assert found.status == "ambiguous", found.reason


def test_a_log_that_is_the_main_subject_is_no_support() -> None:
    case = realset.case("tux_mossy_log__log")
    assert find(np.asarray(realset.photo(case.photo))[..., :3], "log", _Models.get()) is None


def test_the_mirrored_kingfisher_keeps_the_stub_under_it(localizer) -> None:
    # the salient map of the mirrored photo takes the branch's end under the bird: the
    # animal's rim is only probably the animal (0.767 said found before, a silent answer)
    case = realset.case("gc_kingfisher__branch")
    image, truth, phrase = realset.printed(realset.photo(case.photo), case.truth(),
                                           case.phrase, "flip")
    found = localizer.locate(image, phrase)
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), truth) >= 0.9


def test_a_macaws_feet_are_no_perch(localizer) -> None:
    # mirrored, the feet left out of the macaw's salient mask are in focus, touch it and
    # run out of the frame's bottom: too small a thing to be what it rests on
    case = realset.case("gc_macaw__perch")
    image, _, phrase = realset.printed(realset.photo(case.photo), case.truth(), case.phrase,
                                       "flip")
    assert find(np.asarray(image)[..., :3], "perch", _Models.get()) is None


@pytest.mark.parametrize("case_id", ["gc_horse__horse", "gc_garden_lizard__lizard"])
def test_the_ground_and_the_animals_own_limbs_are_no_branch(case_id: str) -> None:
    # "the branch" asked of a horse on a field in focus (the zone runs along the whole
    # bottom edge) and of a garden lizard whose legs and tail, left out of its salient
    # mask, are in focus beside it (its own colours): neither is said found
    image = np.asarray(realset.photo(realset.case(case_id).photo))[..., :3]
    assert find(image, "branch", _Models.get()) is None
