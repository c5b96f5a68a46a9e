"""Removal at any size without full-frame float copies (issue 32, large photos): the fill
works on the 8-bit pixels, a crop over ``completion.MAX_WORK_PIXELS`` is shrunk and
written back strip by strip, the edge growth reads colour on a band around the outline
only, and the compose blends a strip of rows at a time. Each with the same pixels as
before where the work is the same, and nothing outside the hole changed."""

from __future__ import annotations

import tracemalloc

import cv2
import numpy as np
from skimage import data

from pipelines.editors import completion
from pipelines.editors.objects import grow_to_edge
from pipelines.layers import Layer, compose
from pipelines.operations import fill
from pipelines.operations.fill import inpaint, patch_fill
from pipelines.operations.pixels import to_u8


def _photo_with_hole(width: int, height: int, radius: int) -> tuple[np.ndarray, np.ndarray]:
    photo = cv2.resize(data.coffee(), (width, height), interpolation=cv2.INTER_CUBIC)
    hole = np.zeros((height, width), np.uint8)
    cv2.circle(hole, (width // 2, height // 2), radius, 1, -1)
    return photo, hole.astype(bool)


def test_the_8_bit_fill_of_a_small_photo_is_the_float_fill_pixel_for_pixel():
    photo, hole = _photo_with_hole(400, 300, 40)
    out = inpaint(photo, hole, "patch")
    # what the fill did before: the hole's crop through the float fill, rounded back
    x, y, w, h = cv2.boundingRect(hole.view(np.uint8))
    m = int(max(16, 0.5 * max(w, h)))
    box = (slice(max(0, y - m), y + h + m), slice(max(0, x - m), x + w + m))
    before = photo.copy()
    before[box] = to_u8(patch_fill(photo[box].astype(np.float32) / 255.0, hole[box]))
    assert np.array_equal(out, before)
    assert np.array_equal(out[~hole], photo[~hole])
    assert np.abs(out[hole].astype(int) - photo[hole]).mean() > 1   # the hole was filled


def test_a_crop_over_the_working_size_is_filled_without_a_float_copy_of_it(monkeypatch):
    photo, hole = _photo_with_hole(2400, 1800, 520)       # a 2.2-MP crop around the hole
    monkeypatch.setattr(completion, "MAX_WORK_PIXELS", 60_000)
    monkeypatch.setattr(completion, "STRIP_PIXELS", 200_000)
    tracemalloc.start()
    try:
        out = inpaint(photo, hole, "patch")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    crop_pixels = min(2400, 2 * 1040) * min(1800, 2 * 1040)
    # all of it (the result frame, the working copy's fill, the strips) stays below what
    # a float copy of the crop alone would be (12 bytes a pixel); it was over twice that
    assert peak < 12 * crop_pixels, (peak >> 20, crop_pixels)
    assert out.dtype == np.uint8 and np.array_equal(out[~hole], photo[~hole])
    ring = (cv2.dilate(hole.view(np.uint8), np.ones((81, 81), np.uint8)) > 0) & ~hole
    fill_grey, ring_grey = out[hole].mean(axis=1), out[ring].mean(axis=1)
    assert abs(fill_grey.mean() - ring_grey.mean()) < 12          # the surroundings' tone
    assert fill_grey.std() > 0.3 * ring_grey.std()                 # not a flat smear


def test_the_edge_growth_reads_only_a_band_around_the_outline():
    photo = cv2.resize(data.chelsea(), (900, 600), interpolation=cv2.INTER_CUBIC)
    mask = np.zeros(photo.shape[:2], np.uint8)
    cv2.ellipse(mask, (450, 300), (260, 180), 0, 0, 360, 1, -1)
    mask = mask.astype(bool)
    first = grow_to_edge(photo, mask)
    # pixels deep inside the mask are never read: scrambling them changes nothing
    deep = cv2.erode(mask.view(np.uint8), np.ones((9, 9), np.uint8)) > 0
    scrambled = photo.copy()
    scrambled[deep] = np.random.default_rng(0).integers(0, 256, (int(deep.sum()), 3))
    again = grow_to_edge(scrambled, mask)
    assert np.array_equal(first.mask, again.mask) and first.grown == again.grown
    assert first.noise == again.noise
    # a Lab copy of the crop is 12 bytes a pixel; reading it on the whole crop, with its
    # background mean and difference, peaked at 63 bytes a pixel here (30 on the band)
    tracemalloc.start()
    try:
        grow_to_edge(photo, mask)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * mask.size, (peak >> 20, mask.size)


def test_the_compose_blends_in_strips_with_the_same_pixels(monkeypatch):
    photo = cv2.resize(data.astronaut(), (640, 480))
    mask = np.zeros((480, 640), bool)
    mask[100:380, 150:500] = True
    layer = Layer((0, 0, 640, 480), photo, mask)
    edited = 255 - photo
    whole = compose(photo, layer, edited, feather=12)
    from pipelines import layers

    monkeypatch.setattr(layers, "BLEND_ROWS_PIXELS", 640 * 7)
    assert np.array_equal(compose(photo, layer, edited, feather=12), whole)
    assert not np.array_equal(whole, photo)


def test_the_removal_operation_works_on_8_bit_pixels():
    photo, hole = _photo_with_hole(300, 200, 30)
    out = fill.Inpaint().apply(photo, hole, {"method": "auto", "radius": 5})
    assert out.dtype == np.uint8
    grown = cv2.dilate(hole.view(np.uint8), np.ones((3, 3), np.uint8)) > 0
    assert np.array_equal(out[~grown], photo[~grown])
