"""Work the frame pass and the weak guess's second look leave out (issue 32, wave 38):
they give the same answers without it.

* ``shrunk_size`` gives the size ``shrink`` makes, without resizing: the frame pass sizes
  its (unneeded) salient map from it instead of shrinking a 20-MP photo for nothing.
* ``refine.upsample_edge`` decides the tiles its edge crosses on two threads: the very
  mask bits the one-by-one decision gives, on a real photo's edge.
* ``second_look._weak`` reads the classifier on a crop only when a step needs it: a weak
  guess whose padded crop is no such thing is asked still after one pass, not two, with
  the answer the two readings gave (a real tune photo, real nets).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from eval.realset import case_at
from pipelines.localizers import PerceptionLocalizer, refine, second_look
from pipelines.perception import imagenet
from pipelines.perception.detectors import shrink, shrunk_size
from tests.perception_cases import photo_by_name


@pytest.mark.parametrize("shape", [(3648, 5472), (2828, 4240), (5472, 3648), (1000, 700),
                                   (1024, 768), (1025, 3), (700, 1900), (511, 512),
                                   (7, 3001), (600, 1300)])
@pytest.mark.parametrize("side", [512, 1024])
def test_shrunk_size_is_the_size_shrink_makes(shape: tuple[int, int], side: int) -> None:
    image = np.zeros((*shape, 3), np.uint8)
    assert shrunk_size(image.shape, side) == shrink(image, side).shape[:2]


def test_the_edge_decided_on_two_threads_is_the_edge_decided_tile_by_tile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The coffee photo at 2400 x 1600, the dark cup and coffee found on a 300-px copy:
    its edge crosses dozens of 256-px tiles; with the threads off the mask is the same."""
    big = cv2.resize(photo_by_name("coffee"), (2400, 1600), interpolation=cv2.INTER_CUBIC)
    grey = cv2.cvtColor(cv2.resize(big, (300, 200), interpolation=cv2.INTER_AREA),
                        cv2.COLOR_RGB2GRAY)
    soft = cv2.GaussianBlur((grey < 90).astype(np.float32), (3, 3), 0)
    shared = refine.upsample_edge(big, soft)
    monkeypatch.setattr(refine, "PARALLEL_TILES", 10**9)
    alone = refine.upsample_edge(big, soft)
    assert np.array_equal(shared, alone)
    enlarged = cv2.resize(soft, (2400, 1600), interpolation=cv2.INTER_LINEAR) >= 0.5
    assert 0.05 < shared.mean() < 0.6 and (shared != enlarged).sum() > 500  # an edge decided


class _Eager(second_look._Readings):
    """Every crop read at once, as ``_weak`` did before wave 38."""

    def __init__(self, crops: list[np.ndarray]) -> None:
        super().__init__(crops)
        for i in range(len(crops)):
            self[i]


def _answer(found) -> list:  # noqa: ANN001 - a Localization
    return [found.status, found.reason, found.guess] + [
        (np.packbits(c.mask).tobytes(), c.score, sorted(c.evidence.items()))
        for c in [*found.masks, *found.candidates]]


def test_a_weak_guess_is_asked_after_one_classifier_pass_with_the_same_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """"The tv" half hidden in leaves: the detector is weakly sure of it; the classifier's
    reading of the padded crop is not a tv, so the tight crop cannot confirm it. The
    question ``_weak`` was given is answered again with every crop read at once."""
    img, _ = case_at("tv_in_leaves__tv", 640)
    weak, given = second_look._weak, []

    def kept(*args: object) -> object:
        given.append(args)
        return weak(*args)

    monkeypatch.setattr(second_look, "_weak", kept)
    PerceptionLocalizer().locate(img, "the tv")
    assert len(given) == 1
    passes: list[int] = []
    real = imagenet.probabilities

    def counted(rgb: np.ndarray) -> np.ndarray:
        passes.append(rgb.shape[0])
        return real(rgb)

    monkeypatch.setattr(imagenet, "probabilities", counted)
    answers = []
    for readings in (second_look._Readings, _Eager):
        monkeypatch.setattr(second_look, "_Readings", readings)
        passes.clear()
        answers.append((_answer(weak(*given[0])), len(passes)))
    (lazy, lazy_passes), (eager, eager_passes) = answers
    assert lazy[0] == "ambiguous", lazy[1]
    assert lazy == eager
    assert lazy_passes == 1 and eager_passes == 2
