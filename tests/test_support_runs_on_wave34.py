"""Issue 32, no silent failures: a guessed subject whose support runs on into its outline.

On a real photo (the Bent Pyramid of gcompris-qt-data, tune split, at 640 px) the salient
map takes the pyramid together with the sand ridge in front of it and the dune beside it;
the support cut takes the dune out but keeps the ridge, one stuff with it, as the
pyramid's foot. "make the pyramid warmer" then warmed 9,518 px of desert and was reported
done. The answer now asks where the pyramid ends. The Great Pyramid, whose cut took a
piece of the pyramid's own stone (nothing of another stuff runs on), is still found.
"""

from __future__ import annotations

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import perception

SIDE = 640


def _locate(case_id: str):
    image, truth = realset.case_at(case_id, SIDE)
    return perception.PerceptionLocalizer().locate(image, "the pyramid"), truth


def test_the_ridge_in_front_of_the_pyramid_makes_it_a_question() -> None:
    found, truth = _locate("gc_bent_pyramid__pyramid")
    assert found.status == "ambiguous", found.reason
    assert "runs on into the outline" in found.reason
    assert found.masks[0].evidence["support_runs_on"] >= 0.1


def test_a_pyramid_cut_at_its_own_corner_is_still_found() -> None:
    found, truth = _locate("gc_great_pyramid__pyramid")
    assert found.status == "resolved", found.reason
    assert "support_runs_on" not in found.masks[0].evidence
    assert mask_iou(found.union(), truth) >= 0.9
