"""``pipelines.resample``: the downscale memo answers a repeat for the same pixels once, and
never for other pixels (a perturbed copy, a different view, an array that died); the
channel reductions the evaluator uses give numpy's answers."""

from __future__ import annotations

import gc

import numpy as np

from pipelines.resample import _DOWNSCALE_MEMO, downscale, downscale_memo, with_downscale_memo


def _photo(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (300, 400, 3), dtype=np.uint8)


def test_a_repeat_in_the_block_is_the_same_answer_and_other_pixels_are_not() -> None:
    image = _photo()
    plain = downscale(image, 100)
    with downscale_memo():
        first = downscale(image, 100)
        assert downscale(image, 100) is first                    # resampled once
        assert downscale(image[..., :3], 100) is first           # a new view of the same pixels
        np.testing.assert_array_equal(first, plain)              # the same pixels as without
        assert not first.flags.writeable                         # shared, so read-only
        noisy = image.copy()
        noisy[0, 0] ^= 1                                         # one level, one pixel
        other = downscale(noisy, 100)
        assert other is not first
        np.testing.assert_array_equal(other, downscale(noisy, 100))
        assert downscale(image, 50).shape == (38, 50, 3)         # the size is in the key
        assert downscale(image[10:], 100) is not first           # another view, another key
    assert downscale(image, 100) is not first and downscale(image, 100).flags.writeable


def test_an_entry_dies_with_its_array_and_each_call_gets_its_own_memo() -> None:
    @with_downscale_memo
    def run() -> int:
        image = _photo(1)
        downscale(image, 100)
        memo = _DOWNSCALE_MEMO.get()
        held = len(memo)
        del image
        gc.collect()
        return held * 10 + len(memo)

    assert run() == 10            # one entry while the array lived, none after
    assert _DOWNSCALE_MEMO.get() is None


def test_channel_max_and_min_are_numpys_reductions() -> None:
    from pipelines.arrays import channel_max, channel_min

    rng = np.random.default_rng(2)
    for image in (rng.integers(0, 256, (31, 47, 3), dtype=np.uint8),
                  rng.integers(0, 256, (9, 5, 4), dtype=np.uint8),
                  rng.normal(size=(7, 6, 3)).astype(np.float32)):
        np.testing.assert_array_equal(channel_max(image), image.max(axis=2))
        np.testing.assert_array_equal(channel_min(image), image.min(axis=2))
        assert channel_max(image).flags.c_contiguous and channel_max(image) is not image
