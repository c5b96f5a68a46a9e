"""Image Layer Decomposition: the bit-identical invariant, several targets, odd sizes."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import ndimage

from pipelines.layers import (
    Layer,
    compose,
    compose_many,
    context_lambda,
    decompose,
    default_feather,
    expand_box,
    feather_alpha,
    mask_bbox,
)


def distance_to(mask: np.ndarray) -> np.ndarray:
    """Exact Euclidean distance of every pixel to the nearest mask pixel."""
    return ndimage.distance_transform_edt(~mask)


@st.composite
def masks(draw, height: int, width: int) -> np.ndarray:
    """Rectangles and discs anywhere, including flush with edges and corners."""
    mask = np.zeros((height, width), bool)
    for _ in range(draw(st.integers(1, 3))):
        x0 = draw(st.sampled_from([0, width - 1]) | st.integers(0, width - 1))
        y0 = draw(st.sampled_from([0, height - 1]) | st.integers(0, height - 1))
        if draw(st.booleans()):
            x1 = draw(st.integers(x0 + 1, width))
            y1 = draw(st.integers(y0 + 1, height))
            mask[y0:y1, x0:x1] = True
        else:
            disc = np.zeros((height, width), np.uint8)
            cv2.circle(disc, (x0, y0), draw(st.integers(0, max(width, height) // 2)), 1, -1)
            mask |= disc.astype(bool)
    return mask


@st.composite
def cases(draw):
    height, width = draw(st.integers(1, 70)), draw(st.integers(1, 70))
    channels = draw(st.sampled_from([3, 4]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (height, width, channels), dtype=np.uint8)
    full = draw(st.integers(0, 9)) == 0
    mask = np.ones((height, width), bool) if full else draw(masks(height, width))
    context = draw(st.none() | st.floats(0, 3))
    multiple = draw(st.sampled_from([1, 1, 8, 16]))
    feather = draw(st.none() | st.integers(0, 16))
    resize = draw(st.booleans())
    return image, mask, context, multiple, feather, resize, seed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_pixels_farther_than_the_feather_are_bit_identical(case):
    image, mask, context, multiple, feather, resize, seed = case
    before = image.copy()
    layer = decompose(image, mask, context=context, multiple=multiple)
    x0, y0, x1, y1 = layer.bbox
    assert 0 <= x0 < x1 <= image.shape[1] and 0 <= y0 < y1 <= image.shape[0]
    tx0, ty0, tx1, ty1 = mask_bbox(mask)
    assert x0 <= tx0 and y0 <= ty0 and x1 >= tx1 and y1 >= ty1  # the target is inside
    assert np.array_equal(layer.patch, image[y0:y1, x0:x1])
    rng = np.random.default_rng(seed + 1)
    if resize:  # an editor's working size, odd on purpose
        size = (int(rng.integers(1, 90)) | 1, int(rng.integers(1, 90)) | 1)
    else:
        size = (layer.height, layer.width)
    patch = rng.integers(0, 256, (*size, image.shape[2]), dtype=np.uint8)
    out = compose(image, layer, patch, feather=feather)
    width = default_feather(layer) if feather is None else feather
    far = distance_to(mask) > width
    assert np.array_equal(image, before)  # the input is never modified
    assert np.array_equal(out[far], image[far])
    assert out.shape == image.shape and out.dtype == np.uint8
    if not resize:  # on the target the edit lands exactly
        assert np.array_equal(out[y0:y1, x0:x1][layer.mask], patch[layer.mask])


def test_full_mask_replaces_everything(coffee):
    mask = np.ones(coffee.shape[:2], bool)
    layer = decompose(coffee, mask)
    assert layer.bbox == (0, 0, 600, 400)
    edited = 255 - layer.patch
    assert np.array_equal(compose(coffee, layer, edited), edited)


def test_empty_mask_is_a_clear_error(chelsea):
    with pytest.raises(ValueError, match="mask is empty"):
        decompose(chelsea, np.zeros(chelsea.shape[:2], bool))
    with pytest.raises(ValueError, match="mask is 10x10 but the image is 451x300"):
        decompose(chelsea, np.ones((10, 10), bool))


def test_all_false_layer_mask_changes_nothing(chelsea):
    layer = Layer(bbox=(10, 20, 110, 90), patch=chelsea[20:90, 10:110].copy(),
                  mask=np.zeros((70, 100), bool))
    out = compose(chelsea, layer, np.zeros((70, 100, 3), np.uint8), feather=8)
    assert np.array_equal(out, chelsea)


def test_several_masks_in_one_call(astronaut):
    first = np.zeros(astronaut.shape[:2], bool)
    first[40:90, 30:100] = True
    second = np.zeros_like(first)
    cv2.circle(second.view(np.uint8), (400, 380), 40, 1, -1)
    layers = decompose(astronaut, [first, second])
    assert isinstance(layers, list) and len(layers) == 2
    stacked = decompose(astronaut, np.stack([first, second]))
    assert [layer.bbox for layer in stacked] == [layer.bbox for layer in layers]
    edits = [(layer, np.full_like(layer.patch, value)) for layer, value in zip(layers, (0, 255),
                                                                               strict=True)]
    out = compose_many(astronaut, edits, feather=6)
    assert (out[first] == 0).all() and (out[second] == 255).all()
    far = (distance_to(first) > 6) & (distance_to(second) > 6)
    assert np.array_equal(out[far], astronaut[far])
    assert (~far).sum() < 0.2 * far.size


def test_real_photo_edit_in_place_and_soft_edge(astronaut):
    """Brighten the astronaut's face: the face changes, a soft edge fades, the rest does not."""
    mask = np.zeros(astronaut.shape[:2], bool)
    cv2.ellipse(mask.view(np.uint8), (230, 130), (60, 75), 0, 0, 360, 1, -1)
    layer = decompose(astronaut, mask)
    brighter = cv2.convertScaleAbs(layer.patch, alpha=1.3, beta=20)
    image = astronaut.copy()
    out = compose(image, layer, brighter, feather=10, out=image)
    assert out is image
    dist = distance_to(mask)
    assert np.array_equal(out[dist > 10], astronaut[dist > 10])
    assert out[mask].mean() > astronaut[mask].mean() + 15
    ring = (dist > 2) & (dist < 8)
    gain = out[ring].astype(int).mean() - astronaut[ring].astype(int).mean()
    full = out[mask].astype(int).mean() - astronaut[mask].astype(int).mean()
    assert 0 < gain < full  # partly blended in the feather


def test_feather_alpha_profile():
    mask = np.zeros((80, 90), bool)
    mask[30:50, 20:40] = True
    for feather in (1, 2, 5, 12, 24):
        alpha = feather_alpha(mask, feather)
        dist = distance_to(mask)
        assert (alpha[mask] == 255).all()
        assert (alpha[dist > feather] == 0).all()
        outward = alpha[40, 39:].astype(int)  # along a row, leaving the mask's right edge
        assert (np.diff(outward) <= 0).all()
    alpha = feather_alpha(mask, 12)
    mid = (distance_to(mask) > 5) & (distance_to(mask) < 7)
    assert 60 < alpha[mid].mean() < 200
    assert np.array_equal(feather_alpha(mask, 0), mask.astype(np.uint8) * 255)


def test_rgb_patch_into_rgba_image_keeps_alpha(chelsea):
    alpha = np.tile(np.linspace(0, 255, chelsea.shape[1]).astype(np.uint8), (300, 1))
    rgba = np.dstack([chelsea, alpha])
    mask = np.zeros(chelsea.shape[:2], bool)
    mask[100:200, 150:300] = True
    layer = decompose(rgba, mask, context=0.2)
    out = compose(rgba, layer, np.zeros((layer.height, layer.width, 3), np.uint8))
    assert np.array_equal(out[..., 3], alpha)
    assert (out[mask][:, :3] == 0).all()


def test_context_rule_and_multiples():
    assert context_lambda(10) == 6.0 and context_lambda(32) == 6.0
    assert context_lambda(300) == 0.3 and context_lambda(144) == pytest.approx(3.15)
    assert expand_box((100, 100, 120, 130), (1000, 800)) == (0, 0, 240, 250)  # 6·20 each side
    assert expand_box((100, 100, 400, 500), (1000, 800)) == (10, 10, 490, 590)  # 0.3·300
    box = expand_box((500, 400, 800, 600), (4000, 3000), multiple=64)
    assert (box[2] - box[0]) % 64 == 0 and (box[3] - box[1]) % 64 == 0
    assert box[0] <= 500 and box[2] >= 800 and box[1] <= 400 and box[3] >= 600
    assert expand_box((0, 0, 30, 30), (40, 50), multiple=64) == (0, 0, 40, 50)


def test_native_resolution_layer_stays_small():
    """A 4K frame: the layer holds only the box around the target."""
    from skimage import data

    image = cv2.resize(data.coffee(), (3840, 2160), interpolation=cv2.INTER_LINEAR)
    mask = np.zeros(image.shape[:2], bool)
    cv2.circle(mask.view(np.uint8), (3000, 600), 150, 1, -1)
    layer = decompose(image, mask, multiple=16)
    assert layer.patch.nbytes < image.nbytes / 20
    assert layer.width % 16 == 0 and layer.height % 16 == 0
    out = compose(image, layer, 255 - layer.patch)
    rows, cols = layer.slices
    outside = np.ones(mask.shape, bool)
    outside[rows, cols] = False
    assert np.array_equal(out[outside], image[outside])  # never touched outside the box
    far = distance_to(layer.mask) > default_feather(layer)
    assert np.array_equal(out[rows, cols][far], layer.patch[far])
    assert np.array_equal(out[mask], 255 - image[mask])


def test_compose_rejects_mismatched_inputs(chelsea):
    mask = np.zeros(chelsea.shape[:2], bool)
    mask[10:20, 10:20] = True
    layer = decompose(chelsea, mask)
    with pytest.raises(ValueError, match="patch must be uint8 RGB/RGBA"):
        compose(chelsea, layer, layer.patch[..., :2])
    with pytest.raises(ValueError, match="does not fit the image"):
        compose(chelsea[:5, :5], layer, layer.patch)
    with pytest.raises(ValueError, match="feather must be >= 0"):
        compose(chelsea, layer, layer.patch, feather=-1)
