"""Keep secrets out of what people and logs see.

``redact_url`` shows an endpoint without its credentials (``user:password@``) or query
string; ``redact`` scrubs any text: URLs with credentials, secret-looking query values,
``Bearer`` tokens, well-known token shapes (``hf_…``, ``sk-…``) and the configured
secret values themselves (``LOUPE_LLM_API_KEY``, ``LOUPE_SESSION_SECRET``, ``HF_TOKEN``).
``SecretFilter`` applies ``redact`` to every log record a handler emits;
``install_log_redaction`` puts it on the root logger's handlers.

Used wherever settings or endpoint names are shown (status line, errors, backend names)
or logged.
"""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import urlsplit, urlunsplit

from pipelines.config import get_settings

MASK = "***"
_CREDENTIALS = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@?#]+@")
_QUERY_SECRET = re.compile(
    r"([?&;](?:api[_-]?key|key|token|access[_-]?token|auth|secret|password|passwd|pwd|"
    r"sig|signature|client[_-]?secret)=)[^&;#\s]+", re.IGNORECASE)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE)
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,}|"
                           r"gh[pousr]_[A-Za-z0-9]{20,}|xox[baprs]-[A-Za-z0-9-]{10,})\b")
_SECRET_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY")


def redact_url(url: str) -> str:
    """``url`` without user/password and without its query string or fragment.

    Args:
        url: an endpoint URL, possibly ``https://user:key@host/v1?key=…``.

    Returns:
        ``scheme://host[:port]/path`` (or ``***`` when it cannot be parsed).
    """
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return MASK
    if not parts.scheme or not parts.netloc:
        return redact(str(url))
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _secret_values() -> list[str]:
    try:
        settings = get_settings()
        values = [settings.llm_api_key, settings.session_secret]
        values += [os.environ.get(name, "") for name in _SECRET_ENV]
        if settings.llm_base_url:
            url = urlsplit(settings.llm_base_url)
            values += [url.password or "", url.username or ""]
    except ValueError:  # a malformed setting must not break logging
        return []
    return sorted({v for v in values if v and len(v) >= 4}, key=len, reverse=True)


def redact(text: object) -> str:
    """``str(text)`` with every secret replaced by ``***`` (see the module doc)."""
    out = str(text)
    for value in _secret_values():
        out = out.replace(value, MASK)
    out = _CREDENTIALS.sub(lambda m: m.group(1) + MASK + "@", out)
    out = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, out)
    out = _BEARER.sub(lambda m: m.group(1) + " " + MASK, out)
    return _TOKEN_SHAPES.sub(MASK, out)


class SecretFilter(logging.Filter):
    """Rewrites each record's message (and traceback text) through ``redact``."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string is logged as it is
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Add a ``SecretFilter`` to every handler of ``logger`` (the root by default)."""
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if not any(isinstance(f, SecretFilter) for f in handler.filters):
            handler.addFilter(SecretFilter())


_ABS_PATH = re.compile(r"(?<![\w.:/~])/(?:[\w.@+-]+/)+([\w.@+-]+)")


def hide_paths(text: object) -> str:
    """``redact(text)`` with every absolute server path shortened to its last name
    (``/tmp/gradio/ab12/photo.png`` → ``photo.png``): messages name files as the user
    knows them."""
    return _ABS_PATH.sub(lambda m: m.group(1), redact(text))
