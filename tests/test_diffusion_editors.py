"""Diffusers editors on tiny pipelines: real loading, one call on CPU, compose accepts it."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pipelines.editors.base import EditError, EditRequest
from pipelines.editors.diffusion import (
    FluxKontextEditor,
    InpaintEditor,
    InstructPix2PixEditor,
    QwenImageEditor,
    working_dims,
)
from pipelines.editors.registry import pick_editor
from pipelines.layers import compose, decompose, feather_alpha
from pipelines.models import get_manager
from tests.tiny_models import tiny_model_dir

#: tests run the real pipelines at a small working area (64² / 128²) to stay fast on CPU
SMALL = {InstructPix2PixEditor: 64 * 64, InpaintEditor: 128 * 128}


@pytest.fixture()
def tiny_editors(monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("ip2p")))
    monkeypatch.setenv("LOUPE_MODEL_INPAINTER", str(tiny_model_dir("sd_inpaint")))
    for cls, area in SMALL.items():
        monkeypatch.setattr(cls, "working_area", area)
    yield
    get_manager().unload_all()


@pytest.fixture(scope="module")
def scene(chelsea):
    mask = np.zeros(chelsea.shape[:2], bool)
    mask[90:170, 150:260] = True
    return chelsea, mask, decompose(chelsea, mask)


def _outside_feather(layer, feather):
    far = np.ones(layer.mask.shape, bool)
    far &= feather_alpha(layer.mask, feather) == 0
    return far


@pytest.mark.parametrize("width, height, area, multiple", [
    (5460, 3640, 1024 * 1024, 16), (300, 300, 512 * 512, 64), (40, 900, 1024 * 1024, 16)])
def test_working_dims_keep_aspect_and_multiple(width, height, area, multiple):
    w, h = working_dims(width, height, area, multiple)
    assert w % multiple == 0 and h % multiple == 0
    assert 0.8 * area <= w * h <= 1.2 * area
    aspect = min(max(width / height, 1 / 3), 3)  # extreme strips are squeezed to 1:3
    assert abs(w / h - aspect) < 0.1 * aspect


def test_ip2p_patch_at_working_size_composes(tiny_editors, scene):
    image, _, layer = scene
    request = EditRequest("replace", "generate", {"prompt": "a tiger"}, "turn the cat into a "
                          "tiger", seed=3, steps=2, guidance=5.0, negative_prompt="blurry")
    out = InstructPix2PixEditor().edit(layer.patch, layer.mask, request)
    expected = working_dims(layer.width, layer.height, 64 * 64, 64)
    assert out.dtype == np.uint8 and out.shape == (expected[1], expected[0], 3)
    result = compose(image, layer, out, feather=4)
    rows, cols = layer.slices
    assert result.shape == image.shape
    assert not np.array_equal(result[rows, cols][layer.mask], image[rows, cols][layer.mask])
    far = _outside_feather(layer, 4)
    assert np.array_equal(result[rows, cols][far], image[rows, cols][far])
    untouched = np.ones(image.shape[:2], bool)
    untouched[rows, cols] = False
    assert np.array_equal(result[untouched], image[untouched])


def test_flux_kontext_editor_on_a_tiny_pipeline(monkeypatch, scene):
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("flux_kontext")))
    monkeypatch.setattr(FluxKontextEditor, "working_area", 64 * 96)
    assert FluxKontextEditor.is_available() == (True, "")
    assert not InstructPix2PixEditor.is_available()[0]
    image, _, layer = scene
    try:
        out = FluxKontextEditor().edit(layer.patch, layer.mask, EditRequest(
            "replace", "recolor", {"color": "red"}, target="the cat", steps=2, seed=0))
    finally:
        get_manager().unload_all()
    w, h = working_dims(layer.width, layer.height, 64 * 96, 16)
    assert out.shape == (h, w, 3) and out.dtype == np.uint8
    assert compose(image, layer, out).shape == image.shape


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("LOUPE_SLOW_TESTS"),
                    reason="~50 s of CPU: set LOUPE_SLOW_TESTS=1 to run it")
def test_qwen_image_edit_editor_on_a_tiny_pipeline(monkeypatch, scene):
    """Slow: the pipeline encodes its condition image at 1 MP whatever the sizes."""
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("qwen_image_edit")))
    monkeypatch.setattr(QwenImageEditor, "working_area", 64 * 64)
    assert QwenImageEditor.is_available() == (True, "")
    image, _, layer = scene
    try:
        out = QwenImageEditor().edit(layer.patch, layer.mask, EditRequest(
            "add", "generate", {}, "add a red hat", steps=1, seed=0))
    finally:
        get_manager().unload_all()
    w, h = working_dims(layer.width, layer.height, 64 * 64, 16)
    assert out.shape == (h, w, 3) and out.dtype == np.uint8
    assert compose(image, layer, out).shape == image.shape


def test_seed_and_steps_drive_the_pipeline(tiny_editors, scene):
    _, _, layer = scene
    editor = InstructPix2PixEditor()

    def run(**kw):
        return editor.edit(layer.patch, layer.mask, EditRequest(
            "adjust", "generate", {}, "make it snowy", **{"steps": 1, "seed": 0, **kw}))

    first = run()
    assert np.array_equal(first, run())
    assert not np.array_equal(first, run(seed=1))
    assert not np.array_equal(first, run(steps=2))


def test_rgba_patch_keeps_alpha(tiny_editors, scene):
    _, _, layer = scene
    alpha = np.full(layer.patch.shape[:2], 200, np.uint8)
    rgba = np.dstack([layer.patch, alpha])
    out = InstructPix2PixEditor().edit(rgba, layer.mask, EditRequest(
        "adjust", "recolor", {"color": "blue"}, target="the cat", steps=1))
    assert out.shape[2] == 4 and np.all(out[..., 3] == 200)


def test_inpainter_removes_inside_the_layer(tiny_editors, scene):
    image, _, layer = scene
    request = EditRequest("remove", "inpaint", {}, "remove the cat", target="cat", steps=2)
    out = InpaintEditor().edit(layer.patch, layer.mask, request)
    w, h = working_dims(layer.width, layer.height, 128 * 128, 64)
    assert out.shape == (h, w, 3) and out.dtype == np.uint8
    result = compose(image, layer, out, feather=3)
    rows, cols = layer.slices
    far = _outside_feather(layer, 3)
    assert np.array_equal(result[rows, cols][far], image[rows, cols][far])
    editor = InpaintEditor()
    assert editor.prompt_for(request, {}).startswith("empty background")
    assert "cat" in editor.negative_for(request)


def test_availability_follows_the_pipeline_class(tiny_editors, monkeypatch):
    assert InstructPix2PixEditor.is_available() == (True, "")
    assert InpaintEditor.is_available() == (True, "")
    ok, reason = FluxKontextEditor.is_available()
    assert not ok and "StableDiffusionInstructPix2PixPipeline" in reason
    assert not QwenImageEditor.is_available()[0]
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("sd_inpaint")))
    ok, reason = InstructPix2PixEditor.is_available()
    assert not ok and "StableDiffusionInpaintPipeline" in reason


def test_registry_uses_generative_editor_when_present(tiny_editors):
    request = EditRequest("add", "generate", {"prompt": "a hat"}, "add a hat")
    assert pick_editor(request).name in ("instruct-pix2pix", "diffusion-inpaint")


def test_registry_falls_back_without_weights(monkeypatch, scene):
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", "nobody-here/no-editor")
    monkeypatch.setenv("LOUPE_MODEL_INPAINTER", "nobody-here/no-inpainter")
    remove = EditRequest("remove", "inpaint", {}, target="cat")
    assert pick_editor(remove, prefer="diffusion-inpaint").name == "classical"
    ok, reason = InstructPix2PixEditor.is_available()
    assert not ok and "no-editor" in reason
    _, _, layer = scene
    with pytest.raises(EditError, match="unavailable"):
        InpaintEditor().edit(layer.patch, layer.mask, remove)
