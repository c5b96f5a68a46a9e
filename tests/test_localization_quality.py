"""Issue 23, wave 4: named-object edges decided at native resolution, a real sky behind a
standing person, and picking among touching look-alike instances — on tune cases of the
labelled set (``eval/data/localization``) at 12–20 MP. The real sky behind a standing
person and the touching look-alikes are asserted on the set's own answers in
``tests/test_localization_set.py`` (located once there)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from eval.localization import load_cases, mask_iou, render
from pipelines.localizers import segment
from pipelines.localizers.base import mask_box

CASES = {c.id: c for c in load_cases()}


def _edge_band(truth: np.ndarray, width: int = 7) -> np.ndarray:
    kernel = np.ones((2 * width + 1, 2 * width + 1), np.uint8)
    return cv2.dilate(truth.astype(np.uint8), kernel) != cv2.erode(truth.astype(np.uint8),
                                                                    kernel)


@pytest.mark.parametrize("case_id", ["emblem_non_coco", "cup_top_left_corner"])
def test_a_named_objects_edge_is_decided_at_native_resolution(monkeypatch, case_id) -> None:
    """The box's crop is segmented on a 256-px copy; its edge band is then decided by the
    12-MP pixels (guided filter): at least 30 % fewer wrong pixels along the true outline
    than the enlarged copy's edge, and never outside the box."""
    from pipelines.localizers.perception import CROP_SIDE, SALIENT_CROP_SIDE, _Models

    salient = _Models.get().salient
    shot = render(CASES[case_id])
    box = mask_box(shot.truth)
    band = _edge_band(shot.truth)

    def refined() -> np.ndarray:
        return segment.refine_box(shot.image, box,
                                  lambda crop: salient.saliency(crop, SALIENT_CROP_SIDE),
                                  CROP_SIDE)

    native = refined()
    monkeypatch.setattr(segment, "NATIVE_EDGE_SCALE", float("inf"))   # the old edge
    enlarged = refined()
    wrong_native = int((native ^ shot.truth)[band].sum())
    wrong_enlarged = int((enlarged ^ shot.truth)[band].sum())
    assert wrong_native <= 0.7 * wrong_enlarged, (wrong_native, wrong_enlarged)
    assert mask_iou(native, shot.truth) >= mask_iou(enlarged, shot.truth)
    x0, y0, x1, y1 = box
    outside = native.copy()
    outside[y0:y1, x0:x1] = False
    assert not outside.any()


def test_the_same_backdrop_above_a_plain_studio_floor_still_asks() -> None:
    """The same scene with the trees replaced by a plain floor (a studio: a smooth
    backdrop meeting a smooth floor behind a standing person): no ground shows it is a
    sky, so it is offered as a possible backdrop and nothing is resolved."""
    from pipelines.localizers import get_localizer

    shot = render(CASES["sky_behind_standing_person"])
    (person,) = shot.others
    floor = ~shot.truth & ~person
    image = shot.image.copy()
    image[floor] = (112, 86, 70)
    found = get_localizer().locate(image, "the sky")
    assert found.status == "ambiguous" and "backdrop" in found.reason, found.reason


def test_split_touching_cuts_necks_but_keeps_one_body_whole() -> None:
    """Touching discs of three sizes come apart (one piece each, nothing lost); a horse
    silhouette (legs, head) and one long ellipse stay whole."""
    from skimage import data

    discs = np.zeros((300, 500), np.uint8)
    for centre, radius in (((120, 150), 60), ((250, 150), 75), ((395, 150), 70)):
        cv2.circle(discs, centre, radius, 1, -1)
    pieces = segment.split_touching(discs > 0)
    assert len(pieces) == 3
    assert np.array_equal(np.logical_or.reduce(pieces), discs > 0)
    assert 0.8 * np.pi * 75 ** 2 <= pieces[0].sum() <= 1.2 * np.pi * 75 ** 2
    horse = ~np.asarray(data.horse(), bool)
    assert len(segment.split_touching(horse)) == 1
    ellipse = np.zeros((300, 500), np.uint8)
    cv2.ellipse(ellipse, (250, 150), (200, 80), 0, 0, 360, 1, -1)
    assert len(segment.split_touching(ellipse > 0)) == 1


def test_a_detector_box_over_two_touching_instances_gives_way_to_them() -> None:
    """One box over two touching cups (as a detector may give) scored above each cup's
    own box: the instances are kept to pick from, the group box is not a third cup."""
    from pipelines.localizers.fusion import ObjectEvidence, distinct, group_of

    left = ObjectEvidence((100, 100, 300, 320), {"cup": 0.5}, fused=0.5)
    right = ObjectEvidence((290, 110, 500, 330), {"cup": 0.45}, fused=0.45)
    both = ObjectEvidence((95, 95, 505, 335), {"cup": 0.6}, fused=0.6)
    handle = ObjectEvidence((120, 150, 160, 200), {"cup": 0.4}, fused=0.4)
    assert group_of(both, [left, right, both]) == [left, right]
    assert distinct([both, left, right]) == [left, right]
    assert group_of(left, [left, handle]) == []          # a part is no instance
    assert distinct([left, handle]) == [left]


def test_split_instances_keeps_a_cut_only_between_look_alikes() -> None:
    """A salient blob of two touching discs of one colour becomes two parts (boxes at full
    resolution); the same blob with the discs in two different colours (one thing with
    two differently coloured parts) stays one part."""
    from pipelines.localizers.fusion import salient_components, split_instances

    prob = np.zeros((300, 500), np.float32)
    cv2.circle(prob, (150, 150), 100, 1.0, -1)
    cv2.circle(prob, (348, 150), 100, 1.0, -1)
    same = np.full((300, 500, 3), 200, np.uint8)
    same[prob > 0] = (40, 90, 160)
    parts = salient_components(prob, 4.0)
    assert len(parts) == 1
    split = split_instances(parts, same, 4.0)
    assert len(split) == 2
    lefts = sorted(box[0] for box, _ in split)
    assert abs(lefts[0] - 4 * 50) <= 8 and abs(lefts[1] - 4 * 248) <= 12
    two_colours = same.copy()
    two_colours[:, 249:][prob[:, 249:] > 0] = (200, 60, 30)
    assert len(split_instances(parts, two_colours, 4.0)) == 1


def test_the_edge_band_is_filtered_tile_by_tile_with_the_whole_frames_answer(monkeypatch
                                                                            ) -> None:
    """Only the tiles the edge band crosses are filtered: the same mask, pixel for pixel,
    as one guided filter over the whole 12-MP crop."""
    from pipelines.localizers import refine

    shot = render(CASES["emblem_non_coco"])
    small = cv2.resize(shot.truth.astype(np.float32), (384, 256),
                       interpolation=cv2.INTER_AREA)
    tiled = refine.upsample_edge(shot.image, small)
    monkeypatch.setattr(refine, "TILE", 10 ** 6)
    whole = refine.upsample_edge(shot.image, small)
    assert np.array_equal(tiled, whole)
    assert mask_iou(tiled, shot.truth) >= 0.98
