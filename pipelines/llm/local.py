"""``TransformersVLM``: a local Qwen2.5-VL / Qwen3-VL through
``AutoModelForImageTextToText``, its generation a pure GPU entry point (``vlm_generate``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from pipelines.config import get_settings
from pipelines.gpu import gpu_task
from pipelines.llm.validation import LLMError, RetryingLLM, as_rgb, text_of
from pipelines.models import ModelUnavailable, get_manager

log = logging.getLogger(__name__)


def _vlm_seconds(model_id: str, inputs: dict[str, Any], max_new_tokens: int,
                 generate_kwargs: dict[str, Any]) -> float:
    """GPU seconds for one answer: loading plus about 40 ms per new token (a 3-7B VLM)."""
    return 20 + 0.04 * max_new_tokens


@gpu_task(duration=_vlm_seconds)
def vlm_generate(model_id: str, inputs: dict[str, Any], max_new_tokens: int,
                 generate_kwargs: dict[str, Any]) -> Any:
    """The VLM's generation as a pure GPU entry point: token ids in, new token ids out.

    Args:
        model_id: the ``vlm`` role's model (loaded by the caller first; a ZeroGPU worker
            inherits it).
        inputs: the processor's tensors.
        max_new_tokens: generation budget.
        generate_kwargs: extra ``generate`` arguments.

    Returns:
        The generated ids after the prompt (a CPU tensor, one row per prompt).
    """
    import torch

    loaded = get_manager().load("vlm", model_id)
    batch = loaded.inputs(inputs)
    with torch.inference_mode():
        out = loaded.model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False,
                                    **generate_kwargs)
    return out[:, batch["input_ids"].shape[1]:].cpu()


class TransformersVLM(RetryingLLM):
    """A local Qwen2.5-VL / Qwen3-VL through ``AutoModelForImageTextToText``.

    The model loads through the model manager (``vlm`` role: where the weights come from,
    dtype, quantization and memory budget are decided there), lazily on first use. Where
    the full processor cannot load (its video part needs torchvision), an image-only
    processor built from ``AutoImageProcessor`` + ``AutoTokenizer`` is used instead.
    Generation runs in ``vlm_generate``, the GPU entry point.

    Args:
        model_id: hub id or local folder (default: the configured ``vlm`` role's).
        device: kept for compatibility; the model manager places the model.
        max_new_tokens: generation budget per answer.
        attempts: answers asked for before giving up on invalid JSON.
        processor: ``"auto"`` or ``"image-only"`` (force the fallback path).
        image_side: long side images are reduced to before the processor.
        generate_kwargs: extra ``model.generate`` arguments (e.g. ``logits_processor``).
    """

    name = "transformers-vlm"

    def __init__(self, model_id: str = "", *, device: str = "auto", max_new_tokens: int = 512,
                 attempts: int = 3, processor: str = "auto", image_side: int = 768,
                 generate_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__(attempts)
        if processor not in ("auto", "image-only"):
            raise ValueError("processor must be 'auto' or 'image-only'")
        self.model_id = model_id or get_settings().models.get("vlm", "")
        self.device, self.max_new_tokens = device, max_new_tokens
        self.processor_mode, self.image_side = processor, image_side
        self.generate_kwargs = dict(generate_kwargs or {})
        self._processor: Any = None

    def load(self) -> Any:
        """Load the model (through the manager) and this backend's processor.

        Returns:
            The manager's ``LoadedModel``.

        Raises:
            LLMError: the weights are absent, gated or cannot load.
        """
        try:
            loaded = get_manager().load("vlm", self.model_id)
        except ModelUnavailable as err:
            raise LLMError(f"cannot load the VLM {self.model_id!r}: {err.reason}") from None
        if self._processor is None:
            processor = loaded.processor if self.processor_mode == "auto" else None
            if processor is None:
                processor = ImageOnlyProcessor.from_pretrained(str(loaded.extra["folder"]))
            self._processor = processor
        return loaded

    def _generate(self, system: str, messages: list[dict[str, Any]],
                  images: list[np.ndarray] | None) -> str:
        from PIL import Image

        self.load()
        pictures = [Image.fromarray(as_rgb(im, self.image_side)) for im in images or []]
        chat = [{"role": "system", "content": [{"type": "text", "text": system}]}]
        for i, m in enumerate(messages):
            parts: list[dict[str, Any]] = []
            if i == len(messages) - 1 and pictures:
                parts += [{"type": "image"} for _ in pictures]
            parts.append({"type": "text", "text": text_of(m["content"])})
            chat.append({"role": m["role"], "content": parts})
        text = self._processor.apply_chat_template(chat, add_generation_prompt=True,
                                                   tokenize=False)
        inputs = self._processor(text=[text], images=pictures or None, return_tensors="pt")
        inputs = {k: v for k, v in inputs.items() if hasattr(v, "to")}
        new = vlm_generate(self.model_id, inputs, self.max_new_tokens, self.generate_kwargs)
        return self._processor.batch_decode(new, skip_special_tokens=True)[0]


class ImageOnlyProcessor:
    """Qwen-VL prompt + image preparation without the video processor (no torchvision).

    Does what the full processor does for images: expands each ``<|image_pad|>`` into one
    token per merged vision patch, and returns ``pixel_values`` / ``image_grid_thw``.
    """

    IMAGE_TOKEN = "<|image_pad|>"

    def __init__(self, tokenizer: Any, image_processor: Any) -> None:
        self.tokenizer, self.image_processor = tokenizer, image_processor

    @classmethod
    def from_pretrained(cls, path: str) -> ImageOnlyProcessor:
        """Load the tokenizer and image processor of ``path``."""
        from transformers import AutoImageProcessor, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path)
        template = Path(path) / "chat_template.jinja"
        if not getattr(tokenizer, "chat_template", None) and template.is_file():
            tokenizer.chat_template = template.read_text(encoding="utf-8")
        return cls(tokenizer, AutoImageProcessor.from_pretrained(path))

    def apply_chat_template(self, chat: list[dict[str, Any]], **kwargs: Any) -> str:
        """Render the chat with the tokenizer's template."""
        return self.tokenizer.apply_chat_template(chat, **kwargs)

    def __call__(self, text: list[str], images: list[Any] | None = None,
                 return_tensors: str = "pt") -> dict[str, Any]:
        """Token ids (image placeholders expanded) and pixel tensors."""
        out: dict[str, Any] = {}
        if images:
            vision = self.image_processor(images=images, return_tensors=return_tensors)
            out.update(vision)
            merge = getattr(self.image_processor, "merge_size", 2) ** 2
            counts = [int(g.prod()) // merge for g in vision["image_grid_thw"]]
            expanded = []
            for prompt in text:
                pieces = prompt.split(self.IMAGE_TOKEN)
                if len(pieces) - 1 != len(counts):
                    raise LLMError(f"prompt has {len(pieces) - 1} image slots for "
                                   f"{len(counts)} images")
                joined = pieces[0]
                for n, rest in zip(counts, pieces[1:]):
                    joined += self.IMAGE_TOKEN * n + rest
                expanded.append(joined)
            text = expanded
        out.update(self.tokenizer(text, return_tensors=return_tensors))
        return out

    def batch_decode(self, ids: Any, **kwargs: Any) -> list[str]:
        """Decode generated ids."""
        return self.tokenizer.batch_decode(ids, **kwargs)


