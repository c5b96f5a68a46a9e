"""A lazy name registry of the agents and editors the runner evaluates.

An agent is started on a source image and then asked for one turn at a time; it returns
the full-resolution image after each turn. ``agent`` is never imported here at module
level: ``"embedded"`` imports ``agent.session`` only when a run starts.

Registered names: ``embedded`` (Loupe's own ``EditSession``), ``direct`` (the same
planner and editor on the whole frame resampled to ~1 MP and back, see
``eval.baselines``), ``identity`` (returns its input) and ``oracle`` (returns the
dataset's ground truth, a check of the measurement itself).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: name → ``"module:Class"``; resolved on first use.
AGENTS: dict[str, str] = {
    "embedded": "eval.agents:EmbeddedAgent",
    "direct": "eval.baselines:DirectAgent",
    "identity": "eval.baselines:IdentityAgent",
    "oracle": "eval.baselines:OracleAgent",
}


class AgentError(RuntimeError):
    """An agent could not be found or started."""


@dataclass
class TurnContext:
    """What a turn may know besides its words (only the oracle reads the answers).

    Attributes:
        index: 1-based turn number.
        target: the ground-truth image after the turn, when the dataset has one.
        state: HDD target state (JSON), when the dataset has one.
        size: ``(width, height)`` of the source image.
    """

    index: int
    target: np.ndarray | None = None
    state: dict[str, Any] | None = None
    size: tuple[int, int] = (0, 0)


@dataclass
class TurnOutput:
    """An agent's answer to one turn."""

    image: np.ndarray
    ok: bool = True
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class AgentRun(ABC):
    """One agent working on one sample, turn after turn."""

    @abstractmethod
    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        """Carry out one instruction; returns the full-resolution image after it."""


class Agent(ABC):
    """Factory of ``AgentRun``s; subclasses set ``name``."""

    name: str = ""

    @abstractmethod
    def start(self, image: np.ndarray, folder: Path) -> AgentRun:
        """Begin a sample on ``image`` with a private scratch ``folder``."""


def register_agent(name: str, target: str) -> None:
    """Register ``"module:Class"`` under ``name`` (plugins, tests)."""
    if ":" not in target:
        raise AgentError(f"agent target must look like 'module:Class', got {target!r}")
    AGENTS[name] = target


def get_agent(name: str, **options: Any) -> Agent:
    """Build the agent registered under ``name``.

    Args:
        name: a key of ``AGENTS``.
        **options: passed to the agent's constructor.

    Raises:
        AgentError: unknown name, or the agent's module cannot be imported here.
    """
    if name not in AGENTS:
        raise AgentError(f"unknown agent {name!r}; known: {', '.join(sorted(AGENTS))}")
    module, cls = AGENTS[name].split(":")
    try:
        return getattr(importlib.import_module(module), cls)(**options)
    except (ImportError, AttributeError) as exc:
        raise AgentError(f"agent {name!r} is not available here: {exc}") from None


class _SessionRun(AgentRun):
    def __init__(self, session: Any) -> None:
        self.session = session

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        result = self.session.turn(instruction, mask)
        return TurnOutput(self.session.current_image(), bool(result.ok), str(result.message),
                          {"steps": len(result.steps), "changed": bool(result.changed)})


class EmbeddedAgent(Agent):
    """Loupe's agent: ``agent.session.EditSession`` (layers at native resolution)."""

    name = "embedded"

    def __init__(self, **backends: Any) -> None:
        self.backends = backends

    def start(self, image: np.ndarray, folder: Path) -> AgentRun:
        from agent.session import EditSession

        return _SessionRun(EditSession.create(image, folder / "session", **self.backends))
