"""Issue 32, wave 26: "the sky's reflection in the lake" and "the sky reflected in the
water" named the sky (``assurance.sky_named``: "sky" came before the other nouns), so the
sky above was found, edited and said done while the user meant its mirror image in the
lake. A phrase with a word of mirroring, or one where a noun follows "the sky's", does not
name the sky itself; "the sky above the hill" and "the sky's colour" still do. A real tune
photo (a hill over a lake) at 640 px."""

from __future__ import annotations

import pytest

from eval import realset
from pipelines.localizers.assurance import sky_named
from pipelines.localizers.perception import NOT_NOUNS, PerceptionLocalizer
from pipelines.localizers.phrases import noun_words, parse_phrase


def _named(phrase: str) -> bool:
    parsed = parse_phrase(phrase)
    return sky_named(parsed.words, noun_words(parsed, NOT_NOUNS))


@pytest.mark.parametrize("phrase", ["the sky", "the sky above the hill", "the sky's colour",
                                    "the blue sky over the lake"])
def test_the_sky_itself_is_named(phrase: str) -> None:
    assert _named(phrase), phrase


@pytest.mark.parametrize("phrase", ["the sky's reflection in the lake", "the reflection of "
                                    "the sky", "the sky reflected in the water",
                                    "the sky mirrored in the pond", "the sky's edge",
                                    "the bird in the sky"])
def test_a_mirror_image_or_a_part_is_not_the_sky(phrase: str) -> None:
    assert not _named(phrase), phrase


@pytest.mark.parametrize("phrase", ["the sky's reflection in the lake",
                                    "the sky reflected in the water"])
def test_the_skys_reflection_is_not_edited_as_the_sky(phrase: str) -> None:
    image, _ = realset.case_at("lake_hill__lake", 640)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status != "resolved", found.reason
    assert "found the sky" not in found.reason
