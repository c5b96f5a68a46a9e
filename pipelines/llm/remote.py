"""``OpenAICompatible``: any ``/v1/chat/completions`` endpoint (vLLM, Ollama, llama.cpp
server, hosted APIs), with timeouts, backoff on 429/5xx and a ``CircuitBreaker`` per
endpoint: after a failure the endpoint is left alone for ``LOUPE_LLM_COOLDOWN_S`` and the
embedded fallback serves."""

from __future__ import annotations

import base64
import http.client
import json
import logging
import random
import threading
import time
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np

from pipelines.config import get_settings
from pipelines.llm.validation import LLMError, RetryingLLM, image_data_url, text_of
from pipelines.redact import redact, redact_url

log = logging.getLogger(__name__)


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


