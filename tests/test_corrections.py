"""Statistics-driven photographic corrections: each undoes the fault it is named for."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent import executor
from eval.photos import fade, linear_gains, psnr
from pipelines.editors.base import EditRequest
from pipelines.editors.corrections import median_luminance
from pipelines.editors.operations import OperationError, get_operation


def _run(image: np.ndarray, op: str, *, fast: bool = False, **params) -> np.ndarray:
    request = EditRequest(kind="adjust", operation=op, params=params)
    return executor.execute(image, request, fast=fast).paste(image)


@pytest.fixture(scope="module")
def photo(astronaut: np.ndarray) -> np.ndarray:
    return cv2.resize(astronaut, (256, 256), interpolation=cv2.INTER_AREA)


def test_linear_channel_levels_undo_exposure_and_illuminant(photo: np.ndarray) -> None:
    dark_cool = linear_gains(photo, (0.39, 0.45, 0.5))
    fixed = _run(dark_cool, "channel_levels", low=0.0, high=0.5, linear=True)
    assert psnr(dark_cool, photo) < 18
    assert psnr(fixed, photo) > 35
    half = _run(dark_cool, "channel_levels", low=0.0, high=0.5, linear=True, amount=0.5)
    assert psnr(dark_cool, photo) < psnr(half, photo) < psnr(fixed, photo)


def test_srgb_channel_levels_undo_a_fade(photo: np.ndarray) -> None:
    faded = fade(photo, black=0.16, white=0.86)
    fixed = _run(faded, "channel_levels", low=0.5, high=0.5)
    assert psnr(fixed, photo) > psnr(faded, photo) + 8


def test_white_patch_neutralises_a_cast_and_keeps_the_exposure(photo: np.ndarray) -> None:
    warm = linear_gains(photo, (1.0, 0.82, 0.55))
    fixed = _run(warm, "white_patch", percentile=1.0)
    assert psnr(fixed, photo) > psnr(warm, photo) + 6
    top = [np.percentile(fixed[..., c], 99) for c in range(3)]
    assert max(top) - min(top) < 8                      # the brightest pixels are neutral
    assert abs(np.percentile(fixed[..., 0], 99) - np.percentile(warm[..., 0], 99)) < 3


def test_auto_exposure_puts_the_median_at_the_target(photo: np.ndarray) -> None:
    dark = linear_gains(photo, (0.35, 0.35, 0.35))
    out = _run(dark, "auto_exposure", target=50.0)
    full = np.ones(out.shape[:2], bool)
    light = 116 * median_luminance(out, full) ** (1 / 3) - 16
    assert abs(light - 50.0) < 4
    assert np.array_equal(_run(dark, "auto_exposure", target=50.0, amount=0.0), dark)


@pytest.mark.parametrize(("op", "params"), [
    ("channel_levels", {"low": 0.0, "high": 0.5, "linear": True}),
    ("channel_levels", {"low": 0.5, "high": 0.5}),
    ("white_patch", {"percentile": 1.0}),
    ("auto_exposure", {"target": 48.0})])
def test_fast_lookup_table_matches_the_direct_edit(coffee: np.ndarray, op: str,
                                                   params: dict) -> None:
    big = cv2.resize(linear_gains(coffee, (0.6, 0.5, 0.45)), (1200, 800),
                     interpolation=cv2.INTER_CUBIC)
    diff = np.abs(_run(big, op, fast=True, **params).astype(int) -
                  _run(big, op, **params).astype(int))
    assert diff.mean() < 1.0 and np.percentile(diff, 99.9) <= 3


def test_parameters_are_bounded() -> None:
    spec = get_operation("channel_levels")
    assert spec.has("curve") and spec.has("colour_balance")
    with pytest.raises(OperationError):
        spec.validate({"high": 9.0})
    with pytest.raises(OperationError):
        get_operation("auto_exposure").validate({"target": 5.0})
