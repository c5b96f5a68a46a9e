"""The turn's shortcuts of wave 9 (issue 36, speed): a recolour computed only where it is
read, a localiser's mask enlarged around itself, the critic's after frame written only
where its work copies read it. Each must give the very answer the plain way gives (bit
for bit), and a copy must never be the before frame's (stale) one."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from agent.brain.critic.verdict import Scene
from agent.brain.work_copies import pasted_frame, shared_work_copies, work_copy
from pipelines.color import shade_ramp
from pipelines.editors.objects import coverage, growth_limit, object_core, unmix_core
from pipelines.localizers.segment import smooth_resize
from pipelines.operations.colour import (
    _centred_lightness,
    _recolor,
    parse_color,
    to_lab,
)

# --------------------------------------------------------------------------- recolour


def _plain_recolor(rgb: np.ndarray, mask: np.ndarray, p: dict) -> np.ndarray:
    """The recolour computed on every pixel of the patch, then picked (wave 8's way)."""
    color = parse_color(p["color"])
    target = to_lab(np.array([[color]], dtype=np.float32) / 255.0)[0, 0]
    core = object_core(mask, growth_limit(mask))
    light = to_lab(rgb)[..., 0]
    mean = float(light[core].mean())
    goal = mean + p["lightness"] * (float(target[0]) - mean)
    ramp = shade_ramp(color)

    def to_ramp(pixels: np.ndarray) -> np.ndarray:
        lit = _centred_lightness(to_lab(pixels)[..., 0], core, mean, goal)
        pos = np.clip(lit * 10.0, 0.0, 1000.0)
        i0 = np.floor(pos).astype(np.int32)
        t = (pos - i0)[..., None].astype(np.float32)
        return ramp[i0] * (1.0 - t) + ramp[np.minimum(i0 + 1, 1000)] * t

    out = to_ramp(rgb)
    near = unmix_core(mask)   # the unmixed rim is the grown edge's (wave 29)
    split = coverage(rgb, mask, near)
    span = split.obj - split.background
    length2 = np.sum(span * span, axis=2)
    a = np.clip(np.sum((rgb - split.background) * span, axis=2) /
                np.maximum(length2, 1e-6), 0.0, 1.0)
    a = np.where(length2 < 0.1 ** 2, 1.0, a)
    alpha = mask.astype(np.float32)
    alpha[mask & ~near] = a[mask & ~near]
    assert np.array_equal(alpha, split.alpha)            # the unmixing on the band alone
    band = mask & (alpha < 1.0)
    if band.any():
        share = np.where(alpha > 0.85, 1.0, alpha)[..., None]
        out = np.where(band[..., None], rgb + share * (to_ramp(split.obj) - split.obj), out)
    out = np.where(mask[..., None], np.clip(out, 0.0, 1.0), rgb)
    return rgb + p["strength"] * (out - rgb)


def _disc_scene(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A soft-edged disc on a textured background (float RGB) and a mask grown over it."""
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(90, 220, 2))
    img = rng.uniform(40, 200, 3) + rng.normal(0, 12, (h, w, 3))
    disc = np.zeros((h, w), np.uint8)
    cv2.circle(disc, (int(rng.integers(20, w - 20)), int(rng.integers(20, h - 20))),
               int(rng.integers(12, 60)), 1, -1)
    img[disc > 0] = rng.uniform(0, 255, 3)
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.7, 2.5)))
    mask = cv2.dilate(disc, np.ones((5, 5), np.uint8)) > 0
    return np.clip(img, 0, 255).astype(np.uint8).astype(np.float32) / 255.0, mask


@pytest.mark.parametrize("seed", range(6))
def test_a_recolour_computed_where_read_is_the_plain_one_bit_for_bit(seed):
    rgb, mask = _disc_scene(seed)
    p = {"color": ["green", "blue", "white", "#aa3377", "black", "yellow"][seed],
         "strength": (1.0, 0.6)[seed % 2], "lightness": (1.0, 0.0, 0.5)[seed % 3]}
    got = _recolor(rgb, mask, p)
    assert np.array_equal(got, _plain_recolor(rgb, mask, p))
    assert np.array_equal(got[~mask], rgb[~mask])   # and nothing outside the mask moved


def test_a_recolour_of_a_real_object_is_the_plain_one_bit_for_bit():
    photo = data.coffee()[100:300, 150:400]   # the cup's rim and saucer
    rgb = photo.astype(np.float32) / 255.0
    mask = np.zeros(photo.shape[:2], bool)
    cv2.ellipse(mask.view(np.uint8), (125, 100), (90, 60), 0, 0, 360, 1, -1)
    p = {"color": "red", "strength": 1.0, "lightness": 1.0}
    assert np.array_equal(_recolor(rgb, mask, p), _plain_recolor(rgb, mask, p))


def test_coverage_for_the_band_only_keeps_what_a_recolour_reads():
    rgb, mask = _disc_scene(11)
    core = object_core(mask, growth_limit(mask))
    full, band_only = coverage(rgb, mask, core), coverage(rgb, mask, core, band_only=True)
    band = mask & ~core
    assert np.array_equal(full.alpha, band_only.alpha)
    assert np.array_equal(full.obj[mask], band_only.obj[mask])
    assert np.array_equal(full.background[band], band_only.background[band])


# --------------------------------------------------------------------- mask enlarging


def _plain_enlarge(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    return cv2.resize(mask.astype(np.float32), (shape[1], shape[0]),
                      interpolation=cv2.INTER_LINEAR) >= 0.5


def test_a_mask_enlarged_around_itself_is_the_whole_resize_bit_for_bit():
    """Random masks (blobs, speckle, single rows and columns, on the frame's edges) at
    fractional and whole scales; the localiser's 768 → 4000 among them."""
    rng = np.random.default_rng(0)
    cases = [((576, 768), (3000, 4000))]
    for _ in range(150):
        sh, sw = (int(v) for v in rng.integers(2, 120, 2))
        fy, fx = (rng.uniform(1, 9, 2) if rng.random() < 0.7 else rng.integers(1, 5, 2))
        cases.append(((sh, sw), (int(sh * fy), int(sw * fx))))
    for n, ((sh, sw), shape) in enumerate(cases):
        mask = np.zeros((sh, sw), bool)
        y0, x0 = int(rng.integers(0, sh)), int(rng.integers(0, sw))
        y1, x1 = int(rng.integers(y0 + 1, sh + 1)), int(rng.integers(x0 + 1, sw + 1))
        kind = n % 4
        if kind == 0:
            mask[y0:y1, x0:x1] = rng.random((y1 - y0, x1 - x0)) < 0.5
        elif kind == 1:
            mask[y0, x0:x1] = True                  # a single row
        elif kind == 2:
            mask[y0:y1, x0] = True                  # a single column
            mask[:, -1] |= n % 3 == 0               # the right edge
        else:
            cv2.circle(mask.view(np.uint8), (x0, y0), int(rng.integers(1, 40)), 1, -1)
        assert np.array_equal(smooth_resize(mask, shape), _plain_enlarge(mask, shape)), \
            ((sh, sw), shape, kind)
    empty = np.zeros((40, 50), bool)
    assert not smooth_resize(empty, (400, 500)).any()


# --------------------------------------------------------------- the critic's frame


@pytest.mark.parametrize("size", [(1000, 750), (1003, 751), (200, 150)])
def test_a_pasted_after_frames_copies_are_the_whole_after_frames(size):
    """At scales where the copies come from the before frame's (1000 → 512, 256) and where
    they cannot (1003: the frame is written whole first), and a frame smaller than the
    copy (read whole): the copies of the true after frame, never the before frame's."""
    w, h = size
    rng = np.random.default_rng(w)
    before = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    before.setflags(write=False)
    x0, y0 = int(0.3 * w), int(0.4 * h)
    patch = rng.integers(0, 256, (h // 5, w // 4, 3), dtype=np.uint8)
    after = before.copy()
    after[y0:y0 + patch.shape[0], x0:x0 + patch.shape[1]] = patch
    with shared_work_copies():
        frame = pasted_frame(before, patch, (x0, y0))
        assert frame is not None
        for side in (512, 256, 1024):
            got = work_copy(frame, side)
            plain = work_copy(after.copy(), side)
            assert np.array_equal(got, plain), side
            assert not np.array_equal(got, work_copy(before, side))   # not stale
    assert pasted_frame(before, patch, (x0, y0)) is None   # outside a block: no shortcut


def test_the_critics_after_frame_outside_a_turn_is_the_whole_frame():
    before = np.random.default_rng(3).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    patch = np.zeros((50, 60, 3), np.uint8)
    frame, mask = Scene(before, (10, 20)).frames(patch, None, pixels=False)
    expected = before.copy()
    expected[20:70, 10:70] = 0
    assert np.array_equal(frame, expected) and mask[20:70, 10:70].all() and mask.sum() == 3000


def test_a_pasted_after_frame_dies_with_its_last_reader_inside_the_block():
    """The memo's note of a pasted frame must not keep a 12-MP frame alive for the rest of
    the step (each attempt's frame would pile up: session memory)."""
    import gc
    import weakref

    before = np.zeros((750, 1000, 3), np.uint8)
    with shared_work_copies():
        frame = pasted_frame(before, np.ones((20, 30, 3), np.uint8), (5, 6))
        work_copy(frame, 256)
        gone = weakref.ref(frame)
        del frame
        gc.collect()
        assert gone() is None
