"""Issue 34: nouns no detector class names reach a region of the scene through what they
are (``pipelines.localizers.scene``), on real photos of the set's tune split, at 640 px.

"the meadow" and "the ploughed field" are the ground along the bottom, "the lake" the
water under the skyline, "the hills" the land under a storm sky ``find_sky`` does not find
(the skyline read from the top and bottom rows' colours): each resolved against its
hand-drawn mask, with the reason saying how the noun was understood. Refusals are kept:
a meadow is no lake, and a studio portrait has no hills.
"""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import beyond_reach, mask_iou
from pipelines.localizers.perception import PerceptionLocalizer
from tests.guesses import confirmed

SIDE = 640


def _small(case_id: str) -> tuple[np.ndarray, np.ndarray]:
    return realset.case_at(case_id, SIDE)


@pytest.mark.parametrize(("case_id", "phrase", "said", "least"), [
    ("aitzgorri__meadow", "the meadow", "meadow: ground cover; found the ground", 0.8),
    ("this_is_not_windows__field", "the ploughed field", "found the ground along the bottom",
     0.7),
    ("lake_hill__lake", "the lake", "lake: a body of water; found the water", 0.8),
    ("beam__hills", "the hills", "no sky found; a clear split", 0.8),
])
def test_a_scene_noun_resolves_to_its_region(case_id, phrase, said, least) -> None:
    image, truth = _small(case_id)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), truth) >= least, found.reason
    assert said in found.reason


def test_a_meadow_is_no_lake_and_a_portrait_has_no_hills() -> None:
    meadow, _ = _small("aitzgorri__meadow")
    lake = PerceptionLocalizer().locate(meadow, "the lake")
    assert lake.status == "unresolved", lake.reason
    portrait, _ = _small("black_dog__dog")
    hills = PerceptionLocalizer().locate(portrait, "the hills")
    assert hills.status != "resolved", hills.reason


def test_a_part_known_by_its_colour_is_found_inside_its_whole() -> None:
    case = realset.case("black_dog__tongue")
    image, truth = realset.photo(case.photo)[..., :3], case.truth()      # 640 × 480
    found = PerceptionLocalizer().locate(image, "the dog's tongue")
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), truth) >= 0.8, found.reason
    assert "tongue: a part of the dog" in found.reason
    assert found.masks[0].score <= 0.5          # a colour cue: never surer than its whole


def test_leaves_are_the_green_part_of_the_twig_that_stands_out() -> None:
    """The guess is offered to confirm (nothing recognises leaves: assurance.py), and it
    is the green part of the twig, not the whole twig."""
    image, truth = _small("appleflower__leaves")
    asked = PerceptionLocalizer().locate(image, "the leaves")
    assert asked.status == "ambiguous" and asked.guess == 1, asked.reason
    found = confirmed(asked)
    assert mask_iou(found.union(), truth) >= 0.5, found.reason    # 0.26 as the whole twig
    assert "kept its green or lime part" in found.reason


def test_a_material_is_a_colour_guess_shown_to_click_not_an_edit() -> None:
    image, truth = _small("dog_on_floor__cabinet")
    found = PerceptionLocalizer().locate(image, "the wooden cabinet")
    assert found.status == "ambiguous", found.reason      # main refused it: "a dog"
    assert mask_iou(found.masks[0].mask, truth) >= 0.7
    assert found.masks[0].score < 0.35


def test_a_relation_only_chooses_and_never_makes_a_wrong_pick_sure() -> None:
    # the small white flower is not among the white regions: the question stays
    image, _ = _small("butterfly_kw__white_flower")
    found = PerceptionLocalizer().locate(image, "the white flower under the butterfly")
    assert found.status == "ambiguous", found.reason


def test_snow_is_the_white_on_the_land_offered_first_and_never_edited_unasked() -> None:
    """Snow patches ringed by rock, not by sky (the cloud over the crest is left out),
    offered first to confirm: white specks of limestone under a clear skyline look the
    same (issue 32: never a wrong answer reported as done). Where there is no skyline it
    is refused (a clear sky over hills); white on a beach or a limestone ridge is never
    resolved."""
    image, truth = _small("picosdeeuropa__snow")
    asked = PerceptionLocalizer().locate(image, "the snow")
    assert asked.status == "ambiguous" and asked.guess is not None, asked.reason
    found = confirmed(asked)
    assert mask_iou(found.union(), truth) >= 0.8, found.reason      # 0.71 under the skyline
    assert "snow: snow cover; found the white patches on the land" in asked.reason
    hills, _ = _small("this_is_not_windows__cloud")
    assert PerceptionLocalizer().locate(hills, "the snow").status == "unresolved"
    for case_id in ("bridge__sky", "aitzgorri__sky", "lake_hill__sky"):
        other, _ = _small(case_id)
        found = PerceptionLocalizer().locate(other, "the snow")
        assert found.status != "resolved", (case_id, found.reason)


def test_the_hills_stop_at_the_field_in_front_even_where_weeds_stand_in_it() -> None:
    """A patch of weeds in the field's corner is cut off from the hills by the field's
    edge: it is not the hills (CLI: "make the green hills brighter" brightened it, done)."""
    image, truth = _small("this_is_not_windows__hills")
    found = PerceptionLocalizer().locate(image, "the green hills")
    assert found.status == "resolved", found.reason
    mask = found.union()
    far = beyond_reach(truth)
    h = mask.shape[0]
    corner = far.copy()
    corner[: int(0.9 * h)] = False            # the bottom tenth: the field, weeds and all
    foot = int((mask & corner).sum())
    assert foot <= 0.0001 * mask.size, f"{foot} px of the field's foot"    # at 640: 30 px
    assert (mask & far).mean() < 0.002
    assert mask_iou(mask, truth) >= 0.8
