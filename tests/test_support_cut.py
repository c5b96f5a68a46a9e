"""Issue 32, class "support": a subject's mask stops where the branch it sits on begins.

On a real photo (the panther chameleon of palapeli-data, with its hand-drawn mask from the
real-photo set, tune split), at 640 px: the salient map takes the chameleon together with
the branch it grips; the support cut takes the branch out (stubs that run out of the frame,
then GrabCut with their colours as background). A subject without a support (the
butterfly on its flower, whose salient mask reaches no edge) is left as it was.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import perception, support
from tests.guesses import confirmed

SIDE = 640


def _case(case_id: str) -> tuple[np.ndarray, np.ndarray, str]:
    case = realset.case(case_id, check_masks=False)
    image = realset.photo(case.photo)
    k = SIDE / max(image.shape[:2])
    size = (round(image.shape[1] * k), round(image.shape[0] * k))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    truth = cv2.resize(case.truth().astype(np.uint8), size, interpolation=cv2.INTER_NEAREST)
    return small, truth > 0, case.phrase


def _locate(image: np.ndarray, phrase: str) -> np.ndarray:
    found = confirmed(perception.PerceptionLocalizer().locate(image, phrase))
    assert found.status == "resolved", found.reason
    return found.union()


def test_the_chameleon_leaves_out_the_branch_it_grips(monkeypatch) -> None:
    image, truth, phrase = _case("panther_chameleon_female__chameleon")
    cut = _locate(image, phrase)
    monkeypatch.setattr(perception, "cut_support", lambda rgb, mask: (mask, 0.0))
    whole = _locate(image, phrase)
    outside = ~cv2.dilate(truth.astype(np.uint8), np.ones((9, 9), np.uint8)).astype(bool)
    # the branch is most of what the uncut mask takes outside the animal
    assert (whole & outside).sum() > 0.1 * truth.sum()
    assert (cut & outside).sum() < 0.35 * (whole & outside).sum()
    assert mask_iou(cut, truth) >= 0.8 > mask_iou(whole, truth)


@pytest.mark.parametrize("case_id", ["butterfly_kw__butterfly"])
def test_a_subject_that_reaches_no_edge_is_not_cut(case_id: str) -> None:
    image, truth, _ = _case(case_id)
    small = cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2),
                       interpolation=cv2.INTER_AREA)
    mask = cv2.resize(truth.astype(np.uint8), (small.shape[1], small.shape[0]),
                      interpolation=cv2.INTER_NEAREST) > 0
    same, share = support.cut_support(small, mask)
    assert share == 0.0 and np.array_equal(same, mask)


def test_a_floor_tile_of_the_dogs_own_white_is_not_the_dog() -> None:
    """A white dog lying on white tiles (dog_on_floor, tune), at 800 px: GrabCut in the
    detector's box took a whole tile under the dog's leg from colour alone (6.3k px
    beyond the dog's reach; "make the dog darker" darkened the floor and reported done).
    The salient map reads the tile 0.0 and the dog 1.0: ``segment.unsalient_cut``."""
    image, truth = realset.case_at("dog_on_floor__dog", 800)
    found = perception.PerceptionLocalizer().locate(image, "the dog")
    assert found.status == "resolved", found.reason
    mask = found.union()
    reach = cv2.dilate(truth.astype(np.uint8),
                       cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (17, 17))) > 0
    assert (mask & ~reach).sum() < 100
    assert mask_iou(mask, truth) >= 0.85
