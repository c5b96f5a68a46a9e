"""An editing session over one image: the state graph, memory, archive and the turn loop.

``EditSession`` is the entry point; the rest is what it is made of.
"""

from agent.session.archive import SESSION_FILE
from agent.session.edit_session import EditSession
from agent.session.state import SessionError, StateError
from agent.session.turn import (
    ACCEPT_SCORE,
    MAX_ATTEMPTS,
    MIN_SCORE,
    Attempt,
    StepResult,
    TurnResult,
)

__all__ = ["EditSession", "SessionError", "StateError", "TurnResult", "StepResult", "Attempt",
           "SESSION_FILE", "ACCEPT_SCORE", "MIN_SCORE", "MAX_ATTEMPTS"]
