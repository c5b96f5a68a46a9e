"""GPU entry points that run the same on a ZeroGPU Space, a GPU workstation and a CPU box.

On a ZeroGPU Space (``SPACES_ZERO_GPU`` set by the platform) ``gpu_task`` is
``spaces.GPU(duration=…)``: the function gets a GPU slice for the call only. Elsewhere it is
a thin wrapper that frees the CUDA allocator's cached blocks after the call, so nothing
holds GPU memory between calls except the loaded weights (the model manager loads those
once per process).

On a Space, ``app.py`` should ``import spaces`` before anything initialises CUDA.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pipelines.config import get_settings

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


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


def gpu_task(duration: int = 60) -> Callable[[F], F]:
    """Decorator for a function that needs the GPU for about ``duration`` seconds.

    Args:
        duration: the longest the call may hold a ZeroGPU slice (seconds).

    Returns:
        ``spaces.GPU(duration=duration)`` on ZeroGPU; elsewhere a wrapper that calls the
        function and then releases cached CUDA memory.
    """
    if duration <= 0:
        raise ValueError(f"duration must be positive, got {duration}")

    def decorate(fn: F) -> F:
        if on_zerogpu():
            import spaces

            return spaces.GPU(duration=duration)(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                release_cuda_cache()

        wrapper.gpu_duration = duration  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
