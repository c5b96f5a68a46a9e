"""Issue 32, wave 28: a sign named by what it reads. "The Eristoff poster" was refused
("the main subject is a person, not a eristoff poster") though the poster's lettering
reads ERSTO; it is now the poster round that lettering (its ground, steady over widening
colour steps). A sign whose name is read but whose extent or place is not measured ("the
LEYLAND sign", "the LEYLAND badge on the grille") is a question that says what was read,
not a refusal that says the thing is not there. Real tune photos, hand-drawn masks."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers.perception import PerceptionLocalizer
from pipelines.localizers.text import plate_around


@pytest.fixture(scope="module")
def localizer() -> PerceptionLocalizer:
    return PerceptionLocalizer()


def _case(case_id: str) -> realset.RealCase:
    return realset.case(case_id)


def test_the_eristoff_poster_is_the_poster_round_its_lettering(localizer) -> None:
    case = _case("kpa_pool__eristoff_poster")
    found = localizer.locate(realset.photo(case.photo), case.phrase)
    assert found.status == "resolved", found.reason
    assert "ERSTO" in found.reason
    assert mask_iou(found.union(), case.truth()) >= 0.8


@pytest.mark.parametrize("phrase, why", [
    ("the LEYLAND sign above the grille", "where the sign"),
    ("the LEYLAND badge on the grille", "grille"),
])
def test_a_sign_read_but_not_measured_is_asked_not_refused(localizer, phrase, why) -> None:
    found = localizer.locate(realset.photo("voc_2011_000025"), phrase)
    assert found.status == "ambiguous", found.reason
    assert "LEYLAND" in found.reason and why in found.reason


def test_no_sign_where_the_ground_runs_on() -> None:
    """Letters on a plain wall: the colour under them runs to the window's edge."""
    rgb = np.full((400, 600, 3), 120, np.uint8)
    rgb[192:208, 252:348:6] = 20                  # thin dark strokes on the grey wall
    assert plate_around(rgb, (250, 190, 350, 210)) is None
    rgb[120:300, 200:420] = 30                    # now light strokes on a dark poster
    rgb[192:208, 252:348:6] = 220
    plate = plate_around(rgb, (250, 190, 350, 210))
    assert plate is not None
    poster = np.zeros(rgb.shape[:2], bool)
    poster[120:300, 200:420] = True
    assert mask_iou(plate, poster) >= 0.95
