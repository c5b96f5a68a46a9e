"""Issue 32, wave 20: rules from photos nobody had tuned on (tuxpaint-data's templates,
added to the tune split). Each test runs on the real tune photo that showed the failure,
at its own size (about 1 MP), as the localiser bench runs it."""

from __future__ import annotations

import cv2
import numpy as np

from eval import realset
from pipelines.localizers.sky import find_sky

_case = realset.case_shot     # the case's photo as shot and its true mask


def test_a_clear_sky_that_turns_cyan_down_its_sides_is_found_whole() -> None:
    """A clear sky over a cliff runs from blue at the top to cyan (hue 173-182) down both
    sides of the summit; blue alone stopped the sky at the cyan, 20 % of the frame for
    28 %, and it was edited so (IoU 0.68, resolved)."""
    image, truth = _case("tux_cliff__sky")
    found = find_sky(image)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert realset.mask_iou(mask, truth) >= 0.85
    hue = cv2.cvtColor(image, cv2.COLOR_RGB2HSV_FULL)[..., 0].astype(np.float32) * 360 / 256
    cyan = truth & (hue < 185)
    assert cyan.sum() > 0.03 * truth.sum()          # the photo does have the cyan sky
    assert mask[cyan].mean() >= 0.8


def test_hazy_far_hills_under_a_clear_blue_sky_leave_it() -> None:
    """A clear blue sky over a thin band of hazy blue hills: the hills are darker than
    the sky above them and bluer (the air between), and "bluer" kept them as sky (the sky
    under white clouds is bluer than the cloud above it); at 16 MP "make the sky darker"
    darkened them, 12,140 px beyond the reach, and was reported done. Under a sky this
    colourful, a darker band that ends where the sky does is land; the bands of blue sky
    between the streaks of cloud, darker than the cloud above them, have sky under them
    and stay."""
    image, truth = _case("tux_sheep__sky")
    hills = realset.load_mask("tux_sheep__hills.png")
    found = find_sky(image)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert mask[hills].mean() <= 0.2
    assert realset.mask_iou(mask, truth) >= 0.98


def test_hills_over_a_level_skyline_are_asked_not_taken_as_the_plain() -> None:
    """A pasture with sheep under a thin band of hazy hills along a level horizon: "the
    distant hills" resolved to the land under the skyline, the pasture (IoU 0.00), and
    "make the distant hills darker" darkened the field, reported done. Hills rise: under a
    skyline level to within 2 % of the height the land is a plain, and the hills are asked
    for. Rolling hills with a field in front (their skyline spreads 7 %) still resolve."""
    from pipelines.localizers.perception import PerceptionLocalizer

    image, _ = realset.case_at("tux_sheep__hills", 640)
    found = PerceptionLocalizer().locate(image, "the distant hills")
    assert found.status == "ambiguous", found.reason
    assert "the skyline is level" in found.reason
    image, truth = realset.case_at("this_is_not_windows__hills", 640)
    found = PerceptionLocalizer().locate(image, "the green hills")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.union(), truth) >= 0.8


def test_a_blue_grey_patch_of_field_under_the_horizon_leaves_the_sky() -> None:
    """The sheep's pasture on a lighter print (a gamma of 0.8): a patch of grass between
    grazing sheep turns blue-grey (hue 191, value 0.52: blue, not pale), apart from the sky
    and ringed by the field, under the sky's horizon; it stayed in the sky and "make the sky
    darker" at 16 MP darkened it (58k px beyond the reach), reported done. A piece apart
    from the sky, under its horizon and among the land, leaves whatever its colour."""
    from eval.realset_edits import edited_print

    case = realset.case("tux_sheep__sky")
    image, truth, _ = edited_print(case, "", "gamma0.8", None)
    found = find_sky(image)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert not mask[int(0.47 * mask.shape[0]):].any()
    assert realset.mask_iou(mask, truth) >= 0.98
