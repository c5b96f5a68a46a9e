"""The model manager: which weights serve each role, whether they are here, and loading.

Every model role (``config.ROLES``: the editors, the VLM planner/critic, grounding,
segmentation, the metric models and the upscaler) loads here and nowhere else, so one place
decides where weights come from, their dtype, their quantization and the memory they may
take. Each role maps to a model id (``LOUPE_MODEL_<ROLE>``): a local folder or a Hugging
Face repo id. Where the weights come from is ``pipelines.weights``'s decision: local files
first (a folder, or the local Hugging Face cache), a download only where allowed (on a
Space by default). A role whose weights cannot be had is reported unavailable with the
reason, and the caller falls back to its embedded backend (the classical editor, the
embedded localiser, the rule-based LLM, Lanczos resampling).

Loading is lazy and cached; quantization is per role (``LOUPE_QUANT_<ROLE>``): ``auto``
(the default) keeps the published dtype when the model fits the memory budget and otherwise
quantizes it — NF4 through bitsandbytes on CUDA, int8 weight-only through torchao on CPU —
or ``nf4``, ``int8``, ``none`` explicitly. The tables, records and loaders live in
``pipelines.model_loading``; the settings they use (all read in ``pipelines.config``):

=============================  ==========================================================
``LOUPE_DTYPE``                ``auto`` (the model card's dtype on CUDA, float32 on CPU),
                               ``float16``, ``bfloat16`` or ``float32``
``LOUPE_OFFLOAD``              ``none`` (default), ``model`` or ``sequential``: accelerate
                               CPU offload of diffusers pipelines on CUDA
``LOUPE_MEMORY_BUDGET_GB``     model weights kept loaded at once (least recently used
                               unloaded first); default: 90% of the GPU's memory on CUDA,
                               half the RAM on CPU
=============================  ==========================================================

On a ZeroGPU Space only the roles whose inference runs inside a GPU entry point
(``GPU_ROLES``) are placed on CUDA; the others run in the main process, on the CPU.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipelines.config import ROLES, Settings, get_settings
from pipelines.model_cards import card_for
from pipelines.model_loading import (
    FALLBACKS,
    GPU_ROLES,
    PIPELINE_ROLES,
    QUANT_MODES,
    LoadedModel,
    ModelUnavailable,
    RoleStatus,
    heavy_components,
    load_lpips,
    load_pipeline,
    load_transformers,
    locate_weights,
    lpips_status,
    memory_budget,
    module_nbytes,
    pick_device,
    pick_dtype,
)
from pipelines.ncnn import PACKAGE_MODELS, load_package_model, package_model_problem
from pipelines.weights import (
    WEIGHT_SUFFIXES,
    HubError,
    class_name_of,
    download,
    downloads_allowed,
    estimate_bytes,
    has_variant,
    locate,
    remote_class_name,
)

log = logging.getLogger(__name__)

__all__ = ["FALLBACKS", "GPU_ROLES", "LoadedModel", "ModelManager", "ModelUnavailable",
           "RoleStatus", "WEIGHT_SUFFIXES", "get_manager", "locate_weights", "main",
           "memory_budget", "pick_device", "pick_dtype", "require"]

# --------------------------------------------------------------------------- manager


class ModelManager:
    """Per-role availability, lazy loading, quantization and unloading under a budget.

    One instance per process (``get_manager()``): a model is loaded once and shared by
    every session. Settings are re-read on each call, so a changed ``LOUPE_MODEL_<ROLE>``
    takes effect on the next ``load``. A download that failed (gated, missing) is
    remembered, so the status reports it instead of retrying on every call.
    """

    def __init__(self) -> None:
        self._loaded: OrderedDict[str, LoadedModel] = OrderedDict()
        self._keys: dict[str, tuple[str, str, str]] = {}
        self._failures: dict[str, str] = {}
        self._remote: dict[str, str] = {}
        self._estimates: dict[tuple[str, int, str, str], int] = {}
        self._lock = threading.RLock()

    # -- status ---------------------------------------------------------------------
    def role_status(self, role: str, model_id: str | None = None) -> RoleStatus:
        """Whether ``role`` can load here, and the backend that serves it either way.

        Args:
            role: one of ``config.ROLES``.
            model_id: this id instead of the configured ``LOUPE_MODEL_<ROLE>``.

        Raises:
            KeyError: unknown role.
        """
        if role not in ROLES:
            raise KeyError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
        settings = get_settings()
        model_id = settings.models.get(role, "") if model_id is None else model_id
        wanted = settings.quantization.get(role, "auto") or "auto"
        if role == "lpips":
            ok, reason, backend = lpips_status(model_id)
            return RoleStatus(role, model_id, ok, reason, backend, None, "none",
                              "package" if ok else "")
        if role == "upscaler":
            return _upscaler_status(model_id)
        fallback = _fallback(role, settings)
        if model_id in self._failures:
            return RoleStatus(role, model_id, False, self._failures[model_id], fallback,
                              None, wanted, "")
        found = locate(model_id, settings)
        if found.folder is None and found.source != "download":
            # nothing to load: answered without importing torch (a status check on the
            # embedded default must not cost the app a few hundred MB)
            return RoleStatus(role, model_id, False, found.reason, fallback, None, wanted, "")
        device = pick_device(settings, role)
        if found.source == "download":
            return self._remote_status(role, model_id, wanted, device, fallback)
        quant = self._resolve_quant(role, wanted, found.folder, device)
        reason = _quant_problem(quant, device)
        backend = (class_name_of(found.folder) or model_id) if not reason else fallback
        return RoleStatus(role, model_id, not reason, reason, backend, found.folder, quant,
                          found.source)

    def _remote_status(self, role: str, model_id: str, wanted: str, device: str,
                       fallback: str) -> RoleStatus:
        if model_id not in self._remote:
            try:
                self._remote[model_id] = remote_class_name(model_id, get_settings())
            except HubError as exc:
                self._failures[model_id] = str(exc)
                return RoleStatus(role, model_id, False, str(exc), fallback, None, wanted, "")
        reason = _quant_problem(wanted, device)
        backend = self._remote[model_id] if not reason else fallback
        return RoleStatus(role, model_id, not reason, reason, backend, None, wanted, "download")

    def _resolve_quant(self, role: str, wanted: str, folder: Path, device: str) -> str:
        """``auto`` → ``none`` when the model fits the budget, else nf4 (CUDA) / int8."""
        if wanted != "auto":
            return wanted
        budget = memory_budget(device)
        if budget is None:
            return "none"
        need = self.estimate(role, folder, device, "none")
        if need <= budget:
            return "none"
        return "nf4" if device.startswith("cuda") else "int8"

    def estimate(self, role: str, folder: Path, device: str, quant: str) -> int:
        """Bytes ``role``'s weights in ``folder`` take loaded on ``device`` with ``quant``."""
        pipeline = role in PIPELINE_ROLES
        card = card_for(class_name_of(folder)) if pipeline else None
        dtype_bytes = pick_dtype(device, card.dtype if card else None).itemsize
        key = (str(folder), dtype_bytes, quant, device)
        if key not in self._estimates:
            self._estimates[key] = estimate_bytes(
                folder, dtype_bytes=dtype_bytes, quant=quant,
                variant=card.variant if card and has_variant(folder, card.variant) else None,
                quantized=tuple(heavy_components(folder)) if pipeline else None)
        return self._estimates[key]

    def available(self, role: str) -> bool:
        """Shorthand for ``role_status(role).available``."""
        return self.role_status(role).available

    def status(self) -> dict[str, dict[str, Any]]:
        """Every role's ``{id, available, reason, backend, quant, source, loaded}``."""
        out = {}
        for role in ROLES:
            entry = self.role_status(role).as_dict()
            entry["loaded"] = role in self._loaded
            out[role] = entry
        return out

    # -- loading --------------------------------------------------------------------
    def load(self, role: str, model_id: str | None = None) -> LoadedModel:
        """The loaded model for ``role`` (loaded on first use, then cached).

        Args:
            role: one of ``config.ROLES``.
            model_id: this id instead of the configured one (it replaces the role's model).

        Raises:
            ModelUnavailable: the weights are absent, gated, or the quantization cannot run.
        """
        status = self.role_status(role, model_id)
        if not status.available:
            raise ModelUnavailable(role, status.reason)
        device = pick_device(get_settings(), role)
        key = (status.id, status.quant, device)
        with self._lock:
            if role in self._loaded and self._keys.get(role) == key:
                self._loaded.move_to_end(role)
                return self._loaded[role]
            self.unload(role)
            if status.source == "download":
                status = self._download(status)
            self._make_room(role, status, device)
            started = time.perf_counter()
            loaded = self._load_or_refetch(status, device)
            log.info("loaded %s (%s) on %s in %.1f s, %.0f MB", role, status.id, device,
                     time.perf_counter() - started, loaded.nbytes / 2**20)
            self._loaded[role] = loaded
            self._keys[role] = key
            return loaded

    def _download(self, status: RoleStatus) -> RoleStatus:
        pipeline = status.role in PIPELINE_ROLES
        variant = card_for(status.backend).variant if pipeline else None
        log.info("downloading %s for %s", status.id, status.role)
        try:
            download(status.id, get_settings(), pipeline=pipeline, variant=variant)
        except HubError as exc:
            self._failures[status.id] = str(exc)
            raise ModelUnavailable(status.role, str(exc)) from exc
        fresh = self.role_status(status.role, status.id)
        if not fresh.available or fresh.folder is None:
            raise ModelUnavailable(status.role, fresh.reason or "the download left no weights")
        return fresh

    def _load_or_refetch(self, status: RoleStatus, device: str) -> LoadedModel:
        try:
            return self._load(status, device)
        except ModelUnavailable:
            raise
        except Exception as exc:
            message = _clean(str(exc), status)
            if status.source != "cache" or not downloads_allowed(get_settings()):
                raise ModelUnavailable(status.role,
                                       f"loading {status.id} failed: {message}") from exc
            log.info("cached %s is incomplete (%s); downloading the rest", status.id, message)
        status = self._download(status)  # a preloaded subset: fetch what is missing
        try:
            return self._load(status, device)
        except Exception as exc:
            raise ModelUnavailable(status.role, f"loading {status.id} failed: "
                                                f"{_clean(str(exc), status)}") from exc

    def _load(self, status: RoleStatus, device: str) -> LoadedModel:
        if status.role == "lpips":
            return load_lpips(status.role, status.id, device)
        if status.role == "upscaler":
            model = load_package_model(status.id, device)
            return LoadedModel(status.role, status.id, model, None, device, None, "none",
                               module_nbytes(model), {"scale": model.scale})
        assert status.folder is not None
        if status.role in PIPELINE_ROLES:
            dtype = pick_dtype(device, card_for(status.backend).dtype)
            return load_pipeline(status.role, status.folder, device, dtype, status.quant)
        dtype = pick_dtype(device)
        return load_transformers(status.role, status.folder, device, dtype, status.quant)

    def _make_room(self, role: str, status: RoleStatus, device: str) -> None:
        budget = memory_budget(device)
        if budget is None:
            return
        need = (self.estimate(role, status.folder, device, status.quant)
                if status.folder else 0)
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

    def peek(self, role: str, model_id: str | None = None) -> LoadedModel | None:
        """The loaded model of ``role`` (configured as ``model_id`` when given), without
        loading or looking anything up; None when it is not loaded."""
        loaded = self._loaded.get(role)
        if loaded is None or (model_id is not None and self._keys[role][0] != model_id):
            return None
        return loaded

    def adopt(self, role: str, model_id: str, loaded: LoadedModel) -> None:
        """Serve ``role`` with a model built elsewhere (a benchmark's in-memory pipeline),
        under the name ``model_id``, as if the manager had loaded it."""
        with self._lock:
            self.unload(role)
            self._loaded[role] = loaded
            self._keys[role] = (model_id, loaded.quant, loaded.device)

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
        """Drop every loaded model (and forget remembered download failures)."""
        for role in list(self._loaded):
            self.unload(role)
        self._failures.clear()
        self._remote.clear()


def _clean(message: str, status: RoleStatus) -> str:
    """An error message without this server's paths (the model id stands for its folder)."""
    if status.folder is not None:
        message = message.replace(str(status.folder), status.id)
    return message.splitlines()[0][:300] if message else "unknown error"


def _upscaler_status(model_id: str) -> RoleStatus:
    if model_id in ("", "lanczos"):
        return RoleStatus("upscaler", model_id or "lanczos", True, "", "lanczos")
    if model_id not in PACKAGE_MODELS:
        return RoleStatus("upscaler", model_id, False,
                          f"unknown upscaler {model_id!r}; known: lanczos, "
                          f"{', '.join(PACKAGE_MODELS)}", FALLBACKS["upscaler"])
    problem = package_model_problem(model_id)
    return RoleStatus("upscaler", model_id, not problem, problem,
                      model_id if not problem else FALLBACKS["upscaler"], None, "none",
                      "package" if not problem else "")


def _fallback(role: str, settings: Settings) -> str:
    if role == "vlm" and settings.llm_base_url:
        return "openai-compatible"
    return FALLBACKS[role]


def _quant_problem(quant: str, device: str) -> str:
    if quant not in QUANT_MODES:
        return f"unknown quantization {quant!r} (use auto, nf4, int8 or none)"
    if quant == "nf4" and not device.startswith("cuda"):
        return ("NF4 quantization (bitsandbytes) needs a CUDA GPU and this machine runs on "
                f"{device}; set the role's LOUPE_QUANT_* to int8, auto or none")
    return ""


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
                                     description="Which model serves each role, and why.")
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
