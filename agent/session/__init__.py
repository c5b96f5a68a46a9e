"""An editing session over one image: the state graph, memory, archive and the turn loop.

``EditSession`` is the entry point; the rest is what it is made of. The names below are
imported when first used, so that a caller wanting only ``SessionError`` or
``inputs.check_instruction`` (the batch driver, the command line) does not load the
whole edit stack (~0.5 s) to get them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.session.archive import SESSION_FILE
    from agent.session.context import ACCEPT_SCORE, MAX_ATTEMPTS, MIN_SCORE
    from agent.session.edit_session import EditSession
    from agent.session.results import Attempt, StepResult, TurnResult
    from agent.session.store import SessionError, StateError

_WHERE = {"SESSION_FILE": "archive", "ACCEPT_SCORE": "context", "MAX_ATTEMPTS": "context",
          "MIN_SCORE": "context", "EditSession": "edit_session", "Attempt": "results",
          "StepResult": "results", "TurnResult": "results", "SessionError": "store",
          "StateError": "store"}

__all__ = ["EditSession", "SessionError", "StateError", "TurnResult", "StepResult", "Attempt",
           "SESSION_FILE", "ACCEPT_SCORE", "MIN_SCORE", "MAX_ATTEMPTS"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
