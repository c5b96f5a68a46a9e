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
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import unquote, urlsplit

import numpy as np
from jsonschema import Draft202012Validator

from pipelines.arrays import rgb_array
from pipelines.config import Settings, get_settings
from pipelines.gpu import gpu_task
from pipelines.images import downscale
from pipelines.models import ModelUnavailable, get_manager
from pipelines.redact import redact, redact_url

log = logging.getLogger(__name__)

#: An extra check run on a schema-valid answer; raise ``ValueError`` to have it re-asked.
Check = Callable[[dict[str, Any]], Any]


class LLMError(RuntimeError):
    """A backend gave no usable answer (unreachable, or invalid after every retry).

    ``quiet`` is True when the failure was already reported (an open circuit): callers
    fall back without warning again.
    """

    quiet = False


class AnswerError(ValueError):
    """One answer that is not the JSON asked for; the message is fed back to the model."""


@runtime_checkable
class LLM(Protocol):
    """What planners and critics call; see the module doc."""

    name: str

    def complete_json(self, system: str, messages: list[dict[str, Any]],
                      images: list[np.ndarray] | None, schema: dict[str, Any], *,
                      check: Check | None = None) -> dict[str, Any]:
        ...


# --- parsing and validation (shared by every backend) ---------------------------------

def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer (code fences and chatter around it allowed).

    Raises:
        AnswerError: when there is no JSON object in ``text``.
    """
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("the answer was empty; reply with one JSON object")
    text = text.strip()
    if len(text) > 200_000:
        raise AnswerError(f"the answer is too long ({len(text)} characters)")
    decoder = json.JSONDecoder()
    start = text.find("{")
    last_err = "no '{' found"
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as err:
            last_err = f"{err.msg} at character {err.pos}"
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise AnswerError(f"the answer is not a JSON object ({last_err})")


def normalise_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with nested ``$defs`` moved to the root, so ``#/$defs/…`` refs resolve.

    (Pydantic puts a model's ``$defs`` inside the model's own schema; embedding that under
    ``items`` leaves its ``#/$defs/X`` references pointing at nothing.)
    """
    defs: dict[str, Any] = {}

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("$defs"), dict):
                for name, sub in node["$defs"].items():
                    defs.setdefault(name, strip(sub))
            return {k: strip(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    out = strip(schema)
    if defs:
        out["$defs"] = defs
    return out


def validate_answer(data: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
    """Check ``data`` against ``schema``; the error lists up to five problems with paths.

    Raises:
        AnswerError: with every problem found, readable by a person and by the model.
    """
    if not isinstance(data, dict):
        raise AnswerError(f"expected a JSON object, got {type(data).__name__}")
    if not schema:
        return data
    errors = sorted(Draft202012Validator(normalise_schema(schema)).iter_errors(data),
                    key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        shown = []
        for err in errors[:5]:
            where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
            shown.append(f"at {where}: {err.message[:200]}")
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise AnswerError("the JSON does not follow the schema: " + "; ".join(shown) + more)
    return data


def schema_instruction(schema: dict[str, Any] | None) -> str:
    """The sentence appended to every system prompt: answer JSON following ``schema``."""
    if not schema:
        return "Answer with one JSON object and nothing else."
    compact = json.dumps(normalise_schema(schema), separators=(",", ":"))
    return ("Answer with one JSON object and nothing else (no prose, no code fences). "
            f"It must follow this JSON schema: {compact}")


def retry_message(error: str) -> dict[str, Any]:
    """The user turn that feeds a validation error back to the model."""
    return {"role": "user", "content": (
        f"Your previous answer was rejected: {error}. Reply again with one corrected JSON "
        "object only.")}


class RetryingLLM:
    """Base for model backends: ``_generate`` one raw answer; this class validates and
    re-asks. Subclasses set ``name`` and implement ``_generate``."""

    name = "base"

    def __init__(self, attempts: int = 3) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.attempts = attempts

    def _generate(self, system: str, messages: list[dict[str, Any]],
                  images: list[np.ndarray] | None) -> str:
        raise NotImplementedError

    def complete_json(self, system: str, messages: list[dict[str, Any]],
                      images: list[np.ndarray] | None, schema: dict[str, Any], *,
                      check: Check | None = None) -> dict[str, Any]:
        """Ask until the answer is valid JSON that follows ``schema`` and passes ``check``.

        Args:
            system: the system prompt (the schema sentence is appended here).
            messages: chat turns ``{"role": "user"|"assistant", "content": str}``.
            images: RGB/RGBA uint8 images the model sees with the last user turn.
            schema: the JSON schema of the answer.
            check: optional extra validation; a ``ValueError`` from it is re-asked too.

        Returns:
            The validated JSON object.

        Raises:
            LLMError: unreachable backend, or no valid answer after ``attempts`` tries.
        """
        full_system = f"{system.rstrip()}\n\n{schema_instruction(schema)}"
        convo = [dict(m) for m in messages]
        problem = ""
        for attempt in range(1, self.attempts + 1):
            raw = self._generate(full_system, convo, images)
            try:
                data = validate_answer(extract_json(raw), schema)
                if check is not None:
                    check(data)
                return data
            except ValueError as err:  # AnswerError, ActionValidationError, OperationError…
                problem = str(err)[:1500]
                log.info("%s answer %d/%d rejected: %s", self.name, attempt, self.attempts,
                         problem)
                convo += [{"role": "assistant", "content": (raw or "")[:4000]},
                          retry_message(problem)]
        raise LLMError(f"{self.name} gave no valid answer after {self.attempts} attempts; "
                       f"last problem: {problem}")


# --- images -----------------------------------------------------------------------------

def _as_rgb(image: np.ndarray, max_side: int) -> np.ndarray:

    return np.ascontiguousarray(downscale(rgb_array(image, "image", grey=True), max_side))


def image_data_url(image: np.ndarray, max_side: int = 1024) -> str:
    """A PNG ``data:`` URL of ``image`` (downscaled so its long side is ≤ ``max_side``)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(_as_rgb(image, max_side)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content)


# --- backends ---------------------------------------------------------------------------

class EndpointDown(LLMError):
    """The endpoint's circuit is open: the call was not even attempted (see
    ``CircuitBreaker``); callers use their embedded fallback, quietly."""

    quiet = True


class CircuitBreaker:
    """After a failure, calls to one endpoint fail at once for ``cooldown_s`` seconds.

    The embedded fallback (rule planner, measured critic) serves meanwhile, so an edit
    never waits on a dead endpoint more than once per cooldown. The breaker warns once
    when it opens; ``describe`` shows it in the status line while it is open.

    Args:
        label: the endpoint as people may see it (no credentials).
        cooldown_s: how long to keep away after a failure; 0 disables the breaker.
    """

    def __init__(self, label: str, cooldown_s: float) -> None:
        self.label, self.cooldown_s = label, float(cooldown_s)
        self.open_until, self.reason = 0.0, ""
        self.alive = False  # answered a quick probe (or a request) since the last failure
        self._lock = threading.Lock()

    @property
    def remaining(self) -> float:
        """Seconds until the endpoint is tried again (0 when closed)."""
        return max(0.0, self.open_until - time.monotonic())

    def check(self) -> None:
        """Raise ``EndpointDown`` while the breaker is open."""
        left = self.remaining
        if left > 0:
            raise EndpointDown(f"{self.label} is unavailable ({self.reason}); the embedded "
                               f"fallback serves for {left:.0f} s more")

    def trip(self, reason: str) -> str:
        """Open the breaker after a failure; returns the sentence to tell people."""
        note = f"the embedded fallback serves for the next {self.cooldown_s:.0f} s"
        if self.cooldown_s <= 0:
            return "retried on the next request"
        with self._lock:
            was_open = self.remaining > 0
            self.open_until, self.reason = time.monotonic() + self.cooldown_s, reason
            self.alive = False
        if not was_open:
            log.warning("%s failed (%s); %s", self.label, reason, note)
        return note

    def close(self) -> None:
        """A call succeeded: the endpoint is trusted again."""
        self.open_until, self.alive = 0.0, True


_BREAKERS: dict[str, CircuitBreaker] = {}
_BREAKERS_LOCK = threading.Lock()


def breaker_for(label: str, cooldown_s: float) -> CircuitBreaker:
    """The breaker shared by every client of one endpoint (keyed by its label)."""
    with _BREAKERS_LOCK:
        breaker = _BREAKERS.setdefault(label, CircuitBreaker(label, cooldown_s))
        breaker.cooldown_s = float(cooldown_s)
        return breaker


def reset_breakers() -> None:
    """Forget every endpoint failure (tests; an operator fixed the endpoint)."""
    with _BREAKERS_LOCK:
        _BREAKERS.clear()


class _Dead(Exception):
    """The endpoint could not be reached at all (no connection)."""


class OpenAICompatible(RetryingLLM):
    """A ``/v1/chat/completions`` endpoint (vLLM, Ollama, llama.cpp, hosted APIs).

    Before the first request, and after any failure, a quick probe (``GET …/models``,
    any HTTP answer counts) must answer within ``connect_timeout``. A connection that
    cannot be made, or a probe left unanswered, is not retried: the endpoint's
    ``CircuitBreaker`` opens and
    every call fails at once for ``cooldown_s`` (the callers' embedded fallbacks serve).
    Rate limits and 5xx answers are retried with backoff first, a read past ``timeout``
    once (a server that accepts but never answers costs two timeouts, then the breaker). Credentials
    in ``base_url`` or ``api_key`` never appear in ``name``, errors or logs.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended).
        model: the model name the server expects.
        api_key: sent as a bearer token when not empty.
        timeout: seconds to wait for the answer (per read).
        http_retries: tries per request on 429/5xx/timeouts/connection errors.
        backoff: first wait in seconds; doubles each time, capped at ``backoff_max``.
        attempts: answers asked for before giving up on invalid JSON.
        json_mode: send ``response_format={"type": "json_object"}`` (dropped if refused).
        connect_timeout: seconds to wait for a connection (default: settings, 3 s).
        cooldown_s: how long a failed endpoint is left alone (default: settings, 300 s;
            0 disables the breaker).
    """

    name = "openai-compatible"
    MAX_RESPONSE_BYTES = 8 * 1024 * 1024

    def __init__(self, base_url: str, model: str, api_key: str = "", *, timeout: float = 60.0,
                 http_retries: int = 4, backoff: float = 1.0, backoff_max: float = 30.0,
                 attempts: int = 3, json_mode: bool = True, max_tokens: int = 1024,
                 image_side: int = 1024, connect_timeout: float | None = None,
                 cooldown_s: float | None = None) -> None:
        super().__init__(attempts)
        if not base_url.startswith(("http://", "https://")):
            raise ValueError("LLM base URL must start with http:// or https://: "
                             f"{redact_url(base_url)!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.endpoint = redact_url(base_url.rstrip("/"))
        self.model, self.api_key = model, api_key
        self.timeout, self.http_retries = timeout, max(1, http_retries)
        self.backoff, self.backoff_max = backoff, backoff_max
        self.json_mode, self.max_tokens, self.image_side = json_mode, max_tokens, image_side
        settings = get_settings() if connect_timeout is None or cooldown_s is None else None
        self.connect_timeout = float(connect_timeout if connect_timeout is not None
                                     else settings.llm_connect_timeout_s)
        self.breaker = breaker_for(self.endpoint, cooldown_s if cooldown_s is not None
                                   else settings.llm_cooldown_s)

    def _payload(self, system: str, messages: list[dict[str, Any]],
                 images: list[np.ndarray] | None) -> dict[str, Any]:
        chat: list[dict[str, Any]] = [{"role": "system", "content": system}]
        chat += [{"role": m["role"], "content": m["content"]} for m in messages]
        if images:
            last = max(i for i, m in enumerate(chat) if m["role"] == "user")
            parts = [{"type": "text", "text": text_of(chat[last]["content"])}]
            parts += [{"type": "image_url",
                       "image_url": {"url": image_data_url(im, self.image_side)}}
                      for im in images]
            chat[last] = {"role": "user", "content": parts}
        body: dict[str, Any] = {"model": self.model, "messages": chat, "temperature": 0,
                                "max_tokens": self.max_tokens}
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        parts = urlsplit(self.url)
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        elif parts.username:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        return headers

    def _probe(self) -> None:
        """Before the first request (and after a failure): one ``GET …/models`` that must
        get any HTTP answer within ``connect_timeout``, so that a server which accepts
        connections but never answers costs seconds, not the full read timeout."""
        if self.breaker.alive:
            return
        parts = urlsplit(self.url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else \
            http.client.HTTPConnection
        conn = kind(parts.hostname or "", parts.port, timeout=self.connect_timeout)
        path = parts.path.rsplit("/chat/completions", 1)[0] + "/models"
        try:
            conn.request("GET", path, headers=self._headers())
            conn.getresponse().read(65536)
        except (OSError, ValueError, http.client.HTTPException) as err:
            raise _Dead(_problem(err)) from None
        finally:
            conn.close()
        self.breaker.alive = True

    def _send(self, data: bytes) -> tuple[int, Any, bytes]:
        """One POST: ``(status, headers, body)``; ``_Dead`` when no connection is made."""
        parts = urlsplit(self.url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else \
            http.client.HTTPConnection
        conn = kind(parts.hostname or "", parts.port, timeout=self.connect_timeout)
        try:
            try:
                conn.connect()
            except (OSError, ValueError) as err:
                raise _Dead(_problem(err)) from None
            conn.sock.settimeout(self.timeout)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            conn.request("POST", path or "/", body=data, headers=self._headers())
            response = conn.getresponse()
            return response.status, response.headers, response.read(
                self.MAX_RESPONSE_BYTES + 1)
        finally:
            conn.close()

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        self.breaker.check()
        try:
            self._probe()
        except _Dead as err:
            note = self.breaker.trip(f"unreachable: {err}")
            raise LLMError(f"{self.endpoint} is unreachable ({err}); {note}") from None
        data = json.dumps(body).encode("utf-8")
        problem, timeouts = "", 0
        for attempt in range(self.http_retries):
            wait = min(self.backoff_max, self.backoff * 2 ** attempt)
            wait *= 0.8 + 0.4 * random.random()
            try:
                status, headers, raw = self._send(data)
            except _Dead as err:
                note = self.breaker.trip(f"unreachable: {err}")
                raise LLMError(f"{self.endpoint} is unreachable ({err}); {note}") from None
            except (OSError, http.client.HTTPException) as err:
                status, headers, raw = 0, None, b""
                problem = _problem(err)
                timeouts += isinstance(err, TimeoutError)
                if timeouts >= 2:  # a hung server: one more wait would only double it
                    break
            if status == 200 and len(raw) > self.MAX_RESPONSE_BYTES:
                problem = "the response is too large"
            elif status == 200:
                try:
                    answer = json.loads(raw.decode("utf-8"))
                    self.breaker.close()
                    return answer if isinstance(answer, dict) else {}
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    problem = "the response body is not JSON"
            elif status:
                detail = redact(raw[:500].decode("utf-8", "replace"))
                if status == 400 and self.json_mode and "response_format" in detail:
                    log.info("endpoint refused response_format; retrying without it")
                    self.json_mode = False
                    body.pop("response_format", None)
                    data = json.dumps(body).encode("utf-8")
                    continue
                if status != 429 and status < 500:
                    if status in (401, 403, 404):
                        self.breaker.trip(f"HTTP {status}")
                    raise LLMError(f"{self.endpoint} answered HTTP {status}: "
                                   f"{detail[:300]}") from None
                problem = f"HTTP {status}"
                retry_after = headers.get("Retry-After") if headers else None
                if retry_after and retry_after.replace(".", "", 1).isdigit():
                    wait = min(self.backoff_max, float(retry_after))
            if attempt + 1 < self.http_retries:
                log.info("LLM request failed (%s); retry %d in %.2fs", problem, attempt + 1, wait)
                time.sleep(wait)
        note = self.breaker.trip(problem)
        raise LLMError(f"{self.endpoint} gave no answer after {attempt + 1} tries: "
                       f"{problem}; {note}")

    def _generate(self, system: str, messages: list[dict[str, Any]],
                  images: list[np.ndarray] | None) -> str:
        response = self._post(self._payload(system, messages, images))
        try:
            return text_of(response["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError):
            return ""  # treated as an invalid answer and re-asked


def _problem(err: BaseException) -> str:
    """A short description of a transport error (no addresses or credentials)."""
    reason = getattr(err, "reason", None) or getattr(err, "strerror", None) or str(err)
    return redact(f"{type(err).__name__}: {reason}" if reason else type(err).__name__)[:200]


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
        pictures = [Image.fromarray(_as_rgb(im, self.image_side)) for im in images or []]
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


# --- choice -----------------------------------------------------------------------------

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
