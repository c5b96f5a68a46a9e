"""Diffusers editors on tiny pipelines: real loading, one call on CPU, the model card's
defaults reach the pipeline, the result comes back at native size and composes."""

from __future__ import annotations

import functools
import os
from dataclasses import replace

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
from pipelines.model_cards import CARDS
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


def test_ip2p_patch_comes_back_at_native_size_and_composes(tiny_editors, scene):
    image, _, layer = scene
    request = EditRequest("replace", "generate", {"prompt": "a tiger"}, "turn the cat into a "
                          "tiger", seed=3, steps=2, guidance=5.0, negative_prompt="blurry")
    out = InstructPix2PixEditor().edit(layer.patch, layer.mask, request, margin=4)
    assert out.dtype == np.uint8 and out.shape == layer.patch.shape  # restored to native
    far = _outside_feather(layer, 4)
    assert np.array_equal(out[far], layer.patch[far])  # the editor keeps the outside
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
    assert out.shape == layer.patch.shape and out.dtype == np.uint8
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
    assert out.shape == layer.patch.shape and out.dtype == np.uint8
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
    assert out.shape == layer.patch.shape and out.dtype == np.uint8
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


# --- model cards: the pipelines receive each card's defaults --------------------------------


class _Recorded(Exception):  # noqa: N818 - a signal, not an error
    """Stops a spied call once its arguments are recorded."""


@pytest.fixture()
def received(monkeypatch):
    """The keyword arguments each pipeline class's ``__call__`` receives (then run with two
    steps, so that the check stays fast; the recorded values are those Loupe passed)."""
    calls: dict[str, dict] = {}

    def spy(cls, run=True):
        original = cls.__call__

        @functools.wraps(original)
        def record(self, *args, **kwargs):
            calls[type(self).__name__] = dict(kwargs)
            if not run:
                raise _Recorded
            return original(self, *args, **{**kwargs, "num_inference_steps": 2})

        monkeypatch.setattr(cls, "__call__", record)

    yield spy, calls
    get_manager().unload_all()


def _defaults_request(operation="generate", kind="replace"):
    params = {"prompt": "a tiger"} if operation == "generate" else {}
    return EditRequest(kind, operation, params, "turn the cat into a tiger", target="cat",
                       seed=1)


def test_ip2p_receives_its_card(monkeypatch, received, scene):
    from diffusers import StableDiffusionInstructPix2PixPipeline

    spy, calls = received
    spy(StableDiffusionInstructPix2PixPipeline, run=False)  # at the card's 512²: record only
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("ip2p")))
    _, _, layer = scene
    with pytest.raises(_Recorded):
        InstructPix2PixEditor().edit(layer.patch, layer.mask, _defaults_request())
    got = calls["StableDiffusionInstructPix2PixPipeline"]
    card = CARDS["StableDiffusionInstructPix2PixPipeline"]
    assert (got["num_inference_steps"], got["guidance_scale"]) == (card.steps, card.guidance)
    assert got["image_guidance_scale"] == card.extra["image_guidance_scale"] == 1.0
    assert got["image"].size[0] * got["image"].size[1] <= 1.2 * card.area  # trained at 512²


def test_sd15_inpainting_works_at_512_not_1mp(monkeypatch, received, scene):
    from diffusers import StableDiffusionInpaintPipeline

    spy, calls = received
    spy(StableDiffusionInpaintPipeline, run=False)  # 512² on CPU is slow: record only
    monkeypatch.setenv("LOUPE_MODEL_INPAINTER", str(tiny_model_dir("sd_inpaint")))
    image, _, _ = scene
    big = np.kron(image, np.ones((2, 2, 1), np.uint8))  # a 902×600 layer patch
    mask = np.zeros(big.shape[:2], bool)
    mask[150:450, 200:600] = True
    with pytest.raises(_Recorded):
        InpaintEditor().edit(big, mask, _defaults_request("inpaint", "remove"))
    got = calls["StableDiffusionInpaintPipeline"]
    area = got["width"] * got["height"]
    assert 0.8 * 512 * 512 <= area <= 1.2 * 512 * 512, (got["width"], got["height"])
    assert got["guidance_scale"] == 7.5 and got["num_inference_steps"] == 50


def test_sdxl_inpainting_loads_fp16_variant_and_receives_its_card(monkeypatch, received, scene):
    from diffusers import StableDiffusionXLInpaintPipeline

    spy, calls = received
    spy(StableDiffusionXLInpaintPipeline)
    monkeypatch.setenv("LOUPE_MODEL_INPAINTER", str(tiny_model_dir("sdxl_inpaint")))
    monkeypatch.setattr(InpaintEditor, "working_area", 128 * 128)
    assert InpaintEditor.is_available() == (True, "")
    _, _, layer = scene
    out = InpaintEditor().edit(layer.patch, layer.mask, _defaults_request("inpaint", "remove"))
    loaded = get_manager().load("inpainter")
    assert loaded.extra["variant"] == "fp16"  # the folder holds only *.fp16.safetensors
    got = calls["StableDiffusionXLInpaintPipeline"]
    assert (got["guidance_scale"], got["num_inference_steps"], got["strength"]) == (8.0, 20, 0.99)
    assert out.shape == layer.patch.shape


def test_flux_kontext_receives_guidance_2_5(monkeypatch, received, scene):
    from diffusers import FluxKontextPipeline

    spy, calls = received
    spy(FluxKontextPipeline)
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("flux_kontext")))
    monkeypatch.setattr(FluxKontextEditor, "working_area", 64 * 96)
    _, _, layer = scene
    FluxKontextEditor().edit(layer.patch, layer.mask, _defaults_request())
    got = calls["FluxKontextPipeline"]
    assert (got["guidance_scale"], got["num_inference_steps"]) == (2.5, 28)
    assert got["max_area"] == got["width"] * got["height"]


def test_the_request_overrides_the_card(monkeypatch, received, scene):
    from diffusers import StableDiffusionInstructPix2PixPipeline

    spy, calls = received
    spy(StableDiffusionInstructPix2PixPipeline, run=False)
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("ip2p")))
    _, _, layer = scene
    with pytest.raises(_Recorded):
        InstructPix2PixEditor().edit(layer.patch, layer.mask, replace(
            _defaults_request(), steps=3, guidance=4.0, negative_prompt="blurry"))
    got = calls["StableDiffusionInstructPix2PixPipeline"]
    assert (got["num_inference_steps"], got["guidance_scale"]) == (3, 4.0)
    assert got["negative_prompt"] == "blurry"


def test_qwen_and_kontext_inpaint_cards_follow_their_model_cards():
    """The values the issue found wrong: Kontext inpainting at guidance ~2.5 (not 7.5),
    Qwen true CFG at the card's 4.0, SD 1.5 at 512², SDXL with its fp16 variant."""
    assert CARDS["FluxKontextInpaintPipeline"].guidance == 2.5
    for name in ("QwenImageEditPipeline", "QwenImageEditPlusPipeline",
                 "QwenImageInpaintPipeline", "QwenImageEditInpaintPipeline"):
        assert CARDS[name].guidance_key == "true_cfg_scale" and CARDS[name].guidance == 4.0
    assert CARDS["StableDiffusionInpaintPipeline"].area == 512 * 512
    assert CARDS["StableDiffusionXLInpaintPipeline"].variant == "fp16"
