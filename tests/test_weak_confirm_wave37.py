"""A weak detection the classifier names is found, not asked (issue 32, wave 37).

"The hen on the left": the detector only 0.36 sure of a bird, so the localiser asked.
``second_look`` finds it when ImageNet's likeliest class, on the guess's crop padded and
tight, bears the very name said ("hen"), and the strip beyond it on the side named (or the
rest of the photo) does not read as one: another one may be there, the detector as weak
on it. A breed under the noun ("dog": a Samoyed) does not confirm it. Real tune photos,
shrunk."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from pipelines.localizers import PerceptionLocalizer

SIDE = 640


@pytest.fixture(scope="module")
def loc() -> PerceptionLocalizer:
    return PerceptionLocalizer()


def test_a_weak_hen_the_classifier_names_is_found_on_its_outline(loc) -> None:
    img, truth = realset.case_at("gc_hens__hen_on_the_left", SIDE)
    found = loc.locate(img, "the hen on the left")
    assert found.status == "resolved", found.reason
    assert "reads it as hen" in found.reason
    mask = found.union()
    assert (mask & truth).sum() / (mask | truth).sum() >= 0.8


def test_a_weak_dog_beside_another_dog_still_asks(loc) -> None:
    """Mirrored, the detector sees one of two white dogs (0.30-0.36) and misses the other;
    the classifier reads a Samoyed, a breed, not "dog": "the dog on the right" stays a
    question (the crop around its guess, greyed out, still reads as a dog: wave 39's
    ``hole``; "the dog on the left", whose outline holds its dog, is found:
    ``test_weak_breed_wave39``)."""
    img, truth = realset.case_at("dogs_under_tree__dog_left", SIDE)
    img = np.ascontiguousarray(img[:, ::-1])
    for said in ("the dog on the right",):
        found = loc.locate(img, said)
        assert found.status == "ambiguous", (said, found.reason)
