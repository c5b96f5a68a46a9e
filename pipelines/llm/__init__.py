"""The LLM/VLM protocol: ask for JSON, validate it, re-ask with the error, fail clearly.

Every backend answers ``complete_json(system, messages, images, schema) -> dict``. The
answer is data: it is parsed, checked against the JSON schema (and an optional extra
check, e.g. ``agent.actions.parse_actions``) and, when it fails, the model is asked again
with the problem spelled out. After ``attempts`` failures an ``LLMError`` says what went
wrong. Nothing a model writes is ever executed.

Model backends (the embedded, rule-based stand-in lives in ``agent.brain.llm``):

* ``OpenAICompatible`` — any ``/v1/chat/completions`` endpoint (vLLM, Ollama, llama.cpp
  server, hosted APIs); images travel as PNG data URLs; timeouts and exponential backoff
  on 429/5xx/slow answers; a ``CircuitBreaker`` per endpoint: after a failure the
  endpoint is left alone for ``LOUPE_LLM_COOLDOWN_S`` and the embedded fallback serves,
  so an edit never waits on a dead endpoint more than once per cooldown.
* ``TransformersVLM`` — Qwen2.5-VL / Qwen3-VL through ``AutoModelForImageTextToText``.

Modules: ``validation`` (the protocol, JSON parsing, schema checks, the re-asking loop),
``remote`` (the endpoint client and its breaker), ``local`` (the local VLM), ``choice``
(which backend serves). The names below are the package's API.
"""

from pipelines.llm.choice import describe, get_model_llm, llm_configured, local_vlm_available
from pipelines.llm.local import ImageOnlyProcessor, TransformersVLM, vlm_generate
from pipelines.llm.remote import (
    CircuitBreaker,
    EndpointDown,
    OpenAICompatible,
    breaker_for,
    reset_breakers,
)
from pipelines.llm.validation import (
    LLM,
    AnswerError,
    Check,
    LLMError,
    RetryingLLM,
    extract_json,
    image_data_url,
    normalise_schema,
    retry_message,
    schema_instruction,
    text_of,
    validate_answer,
)

__all__ = [
    "LLM", "AnswerError", "Check", "CircuitBreaker", "EndpointDown", "ImageOnlyProcessor",
    "LLMError", "OpenAICompatible", "RetryingLLM", "TransformersVLM", "breaker_for",
    "describe", "extract_json", "get_model_llm", "image_data_url", "llm_configured",
    "local_vlm_available", "normalise_schema", "reset_breakers", "retry_message",
    "schema_instruction", "text_of", "validate_answer", "vlm_generate",
]
