"""The ``EditSystem`` protocol the runner evaluates, and a registry of systems by name.

An edit system is started on a source image and then asked for one turn at a time; it
returns the full-resolution image after each turn. ``eval`` imports no agent code: the
runner takes any object with this shape, and names resolve through ``SYSTEMS``.

Built in here: ``identity`` (returns its input) and ``oracle`` (returns the dataset's
ground truth, a check of the measurement itself). Loupe's own systems (``embedded``,
``direct``) live in ``agent.systems``, which registers them when imported; the modules
named by the ``LOUPE_EDIT_SYSTEMS`` setting (``agent.systems`` by default) are imported
the first time an unknown name is asked for, the way plugins are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from eval.hdd import SceneState, render
from pipelines.config import get_settings
from pipelines.plugins import Registry

log = logging.getLogger(__name__)


class EditSystemError(RuntimeError):
    """An edit system could not be found or started."""


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
    """A system's answer to one turn."""

    image: np.ndarray
    ok: bool = True
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class EditRun(Protocol):
    """One system working on one sample, turn after turn."""

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        """Carry out one instruction; returns the full-resolution image after it."""
        ...


@runtime_checkable
class EditSystem(Protocol):
    """A factory of ``EditRun``s: ``start`` begins a sample in a private scratch folder."""

    name: str

    def start(self, image: np.ndarray, folder: Path) -> EditRun:
        """Begin a sample on ``image`` with a private scratch ``folder``."""
        ...


#: name → a callable building the system (a class, usually) from keyword options.
SYSTEMS: Registry[Callable[..., EditSystem]] = Registry(
    "agent", error=EditSystemError, plugins=lambda: get_settings().edit_systems)


def register_system(name: str, factory: Callable[..., EditSystem]) -> Callable[..., EditSystem]:
    """Register ``factory`` under ``name`` (returns it, so it also works as a decorator).

    Raises:
        EditSystemError: the name is empty or the factory is not callable.
    """
    try:
        return SYSTEMS.register(name, factory)
    except TypeError:
        raise EditSystemError(f"cannot register edit system {name!r}: needs a name and a "
                              "callable factory") from None


#: judge(before, after, instruction, mask) → {"score": 0–10, "passed", "reasons", "decided"}
Judge = Callable[[np.ndarray, np.ndarray, str, "np.ndarray | None"], dict]
JUDGES: dict[str, Judge] = {}


def register_judge(name: str, judge: Judge) -> Judge:
    """Register an instruction-following judge (the agent's critic registers ``critic``);
    ``eval`` calls it without importing the agent."""
    if not name or not callable(judge):
        raise EditSystemError(f"cannot register judge {name!r}: needs a name and a callable")
    JUDGES[name] = judge
    return judge


def get_judge(name: str | None = None) -> Judge | None:
    """The judge registered under ``name`` (default: the first one), plugins loaded first;
    None when no plugin registered one."""
    load_plugins()
    if name is not None:
        return JUDGES.get(name)
    return next(iter(JUDGES.values()), None)


def load_plugins(modules: tuple[str, ...] | None = None) -> None:
    """Import the plugin modules that register more systems (once each).

    Args:
        modules: module names; default the ``LOUPE_EDIT_SYSTEMS`` setting.
    """
    SYSTEMS.load_plugins(modules)


def system_names() -> list[str]:
    """Every registered system name (plugins loaded first)."""
    load_plugins()
    return list(SYSTEMS)


def get_system(system: str | EditSystem, **options: Any) -> EditSystem:
    """The system itself when given one, else the one registered under that name.

    Args:
        system: an ``EditSystem`` or a registered name.
        **options: passed to the factory (names only).

    Raises:
        EditSystemError: unknown name, or the system cannot be built here.
    """
    if not isinstance(system, str):
        if not isinstance(system, EditSystem):
            raise EditSystemError(f"{type(system).__name__} is not an edit system "
                               "(it needs a name and a start(image, folder) method)")
        return system
    factory = SYSTEMS.lookup(system)
    try:
        return factory(**options)
    except (ImportError, TypeError) as exc:
        raise EditSystemError(f"agent {system!r} is not available here: {exc}") from None


def system_name(system: str | EditSystem) -> str:
    """The name a system's results are recorded under."""
    return system if isinstance(system, str) else str(getattr(system, "name", "") or
                                                      type(system).__name__)


# --------------------------------------------------------------------------- built-ins


class _IdentityRun:
    def __init__(self, image: np.ndarray) -> None:
        self.image = image

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        return TurnOutput(self.image, True, "unchanged")


class IdentitySystem:
    """Does nothing: the floor of instruction following, the ceiling of preservation."""

    name = "identity"

    def start(self, image: np.ndarray, folder: Path) -> EditRun:
        return _IdentityRun(image)


class _OracleRun:
    def __init__(self, image: np.ndarray) -> None:
        self.image = image

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        if context.target is not None:
            self.image = context.target
        elif context.state is not None:
            self.image = render(SceneState.from_json(context.state), context.size)
        else:
            return TurnOutput(self.image, False, "no ground truth for this turn")
        return TurnOutput(self.image, True, "ground truth")


class OracleSystem:
    """Returns the ground truth: checks that the benchmark's measures score it perfectly."""

    name = "oracle"

    def start(self, image: np.ndarray, folder: Path) -> EditRun:
        return _OracleRun(image)


register_system(IdentitySystem.name, IdentitySystem)
register_system(OracleSystem.name, OracleSystem)
