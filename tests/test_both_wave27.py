"""Wave 27: "the sky and the sea" given to the localiser as one phrase found the sky alone
and said found (on a photo of only sky and sea, IoU 0.43). Two things, each with its own
article, are now located each on its own: both resolved is their union, either unsure makes
a question offering what was found, either missing is no answer. "The black and white dog"
and "the cup and saucer" stay one thing. A real tune photo (a helicopter over a harbour)."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from pipelines.localizers.perception import PerceptionLocalizer
from pipelines.localizers.portion import two


@pytest.mark.parametrize(("text", "pair"), [
    ("the sky and the sea", ("the sky", "the sea")),
    ("the sky, and the sea", ("the sky", "the sea")),
    ("the man and the woman on the left", ("the man", "the woman on the left")),
    ("the black and white dog", None), ("the cup and saucer", None), ("rock and roll", None)])
def test_two_things_each_with_its_article(text: str, pair: tuple[str, str] | None) -> None:
    assert two(text) == pair


def test_the_sky_and_the_sea_is_not_the_sky_alone() -> None:
    image = realset.photo("jz_helicopter")
    sky = realset.case("jz_helicopter__sky").truth()
    sea = realset.case("jz_helicopter__sea").truth()
    found = PerceptionLocalizer().locate(image, "the sky and the sea")
    offered = np.zeros(sky.shape, bool)
    for cand in found.masks:
        offered |= np.asarray(cand.mask, bool)
    # the sea is answered for: taken with the sky, or among what is offered to click
    assert found.status in ("resolved", "ambiguous"), found.reason
    assert (offered & sea).sum() >= 0.5 * sea.sum(), found.reason
    assert (offered & sky).sum() >= 0.8 * sky.sum(), found.reason
