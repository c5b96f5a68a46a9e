"""Issue 32: an answer nothing here can verify is a question, never a silent "resolved".

Real photographs of the real-photo set (tune split, at 640 px): things that are not in
the photo, a colour region named as a thing, a part named through its whole, one of two
dogs, a thing related to another ("held by the man") come back ``ambiguous`` with the
guess first to click; a class the detector knows by name but hardly sees is refused; sure
detections, skies and a dog chosen by place still resolve to the hand-drawn mask.
"""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import PerceptionLocalizer
from pipelines.localizers.assurance import head_nouns

SIDE = 640


def _photo(case_id: str) -> tuple[np.ndarray, np.ndarray | None]:
    return realset.case_at(case_id, SIDE)


@pytest.mark.parametrize("case_id, phrase, says", [
    ("bridge__moon", "the moon", "nothing here recognises 'moon'"),
    # lamps are more kinds than ImageNet's four (a street lamp here): a guess stays asked;
    # "the snake" over a chameleon is refused since wave 25 (test_subject_guess_wave25)
    ("cincinnati_bridge__lamp", "the lamp", "only a guess"),
    ("bridge__tubes", "the white tubes", "only the colour was matched"),
    ("greentock__disc", "the grey disc", "is not round"),
    ("black_dog__tongue", "the dog tongue", "find the dog but not the"),
    ("dogs_under_tree__the_dog", "the dog", "click the one you mean"),
    # Selfie's outline of the man it takes (wave 31) runs past his box to his hat, into
    # the pot's box behind him: asked on where he ends before the relation is weighed
    ("voc_2011_000003__the_man", "the man holding the bottle", "unsure where the man"),
    # a word no model knows, with a place word: the salient guess is the wrong part (IoU 0
    # with the left screw at native size), as the composite's "the right emblem" asks
    ("circuit_board__screw_left", "the left screw", "nothing here recognises 'screw'"),
    # the detector reads these dogs as cows (0.43 at 640 px; dogs 0.45): a weak detection
    # chosen by place is asked, as the composite's pasted cups read as cups at 0.23-0.40
    ("dogs_under_tree__dog_right", "the right cow", "the detector is only"),
])
def test_what_cannot_be_verified_is_asked(case_id: str, phrase: str, says: str) -> None:
    image, _ = _photo(case_id)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "ambiguous", found.reason
    assert says in found.reason
    assert found.masks, "the guess is offered to click"


@pytest.mark.parametrize("case_id, phrase", [
    ("dog_on_floor__cat", "the cat"),            # a dog (detector cat 0.17)
    ("lake_hill__boat", "the boat"),             # hills over a lake (detector boat 0.11)
])
def test_a_class_the_detector_knows_but_hardly_sees_is_not_there(case_id: str,
                                                                 phrase: str) -> None:
    image, _ = _photo(case_id)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "unresolved", found.reason
    assert found.reason.startswith(f"no {phrase.split()[-1]} found")


@pytest.mark.parametrize("case_id, phrase", [
    ("kitten_white__kitten", "the kitten"),
    ("dog_on_floor__dog", "the dog"),
    ("dogs_under_tree__dog_left", "the dog on the left"),
    ("bridge__sky", "the sky"),
    ("voc_2011_000003__bottle", "the bottle held by the man on the right"),
])
def test_what_is_verified_still_resolves(case_id: str, phrase: str) -> None:
    image, truth = _photo(case_id)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), truth) >= 0.8


def test_the_head_noun_is_the_thing_named() -> None:
    assert head_nouns("the bottle held by the man on the right".split(),
                      ["bottle", "held", "by", "man"]) == (["bottle"], True)
    assert head_nouns("the dog on the left".split(), ["dog"]) == (["dog"], False)
    assert head_nouns("the cola bottle".split(), ["cola", "bottle"]) == (
        ["cola", "bottle"], False)
    assert head_nouns("the label on the cola bottle".split(),
                      ["label", "cola", "bottle"]) == (["label"], True)


def test_a_box_with_no_outline_in_it_is_a_question_not_the_box() -> None:
    """A beach umbrella ~100 px wide (clouds_beach, tune, native 1920 px): the detector
    sees it (0.46), but neither GrabCut nor the salient map finds anything in its box, so
    the mask fell back to the whole box (sea, sand and two people in it: IoU 0.21) and
    was said found. Now the box is offered to click and where the thing ends is asked."""
    image = realset.photo("clouds_beach")
    truth = realset.load_mask("clouds_beach__umbrella.png")
    found = PerceptionLocalizer().locate(image, "the umbrella")
    assert found.status == "ambiguous", found.reason
    assert "nothing inside its box stands out" in found.reason
    assert found.masks and mask_iou(found.masks[0].mask, truth) < 0.8    # why it asks
    assert found.masks[0].evidence["outline"] == 0.0


def test_two_letter_nouns_name_things() -> None:
    """"the tv" was refused in 6 ms ("names no colour or place": two-letter words were
    never nouns); it is the detector's tv now (tv_in_leaves, tune, at 960 px: its outline
    offered, the detector only 37 % sure), and "up" in a phrase is still no noun."""
    from pipelines.localizers.phrases import noun_words, parse_phrase

    assert noun_words(parse_phrase("the tv")) == ["tv"]
    assert noun_words(parse_phrase("the dog up there")) == ["dog", "there"]
    image, truth = realset.case_at("tv_in_leaves__tv", 960)
    found = PerceptionLocalizer().locate(image, "the TV")
    assert found.status != "unresolved", found.reason
    assert found.masks and mask_iou(found.masks[0].mask, truth) >= 0.8


def test_a_compound_the_lexicon_names_as_the_class_is_the_thing_not_a_part() -> None:
    """"the tv set" was read as a part of a tv ("I can find the tv but not the tv set on
    it"): WordNet knows "tv set" as one name of a television; "the car door" and "the
    tv screen" stay parts."""
    from pipelines.localizers.assurance import part_of
    from pipelines.perception.words import WordMatch

    assert part_of(["tv", "set"], WordMatch("tv set", "tv", 1.0, "lexicon")) == ""
    assert part_of(["television", "set"], WordMatch("television set", "tv", 1.0,
                                                    "lexicon")) == ""
    assert part_of(["car", "door"], WordMatch("car door", "car", 1.0, "table")) == "car"
    assert part_of(["tv", "screen"], WordMatch("tv screen", "tv", 1.0, "table")) == "tv"
