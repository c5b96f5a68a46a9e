"""No-reference quality: BRISQUE from shipped parameters, indices, the evaluator ensemble."""

from __future__ import annotations

import importlib.util

import cv2
import numpy as np
import pytest

from eval import noref

HAS_BRISQUE = importlib.util.find_spec("brisque") is not None


def _noisy(img: np.ndarray, sigma: float, seed: int = 0) -> np.ndarray:
    noise = np.random.default_rng(seed).normal(0, sigma, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


@pytest.mark.skipif(not HAS_BRISQUE, reason="brisque package (model parameters) not installed")
def test_brisque_ranks_distortions_worse(astronaut: np.ndarray) -> None:
    clean = noref.brisque(astronaut, size=None)
    assert clean is not None and 0 < clean < 40
    assert noref.brisque(_noisy(astronaut, 20), size=None) > clean + 10
    assert noref.brisque(cv2.GaussianBlur(astronaut, (0, 0), 2.5), size=None) > clean + 10


@pytest.mark.skipif(importlib.util.find_spec("libsvm") is None or not HAS_BRISQUE,
                    reason="libsvm not installed")
def test_brisque_svr_matches_libsvm(coffee: np.ndarray) -> None:
    """Our numpy SVR gives what libsvm gives on the same scaled features."""
    from libsvm import svmutil

    svr = noref._load_svr()
    gray = noref.to_analysis(coffee).astype(np.float32) @ np.array(
        [0.2125, 0.7154, 0.0721], np.float32) / 255
    half = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_CUBIC)
    feats = np.array(noref._brisque_features(gray) + noref._brisque_features(half))
    scaled = -1 + 2.0 * (feats - svr.low) / (svr.high - svr.low)
    model = svmutil.svm_load_model(str(noref._brisque_folder() / "svm.txt"))
    nodes, _ = svmutil.gen_svm_nodearray([float(v) for v in scaled], isKernel=False)
    expected = svmutil.libsvm.svm_predict(model, nodes)
    assert noref.brisque(coffee) == pytest.approx(expected, abs=1e-6)


def test_indices_measure_known_degradations(astronaut: np.ndarray) -> None:
    base = noref.quality_indices(astronaut)
    dark = noref.quality_indices((astronaut * 0.3).astype(np.uint8))
    assert dark["mean_lightness"] < base["mean_lightness"] - 20
    assert dark["exposure_score"] < base["exposure_score"]
    cast = noref.quality_indices(np.clip(astronaut * np.array([1.2, 1.0, 0.7]), 0, 255)
                                 .astype(np.uint8))
    assert cast["cast"] > base["cast"] + 5 and cast["cast_score"] < base["cast_score"]
    noisy = noref.quality_indices(_noisy(astronaut, 12))
    assert noisy["noise_sigma"] > base["noise_sigma"] + 5
    flat = noref.quality_indices((astronaut * 0.35 + 83).astype(np.uint8))
    assert flat["contrast"] < 0.6 * base["contrast"]
    for key, value in base.items():
        if key.endswith("_score") and value is not None:
            assert 0.0 <= value <= 1.0, key


def test_noise_estimate_tracks_added_noise() -> None:
    flat = np.full((256, 256, 3), 120, np.uint8)
    sigma = noref.estimate_noise(cv2.cvtColor(_noisy(flat, 8), cv2.COLOR_RGB2GRAY))
    assert 5 < sigma < 10   # grey conversion averages the channels' noise


def test_tilt_of_a_rotated_brick_wall() -> None:
    from skimage import data

    brick = np.stack([data.brick()] * 3, axis=-1)
    h, w = brick.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), 4.0, 1.2)
    rotated = cv2.warpAffine(brick, matrix, (w, h), borderMode=cv2.BORDER_REFLECT)
    tilt, confidence = noref.estimate_tilt(cv2.cvtColor(rotated, cv2.COLOR_RGB2GRAY))
    assert confidence >= 6 and 2.5 < tilt < 6.0
    flat_tilt, _ = noref.estimate_tilt(cv2.cvtColor(brick, cv2.COLOR_RGB2GRAY))
    assert abs(flat_tilt) < 1.5


def test_aesthetic_score_prefers_the_undegraded_photo(astronaut: np.ndarray,
                                                      coffee: np.ndarray) -> None:
    for img in (astronaut, coffee):
        good = noref.aesthetic_score(img, img)
        assert 0 < good <= 1
        for bad in ((img * 0.3).astype(np.uint8), _noisy(img, 18),
                    np.clip(img * np.array([1.2, 1.0, 0.7]), 0, 255).astype(np.uint8)):
            assert noref.aesthetic_score(bad, img) < good


def test_preservation_is_blind_to_tone_but_not_to_content(coffee: np.ndarray) -> None:
    assert noref.preservation(coffee, coffee) == pytest.approx(1.0, abs=1e-5)
    brighter = np.clip(coffee.astype(np.int16) + 30, 0, 255).astype(np.uint8)
    assert noref.preservation(brighter, coffee) > 0.95
    assert noref.preservation(coffee[::-1].copy(), coffee) < 0.6


def test_weights_change_the_mix_and_bad_input_is_refused(chelsea: np.ndarray) -> None:
    only_noise = noref.aesthetic_score(chelsea, weights={k: 0.0 for k in noref.DEFAULT_WEIGHTS}
                                       | {"noise": 1.0})
    assert only_noise == pytest.approx(noref.quality_indices(chelsea)["noise_score"])
    with pytest.raises(ValueError, match="no term"):
        noref.aesthetic_score(chelsea, weights={k: 0.0 for k in noref.DEFAULT_WEIGHTS})
    with pytest.raises(ValueError, match="uint8"):
        noref.quality_indices(chelsea.astype(np.float32))
    with pytest.raises(ValueError, match="too small"):
        noref.quality_indices(np.zeros((4, 4, 3), np.uint8))


def test_learned_term_is_skipped_cleanly_when_unavailable(chelsea: np.ndarray) -> None:
    terms = noref.score_components(chelsea, weights={"learned": 1.0})
    assert {"noise", "level"} <= set(terms)   # the rest of the ensemble still scores
    score = noref.aesthetic_score(chelsea, weights={"learned": 1.0})
    assert 0 < score <= 1


def _rendered_street(angle: float) -> np.ndarray:
    """A rendered scene of long level/plumb edges (horizon, facades), rotated to fill."""
    img = np.full((300, 400, 3), 200, np.uint8)
    img[170:] = (90, 110, 80)                      # ground below a horizon
    for x0 in (40, 150, 270):
        cv2.rectangle(img, (x0, 60), (x0 + 80, 170), (120, 90, 70), -1)   # buildings
        cv2.rectangle(img, (x0 + 25, 110), (x0 + 50, 170), (40, 40, 40), -1)  # doors
    matrix = cv2.getRotationMatrix2D((199.5, 149.5), angle, 1.12)
    return cv2.warpAffine(img, matrix, (400, 300), flags=cv2.INTER_CUBIC,
                          borderMode=cv2.BORDER_REFLECT)


@pytest.mark.parametrize("angle", [4.0, -3.0])
def test_tilt_from_long_lines(angle: float) -> None:
    gray = cv2.cvtColor(_rendered_street(angle), cv2.COLOR_RGB2GRAY)
    tilt, confidence = noref.estimate_tilt_lines(gray)
    assert confidence >= 6 and abs(tilt - angle) < 0.6
    level, level_conf = noref.estimate_tilt_lines(cv2.cvtColor(_rendered_street(0.0),
                                                               cv2.COLOR_RGB2GRAY))
    assert level_conf >= 6 and abs(level) < 0.3
    idx = noref.quality_indices(_rendered_street(angle))
    assert idx["tilt_confidence"] >= 6 and idx["level_score"] < 0.5


def test_no_long_lines_means_no_tilt_claim() -> None:
    rng = np.random.default_rng(1)
    blobs = cv2.GaussianBlur(rng.integers(0, 255, (240, 320, 3)).astype(np.uint8), (0, 0), 6)
    assert noref.estimate_tilt_lines(cv2.cvtColor(blobs, cv2.COLOR_RGB2GRAY)) == (0.0, 0)


def test_low_key_photo_is_not_called_under_exposed(coffee: np.ndarray) -> None:
    # a dark scene that still reaches near-white highlights (low-key) vs the same mean
    # lightness reached by squeezing the highlights (under-exposure)
    x = coffee.astype(np.float32) / 255
    low_key = (255 * x ** 2.2).astype(np.uint8)
    under = (coffee * 0.6).astype(np.uint8)
    lk, un = noref.quality_indices(low_key), noref.quality_indices(under)
    assert abs(lk["mean_lightness"] - un["mean_lightness"]) < 2
    assert lk["light_p99"] >= noref.FULL_RANGE_P99 > un["light_p99"]
    assert lk["exposure_score"] > un["exposure_score"] + 0.2
