"""Work the frame pass and the weak guess's second look leave out (issue 32, wave 38):
they give the same answers without it.

* ``shrunk_size`` gives the size ``shrink`` makes, without resizing: the frame pass sizes
  its (unneeded) salient map from it instead of shrinking a 20-MP photo for nothing.
* ``second_look._weak`` reads the classifier on a crop only when a step needs it: a weak
  guess whose padded crop is no such thing is asked still after one pass, not two, with
  the answer the two readings gave (a real tune photo, real nets).
"""

from __future__ import annotations

import numpy as np
import pytest

from eval.realset import case_at
from pipelines.localizers import PerceptionLocalizer, second_look
from pipelines.perception import imagenet
from pipelines.perception.detectors import forget_memos, shrink, shrunk_size


@pytest.mark.parametrize("shape", [(3648, 5472), (2828, 4240), (5472, 3648), (1000, 700),
                                   (1024, 768), (1025, 3), (700, 1900), (511, 512),
                                   (7, 3001), (600, 1300)])
@pytest.mark.parametrize("side", [512, 1024])
def test_shrunk_size_is_the_size_shrink_makes(shape: tuple[int, int], side: int) -> None:
    image = np.zeros((*shape, 3), np.uint8)
    assert shrunk_size(image.shape, side) == shrink(image, side).shape[:2]


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
    reading of the padded crop is not a tv, so the tight crop cannot confirm it."""
    img, _ = case_at("tv_in_leaves__tv", 640)
    loc = PerceptionLocalizer()
    passes: list[int] = []
    real = imagenet.probabilities

    def counted(rgb: np.ndarray) -> np.ndarray:
        passes.append(rgb.shape[0])
        return real(rgb)

    monkeypatch.setattr(imagenet, "probabilities", counted)
    answers = []
    for readings in (second_look._Readings, _Eager):
        monkeypatch.setattr(second_look, "_Readings", readings)
        forget_memos()
        passes.clear()
        answers.append((_answer(loc.locate(img, "the tv")), len(passes)))
    (lazy, lazy_passes), (eager, eager_passes) = answers
    assert lazy[0] == "ambiguous", lazy[1]
    assert lazy == eager
    assert lazy_passes == eager_passes - 1
