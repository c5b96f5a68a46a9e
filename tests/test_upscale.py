"""The enhancer: Lanczos and the Real-ESRGAN networks (ncnn files run by torch) restore a
crop to its native size; checksums and unknown layers are refused clearly."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from pipelines import ncnn
from pipelines.models import get_manager
from pipelines.upscale import lanczos, restore


@pytest.fixture()
def crop(astronaut):
    return np.ascontiguousarray(astronaut[80:176, 160:256])  # 96×96, a face


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b) ** 2)
    return float(10 * np.log10(255**2 / max(mse, 1e-12)))


def test_lanczos_restores_size_and_alpha(crop):
    small = cv2.resize(crop, (48, 48), interpolation=cv2.INTER_AREA)
    rgba = np.dstack([small, np.full((48, 48), 180, np.uint8)])
    out = restore(rgba, (96, 96), method="lanczos")
    assert out.shape == (96, 96, 4) and np.all(out[..., 3] == 180)
    assert _psnr(crop, out[..., :3]) > 25
    assert restore(crop, (48, 48)).shape == (48, 48, 3)  # shrinking: area averaging
    assert np.array_equal(lanczos(crop, (96, 96)), crop)


def test_realesrgan_network_from_the_wheel_restores_a_crop(crop):
    small = cv2.resize(crop, (24, 24), interpolation=cv2.INTER_AREA)
    try:
        out = restore(small, (96, 96), method="realesr-animevideov3-x4")
        model = get_manager().load("upscaler", "realesr-animevideov3-x4").model
    finally:
        get_manager().unload("upscaler")
    assert model.scale == 4 and out.shape == (96, 96, 3)
    blurred = cv2.resize(cv2.resize(small, (12, 12), interpolation=cv2.INTER_AREA), (96, 96))
    # a real restoration: far above noise, better than a 2× coarser input, near Lanczos (a
    # GAN-trained network scores a little below it on PSNR; see bench/upscale.py)
    assert _psnr(crop, out) > max(20.0, _psnr(crop, blurred) + 1.0,
                                  _psnr(crop, lanczos(small, (96, 96))) - 4.0)
    assert np.corrcoef(out.reshape(-1, 3).T, crop.reshape(-1, 3).T)[0, 3] > 0.9  # R stays R


def test_an_unknown_upscaler_falls_back_to_lanczos(crop):
    status = get_manager().role_status("upscaler", "esrgan-from-nowhere")
    assert not status.available and "unknown upscaler" in status.reason
    small = cv2.resize(crop, (48, 48), interpolation=cv2.INTER_AREA)
    assert np.array_equal(restore(small, (96, 96), method="esrgan-from-nowhere"),
                          lanczos(small, (96, 96)))


def test_a_tampered_network_file_is_refused(monkeypatch):
    entry = ncnn.PACKAGE_MODELS["realesr-animevideov3-x2"]
    monkeypatch.setitem(ncnn.PACKAGE_MODELS, "realesr-animevideov3-x2",
                        replace(entry, sha256=("0" * 64, entry.sha256[1])))
    with pytest.raises(ncnn.NcnnError, match="checksum"):
        ncnn.load_package_model("realesr-animevideov3-x2")


def test_unknown_ncnn_layers_are_refused_by_name():
    param = "7767517\n2 2\nInput in 0 1 data\nDeconvolution up 1 1 data out 0=3\n"
    with pytest.raises(ncnn.NcnnError, match="Deconvolution"):
        ncnn.build_network(param, b"", 2)
    with pytest.raises(ncnn.NcnnError, match="magic"):
        ncnn.parse_param("not a model\n")
