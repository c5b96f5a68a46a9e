"""Tiled operations equal the whole-image result, with bounded memory, on real photos."""

from __future__ import annotations

import tracemalloc

import cv2
import numpy as np
import pytest

from pipelines.tiling import apply_tiled, count_tiles, iter_tiles


def upscale(photo: np.ndarray, width: int, height: int) -> np.ndarray:
    return np.ascontiguousarray(cv2.resize(photo, (width, height),
                                           interpolation=cv2.INTER_CUBIC))


def gaussian(tile: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(tile, (31, 31), 5)  # radius 15


def median(tile: np.ndarray) -> np.ndarray:
    return cv2.medianBlur(tile, 7)  # radius 3


@pytest.mark.parametrize(("shape", "tile", "overlap"),
                         [((100, 130, 3), 32, 5), ((7, 5), 4, 0), ((64, 64, 4), 64, 8),
                          ((1, 1, 3), 1024, 64)])
def test_cores_cover_every_pixel_once(shape, tile, overlap):
    seen = np.zeros(shape[:2], int)
    tiles = list(iter_tiles(shape, tile, overlap))
    assert len(tiles) == count_tiles(shape, tile)
    for part in tiles:
        seen[part.core_slices] += 1
        cx0, cy0, cx1, cy1 = part.core
        px0, py0, px1, py1 = part.padded
        assert 0 <= px0 <= cx0 < cx1 <= px1 <= shape[1]
        assert 0 <= py0 <= cy0 < cy1 <= py1 <= shape[0]
        assert cx0 - px0 == min(overlap, cx0) and py1 - cy1 == min(overlap, shape[0] - cy1)
    assert (seen == 1).all()


@pytest.mark.parametrize("fn", [gaussian, median], ids=["gaussian", "median"])
def test_neighbourhood_filter_matches_the_whole_image(coffee, fn):
    image = upscale(coffee, 1500, 1000)
    whole = fn(image)
    tiled = apply_tiled(image, fn, tile=256, overlap=16)
    assert int(np.abs(tiled.astype(int) - whole).max()) <= 1


def test_pixel_operation_is_exact_and_rgba_works(chelsea):
    rgba = np.dstack([chelsea, chelsea[..., 0]])
    calls = []
    out = apply_tiled(rgba, lambda t: 255 - t, tile=100, overlap=3,
                      progress=lambda done, total: calls.append((done, total)))
    assert np.array_equal(out, 255 - rgba)
    assert calls[-1] == (count_tiles(rgba.shape, 100),) * 2


def test_an_overlap_smaller_than_the_radius_shows_seams(coffee):
    """The reason for the overlap: without it tile borders differ from the whole image."""
    image = upscale(coffee, 600, 400)
    seams = apply_tiled(image, gaussian, tile=128, overlap=0)
    assert int(np.abs(seams.astype(int) - gaussian(image)).max()) > 10


def test_twenty_megapixels_in_bounded_memory(astronaut):
    image = upscale(astronaut, 5472, 3648)  # 20 MP
    whole = gaussian(image)
    tracemalloc.start()
    tiled = apply_tiled(image, gaussian, tile=1024, overlap=16)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert int(np.abs(tiled.astype(int) - whole).max()) <= 1
    tile_bytes = (1024 + 32) ** 2 * 3
    assert peak < image.nbytes + 4 * tile_bytes  # the output and a few tiles, no more


def test_fn_must_keep_shape_and_dtype(chelsea):
    with pytest.raises(ValueError, match="must keep both"):
        apply_tiled(chelsea, lambda t: t[:-1], tile=64)
    with pytest.raises(ValueError, match="must keep both"):
        apply_tiled(chelsea, lambda t: t.astype(np.float32), tile=64)
    with pytest.raises(ValueError, match="tile must be >= 1"):
        apply_tiled(chelsea, lambda t: t, tile=0)
