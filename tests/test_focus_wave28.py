"""Wave 28, issue 32 class "focus": a shallow depth of field says where to look.

"The flower" on a meadow of anemones, a few sharp among many blurred ones, was refused
("no subject stands out") on 9219edc: no detector class fits the word and the saliency
model sees no one subject. The zones in focus are now offered to click (``focus``):
a question whose candidates hold the sharp flowers (their hand-drawn masks), not the
bokeh. Photos sharp throughout, or with weak edges only (fog), are still
refused. Real photographs of the tune split at 640 px.
"""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from pipelines.localizers import PerceptionLocalizer

SIDE = 640


@pytest.fixture(scope="module")
def flower() -> tuple[object, dict[str, np.ndarray]]:
    image, _ = realset.case_at("flowers__flower", SIDE)
    found = PerceptionLocalizer().locate(image, "the flower")
    truths = {}
    for case_id in ("flowers__pink_centre", "flowers__blue_low"):
        _, truth = realset.case_at(case_id, SIDE)
        assert truth is not None
        truths[case_id] = truth
    return found, truths


def test_the_flower_among_bokeh_is_asked_with_the_sharp_ones_to_click(flower) -> None:
    found, truths = flower
    assert found.status == "ambiguous", found.reason
    assert "in focus" in found.reason and "click" in found.reason
    assert found.candidates, "the zones in focus are offered to click"
    offered = np.logical_or.reduce([c.mask for c in found.candidates])
    for case_id, truth in truths.items():       # the sharp anemones are in what is offered
        held = np.count_nonzero(offered & truth) / np.count_nonzero(truth)
        assert held >= 0.8, (case_id, held)
    # ... and the blurred meadow around them is not
    assert offered.mean() < 0.25, offered.mean()


@pytest.mark.parametrize("case_id, phrase", [
    ("fog__lighthouse", "the lighthouse"),      # weak edges: no shallow focus to read
    ("kpa_skagen__beach", "the beach"),         # strong edges, but sharp throughout
])
def test_photos_without_a_shallow_focus_are_still_refused(case_id: str, phrase: str) -> None:
    image, _ = realset.case_at(case_id, SIDE)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "unresolved", found.reason
    assert "no subject stands out" in found.reason
