"""GPU entry points that run the same on a ZeroGPU Space, a GPU workstation and a CPU box.

On a ZeroGPU Space (``SPACES_ZERO_GPU`` set by the platform) ``gpu_task`` is
``spaces.GPU(duration=…)``: each call runs in a worker process *forked* from the app, which
holds a GPU slice for the call only. Whatever the function changes in that process (a
session, a cache, a global) is lost when it returns; only its return value comes back. So a
GPU entry point must be a pure function of picklable arguments that returns its result —
the model inference of an edit (``pipelines.editors.diffusion.run_pipeline``), a VLM's
generation (``pipelines.llm.vlm_generate``) — and the caller updates its state afterwards,
outside the GPU call. UI callbacks are never GPU entry points.

``duration`` may be a callable taking the function's own arguments (as ``spaces.GPU``
accepts): the slice asked for then follows the workload (image size, steps), capped by
``LOUPE_GPU_SECONDS``. Elsewhere ``gpu_task`` is a thin wrapper that frees the CUDA
allocator's cached blocks after the call, so nothing holds GPU memory between calls except
the loaded weights (the model manager loads those once per process).

On a Space, ``app.py`` must ``import spaces`` before anything initialises CUDA.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import Any, TypeVar

from pipelines.config import get_settings

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
#: seconds, or a callable of the decorated function's arguments that returns seconds
Duration = int | float | Callable[..., int | float]
#: the shortest slice asked for
MIN_SECONDS = 10


def on_zerogpu() -> bool:
    """True on a Hugging Face ZeroGPU Space."""
    return get_settings().zero_gpu


def on_space() -> bool:
    """True on any Hugging Face Space (``SPACE_ID`` is set there)."""
    return bool(get_settings().space_id)


def release_cuda_cache() -> None:
    """Return the CUDA allocator's cached, unused blocks (no-op without CUDA)."""
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
    except Exception as exc:  # noqa: BLE001 - best effort
        log.debug("could not empty the CUDA cache: %s", exc)


def gpu_seconds(duration: Duration, *args: Any, **kwargs: Any) -> int:
    """The slice to ask for one call: ``duration`` (called with the call's arguments when it
    is callable), rounded up, at least ``MIN_SECONDS`` and at most ``LOUPE_GPU_SECONDS``."""
    value = duration(*args, **kwargs) if callable(duration) else duration
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"a GPU duration must be a positive number of seconds, got {value!r}")
    return int(min(get_settings().gpu_seconds, max(MIN_SECONDS, math.ceil(seconds))))


def gpu_task(duration: Duration = 60) -> Callable[[F], F]:
    """Decorator for a pure function that needs the GPU for about ``duration`` seconds.

    Args:
        duration: seconds, or a callable that gets the decorated function's arguments and
            returns the seconds this call needs (see ``gpu_seconds``).

    Returns:
        ``spaces.GPU(duration=…)`` on ZeroGPU; elsewhere a wrapper that calls the function
        and then releases cached CUDA memory. Either way the wrapper has
        ``gpu_seconds(*args, **kwargs)``, the slice a call with those arguments asks for.
    """
    if not callable(duration) and (not isinstance(duration, int | float) or duration <= 0):
        raise ValueError(f"duration must be positive seconds or a callable, got {duration!r}")

    def seconds_for(*args: Any, **kwargs: Any) -> int:
        return gpu_seconds(duration, *args, **kwargs)

    def decorate(fn: F) -> F:
        if on_zerogpu():
            import spaces

            decorated = spaces.GPU(duration=seconds_for)(fn)
        else:
            @functools.wraps(fn)
            def decorated(*args: Any, **kwargs: Any) -> Any:
                try:
                    return fn(*args, **kwargs)
                finally:
                    release_cuda_cache()

        decorated.gpu_duration = duration  # type: ignore[attr-defined]
        decorated.gpu_seconds = seconds_for  # type: ignore[attr-defined]
        return decorated  # type: ignore[return-value]

    return decorate
