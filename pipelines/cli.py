"""How every command line ends (``python -m agent``, ``eval``, ``pipelines``): its own exit
status, or one line on stderr — secrets and server paths scrubbed, never a traceback
(``LOUPE_DEBUG=1`` shows the traceback instead) — and exit status 2."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from pipelines.config import get_settings
from pipelines.redact import redact

log = logging.getLogger(__name__)

#: the exit status of a failed command
EXIT_FAILED = 2


def fail(message: str, code: int = EXIT_FAILED) -> int:
    """Write ``error: <first line of message>`` (redacted) to stderr; return ``code``."""
    text = message.strip()
    line = redact(text.splitlines()[0] if text else "failed")
    sys.stderr.write("error: " + line.encode("utf-8", "backslashreplace").decode("utf-8")
                     + "\n")
    return code


def guarded(call: Callable[[], int],
            expected: tuple[type[BaseException], ...] = (ValueError, OSError), *,
            code: int = EXIT_FAILED) -> int:
    """Run a command: its exit status, or ``fail`` for any exception.

    Args:
        call: the command (returns its exit status).
        expected: errors whose message is written for people (shown as it is); anything
            else is reported as an internal error with its type.
        code: the exit status of a failure (a CLI's own convention).
    """
    try:
        return int(call())
    except expected as exc:
        return fail(str(exc) or type(exc).__name__, code)
    except KeyboardInterrupt:
        return fail("interrupted", code)
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        if get_settings().debug:
            raise
        log.debug("unexpected error", exc_info=exc)
        return fail(f"internal error ({type(exc).__name__}): {exc}", code)
