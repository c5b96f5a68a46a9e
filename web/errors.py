"""The one place where an exception becomes a message for the person using the app.

Service calls raise ``SessionError`` with a message meant for people; ``user_message``
turns anything else into a short, safe sentence (no server paths, no tracebacks).
"""

from __future__ import annotations

import logging

from agent.session import SessionError

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
        return str(exc) or "That request could not be carried out."
    log.error("unexpected error in a service call", exc_info=exc)
    return f"Something went wrong on the server ({type(exc).__name__}). Nothing was changed."
