"""The one place where an exception becomes a message for the person using the app.

Service calls raise ``SessionError`` with a message meant for people; ``user_message``
turns anything else into a short, safe sentence, and scrubs every message of secrets and
server paths (``pipelines.redact.hide_paths``): no tracebacks, no keys, no folders.
"""

from __future__ import annotations

import logging

from agent.session import SessionError
from pipelines.redact import hide_paths

log = logging.getLogger(__name__)

__all__ = ["SessionError", "user_message"]


def user_message(exc: BaseException) -> str:
    """What to tell the user about ``exc``.

    Args:
        exc: any exception raised by a service call.

    Returns:
        The message of a ``SessionError`` or ``ValueError`` (those are written for people);
        for anything else a generic sentence (the details go to the log).
    """
    if isinstance(exc, ValueError):
        return hide_paths(str(exc))[:2000] or "That request could not be carried out."
    log.error("unexpected error in a service call", exc_info=exc)
    return f"Something went wrong on the server ({type(exc).__name__}). Nothing was changed."
