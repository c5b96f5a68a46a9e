"""The one progress-callback shape every long call takes: ``progress(fraction, text)``."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

#: ``progress(fraction in [0, 1], text)``; called as work advances.
ProgressFn = Callable[[float, str], None]


def no_progress(fraction: float, text: str) -> None:
    """A ``ProgressFn`` that only logs (at debug level)."""
    log.debug("%.0f%% %s", 100 * fraction, text)
