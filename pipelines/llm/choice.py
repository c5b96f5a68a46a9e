"""Which model backend serves: an endpoint, else a local VLM, else none (the agent's
rule-based stand-in then serves, see ``agent.brain.llm``)."""

from __future__ import annotations

from typing import Any

from pipelines.config import Settings, get_settings
from pipelines.llm.local import TransformersVLM
from pipelines.llm.remote import OpenAICompatible
from pipelines.llm.validation import LLM
from pipelines.models import get_manager


def describe(llm: Any) -> str:
    """A short honest label for status lines: backend and model."""
    if isinstance(llm, OpenAICompatible):
        left = llm.breaker.remaining
        when = f"{left:.0f} s" if left < 120 else f"{left / 60:.0f} min"
        down = f" (unavailable; embedded fallback for {when})" if left else ""
        return f"{llm.name} {llm.model} @ {llm.endpoint}{down}"
    if isinstance(llm, TransformersVLM):
        return f"{llm.name} {llm.model_id}"
    return str(getattr(llm, "name", type(llm).__name__))


def local_vlm_available(settings: Settings) -> bool:
    """Whether the ``vlm`` role's model can load here (the model manager's answer)."""
    model_id = (settings.models or {}).get("vlm", "")
    if not model_id:
        return False
    return get_manager().role_status("vlm", model_id).available


def get_model_llm(settings: Settings | None = None) -> LLM | None:
    """The configured model backend: an endpoint if ``LOUPE_LLM_BASE_URL`` is set, else a
    local VLM whose weights are present, else None.

    Args:
        settings: defaults to ``get_settings()``.

    Returns:
        An object following the ``LLM`` protocol, or None when no model is configured.
    """
    settings = settings or get_settings()
    if settings.llm_base_url:
        return OpenAICompatible(settings.llm_base_url, settings.llm_model or "default",
                                settings.llm_api_key, timeout=settings.llm_timeout_s,
                                connect_timeout=settings.llm_connect_timeout_s,
                                cooldown_s=settings.llm_cooldown_s)
    if local_vlm_available(settings):
        return TransformersVLM(settings.models["vlm"], device=settings.device)
    return None


def llm_configured(settings: Settings | None = None) -> bool:
    """True when ``get_model_llm`` would return a model backend."""
    settings = settings or get_settings()
    return bool(settings.llm_base_url) or local_vlm_available(settings)
