"""Issue 32, wave 21: rules from photos nobody had tuned on (jigzo-data's puzzle photos,
added to the tune split). Each test runs on the real tune photo that showed the failure,
at its own size (about 0.3 MP), as the localiser bench runs it."""

from __future__ import annotations

import cv2
import numpy as np

from eval import realset
from eval.localization import beyond_reach
from pipelines.localizers.sky import STRADDLE, ends_unsure, find_sky
from pipelines.operations import get as get_operation
from pipelines.upscale import lanczos

_case = realset.case_shot     # the case's photo as shot and its true mask


def test_sky_going_on_below_a_horizon_a_castle_keep_lifted_is_asked() -> None:
    """An overcast sky over a castle, framed by oak leaves: the keep in the middle lifts
    the horizon read over the sky's columns, so the sky beside the lower walls (a region
    of the sky's own colour that starts above that horizon and goes on below it) was cut
    off, 20 % of the frame taken for 37 % (IoU 0.54), resolved: a silent failure. Where
    the sky ends is now a question, the found sky offered."""
    image, truth = _case("jz_castle__sky")
    found = find_sky(image)
    evidence = found.masks[0].evidence
    assert evidence["straddles"] >= STRADDLE * evidence["size"]
    asked = ends_unsure(found)
    assert asked.status == "ambiguous", asked.reason
    assert "goes on below" in asked.reason and asked.candidates


def test_a_clear_sky_over_a_harbour_stays_resolved() -> None:
    """The same photo set's clear sky over a breakwater, crossed by a helicopter: no
    region of its colour straddles its horizon, and it stays a right, resolved answer."""
    image, truth = _case("jz_helicopter__sky")
    found = ends_unsure(find_sky(image))
    assert found.status == "resolved", found.reason
    assert found.masks[0].evidence["straddles"] < STRADDLE * found.masks[0].evidence["size"]
    assert realset.mask_iou(found.masks[0].mask, truth) >= 0.85


def test_a_helicopters_cyan_nose_is_no_sky_on_an_enlarged_print() -> None:
    """A grey-blue sky (Lab chroma 11-17) meets a helicopter's cyan nose (chroma 28), darker
    and bluer than the sky above it: kept as the sky's own shading under a cloud, it was
    darkened with the sky at 16 MP (35,000 px beyond the reach, reported done). The sky has
    that colour nowhere else in its rows: it is not sky. Enlarged 4x (Lanczos, as the edit
    bench enlarges it), where the fine texture no longer takes the nose out."""
    image, truth = _case("jz_helicopter__sky")
    size = (image.shape[1] * 4, image.shape[0] * 4)
    big = lanczos(image, size)
    truth = cv2.resize(truth.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
    found = find_sky(big)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert int((mask & beyond_reach(truth)).sum()) == 0
    assert realset.mask_iou(mask, truth) >= 0.95


def test_a_vivid_helicopter_of_the_skys_hue_leaves_a_more_saturated_sky() -> None:
    """"Make the sky a deeper blue" raises the sky's saturation, then finds the sky again on
    the result for its next step: on that more saturated print the helicopter's cyan body
    (saturation 0.83 in a sky of 0.20, the sky's hue) joined the sky and was edited with
    it at 16 MP, 411,000 px beyond the reach, reported done. A thing of the sky's hue far
    more saturated than it, in a colour the rest of the sky has nowhere, is no sky."""
    image, truth = _case("jz_helicopter__sky")
    size = (image.shape[1] * 4, image.shape[0] * 4)
    big = lanczos(image, size)
    truth = cv2.resize(truth.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
    richer = get_operation("saturation").apply(big, np.ones(big.shape[:2], np.float32),
                                               {"amount": 0.375})
    found = find_sky(richer)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert int((mask & beyond_reach(truth)).sum()) == 0
    assert realset.mask_iou(mask, truth) >= 0.95
