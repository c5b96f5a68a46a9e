"""Issue 32, wave 35: a found thing's doubt about where it ends holds from a copy.

On the mirror image of the tune set's owl photo the detector draws one owl box, and the
outline stops at the branch: the owl's tail under it is left out (IoU 0.75), "found". As
shot, the detector draws a larger owl around it too and Loupe asks where it ends. The
answer changed with the side the photo is seen from: ``steady.settle`` now asks a thing
the detector found on the mirror image as well, and that copy's question about the same
region's end holds for the first answer. The same holds from an exposure copy: on a
lighter print of the kookaburra's photo the outline takes the branch in front of the bird
(IoU 0.74, "found"), while its darker copy asks because that outline ran past its box.
The 95 tune answers that resolve as shot keep their answers (``bench/realset.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import PerceptionLocalizer
from pipelines.localizers.steady import settle


@pytest.fixture(scope="module")
def localizer() -> PerceptionLocalizer:
    return PerceptionLocalizer()


@pytest.mark.parametrize(("case_id", "how", "copies", "copy"), [
    ("gc_owl__owl", "flip", None, "mirrored copy"),     # the default copies of a detection
    ("jz_kookaburra__bird", "gamma0.8", ("darker",), "darker copy"),
])
def test_a_copys_question_about_where_the_thing_ends_holds(
        localizer: PerceptionLocalizer, case_id: str, how: str,
        copies: tuple[str, ...] | None, copy: str) -> None:
    image, truth, phrase = realset.case_printed(case_id, how)
    first = localizer.locate(image, phrase)
    assert first.status == "resolved"                       # said found on its own ...
    assert mask_iou(first.union(), truth) < realset.RIGHT_IOU     # ... and it is not right
    settled = settle(localizer, image, phrase, None, first, copies)
    assert settled.status == "ambiguous", settled.reason
    assert copy in settled.reason
    # the first answer is what is offered first: one click confirms it, nothing is edited
    assert np.array_equal(np.asarray(settled.masks[0].mask, bool), first.union())

