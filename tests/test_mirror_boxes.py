"""Issue 32, wave 37: the mirror copy is asked only where the detector draws other boxes.

``steady.settle`` asks a thing the detector found again on the mirror image, because the
detector's boxes differ there: on the mirrored print of the tune set's owl photo the owl
is "found" cut off at its branch (IoU 0.75), while on the mirror image of that print (the
photo as shot) the detector also draws a larger owl, and Loupe asks where it ends. That
whole second localisation cost 1.2-1.7 s of a 12-MP turn on a detected dog; now the
detector alone is run on the mirror image of the frame (``mirror_boxes.seen_alike``), and
the localisation only where its boxes differ. The owl still asks; a right dog, drawn alike
on both sides, resolves as before without it."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import PerceptionLocalizer
from pipelines.localizers.mirror_boxes import boxes_alike, seen_alike
from pipelines.localizers.steady import agreement, mirrored, settle
from pipelines.perception.detectors import Detection


@pytest.fixture(scope="module")
def localizer() -> PerceptionLocalizer:
    return PerceptionLocalizer()


def test_the_owl_cut_at_its_branch_is_still_asked_from_its_mirror_image(
        localizer: PerceptionLocalizer) -> None:
    image, truth, phrase = realset.case_printed("gc_owl__owl", "flip")
    first = localizer.locate(image, phrase)
    assert first.status == "resolved"                           # said found on its own ...
    assert mask_iou(first.union(), truth) < realset.RIGHT_IOU   # ... and it is not right
    assert not seen_alike(image, phrase, first)     # the larger owl is drawn on one side
    settled = settle(localizer, image, phrase, None, first, ("mirrored",))
    assert settled.status == "ambiguous", settled.reason
    assert "mirrored copy" in settled.reason and "larger" in settled.reason
    assert np.array_equal(np.asarray(settled.masks[0].mask, bool), first.union())


def test_a_right_dog_drawn_alike_on_both_sides_resolves_without_the_mirror_copy(
        localizer: PerceptionLocalizer) -> None:
    image, truth, phrase = realset.case_printed("kpa_donna_2__dog", None)
    first = localizer.locate(image, phrase)
    assert first.status == "resolved"
    assert mask_iou(first.union(), truth) >= realset.RIGHT_IOU
    assert seen_alike(image, phrase, first)
    # what the whole mirror localisation left out would have said: the same dog
    other = localizer.locate(*mirrored(image, phrase))
    assert other.status == "resolved"
    assert agreement(first.union(), other.union()[:, ::-1]) >= 0.95
    assert settle(localizer, image, phrase, None, first, ("mirrored",)) is first


def _det(label: str, score: float, box: tuple[float, ...]) -> Detection:
    return Detection(box, score, label)


def test_boxes_alike_reads_a_larger_box_a_moved_box_and_a_rival() -> None:
    owl = (100.0, 100.0, 200.0, 260.0)
    seen = [_det("bird", 0.50, owl), _det("cat", 0.1, (0, 0, 50, 50))]
    jitter = [_det("bird", 0.47, (103.0, 98.0, 202.0, 262.0)), _det("dog", 0.2, (0, 0, 40, 40))]
    assert boxes_alike(seen, jitter, owl, "bird")       # weak boxes elsewhere do not count
    larger = _det("bird", 0.44, (80.0, 90.0, 220.0, 330.0))
    assert not boxes_alike(seen, [*jitter, larger], owl, "bird")   # the owl's larger box
    assert not boxes_alike([*seen, larger], jitter, owl, "bird")   # ... on either side
    weaker = _det("bird", 0.30, larger.box)     # read 0.30 as shot, 0.44 on the mirror
    assert not boxes_alike([*seen, weaker], [*jitter, larger], owl, "bird")
    assert not boxes_alike(seen, [_det("bird", 0.5, (100.0, 100.0, 200.0, 200.0))], owl, "bird")
    assert not boxes_alike(seen, [_det("bird", 0.35, owl)], owl, "bird")
    horse = (90.0, 100.0, 210.0, 280.0)
    assert not boxes_alike(seen, [*jitter, _det("horse", 0.4, horse)], owl, "bird")
    assert boxes_alike([*seen, _det("horse", 0.33, horse)], [*jitter, _det("horse", 0.4, horse)],
                       owl, "bird")                 # drawn on both sides
    assert not boxes_alike([*seen, _det("horse", 0.52, horse)],
                           [*jitter, _det("horse", 0.71, horse)], owl, "bird")  # read surer
