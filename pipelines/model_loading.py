"""What the model manager (``pipelines.models``) is built from: the role tables, the
status and loaded-model records, where weights are, the device/dtype/memory rules and the
loaders of each kind (diffusers pipelines, transformers models, LPIPS/ST-LPIPS).

Every name here is used through ``pipelines.models``; nothing else loads a model.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.config import Settings, get_settings
from pipelines.model_cards import card_for
from pipelines.weights import (
    class_name_of,
    has_variant,
    locate,
)

log = logging.getLogger(__name__)

QUANT_MODES = ("auto", "none", "int8", "nf4")

#: backend each role falls back to when its weights are absent
FALLBACKS: dict[str, str] = {
    "editor": "classical",
    "inpainter": "classical",
    "detector": "embedded",
    "segmenter": "embedded",
    "vlm": "rule-based",
    "clip": "none",
    "dino": "none",
    "lpips": "none",
    "aesthetic": "heuristic",
    "upscaler": "lanczos",
}

#: roles whose weights are a diffusers pipeline (the others are transformers models)
PIPELINE_ROLES = ("editor", "inpainter")
#: roles whose inference runs inside a ``pipelines.gpu`` entry point (CUDA on ZeroGPU; the
#: upscaler runs inside the editor's ``run_pipeline``)
GPU_ROLES = ("editor", "inpainter", "vlm", "upscaler")
#: pipeline components quantized when a pipeline role asks for nf4/int8
HEAVY_COMPONENTS = ("transformer", "unet", "text_encoder", "text_encoder_2", "text_encoder_3")


class ModelUnavailable(RuntimeError):
    """A role's model cannot be used here (weights absent, gated, no CUDA for NF4, …).

    Attributes:
        role: the role asked for.
        reason: why, in words a person can act on.
    """

    def __init__(self, role: str, reason: str) -> None:
        super().__init__(f"{role} model unavailable: {reason}")
        self.role = role
        self.reason = reason


@dataclass
class RoleStatus:
    """Where one role stands: its configured id, whether it can load, and what serves it.

    ``source`` says where the weights are: ``folder``, ``cache``, ``download`` (not here
    yet; fetched on first load), ``package`` (inside an installed package) or ``""``.
    """

    role: str
    id: str
    available: bool
    reason: str
    backend: str
    folder: Path | None = None
    quant: str = "none"
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The JSON-friendly view printed by ``python -m pipelines models``."""
        return {"id": self.id, "available": self.available, "reason": self.reason,
                "backend": self.backend, "quant": self.quant, "source": self.source}


@dataclass
class LoadedModel:
    """A loaded role: the model (or diffusers pipeline) and its processor, where it lives."""

    role: str
    model_id: str
    model: Any
    processor: Any = None
    device: str = "cpu"
    dtype: Any = None
    quant: str = "none"
    nbytes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def inputs(self, batch: Any) -> dict[str, Any]:
        """A processor's batch moved to the model's device (floating tensors to its dtype)."""
        import torch

        out = {}
        for key, value in dict(batch).items():
            if isinstance(value, torch.Tensor):
                value = value.to(self.device)
                if value.is_floating_point() and self.dtype is not None:
                    value = value.to(self.dtype)
            out[key] = value
        return out


# --------------------------------------------------------------------------- lookup


def locate_weights(model_id: str) -> tuple[Path | None, str]:
    """Find a model's files without downloading anything (see ``pipelines.weights``).

    Returns:
        ``(folder, "")`` when the weights are here, else ``(None, reason)`` (a model that
        would download on first load counts as not here).
    """
    found = locate(model_id, get_settings())
    if found.folder is None and found.source == "download":
        return None, f"{model_id} is not downloaded yet (it downloads on first use)"
    return found.folder, found.reason


def model_class_name(folder: Path) -> str:
    """The class a model folder declares (``model_index.json`` or ``config.json``), or ''."""
    return class_name_of(folder)


def _stlpips_weights() -> Path | None:
    try:
        from stlpips_pytorch import stlpips
    except ImportError:
        return None
    path = Path(stlpips.__file__).parent / "weights" / "vST0.0" / "alex_shift_tolerant.pth"
    return path if path.is_file() else None


def _torchvision_cached(net: str) -> bool:
    import torch

    names = {"alex": "alexnet-owt-", "vgg": "vgg16-", "squeeze": "squeezenet1_1-"}
    checkpoints = Path(torch.hub.get_dir()) / "checkpoints"
    return checkpoints.is_dir() and any(p.name.startswith(names[net])
                                        for p in checkpoints.iterdir())


def lpips_status(net: str) -> tuple[bool, str, str]:
    """``(available, reason, backend)`` of the perceptual metric for ``net``.

    LPIPS needs torchvision's ImageNet backbone in the torch cache (never downloaded here);
    without it, ST-LPIPS (AlexNet, shift-tolerant), whose wheel ships its whole network,
    serves the role.
    """
    if net not in ("alex", "vgg", "squeeze"):
        return False, f"unknown LPIPS network {net!r} (alex, vgg or squeeze)", "none"
    if _torchvision_cached(net):
        return True, "", f"lpips-{net}"
    if net == "alex" and _stlpips_weights() is not None:
        return True, "", "st-lpips-alex"
    return False, (f"torchvision's {net} weights are not in the torch cache and ST-LPIPS "
                   "(alex only) is not installed"), "none"


# --------------------------------------------------------------------------- device/dtype


def pick_device(settings: Settings | None = None, role: str | None = None) -> str:
    """``LOUPE_DEVICE`` when set to something other than ``auto``, else cuda/mps/cpu.

    On ZeroGPU a role outside ``GPU_ROLES`` runs in the main process, which has no GPU:
    it gets the CPU.
    """
    import torch

    settings = settings or get_settings()
    if settings.zero_gpu and role is not None and role not in GPU_ROLES:
        return "cpu"
    wanted = settings.device
    if wanted and wanted != "auto":
        return wanted
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


_DTYPES = {"float16": "float16", "fp16": "float16", "bfloat16": "bfloat16",
           "bf16": "bfloat16", "float32": "float32", "fp32": "float32"}


def pick_dtype(device: str, published: str | None = None) -> Any:
    """``LOUPE_DTYPE``, else the published dtype on CUDA (bfloat16 when unknown), else fp32.

    Args:
        device: where the model runs.
        published: the dtype the model card publishes the weights in (``float16``, …).
    """
    import torch

    wanted = _DTYPES.get(get_settings().dtype)
    if wanted is None:
        wanted = (_DTYPES.get(published or "", "bfloat16") if device.startswith("cuda")
                  else "float32")
    return getattr(torch, wanted)


def memory_budget(device: str) -> int | None:
    """Bytes of model weights kept loaded at once: ``LOUPE_MEMORY_BUDGET_GB``, else 90% of
    the GPU's memory on CUDA, else half the machine's RAM (None when it cannot be read)."""
    value = get_settings().memory_budget_gb
    if value is not None:
        return int(value * 1024**3)
    if device.startswith("cuda"):
        import torch

        try:
            return int(0.9 * torch.cuda.get_device_properties(0).total_memory)
        except (RuntimeError, AssertionError):  # no usable CUDA device after all
            return None
    try:
        return int(0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not a POSIX system
        return None


def module_nbytes(obj: Any) -> int:
    """Bytes held by the parameters and buffers of a module or a pipeline's modules."""
    import torch

    modules = [obj] if isinstance(obj, torch.nn.Module) else [
        v for v in getattr(obj, "components", {}).values() if isinstance(v, torch.nn.Module)]
    total = 0
    for module in modules:
        for tensor in list(module.parameters()) + list(module.buffers()):
            total += tensor.numel() * tensor.element_size()
    return total


# --------------------------------------------------------------------------- loaders


def _int8(module: Any) -> None:
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    quantize_(module, Int8WeightOnlyConfig())


def heavy_components(folder: Path) -> list[str]:
    try:
        index = json.loads((folder / "model_index.json").read_text())
    except (OSError, ValueError):
        return []
    return [name for name in HEAVY_COMPONENTS if (index.get(name) or [None])[0]]


def load_pipeline(role: str, folder: Path, device: str, dtype: Any, quant: str) -> LoadedModel:
    import torch
    from diffusers import DiffusionPipeline

    card = card_for(class_name_of(folder))
    kwargs: dict[str, Any] = {"dtype": dtype, "local_files_only": True}
    if has_variant(folder, card.variant):
        kwargs["variant"] = card.variant
    heavy = heavy_components(folder)
    if quant == "nf4":
        from diffusers import PipelineQuantizationConfig

        kwargs["quantization_config"] = PipelineQuantizationConfig(
            quant_backend="bitsandbytes_4bit", components_to_quantize=heavy,
            quant_kwargs={"load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
                          "bnb_4bit_compute_dtype": dtype})
    pipe = DiffusionPipeline.from_pretrained(folder, **kwargs)
    if quant == "int8":
        for name in heavy:
            if isinstance(getattr(pipe, name, None), torch.nn.Module):
                _int8(getattr(pipe, name))
    offload = get_settings().offload
    if device.startswith("cuda") and offload == "model":
        pipe.enable_model_cpu_offload()
    elif device.startswith("cuda") and offload == "sequential":
        pipe.enable_sequential_cpu_offload()
    else:  # diffusers moves bitsandbytes 4-bit modules itself (no dtype change)
        pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    return LoadedModel(role, str(folder), pipe, None, device, dtype, quant, module_nbytes(pipe),
                       {"offload": offload if device.startswith("cuda") else "none",
                        "variant": kwargs.get("variant"), "pipeline": type(pipe).__name__,
                        "folder": folder})


def _transformers_classes(role: str) -> tuple[Any, Any]:
    import transformers as tf

    table = {
        "detector": (tf.AutoModelForZeroShotObjectDetection, tf.AutoProcessor),
        "segmenter": (tf.AutoModel, tf.AutoProcessor),
        "clip": (tf.AutoModel, tf.AutoProcessor),
        "dino": (tf.AutoModel, tf.AutoImageProcessor),
        "aesthetic": (tf.AutoModelForImageClassification, tf.AutoImageProcessor),
        "vlm": (tf.AutoModelForImageTextToText, tf.AutoProcessor),
    }
    return table[role]


def load_transformers(role: str, folder: Path, device: str, dtype: Any,
                       quant: str) -> LoadedModel:
    model_cls, processor_cls = _transformers_classes(role)
    kwargs: dict[str, Any] = {"dtype": dtype, "local_files_only": True}
    if quant == "nf4":
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=dtype)
        kwargs["device_map"] = device
    elif get_settings().offload != "none" \
            and device.startswith("cuda"):
        kwargs["device_map"] = "auto"
    model = model_cls.from_pretrained(folder, **kwargs)
    if "device_map" not in kwargs:
        model.to(device)
    if quant == "int8":
        _int8(model)
    model.eval()
    try:
        processor = processor_cls.from_pretrained(folder, local_files_only=True)
    except ImportError as exc:  # e.g. a VLM's video processor needs torchvision
        if role != "vlm":
            raise
        log.info("%s: full processor unavailable (%s); the caller builds its own", role, exc)
        processor = None
    return LoadedModel(role, str(folder), model, processor, device, dtype, quant,
                       module_nbytes(model), {"folder": folder})


def load_lpips(role: str, net: str, device: str) -> LoadedModel:
    """LPIPS with torchvision's backbone when cached, else ST-LPIPS from its wheel."""
    if _torchvision_cached(net):
        import lpips

        model = lpips.LPIPS(net=net, verbose=False).to(device).eval()
        kind = "lpips"
    else:
        model, kind = _load_st_lpips().to(device), "st_lpips"
    return LoadedModel(role, net, model, None, device, None, "none", module_nbytes(model),
                       {"kind": kind})


def _load_st_lpips() -> Any:
    """ST-LPIPS (AlexNet, shift-tolerant) from the weights inside the stlpips wheel.

    The wheel's file holds the whole backbone plus the linear heads; every parameter of
    the model must come from it, else it is refused (no random backbone ever).
    """
    import torch
    from stlpips_pytorch import stlpips

    path = _stlpips_weights()
    if path is None:
        raise ModelUnavailable("lpips", "the ST-LPIPS weights are missing from its wheel")
    model = stlpips.LPIPS(net="alex", variant="shift_tolerant", pretrained=False,
                          verbose=False)
    state = torch.load(path, map_location="cpu", weights_only=True)
    needed = {k for k in model.state_dict() if not k.startswith("lins.")}  # lins = aliases
    missing = needed - set(state)
    if missing:
        raise ModelUnavailable("lpips", f"the ST-LPIPS weights lack {sorted(missing)[:3]}…")
    model.load_state_dict(state, strict=False)
    return model.eval()


