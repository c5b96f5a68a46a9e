"""Issue 32: the main subject taken for an animal no detector class names, confirmed by the
detector seeing an animal there under another class ("the komodo dragon" seen as a dog),
is only as right as its outline. On the gcompris-qt-data Komodo dragon the salient outline
left out the tail and the shaded hind body (IoU 0.74) and "make the komodo dragon darker"
was reported done. Knowing the kind says nothing of the extent; the detector's box does:
the outline filled 30 % of it, the right ones (a bison, a panda, a piglet, a gorilla, a
rabbit) 48-70 %. Under ``assurance.FILLS_BOX`` it is asked, as a detected thing's is."""

from __future__ import annotations

import numpy as np

from eval import realphotos, realset
from pipelines.localizers import PerceptionLocalizer
from pipelines.localizers.assurance import box_fill


def test_a_komodo_dragon_without_its_tail_is_asked() -> None:
    found = PerceptionLocalizer().locate(realphotos.load("gc_komodo_dragon"),
                                         "the komodo dragon")
    assert found.status == "ambiguous", found.reason
    assert "fills only" in found.reason


def test_a_panda_that_fills_its_box_is_still_found() -> None:
    photo, truth = realset.case_shot("gc_panda__panda")
    found = PerceptionLocalizer().locate(photo, "the panda")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.masks[0].mask > 0.5, truth) >= 0.95


def test_box_fill_counts_the_box_at_the_masks_scale() -> None:
    mask = np.zeros((100, 100), bool)
    mask[10:30, 10:20] = True
    assert box_fill(mask, (10, 10, 20, 30)) == 1.0
    assert box_fill(mask, (5, 5, 15, 15), scale=2.0) == 0.5
