"""Metrics: SSIM/PSNR agree with scikit-image, Otsu masks, ST-LPIPS from real weights,
model metrics reported as unavailable, VQAScore through the LLM protocol, the score CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from eval import metrics as M


def _edited(img: np.ndarray, seed: int = 0, noise: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.clip(img.astype(int) + rng.integers(-noise, noise + 1, img.shape), 0, 255)
    out = out.astype(np.uint8)
    out[60:140, 80:200] = (250, 20, 20)
    return out


@pytest.mark.parametrize("crop", [(512, 512), (301, 457), (37, 7)])
def test_ssim_matches_skimage(astronaut, crop):
    a = astronaut[:crop[0], :crop[1]]
    b = _edited(astronaut)[:crop[0], :crop[1]]
    ref = structural_similarity(a, b, channel_axis=2, data_range=255)
    assert abs(M.ssim(a, b) - ref) < 1e-6
    grey_ref = structural_similarity(a[..., 1], b[..., 1], data_range=255)
    assert abs(M.ssim(a[..., 1], b[..., 1]) - grey_ref) < 1e-6


def test_ssim_matches_skimage_across_strips(coffee):
    # taller than one strip: the strip seams must not change the result
    a = np.concatenate([coffee, coffee[::-1]], axis=0)[:700]
    b = _edited(a, seed=3, noise=20)
    ref = structural_similarity(a, b, channel_axis=2, data_range=255)
    assert abs(M.ssim(a, b) - ref) < 1e-6
    assert M.ssim(a, a) == pytest.approx(1.0, abs=1e-6)


def test_masked_ssim_is_the_mean_of_the_map_over_the_mask(chelsea):
    b = _edited(chelsea, noise=12)
    _, full = structural_similarity(chelsea, b, channel_axis=2, data_range=255, full=True)
    mask = np.zeros(chelsea.shape[:2], bool)
    mask[:, :200] = True
    expected = full.mean(axis=2)[3:-3, 3:-3][mask[3:-3, 3:-3]].mean()
    assert abs(M.ssim(chelsea, b, mask) - expected) < 1e-6


def test_psnr_matches_skimage_and_masks(chelsea):
    b = _edited(chelsea)
    assert M.psnr(chelsea, b) == pytest.approx(peak_signal_noise_ratio(chelsea, b), abs=1e-9)
    assert M.psnr(chelsea, chelsea) == math.inf
    mask = np.zeros(chelsea.shape[:2], bool)
    mask[200:, :] = True  # away from the painted rectangle
    sq = (chelsea.astype(float) - b.astype(float)) ** 2
    assert M.psnr(chelsea, b, mask) == pytest.approx(10 * math.log10(255**2 / sq[mask].mean()))
    with pytest.raises(M.MetricError):
        M.psnr(chelsea, b, np.zeros(chelsea.shape[:2], bool))
    with pytest.raises(M.MetricError):
        M.psnr(chelsea, b[:10])


def test_otsu_background_separates_the_edit_from_noise(astronaut):
    b = _edited(astronaut)
    bg = M.otsu_background(astronaut, b)
    assert not bg[60:140, 80:200].any()  # the painted area is foreground
    assert bg.mean() > 0.9
    assert M.otsu_background(astronaut, astronaut).all()
    assert M.psnr_om(astronaut, b) > M.psnr(astronaut, b) + 5
    assert M.ssim_om(astronaut, b) > M.ssim(astronaut, b)


@pytest.fixture
def no_torch_cache(tmp_path, monkeypatch):
    import torch

    from pipelines.models import get_manager

    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    monkeypatch.setattr(M, "_PERCEPTUAL", {})
    get_manager().unload("lpips")
    yield
    get_manager().unload("lpips")


def test_st_lpips_from_the_wheel_weights(no_torch_cache, astronaut):
    import torch
    from stlpips_pytorch import stlpips

    small = astronaut[::4, ::4].copy()
    assert M.perceptual_backend() == "st_lpips"
    shipped = torch.load(Path(stlpips.__file__).parent / "weights/vST0.0/alex_shift_tolerant.pth",
                         map_location="cpu", weights_only=True)
    model = M._PERCEPTUAL["model"]
    for key, value in shipped.items():  # every shipped tensor is the one in use
        assert torch.equal(model.state_dict()[key], value), key
    assert M.lpips_distance(small, small) == pytest.approx(0.0, abs=1e-6)
    mild = M.lpips_distance(small, _edited(small, noise=4))
    strong = M.lpips_distance(small, _edited(small, noise=40))
    assert 0 < mild < strong


def test_st_lpips_refuses_incomplete_weights(no_torch_cache, monkeypatch):
    import torch

    real_load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: {
        k2: v for k2, v in real_load(*a, **k).items() if not k2.startswith("net.slice1")})
    with pytest.raises(M.MetricUnavailable, match="lack"):
        M.perceptual_backend()


def test_score_pair_keys_and_unavailable_models(no_torch_cache, monkeypatch, tmp_path, chelsea):
    monkeypatch.setenv("LOUPE_MODEL_CLIP", str(tmp_path / "no-clip"))
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tmp_path / "no-dino"))
    monkeypatch.setenv("LOUPE_LLM_BASE_URL", "")
    monkeypatch.setenv("LOUPE_MODEL_VLM", str(tmp_path / "no-vlm"))
    small = chelsea[::2, ::2].copy()
    after = _edited(small)
    out = M.score_pair(small, after, bbox=(80, 60, 200, 140), instruction="paint it red")
    for key in ("psnr", "ssim", "st_lpips", "psnr_om", "ssim_om", "st_lpips_om",
                "psnr_outside", "ssim_outside"):
        assert isinstance(out[key], float), key
    assert "lpips" not in out  # labelled by what was really computed
    for key in ("clip_i", "clip_t", "dino", "vqascore", "cif"):
        assert out[key] == M.UNAVAILABLE
    resized = M.score_pair(small, after[::2, ::2], models=False)
    assert resized["resized_after"] is True
    with pytest.raises(M.MetricError):
        M.score_pair(small, after, bbox=(0, 0, 9999, 10), models=False)


def test_clip_and_dino_through_tiny_models(monkeypatch, chelsea):
    from tests.tiny_models import tiny_model_dir

    monkeypatch.setenv("LOUPE_MODEL_CLIP", str(tiny_model_dir("clip")))
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    small = chelsea[::4, ::4].copy()
    out = M.embedding_metrics(small, small, "a cat")
    assert out["clip_i"] == pytest.approx(1.0, abs=1e-4)
    assert out["dino"] == pytest.approx(1.0, abs=1e-4)
    assert -1.0 <= out["clip_t"] <= 1.0


class _ScriptedVLM:
    """Stands in for a configured VLM: splits on 'and', says yes to questions about red."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls = 0

    def complete_json(self, system, messages, images, schema, check=None):
        self.calls += 1
        text = messages[-1]["content"]
        if "questions" in schema["properties"]:
            return {"questions": [f"Is it true that {p.strip()}?" for p in text.split(" and ")]}
        assert images is not None and len(images) == 2
        return {"answer": "yes" if "red" in text else "no"}


def test_vqa_score_counts_majority_yes(chelsea):
    vlm = _ScriptedVLM()
    assert M.vqa_score(vlm, chelsea, chelsea, "the hat is red and the sky is blue") == 0.5
    assert vlm.calls == 1 + 2 * 3
    assert M.vqa_score(vlm, chelsea, chelsea, "the car is red") == 1.0


def test_score_cli_prints_one_json_object(tmp_path, chelsea):
    from PIL import Image

    a, b = tmp_path / "a.png", tmp_path / "b.png"
    small = chelsea[::3, ::3].copy()
    Image.fromarray(small).save(a)
    Image.fromarray(small).save(b)
    done = subprocess.run([sys.executable, "-m", "eval", "score", str(a), str(b),
                           "--bbox", "0,0,20,20"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["psnr"] == "inf" and data["psnr_om"] == "inf"
    assert data["ssim"] == pytest.approx(1.0)
    bad = subprocess.run([sys.executable, "-m", "eval", "score", str(a), str(tmp_path / "x.png")],
                         capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert bad.returncode != 0 and "error" in bad.stderr.lower()
