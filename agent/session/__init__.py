"""An editing session over one image: the state graph, memory, archive and the turn loop.

``EditSession`` is the entry point; the rest is what it is made of.
"""

from agent.session.archive import SESSION_FILE
from agent.session.context import ACCEPT_SCORE, MAX_ATTEMPTS, MIN_SCORE
from agent.session.edit_session import EditSession
from agent.session.results import Attempt, StepResult, TurnResult
from agent.session.store import SessionError, StateError

__all__ = ["EditSession", "SessionError", "StateError", "TurnResult", "StepResult", "Attempt",
           "SESSION_FILE", "ACCEPT_SCORE", "MIN_SCORE", "MAX_ATTEMPTS"]
