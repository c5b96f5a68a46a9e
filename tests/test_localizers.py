"""The one result type every localiser returns: scored candidates with ids, boxes and
evidence, the chosen one(s) and a confidence — measured on drawn scenes whose true
regions are known."""

from __future__ import annotations

import json

import cv2
import numpy as np

from pipelines.localizers import Candidate, EmbeddedLocalizer, Hint, Localization
from pipelines.localizers.base import mask_box

LOC = EmbeddedLocalizer()


def two_reds(right_radius: int = 40) -> np.ndarray:
    """Grey canvas with a red disc at x=100 and another at x=300 (radius 40 or given)."""
    image = np.full((200, 400, 3), 128, np.uint8)
    cv2.circle(image, (100, 100), 40, (220, 20, 20), -1)
    cv2.circle(image, (300, 100), right_radius, (220, 20, 20), -1)
    return image


def test_a_choice_keeps_every_candidate_and_names_the_chosen_one() -> None:
    found = LOC.locate(two_reds(), "the left red one")
    assert found.status == "resolved"
    assert len(found.candidates) == 2 and len({c.id for c in found.candidates}) == 2
    assert len(found.chosen) == 1
    chosen = found.candidate(found.chosen[0])
    assert chosen is not None and found.candidate("c9") is None
    x0, y0, x1, y1 = chosen.bbox
    assert abs(x0 - 60) <= 3 and abs(x1 - 141) <= 3 and abs(y0 - 60) <= 3
    other = next(c for c in found.candidates if c.id != found.chosen[0])
    assert other.bbox[0] > 250
    # the place words are evidence: the left disc sits nearer the left than the right one
    assert chosen.evidence["position"] > other.evidence["position"]
    assert found.confidence == chosen.score and 0.0 < found.confidence <= 1.0
    assert found.best is chosen and found.masks == [chosen]


def test_two_equal_candidates_are_ambiguous_with_no_choice_and_a_low_confidence() -> None:
    found = LOC.locate(two_reds(), "the red one")
    assert found.status == "ambiguous" and found.chosen == []
    assert len(found.candidates) == 2
    a, b = (c.score for c in found.candidates)
    assert found.confidence == abs(a - b) < 0.1
    for cand in found.candidates:
        assert set(cand.evidence) >= {"colour", "size", "fill"}
        assert 0.9 <= cand.evidence["size"] <= 1.0


def test_plural_chooses_every_target() -> None:
    found = LOC.locate(two_reds(30), "all the red ones")
    assert found.status == "resolved" and found.plural
    assert sorted(found.chosen) == sorted(c.id for c in found.candidates)
    assert found.confidence == min(c.score for c in found.candidates)


def test_a_dominant_region_wins_and_the_small_one_stays_a_candidate() -> None:
    found = LOC.locate(two_reds(12), "the red disc")
    assert found.status == "resolved" and len(found.candidates) == 2
    chosen = next(c for c in found.candidates if c.id == found.chosen[0])
    assert chosen.bbox[0] < 100 and chosen.area > 5 * min(c.area for c in found.candidates)


def test_unresolved_has_no_candidates_and_zero_confidence() -> None:
    found = LOC.locate(two_reds(), "the green one")
    assert found.status == "unresolved" and found.candidates == [] and found.chosen == []
    assert found.confidence == 0.0 and "green" in found.reason


def test_summary_is_json_without_pixels() -> None:
    found = LOC.locate(two_reds(), "the right red one")
    view = json.loads(json.dumps(found.summary()))
    assert view["status"] == "resolved" and view["chosen"] == found.chosen
    boxes = {c["id"]: c["box"] for c in view["candidates"]}
    assert boxes[found.chosen[0]][0] > 250
    assert all("mask" not in c for c in view["candidates"])


def test_a_brush_hint_is_user_evidence() -> None:
    brush = np.zeros((200, 400), bool)
    brush[50:150, 50:150] = True
    found = LOC.locate(two_reds(), "this", Hint(mask=brush))
    assert found.candidates[0].evidence == {"user": 1.0}
    assert found.candidates[0].bbox == (50, 50, 150, 150) == mask_box(brush)


def test_ids_stay_unique_when_a_localiser_sets_some() -> None:
    masks = [Candidate(np.ones((4, 4), bool), s, "x", "t") for s in (0.9, 0.5, 0.3)]
    masks[1].id = "c0"
    found = Localization(masks, "ambiguous", "")
    assert sorted(c.id for c in found.candidates) == ["c0", "c1", "c2"]
    assert [c.score for c in found.candidates] == [0.9, 0.5, 0.3]


def test_words_that_name_nothing_known_are_refused_saying_what_the_user_can_do() -> None:
    """"The light" (a shade word, no noun) on a real photo: the perception localiser has
    detection models, so its refusal must not say none is configured; it says to click
    the thing, as every refusal does since click-to-select."""
    from skimage import data

    from pipelines.localizers.perception import PerceptionLocalizer

    seen = PerceptionLocalizer().locate(data.coffee(), "the light")
    assert seen.status == "unresolved" and "click it" in seen.reason
    assert "no detection model" not in seen.reason
    plain = EmbeddedLocalizer().locate(data.coffee(), "the light")
    assert "no detection model is configured" in plain.reason
