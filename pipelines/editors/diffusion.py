"""Diffusers editors: generative edits of a layer patch at the model's working size.

Each editor resizes the patch (aspect kept) to about its model's native area, rounded to
the multiple its latent grid needs, runs the pipeline there and brings the result back to
the patch's native size with the enhancer (``pipelines.upscale.restore``: the configured
super-resolution model, or Lanczos); the frame outside the layer is never resampled.
Steps, guidance, seed and negative prompt come from the ``EditRequest`` (the retry loop
writes the critic's fixes into them); where the request leaves them unset, the model card's
values apply (``pipelines.model_cards``: one table for every supported pipeline).

The model inference is one pure function, ``run_pipeline(call) -> patch``, decorated with
``pipelines.gpu.gpu_task``: on a ZeroGPU Space it runs in a forked GPU worker, so it takes
everything it needs as plain values (``PipelineCall``) and returns the edited pixels; it
changes no state that the caller would need back. The model itself is loaded by the model
manager in the calling process first, so the worker inherits it.

Which editor is usable follows the model manager: the ``editor`` role's weights decide
between InstructPix2Pix, FLUX.1 Kontext and Qwen-Image-Edit (by the pipeline class the
folder declares), the ``inpainter`` role serves remove/replace/add through an inpainting
pipeline (SDXL/SD inpainting, FLUX Fill, FLUX Kontext inpainting, Qwen-Image inpainting).
"""

from __future__ import annotations

import inspect
import logging
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import cv2
import numpy as np

from pipelines.config import get_settings
from pipelines.editors.base import EditError, Editor, EditRequest, register_editor
from pipelines.editors.operations import get_operation
from pipelines.gpu import gpu_task
from pipelines.model_cards import ModelCard, card_for
from pipelines.models import ModelUnavailable, get_manager
from pipelines.upscale import restore

log = logging.getLogger(__name__)

#: largest latent-grid aspect ratio we feed a model (longer patches are squeezed to it)
MAX_ASPECT = 3.0
#: seconds a GPU call spends besides the denoising steps (weights to the GPU, VAE, SR)
CALL_OVERHEAD_S = 20.0
#: slack on the estimate (a ZeroGPU call is cut off when its slice runs out)
DURATION_MARGIN = 1.5


def working_dims(width: int, height: int, area: int, multiple: int) -> tuple[int, int]:
    """Size ``(w, h)`` of about ``area`` pixels, aspect kept, both a multiple of ``multiple``.

    Args:
        width: patch width.
        height: patch height.
        area: the model's native pixel count (e.g. 1024² for FLUX).
        multiple: what the latent grid needs (8 × the transformer's patch size, or 64).

    Returns:
        The working width and height (each at least ``multiple``).
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"empty patch {width}x{height}")
    aspect = min(max(width / height, 1 / MAX_ASPECT), MAX_ASPECT)
    w = math.sqrt(area * aspect)
    h = w / aspect
    return (max(multiple, int(round(w / multiple)) * multiple),
            max(multiple, int(round(h / multiple)) * multiple))


def _resize(image: np.ndarray, size: tuple[int, int], *, nearest: bool = False) -> np.ndarray:
    if image.shape[1] == size[0] and image.shape[0] == size[1]:
        return image
    if nearest:
        interp = cv2.INTER_NEAREST
    else:
        interp = cv2.INTER_AREA if image.shape[1] > size[0] else cv2.INTER_CUBIC
    return cv2.resize(image, size, interpolation=interp)


def _to_uint8(result: Any) -> np.ndarray:
    from PIL import Image

    if isinstance(result, Image.Image):
        return np.asarray(result.convert("RGB"), dtype=np.uint8)
    array = np.asarray(result)
    if array.dtype != np.uint8:
        array = np.clip(np.nan_to_num(array.astype(np.float32)) * 255.0 + 0.5, 0, 255)
        array = array.astype(np.uint8)
    return array[..., :3]


@dataclass(frozen=True)
class PipelineCall:
    """One generative edit as plain, picklable values (what a ZeroGPU worker receives).

    Attributes:
        role: the manager role whose pipeline runs (``editor`` / ``inpainter``).
        model_id: the model id that role is loaded with (checked in the worker).
        pipeline: the pipeline class name (picks the model card).
        image: RGB uint8 condition image at the working size.
        mask: uint8 mask (255 = edit) at the working size.
        kwargs: the remaining pipeline arguments (prompt, steps, guidance, …).
        seed: generator seed.
        native: ``(width, height)`` the result is restored to.
    """

    role: str
    model_id: str
    pipeline: str
    image: np.ndarray
    mask: np.ndarray
    kwargs: dict[str, Any]
    seed: int
    native: tuple[int, int]

    @property
    def card(self) -> ModelCard:
        """The model card of the pipeline."""
        return card_for(self.pipeline)


def call_seconds(call: PipelineCall) -> int:
    """The GPU time to ask for ``call``: from its size and steps, within LOUPE_GPU_SECONDS.

    The card's seconds per step at the native area scale with the working pixel count
    (attention makes it superlinear: exponent 1.5) and the number of steps.
    """
    card = call.card
    pixels = call.image.shape[0] * call.image.shape[1]
    steps = int(call.kwargs.get("num_inference_steps") or card.steps)
    strength = float(call.kwargs.get("strength", 1.0) or 1.0)
    work = steps * min(1.0, strength) * card.seconds_per_step * (pixels / card.area) ** 1.5
    seconds = DURATION_MARGIN * (CALL_OVERHEAD_S + work)
    return int(min(get_settings().gpu_seconds, max(30, math.ceil(seconds))))


@gpu_task(duration=call_seconds)
def run_pipeline(call: PipelineCall) -> np.ndarray:
    """The model inference of one edit: a pure function, inputs in, native-size patch out.

    Args:
        call: the condition image, mask and arguments (see ``PipelineCall``).

    Returns:
        The edited RGB uint8 patch at ``call.native``.
    """
    import torch
    from PIL import Image

    manager = get_manager()
    pipe = (manager.peek(call.role, call.model_id) or manager.load(call.role, call.model_id)).model
    kwargs = dict(call.kwargs)
    kwargs.update(image=Image.fromarray(call.image), mask_image=Image.fromarray(call.mask),
                  generator=torch.Generator(device="cpu").manual_seed(int(call.seed)))
    accepted = set(inspect.signature(pipe.__call__).parameters)
    with torch.inference_mode():
        out = pipe(**{k: v for k, v in kwargs.items() if k in accepted})
    size = (call.image.shape[1], call.image.shape[0])
    return restore(_resize(_to_uint8(out.images[0]), size), call.native)


class DiffusionEditor(Editor):
    """Shared patch work of the diffusers editors; the model card gives the numbers."""

    requires_weights: ClassVar[bool] = True
    #: the manager role whose weights this editor uses
    role: ClassVar[str] = "editor"
    #: ``_class_name`` values of the pipelines this editor drives
    pipeline_classes: ClassVar[frozenset[str]] = frozenset()
    working_size: ClassVar[int | None] = 1024
    #: instruction-following models take "make it …"; inpainters take a description
    instruction_model: ClassVar[bool] = True

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        """Whether the role's weights are here and are a pipeline this editor drives."""
        status = get_manager().role_status(cls.role)
        if not status.available:
            return False, status.reason
        if status.backend not in cls.pipeline_classes:
            return False, (f"the {cls.role} model {status.id} is a {status.backend}, "
                           f"not one of {', '.join(sorted(cls.pipeline_classes))}")
        return True, ""

    @property
    def card(self) -> ModelCard:
        """The model card of the pipeline the role's weights declare."""
        return card_for(get_manager().role_status(self.role).backend)

    @property
    def working_area(self) -> int:
        """The model's native pixel count (its card's)."""
        return self.card.area

    @property
    def multiple(self) -> int:
        """What both working sides must be a multiple of (its card's)."""
        return self.card.multiple

    def prepare(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
                params: dict[str, Any] | None = None) -> PipelineCall:
        """The ``PipelineCall`` for editing ``patch`` inside ``mask`` (the model is loaded
        here, in the caller's process, so that a ZeroGPU worker inherits it).

        Args:
            patch: uint8 RGB/RGBA layer patch at native size.
            mask: bool mask of the patch's size.
            request: the edit.
            params: validated parameters (default: validated from ``request.params``).

        Raises:
            EditError: the editor or its model is unavailable.
        """
        ok, reason = self.is_available()
        if not ok:
            raise EditError(f"the {self.name} editor is unavailable: {reason}")
        manager = get_manager()
        status = manager.role_status(self.role)
        try:
            manager.load(self.role)
        except ModelUnavailable as exc:
            raise EditError(str(exc)) from exc
        if params is None:
            params = get_operation(request.operation).validate(request.params)
        card = card_for(status.backend)
        size = working_dims(patch.shape[1], patch.shape[0], self.working_area, card.multiple)
        rgb = _resize(np.ascontiguousarray(patch[..., :3]), size)
        small_mask = _resize(mask.astype(np.uint8) * 255, size, nearest=True)
        kwargs = self._pipeline_kwargs(small_mask, request, params, card)
        return PipelineCall(self.role, status.id, status.backend, rgb, small_mask, kwargs,
                            int(request.seed), (patch.shape[1], patch.shape[0]))

    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        call = self.prepare(patch, mask, request, params)
        log.info("%s: %dx%d patch at %dx%d, %s steps", self.name, call.native[0],
                 call.native[1], call.image.shape[1], call.image.shape[0],
                 call.kwargs.get("num_inference_steps"))
        try:
            result = run_pipeline(call)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise EditError(f"the {self.name} pipeline failed: {exc}") from exc
        if patch.shape[2] == 4:
            result = np.dstack([result, patch[..., 3]])
        return result

    # -- prompts and arguments ----------------------------------------------------------
    def prompt_for(self, request: EditRequest, params: dict[str, Any]) -> str:
        """The text the model gets for ``request`` (instruction or region description)."""
        target = request.target or "the selected object"
        if request.operation == "recolor":
            if self.instruction_model:
                return f"make {target} {params['color']}"
            return f"{target}, coloured {params['color']}, same shape, lighting and texture"
        if request.operation == "inpaint" or (request.kind == "remove"
                                              and not self.instruction_model):
            return "empty background that continues the surrounding scene seamlessly"
        prompt = str(params.get("prompt") or "").strip()
        if self.instruction_model:
            return request.instruction.strip() or prompt or f"edit {target}"
        return prompt or request.instruction.strip() or target

    def negative_for(self, request: EditRequest) -> str:
        """The negative prompt: the request's, plus the target itself when removing it."""
        parts = [request.negative_prompt.strip()]
        if request.kind == "remove" and request.target:
            parts.append(request.target)
        return ", ".join(p for p in parts if p)

    def _pipeline_kwargs(self, mask: np.ndarray, request: EditRequest, params: dict[str, Any],
                         card: ModelCard) -> dict[str, Any]:
        """Plain pipeline arguments: the card's defaults under the request's choices."""
        height, width = mask.shape[:2]
        guidance = card.guidance if request.guidance is None else request.guidance
        kwargs: dict[str, Any] = dict(card.extra)
        kwargs.update({
            "prompt": self.prompt_for(request, params),
            "height": height,
            "width": width,
            "num_inference_steps": int(request.steps or card.steps),
            card.guidance_key: float(guidance),
            "output_type": "np",
        })
        negative = self.negative_for(request)
        if negative:
            kwargs["negative_prompt"] = negative
        return kwargs


@register_editor
class InstructPix2PixEditor(DiffusionEditor):
    """InstructPix2Pix (Brooks et al.): instruction edits at 512², small enough for CPU."""

    name = "instruct-pix2pix"
    operations = frozenset({"generate", "recolor"})
    pipeline_classes = frozenset({"StableDiffusionInstructPix2PixPipeline"})
    working_size = 512


@register_editor
class FluxKontextEditor(DiffusionEditor):
    """FLUX.1 Kontext [dev]: in-context instruction edits at about 1 MP."""

    name = "flux-kontext"
    operations = frozenset({"generate", "recolor"})
    pipeline_classes = frozenset({"FluxKontextPipeline"})

    def _pipeline_kwargs(self, mask: np.ndarray, request: EditRequest, params: dict[str, Any],
                         card: ModelCard) -> dict[str, Any]:
        kwargs = super()._pipeline_kwargs(mask, request, params, card)
        # Kontext rescales height×width to max_area: make that our working size
        kwargs["max_area"] = mask.shape[0] * mask.shape[1]
        kwargs["_auto_resize"] = False
        return kwargs


@register_editor
class QwenImageEditor(DiffusionEditor):
    """Qwen-Image-Edit (and Edit Plus): instruction edits at about 1 MP with true CFG."""

    name = "qwen-image-edit"
    operations = frozenset({"generate", "recolor"})
    pipeline_classes = frozenset({"QwenImageEditPipeline", "QwenImageEditPlusPipeline"})


@register_editor
class InpaintEditor(DiffusionEditor):
    """Mask-conditioned inpainting for remove / replace / add (SDXL, SD, FLUX, Qwen)."""

    name = "diffusion-inpaint"
    role = "inpainter"
    operations = frozenset({"generate", "inpaint", "recolor"})
    pipeline_classes = frozenset({
        "StableDiffusionXLInpaintPipeline", "StableDiffusionInpaintPipeline",
        "FluxFillPipeline", "QwenImageInpaintPipeline", "QwenImageEditInpaintPipeline",
        "FluxKontextInpaintPipeline"})
    instruction_model = False
    #: pixels (at working size) the mask grows by, so the seam is regenerated too
    mask_grow: ClassVar[int] = 8

    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                           (2 * self.mask_grow + 1, 2 * self.mask_grow + 1))
        size = working_dims(patch.shape[1], patch.shape[0], self.working_area, self.multiple)
        grown = _resize(cv2.dilate(_resize(mask.astype(np.uint8) * 255, size, nearest=True),
                                   kernel), (patch.shape[1], patch.shape[0]), nearest=True)
        return super()._edit(patch, grown > 0, request, params)

    def _pipeline_kwargs(self, mask: np.ndarray, request: EditRequest, params: dict[str, Any],
                         card: ModelCard) -> dict[str, Any]:
        kwargs = super()._pipeline_kwargs(mask, request, params, card)
        if request.operation == "recolor":
            kwargs["strength"] = 0.5 + 0.45 * float(params.get("strength", 1.0))
        return kwargs
