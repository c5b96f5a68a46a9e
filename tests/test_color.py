"""pipelines.color: one Lab convention, ΔE2000 against published pairs, colour names whose
swatch and HSV family agree; pipelines.arrays: one image check, one message."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pipelines.arrays import rgb_array
from pipelines.color import (
    COLOURS,
    delta_e76,
    delta_e2000,
    lab_to_8bit,
    lab_to_rgb,
    linear_to_srgb,
    luma,
    rgb_to_lab,
    srgb_to_linear,
)


def test_lab_has_one_scaling_for_uint8_and_float_input() -> None:
    red = rgb_to_lab(np.array([255, 0, 0], np.uint8))
    assert red == pytest.approx([53.24, 80.09, 67.20], abs=0.05)   # CIE Lab of sRGB red (D65)
    white = rgb_to_lab(np.ones((2, 2, 3), np.float32))
    assert white[..., 0] == pytest.approx(100.0, abs=0.01)
    assert np.abs(white[..., 1:]).max() < 0.01
    image = np.random.default_rng(0).integers(0, 256, (8, 9, 4), np.uint8)
    lab = rgb_to_lab(image)
    assert lab.shape == (8, 9, 3)
    assert np.allclose(lab, rgb_to_lab(image[..., :3].astype(np.float32) / 255.0))
    assert np.abs(lab_to_rgb(lab) * 255 - image[..., :3]).max() < 0.6


def test_8bit_encoding_matches_opencv_within_a_level() -> None:
    image = np.random.default_rng(1).integers(0, 256, (16, 16, 3), np.uint8)
    ours = lab_to_8bit(rgb_to_lab(image)).astype(int)
    opencv = cv2.cvtColor(image, cv2.COLOR_RGB2LAB).astype(int)
    assert np.abs(ours - opencv).max() <= 1


@pytest.mark.parametrize("lab1, lab2, expected", [
    # pairs 1, 7 and 17 of Sharma, Wu and Dalal's CIEDE2000 test data
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
])
def test_delta_e2000_matches_published_pairs(lab1, lab2, expected) -> None:
    assert float(delta_e2000(np.array(lab1), np.array(lab2))) == pytest.approx(expected,
                                                                               abs=1e-3)


def test_delta_e76_is_the_lab_distance() -> None:
    assert float(delta_e76(np.array([50, 3, 4]), np.array([50, 0, 0]))) == pytest.approx(5.0)


def test_transfer_curves_and_luma() -> None:
    x = np.linspace(0, 1, 101, dtype=np.float32)
    assert np.abs(linear_to_srgb(srgb_to_linear(x)) - x).max() < 1e-3
    assert float(srgb_to_linear(np.float32(0.5))) == pytest.approx(0.2140, abs=1e-3)
    assert float(luma(np.array([0.0, 1.0, 0.0]))) == pytest.approx(0.7152)


@pytest.mark.parametrize("name", sorted(COLOURS))
def test_each_colour_swatch_lies_in_its_own_hsv_family(name: str) -> None:
    colour = COLOURS[name]
    pixel = np.array([[colour.rgb]], np.float32) / 255.0
    hsv = cv2.cvtColor(pixel, cv2.COLOR_RGB2HSV)
    assert colour.family.match(hsv)[0, 0], f"{name} {colour.rgb} is outside its family"


def test_one_image_check_with_one_message() -> None:
    for bad in (np.zeros((4, 4, 3), np.float32), np.zeros((4, 4), np.uint8),
                np.zeros((4, 4, 2), np.uint8), np.zeros((0, 4, 3), np.uint8), [1, 2, 3]):
        with pytest.raises(ValueError, match=r"^photo must be uint8 RGB/RGBA \(an H×W×3"):
            rgb_array(bad, "photo")
    rgba = np.zeros((2, 3, 4), np.uint8)
    assert rgb_array(rgba).shape == (2, 3, 3)
    assert rgb_array(rgba, alpha=True).shape == (2, 3, 4)
    assert rgb_array(np.zeros((2, 3), np.uint8), grey=True).shape == (2, 3, 3)

    class Refused(ValueError):
        pass

    with pytest.raises(Refused, match="uint8"):
        rgb_array(np.zeros((2, 2)), error=Refused)
