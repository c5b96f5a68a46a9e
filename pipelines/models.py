"""The model manager: which weights serve each role, whether they are here, and loading.

Each role (``config.ROLES``) maps to a model id (``LOUPE_MODEL_<ROLE>``): a local folder
or a Hugging Face repo id. Weights are looked up offline only — a local folder, or the
local Hugging Face cache (``local_files_only``) — and never downloaded. A role whose
weights are absent is reported unavailable with the reason, and the caller falls back to
its embedded backend (the classical editor, the embedded localiser, the rule-based LLM).

Loading is lazy and cached; quantization is per role (``LOUPE_QUANT_<ROLE>``: ``nf4``
through bitsandbytes on CUDA, ``int8`` weight-only through torchao on CPU or GPU, or
``none``). Settings read here besides ``pipelines.config``:

=============================  ==========================================================
``LOUPE_DTYPE``                ``auto`` (bfloat16 on CUDA, float32 on CPU), ``float16``,
                               ``bfloat16`` or ``float32``
``LOUPE_OFFLOAD``              ``none`` (default), ``model`` or ``sequential``: accelerate
                               CPU offload of diffusers pipelines on CUDA
``LOUPE_MEMORY_BUDGET_GB``     models kept loaded at once (least recently used unloaded
                               first); default: 90% of the GPU's memory on CUDA, no limit
                               on CPU
=============================  ==========================================================
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.config import ROLES, Settings, get_settings

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf")
QUANT_MODES = ("none", "int8", "nf4")

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
}

#: roles whose weights are a diffusers pipeline (the others are transformers models)
PIPELINE_ROLES = ("editor", "inpainter")
#: pipeline components quantized when a pipeline role asks for nf4/int8
HEAVY_COMPONENTS = ("transformer", "unet", "text_encoder", "text_encoder_2", "text_encoder_3")


class ModelUnavailable(RuntimeError):
    """A role's model cannot be used here (weights absent, no CUDA for NF4, …).

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
    """Where one role stands: its configured id, whether it can load, and what serves it."""

    role: str
    id: str
    available: bool
    reason: str
    backend: str
    folder: Path | None = None
    quant: str = "none"

    def as_dict(self) -> dict[str, Any]:
        """The JSON-friendly view printed by ``python -m pipelines models``."""
        return {"id": self.id, "available": self.available, "reason": self.reason,
                "backend": self.backend, "quant": self.quant}


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


def _has_weights(folder: Path) -> bool:
    return any(p.suffix in WEIGHT_SUFFIXES for p in folder.rglob("*") if p.is_file())


def _looks_like_path(model_id: str) -> bool:
    return model_id.startswith((".", "/", "~")) or os.sep in model_id.strip("/").replace(
        "/", "", 1) or Path(model_id).expanduser().exists()


def locate_weights(model_id: str) -> tuple[Path | None, str]:
    """Find a model's files without downloading anything.

    Args:
        model_id: a local folder, or a Hugging Face repo id looked up in the local cache.

    Returns:
        ``(folder, "")`` when the weights are here, else ``(None, reason)``.
    """
    if not model_id:
        return None, "no model configured"
    if _looks_like_path(model_id):
        folder = Path(model_id).expanduser()
        if not folder.is_dir():
            return None, f"folder {model_id} does not exist"
        if not _has_weights(folder):
            return None, f"folder {model_id} holds no weight files"
        return folder, ""
    try:
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(repo_id=model_id, local_files_only=True))
    except Exception as exc:  # noqa: BLE001 - any lookup failure means "not here"
        offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false")
        why = "offline mode, " if offline else ""
        log.debug("cache lookup of %s failed: %s", model_id, exc)
        return None, (f"{model_id} is not in the local Hugging Face cache ({why}Loupe never "
                      "downloads weights; fetch them with `hf download` first)")
    if not _has_weights(folder):
        return None, f"the cached copy of {model_id} holds no weight files"
    return folder, ""


def model_class_name(folder: Path) -> str:
    """The class a model folder declares (``model_index.json`` or ``config.json``), or ''."""
    for name, key in (("model_index.json", "_class_name"), ("config.json", "architectures")):
        path = folder / name
        if path.is_file():
            try:
                value = json.loads(path.read_text()).get(key, "")
            except (OSError, ValueError):
                return ""
            if isinstance(value, list):
                value = value[0] if value else ""
            return str(value)
    return ""


def _lpips_status(net: str) -> tuple[bool, str]:
    import torch

    names = {"alex": "alexnet-owt-", "vgg": "vgg16-", "squeeze": "squeezenet1_1-"}
    if net not in names:
        return False, f"unknown LPIPS network {net!r} (alex, vgg or squeeze)"
    checkpoints = Path(torch.hub.get_dir()) / "checkpoints"
    if checkpoints.is_dir() and any(p.name.startswith(names[net]) for p in checkpoints.iterdir()):
        return True, ""
    return False, f"torchvision {net} weights are not in {checkpoints} (never downloaded)"


# --------------------------------------------------------------------------- device/dtype


def pick_device(settings: Settings | None = None) -> str:
    """``LOUPE_DEVICE`` when set to something other than ``auto``, else cuda/mps/cpu."""
    import torch

    wanted = (settings or get_settings()).device
    if wanted and wanted != "auto":
        return wanted
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def pick_dtype(device: str) -> Any:
    """``LOUPE_DTYPE`` or, by default, bfloat16 on CUDA and float32 elsewhere."""
    import torch

    wanted = get_settings().dtype
    table = {"float16": torch.float16, "fp16": torch.float16, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float32": torch.float32, "fp32": torch.float32}
    if wanted in table:
        return table[wanted]
    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def memory_budget(device: str) -> int | None:
    """Bytes of model weights kept loaded at once, or None for no limit."""
    value = get_settings().memory_budget_gb
    if value is not None:
        return int(value * 1024**3)
    if device.startswith("cuda"):
        import torch

        try:
            return int(0.9 * torch.cuda.get_device_properties(0).total_memory)
        except (RuntimeError, AssertionError):  # ZeroGPU outside a GPU call
            return None
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


def _load_pipeline(role: str, folder: Path, device: str, dtype: Any, quant: str) -> LoadedModel:
    import torch
    from diffusers import DiffusionPipeline

    kwargs: dict[str, Any] = {"dtype": dtype, "local_files_only": True}
    index = json.loads((folder / "model_index.json").read_text())
    heavy = [name for name in HEAVY_COMPONENTS if index.get(name, [None])[0]]
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
                       {"offload": offload if device.startswith("cuda") else "none"})


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


def _load_transformers(role: str, folder: Path, device: str, dtype: Any,
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
    processor = processor_cls.from_pretrained(folder, local_files_only=True)
    return LoadedModel(role, str(folder), model, processor, device, dtype, quant,
                       module_nbytes(model))


def _load_lpips(role: str, net: str, device: str) -> LoadedModel:
    import lpips

    model = lpips.LPIPS(net=net, verbose=False).to(device).eval()
    return LoadedModel(role, net, model, None, device, None, "none", module_nbytes(model))


# --------------------------------------------------------------------------- manager


class ModelManager:
    """Per-role availability, lazy loading, quantization and unloading under a budget.

    One instance per process (``get_manager()``): a model is loaded once and shared by
    every session. Settings are re-read on each call, so a changed ``LOUPE_MODEL_<ROLE>``
    takes effect on the next ``load``.
    """

    def __init__(self) -> None:
        self._loaded: OrderedDict[str, LoadedModel] = OrderedDict()
        self._keys: dict[str, tuple[str, str]] = {}
        self._lock = threading.RLock()

    # -- status ---------------------------------------------------------------------
    def role_status(self, role: str) -> RoleStatus:
        """Whether ``role`` can load here, and the backend that serves it either way.

        Raises:
            KeyError: unknown role.
        """
        if role not in ROLES:
            raise KeyError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
        settings = get_settings()
        model_id = settings.models.get(role, "")
        quant = settings.quantization.get(role, "none") or "none"
        if role == "lpips":
            ok, reason = _lpips_status(model_id)
            return RoleStatus(role, model_id, ok, reason,
                              f"lpips-{model_id}" if ok else FALLBACKS[role], None, quant)
        folder, reason = locate_weights(model_id)
        if folder is not None:
            reason = _quant_problem(quant, pick_device(settings))
        available = folder is not None and not reason
        backend = (model_class_name(folder) or model_id) if available else _fallback(role, settings)
        return RoleStatus(role, model_id, available, reason, backend, folder, quant)

    def available(self, role: str) -> bool:
        """Shorthand for ``role_status(role).available``."""
        return self.role_status(role).available

    def status(self) -> dict[str, dict[str, Any]]:
        """Every role's ``{id, available, reason, backend, quant, loaded}``."""
        out = {}
        for role in ROLES:
            entry = self.role_status(role).as_dict()
            entry["loaded"] = role in self._loaded
            out[role] = entry
        return out

    # -- loading --------------------------------------------------------------------
    def load(self, role: str) -> LoadedModel:
        """The loaded model for ``role`` (loaded on first use, then cached).

        Raises:
            ModelUnavailable: the weights are absent, or the quantization cannot run here.
        """
        status = self.role_status(role)
        if not status.available:
            raise ModelUnavailable(role, status.reason)
        key = (status.id, status.quant)
        with self._lock:
            if role in self._loaded and self._keys.get(role) == key:
                self._loaded.move_to_end(role)
                return self._loaded[role]
            self.unload(role)
            device = pick_device()
            self._make_room(role, status, device)
            started = time.perf_counter()
            try:
                loaded = self._load(status, device)
            except ModelUnavailable:
                raise
            except Exception as exc:
                raise ModelUnavailable(role, f"loading {status.id} failed: {exc}") from exc
            log.info("loaded %s (%s) on %s in %.1f s, %.0f MB", role, status.id, device,
                     time.perf_counter() - started, loaded.nbytes / 2**20)
            self._loaded[role] = loaded
            self._keys[role] = key
            return loaded

    def _load(self, status: RoleStatus, device: str) -> LoadedModel:
        dtype = pick_dtype(device)
        if status.role == "lpips":
            return _load_lpips(status.role, status.id, device)
        assert status.folder is not None
        if status.role in PIPELINE_ROLES:
            return _load_pipeline(status.role, status.folder, device, dtype, status.quant)
        return _load_transformers(status.role, status.folder, device, dtype, status.quant)

    def _make_room(self, role: str, status: RoleStatus, device: str) -> None:
        budget = memory_budget(device)
        if budget is None:
            return
        need = _disk_size(status.folder) if status.folder else 0
        while self._loaded and self.loaded_bytes() + need > budget:
            victim = next(iter(self._loaded))
            log.info("unloading %s to stay under the %.1f GB budget", victim, budget / 1024**3)
            self.unload(victim)

    def loaded_bytes(self) -> int:
        """Bytes of weights currently loaded, over all roles."""
        return sum(m.nbytes for m in self._loaded.values())

    def loaded_roles(self) -> list[str]:
        """Loaded roles, least recently used first."""
        return list(self._loaded)

    def unload(self, role: str) -> bool:
        """Drop ``role``'s model and free its memory; False when it was not loaded."""
        with self._lock:
            loaded = self._loaded.pop(role, None)
            self._keys.pop(role, None)
        if loaded is None:
            return False
        del loaded
        _free_memory()
        return True

    def unload_all(self) -> None:
        """Drop every loaded model."""
        for role in list(self._loaded):
            self.unload(role)


def _fallback(role: str, settings: Settings) -> str:
    if role == "vlm" and settings.llm_base_url:
        return "openai-compatible"
    return FALLBACKS[role]


def _quant_problem(quant: str, device: str) -> str:
    if quant not in QUANT_MODES:
        return f"unknown quantization {quant!r} (use nf4, int8 or none)"
    if quant == "nf4" and not device.startswith("cuda"):
        return ("NF4 quantization (bitsandbytes) needs a CUDA GPU and this machine runs on "
                f"{device}; set the role's LOUPE_QUANT_* to int8 or none")
    return ""


def _disk_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*")
               if p.is_file() and p.suffix in WEIGHT_SUFFIXES)


def _free_memory() -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001 - freeing memory is best effort
        pass


_MANAGER: ModelManager | None = None
_MANAGER_LOCK = threading.Lock()


def get_manager() -> ModelManager:
    """The process-wide ``ModelManager``."""
    global _MANAGER
    with _MANAGER_LOCK:
        if _MANAGER is None:
            _MANAGER = ModelManager()
        return _MANAGER


def require(role: str) -> LoadedModel:
    """``get_manager().load(role)``: the loaded model, or ``ModelUnavailable``."""
    return get_manager().load(role)


def main(argv: Sequence[str] | None = None,
         write: Callable[[str], Any] | None = None) -> int:
    """``python -m pipelines models``: print one JSON object, per role its status.

    Args:
        argv: command-line arguments after ``models`` (``--role NAME`` to show some).
        write: where the JSON goes (stdout by default).

    Returns:
        The exit code (0).
    """
    parser = argparse.ArgumentParser(prog="python -m pipelines models",
                                     description="Which model serves each role, offline.")
    parser.add_argument("--role", action="append", choices=ROLES,
                        help="only these roles (repeatable)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    manager = get_manager()
    roles = args.role or list(ROLES)
    report = {role: manager.role_status(role).as_dict() for role in roles}
    if not args.role:   # the embedded perception's roles: files from registry packages
        from pipelines.perception.store import role_status  # keeps this module light

        report.update({f"perception:{name}": info.as_dict()
                       for name, info in role_status().items()})
    (write or sys.stdout.write)(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
