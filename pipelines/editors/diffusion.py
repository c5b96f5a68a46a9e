"""Diffusers editors: generative edits of a layer patch at the model's working size.

Each editor resizes the patch (aspect kept) to about its model's native area, rounded to
the multiple its latent grid needs, runs the pipeline there and returns the result at that
size; ``layers.compose`` resizes it back into the box, so the frame outside the layer is
never resampled. Steps, guidance, seed and negative prompt come from the ``EditRequest``
(the retry loop writes the critic's fixes into them).

Which editor is usable follows the model manager: the ``editor`` role's weights decide
between InstructPix2Pix, FLUX.1 Kontext and Qwen-Image-Edit (by the pipeline class the
folder declares), the ``inpainter`` role serves remove/replace/add through an inpainting
pipeline (SDXL/SD inpainting, FLUX Fill, Qwen-Image inpainting).
"""

from __future__ import annotations

import inspect
import logging
import math
from typing import Any, ClassVar

import cv2
import numpy as np

from pipelines.editors.base import EditError, Editor, EditRequest, register_editor
from pipelines.gpu import gpu_task
from pipelines.models import ModelUnavailable, get_manager

log = logging.getLogger(__name__)

#: largest latent-grid aspect ratio we feed a model (longer patches are squeezed to it)
MAX_ASPECT = 3.0


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


@gpu_task(duration=120)
def _run_pipeline(pipe: Any, kwargs: dict[str, Any]) -> np.ndarray:
    """Call a diffusers pipeline (on the GPU slice on ZeroGPU) and return one uint8 image."""
    import torch

    with torch.inference_mode():
        out = pipe(**kwargs)
    return _to_uint8(out.images[0])


class DiffusionEditor(Editor):
    """Shared patch work of the diffusers editors; subclasses set the model's numbers."""

    requires_weights: ClassVar[bool] = True
    #: the manager role whose weights this editor uses
    role: ClassVar[str] = "editor"
    #: ``_class_name`` values of the pipelines this editor drives
    pipeline_classes: ClassVar[frozenset[str]] = frozenset()
    #: native pixel count and the multiple both sides must have
    working_area: ClassVar[int] = 1024 * 1024
    working_size: ClassVar[int | None] = 1024
    multiple: ClassVar[int] = 16
    default_steps: ClassVar[int] = 28
    default_guidance: ClassVar[float] = 3.5
    #: the pipeline's name for the guidance the request sets
    guidance_key: ClassVar[str] = "guidance_scale"
    #: fixed extra pipeline arguments
    extra_kwargs: ClassVar[dict[str, Any]] = {}
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

    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        ok, reason = self.is_available()
        if not ok:
            raise EditError(f"the {self.name} editor is unavailable: {reason}")
        try:
            pipe = get_manager().load(self.role).model
        except ModelUnavailable as exc:
            raise EditError(str(exc)) from exc
        size = working_dims(patch.shape[1], patch.shape[0], self.working_area, self.multiple)
        rgb = _resize(np.ascontiguousarray(patch[..., :3]), size)
        small_mask = _resize(mask.astype(np.uint8) * 255, size, nearest=True)
        kwargs = self._pipeline_kwargs(rgb, small_mask, request, params)
        accepted = set(inspect.signature(pipe.__call__).parameters)
        kwargs = {k: v for k, v in kwargs.items() if k in accepted}
        log.info("%s: %dx%d patch at %dx%d, %s steps", self.name, patch.shape[1],
                 patch.shape[0], size[0], size[1], kwargs.get("num_inference_steps"))
        try:
            result = _run_pipeline(pipe, kwargs)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise EditError(f"the {self.name} pipeline failed: {exc}") from exc
        result = _resize(result, size)
        if patch.shape[2] == 4:
            result = np.dstack([result, _resize(patch[..., 3], size)])
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

    def _pipeline_kwargs(self, rgb: np.ndarray, mask: np.ndarray, request: EditRequest,
                         params: dict[str, Any]) -> dict[str, Any]:
        import torch
        from PIL import Image

        height, width = rgb.shape[:2]
        guidance = self.default_guidance if request.guidance is None else request.guidance
        kwargs: dict[str, Any] = {
            "prompt": self.prompt_for(request, params),
            "image": Image.fromarray(rgb),
            "mask_image": Image.fromarray(mask),
            "height": height,
            "width": width,
            "num_inference_steps": request.steps or self.default_steps,
            self.guidance_key: float(guidance),
            "generator": torch.Generator(device="cpu").manual_seed(int(request.seed)),
            "output_type": "np",
        }
        negative = self.negative_for(request)
        if negative:
            kwargs["negative_prompt"] = negative
        kwargs.update(self.extra_kwargs)
        return kwargs


@register_editor
class InstructPix2PixEditor(DiffusionEditor):
    """InstructPix2Pix (Brooks et al.): instruction edits at 512², small enough for CPU."""

    name = "instruct-pix2pix"
    operations = frozenset({"generate", "recolor"})
    pipeline_classes = frozenset({"StableDiffusionInstructPix2PixPipeline"})
    working_area = 512 * 512
    working_size = 512
    multiple = 64
    default_steps = 20
    default_guidance = 7.5
    extra_kwargs = {"image_guidance_scale": 1.5}


@register_editor
class FluxKontextEditor(DiffusionEditor):
    """FLUX.1 Kontext [dev]: in-context instruction edits at about 1 MP."""

    name = "flux-kontext"
    operations = frozenset({"generate", "recolor"})
    pipeline_classes = frozenset({"FluxKontextPipeline"})
    working_area = 1024 * 1024
    multiple = 16
    default_steps = 28
    default_guidance = 2.5
    extra_kwargs = {"_auto_resize": False}

    def _pipeline_kwargs(self, rgb: np.ndarray, mask: np.ndarray, request: EditRequest,
                         params: dict[str, Any]) -> dict[str, Any]:
        kwargs = super()._pipeline_kwargs(rgb, mask, request, params)
        # Kontext rescales height×width to max_area: make that our working size
        kwargs["max_area"] = rgb.shape[0] * rgb.shape[1]
        return kwargs


@register_editor
class QwenImageEditor(DiffusionEditor):
    """Qwen-Image-Edit (and Edit Plus): instruction edits at about 1 MP with true CFG."""

    name = "qwen-image-edit"
    operations = frozenset({"generate", "recolor"})
    pipeline_classes = frozenset({"QwenImageEditPipeline", "QwenImageEditPlusPipeline"})
    working_area = 1024 * 1024
    multiple = 16
    default_steps = 30
    default_guidance = 4.0
    guidance_key = "true_cfg_scale"

    def negative_for(self, request: EditRequest) -> str:
        # true CFG only runs with a negative prompt; a blank one is the usual neutral choice
        return super().negative_for(request) or " "


@register_editor
class InpaintEditor(DiffusionEditor):
    """Mask-conditioned inpainting for remove / replace / add (SDXL, SD, FLUX Fill, Qwen)."""

    name = "diffusion-inpaint"
    role = "inpainter"
    operations = frozenset({"generate", "inpaint", "recolor"})
    pipeline_classes = frozenset({
        "StableDiffusionXLInpaintPipeline", "StableDiffusionInpaintPipeline",
        "FluxFillPipeline", "QwenImageInpaintPipeline", "QwenImageEditInpaintPipeline",
        "FluxKontextInpaintPipeline"})
    working_area = 1024 * 1024
    multiple = 64
    default_steps = 30
    default_guidance = 7.5
    instruction_model = False
    #: pixels (at working size) the mask grows by, so the seam is regenerated too
    mask_grow: ClassVar[int] = 8

    def _pipeline_kwargs(self, rgb: np.ndarray, mask: np.ndarray, request: EditRequest,
                         params: dict[str, Any]) -> dict[str, Any]:
        from PIL import Image

        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                           (2 * self.mask_grow + 1, 2 * self.mask_grow + 1))
        grown = cv2.dilate(mask, kernel)
        kwargs = super()._pipeline_kwargs(rgb, grown, request, params)
        kwargs["mask_image"] = Image.fromarray(grown)
        backend = get_manager().role_status(self.role).backend
        if backend == "FluxFillPipeline" and request.guidance is None:
            kwargs["guidance_scale"] = 30.0  # FLUX Fill is guidance-distilled around 30
        if backend.startswith("Qwen"):
            kwargs["true_cfg_scale"] = kwargs.pop("guidance_scale")
            kwargs.setdefault("negative_prompt", " ")
        if request.operation == "recolor":
            kwargs["strength"] = 0.5 + 0.45 * float(params.get("strength", 1.0))
        return kwargs
