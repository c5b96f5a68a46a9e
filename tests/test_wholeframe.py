"""Whole-frame edits carried to native resolution, and the feathered tiled refine."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pipelines.wholeframe import (
    edit_whole_frame,
    refine_tiled,
    tile_boxes,
    transfer_edit,
    working_copy,
)


@pytest.fixture(scope="module")
def native(astronaut):
    """A 1536² frame with fine detail the working copy cannot hold (a 1-px checker)."""
    big = cv2.resize(astronaut, (1536, 1536), interpolation=cv2.INTER_CUBIC).astype(np.int16)
    checker = ((np.indices((1536, 1536)).sum(axis=0) % 2) * 16 - 8)[..., None]
    return np.clip(big + checker, 0, 255).astype(np.uint8)


def _evening(image: np.ndarray) -> np.ndarray:
    """A smooth global edit: darker towards the top, warmer everywhere."""
    h = image.shape[0]
    ramp = np.linspace(0.6, 1.0, h, dtype=np.float32)[:, None, None]
    warm = np.array([1.05, 0.95, 0.8], np.float32)
    return np.clip(image.astype(np.float32) * ramp * warm, 0, 255).astype(np.uint8)


def test_transfer_keeps_native_detail_and_carries_the_change(native):
    small = working_copy(native, (512, 512))
    edited_small = _evening(small)
    out = transfer_edit(native, small, edited_small)
    truth = _evening(native)
    upscaled = cv2.resize(edited_small, native.shape[1::-1], interpolation=cv2.INTER_CUBIC)
    assert out.shape == native.shape and out.dtype == np.uint8
    err_ours = np.abs(out.astype(np.int16) - truth).mean()
    err_upscale = np.abs(upscaled.astype(np.int16) - truth).mean()
    assert err_ours < 0.5 * err_upscale
    # the 1-px checker survives: its energy in the output matches the edited truth's
    def hp(im: np.ndarray) -> np.ndarray:
        return im.astype(np.float32) - cv2.GaussianBlur(im.astype(np.float32), (0, 0), 1.0)

    assert np.abs(hp(out)).mean() > 0.8 * np.abs(hp(truth)).mean()
    assert np.abs(hp(upscaled)).mean() < 0.5 * np.abs(hp(truth)).mean()


def test_no_change_is_identity_and_alpha_is_kept(native):
    rgba = np.dstack([native, np.full(native.shape[:2], 77, np.uint8)])
    small = working_copy(rgba, (300, 300))
    out = transfer_edit(rgba, small, small.copy(), sigma=0)
    assert np.array_equal(out, rgba)


def test_edited_size_mismatch_and_bad_input(native):
    small = working_copy(native, (512, 512))
    brighter = np.clip(small.astype(np.int16) + 20, 0, 255).astype(np.uint8)
    out = transfer_edit(native, small, cv2.resize(brighter, (496, 512)))
    centre = (slice(600, 900), slice(600, 900))
    gain = out[centre].astype(np.float32).mean() - native[centre].astype(np.float32).mean()
    assert 15 < gain < 21
    with pytest.raises(ValueError, match="uint8"):
        transfer_edit(native.astype(np.float32), small, small)
    with pytest.raises(ValueError, match="sigma"):
        transfer_edit(native, small, small, sigma=-1)


def test_tile_boxes_cover_the_frame():
    boxes = tile_boxes(1000, 2500, 1024, 128)
    cover = np.zeros((1000, 2500), np.int8)
    for x0, y0, x1, y1 in boxes:
        cover[y0:y1, x0:x1] += 1
    assert cover.min() >= 1 and boxes[-1][2:] == (2500, 1000)
    with pytest.raises(ValueError):
        tile_boxes(100, 100, 64, 64)


def test_refine_tiled_blends_without_seams(native):
    native = (native // 2 + 40).astype(np.uint8)  # no clipping at +18
    calls = []

    def drift(tile: np.ndarray) -> np.ndarray:
        """A refine whose output drifts by a different offset on every tile."""
        calls.append(tile.shape)
        return np.clip(tile.astype(np.int16) + 6 * (len(calls) % 4), 0, 255).astype(np.uint8)

    out = refine_tiled(native, drift, tile=512, overlap=128, strength=1.0)
    assert out.shape == native.shape and len(calls) == len(tile_boxes(1536, 1536, 512, 128))
    diff = out.astype(np.float32).mean(axis=2) - native.astype(np.float32).mean(axis=2)
    # the offset changes smoothly: no column-to-column jump larger than a few levels
    assert np.abs(np.diff(diff, axis=1)).max() <= 3.0
    assert np.abs(np.diff(diff, axis=0)).max() <= 3.0
    assert np.array_equal(refine_tiled(native, drift, tile=512, overlap=64, strength=0.0),
                          native)


def test_affine_mode_scales_native_detail_with_a_contrast_edit(native):
    small = working_copy(native, (512, 512))
    flatter = (128 + 0.5 * (small.astype(np.float32) - 128)).astype(np.uint8)
    truth = (128 + 0.5 * (native.astype(np.float32) - 128)).astype(np.uint8)
    affine = transfer_edit(native, small, flatter, sigma=0)
    added = transfer_edit(native, small, flatter, sigma=0, mode="add")

    def detail(im: np.ndarray) -> float:
        grey = im.astype(np.float32).mean(axis=2)
        return float(np.abs(grey - cv2.GaussianBlur(grey, (0, 0), 1.0)).mean())

    # the additive model keeps the detail at full strength; the affine one scales it down
    # towards the edit's (not all the way: its gain is pulled to 1 where the copy is flat)
    assert detail(added) > 1.8 * detail(truth)
    assert abs(detail(affine) - detail(truth)) < 0.5 * abs(detail(added) - detail(truth))
    with pytest.raises(ValueError, match="mode"):
        transfer_edit(native, small, flatter, mode="multiply")


def test_edit_whole_frame_through_an_editor(native):
    from pipelines.editors.base import EditRequest
    from pipelines.editors.classical import ClassicalEditor

    editor = ClassicalEditor()
    request = EditRequest("adjust", "temperature", {"amount": 0.6})
    out = edit_whole_frame(native, editor, request, area=256 * 256)
    truth = editor.edit(native, np.ones(native.shape[:2], bool), request)
    assert out.shape == native.shape and out.dtype == np.uint8
    warm = out[..., 0].astype(np.float32).mean() - out[..., 2].astype(np.float32).mean()
    before = native[..., 0].astype(np.float32).mean() - native[..., 2].astype(np.float32).mean()
    assert warm > before + 10
    assert np.abs(out.astype(np.int16) - truth).mean() < 3.0
    small = np.ascontiguousarray(native[:64, :64])
    assert np.array_equal(edit_whole_frame(small, editor, request),
                          editor.edit(small, np.ones((64, 64), bool), request))
