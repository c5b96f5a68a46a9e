"""Per-model defaults, taken from each model's card, in one table.

A diffusers folder declares its pipeline class (``model_index.json``'s ``_class_name``);
that class picks the row. Each row gives what the model card (or, where the card is silent,
the diffusers pipeline's own default) recommends: steps, guidance and the argument it goes
to, the native pixel count and the multiple both sides need, the weights variant to load and
the dtype it was published in, plus fixed extra arguments. ``seconds_per_step`` is an
*estimate* of one denoising step at the native size on a ZeroGPU slice (half an H200): it
only sizes the GPU slice asked for (``pipelines.gpu``), never a reported figure.

The editors (``pipelines.editors.diffusion``) read their numbers from here, the model
manager reads ``variant`` and ``dtype``, and ``bench/gpu_edit.py`` the steps and guidance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelCard:
    """What a pipeline class is run with by default.

    Attributes:
        pipeline: the diffusers class name (``_class_name``).
        steps: denoising steps.
        guidance: guidance value, passed as ``guidance_key``.
        guidance_key: ``guidance_scale`` (distilled or classic CFG) or ``true_cfg_scale``.
        area: native pixel count (the model's training resolution).
        multiple: both working sides are rounded to this.
        variant: weights variant to load when the folder has it (``fp16``), else None.
        dtype: dtype the weights are published in and run at on a GPU.
        extra: fixed pipeline arguments (``image_guidance_scale``, ``strength``, …).
        seconds_per_step: estimated GPU seconds per step at ``area`` (sizes ZeroGPU slices).
        source: where the numbers come from.
    """

    pipeline: str
    steps: int
    guidance: float
    guidance_key: str = "guidance_scale"
    area: int = 1024 * 1024
    multiple: int = 16
    variant: str | None = None
    dtype: str = "bfloat16"
    extra: dict[str, Any] = field(default_factory=dict)
    seconds_per_step: float = 1.0
    source: str = ""


_CARDS = (
    ModelCard("StableDiffusionInstructPix2PixPipeline", steps=10, guidance=7.5,
              area=512 * 512, multiple=64, dtype="float16",
              extra={"image_guidance_scale": 1.0}, seconds_per_step=0.15,
              source="timbrooks/instruct-pix2pix card: 10 steps, image_guidance_scale=1, "
                     "fp16; text guidance: the pipeline default 7.5"),
    ModelCard("StableDiffusionInpaintPipeline", steps=50, guidance=7.5, area=512 * 512,
              multiple=64, dtype="float16", seconds_per_step=0.1,
              source="SD 1.5 inpainting card: trained at 512x512; steps and guidance: "
                     "the pipeline defaults (50, 7.5)"),
    ModelCard("StableDiffusionXLInpaintPipeline", steps=20, guidance=8.0, multiple=64,
              variant="fp16", dtype="float16", extra={"strength": 0.99},
              seconds_per_step=0.3,
              source="diffusers/stable-diffusion-xl-1.0-inpainting-0.1 card: fp16 variant, "
                     "guidance_scale=8.0, 20 steps, strength=0.99, 1024x1024"),
    ModelCard("FluxKontextPipeline", steps=28, guidance=2.5, seconds_per_step=1.8,
              source="FLUX.1-Kontext-dev card: guidance_scale=2.5, bf16; 28 steps "
                     "(the pipeline default)"),
    ModelCard("FluxKontextInpaintPipeline", steps=28, guidance=2.5, seconds_per_step=1.8,
              extra={"strength": 1.0},
              source="FLUX.1 Kontext [dev] guidance 2.5 (its pipelines default to 3.5, "
                     "the card uses 2.5); 28 steps"),
    ModelCard("FluxFillPipeline", steps=50, guidance=30.0, seconds_per_step=1.2,
              source="FLUX.1-Fill-dev card: guidance_scale=30, 50 steps, 1024x1024, bf16"),
    ModelCard("QwenImageEditPipeline", steps=50, guidance=4.0, guidance_key="true_cfg_scale",
              extra={"negative_prompt": " "}, seconds_per_step=4.0,
              source="Qwen/Qwen-Image-Edit card: true_cfg_scale=4.0, negative_prompt=' ', "
                     "50 steps, bf16"),
    ModelCard("QwenImageEditPlusPipeline", steps=40, guidance=4.0,
              guidance_key="true_cfg_scale",
              extra={"negative_prompt": " ", "guidance_scale": 1.0}, seconds_per_step=4.0,
              source="Qwen/Qwen-Image-Edit-2509 card: true_cfg_scale=4.0, guidance_scale=1.0, "
                     "negative_prompt=' ', 40 steps, bf16"),
    ModelCard("QwenImageInpaintPipeline", steps=50, guidance=4.0,
              guidance_key="true_cfg_scale", extra={"negative_prompt": " "},
              seconds_per_step=4.0,
              source="Qwen-Image family: true_cfg_scale=4.0 and 50 steps (pipeline defaults)"),
    ModelCard("QwenImageEditInpaintPipeline", steps=50, guidance=4.0,
              guidance_key="true_cfg_scale", extra={"negative_prompt": " "},
              seconds_per_step=4.0,
              source="Qwen-Image-Edit card values (true_cfg_scale=4.0, 50 steps)"),
)

#: every known pipeline class → its card
CARDS: dict[str, ModelCard] = {card.pipeline: card for card in _CARDS}

#: a card for pipelines not in the table: diffusers' usual defaults, fp32 on CPU
FALLBACK_CARD = ModelCard("", steps=30, guidance=5.0, source="no card: generic defaults")


def card_for(pipeline: str) -> ModelCard:
    """The defaults of ``pipeline`` (a diffusers class name), or the generic fallback."""
    return CARDS.get(pipeline, FALLBACK_CARD)
