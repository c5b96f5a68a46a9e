"""Issue 32: edits reported done that changed the wrong extent, found on the tune photos'
other prints (``bench/realset.py --edits --print gamma1.25|flip|scale0.6``). Each rule is
checked on the tune photo and print that showed it, small enough to run in seconds."""

from __future__ import annotations

import cv2
import numpy as np

from agent import executor
from eval import realset
from eval.localization import beyond_reach
from pipelines.editors.base import EditRequest
from pipelines.editors.objects import growth_limit
from pipelines.editors.registry import pick_editor
from pipelines.localizers.sky import find_sky


def _case(case_id: str, how: str, side: int) -> tuple[np.ndarray, np.ndarray]:
    photo, truth = realset.case_at(case_id, side)
    image, truth, _ = realset.printed(photo[..., :3], truth, "", how)
    return image, truth


def test_a_monochrome_skys_grey_half_is_sky() -> None:
    """A black-and-white beach, darker (a gamma of 1.25): the overcast right half of its
    sky is smooth and colourless but too dark to read as pale, so the sky stopped in the
    open air and "make the sky darker" darkened 81 % of it, reported done. Smooth grey
    regions that reach the top border, end above the horizon and touch the sky are sky."""
    image, truth = _case("clouds_beach__sky", "gamma1.25", 1024)
    found = find_sky(image)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert (mask & truth).sum() >= 0.95 * truth.sum()
    assert not (mask & beyond_reach(truth)).any()


def test_a_rim_retry_stays_within_the_edge_growth() -> None:
    """A drop hanging from a blade, darker: its removal left traces near the old edge (the
    drop's dark glow), and the retry grew the hole 8 px more and grew that again, 30 px
    beyond the drop, past any edge growth: 787 px of the blur around it changed beyond
    the reach, reported done. The retry's hole stays within the edge growth of the thing
    located; when that adds nothing, there is no such retry."""
    image, truth = _case("drop__drop", "gamma1.25", 2000)
    request = EditRequest(kind="remove", operation="inpaint",
                          params={"method": "auto", "radius": 5})
    editor = pick_editor(request)
    layer = executor.cut(image, truth, request, editor)
    far = cv2.distanceTransform((~truth).view(np.uint8), cv2.DIST_L2, 5) > growth_limit(truth)
    full = np.zeros(truth.shape, bool)
    x0, y0, x1, y1 = layer.bbox
    full[y0:y1, x0:x1] = layer.mask
    wide = cv2.dilate(full.view(np.uint8), np.ones((17, 17), np.uint8)).astype(bool)
    old = executor.cut(image, wide, request, editor)     # the retry as it was: past the reach
    x0, y0, x1, y1 = old.bbox
    assert (old.mask & far[y0:y1, x0:x1]).any()
    wider = executor.rim_layer(image, layer, 8, request, editor, truth)
    if wider is not None:
        x0, y0, x1, y1 = wider.bbox
        assert not (wider.mask & far[y0:y1, x0:x1]).any()
