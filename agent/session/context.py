"""What a turn runs with, as typed objects: the backends (planner, critic, localiser,
editors), the retry policy, and the session's graph, memory and region memory.

``EditSession`` builds one ``TurnContext`` per turn; ``TurnRunner`` reads nothing else of
the session, and reports back only through the two callbacks (a new node, the commit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.brain.critic import PASS_SCORE, Critic, get_critic
from agent.brain.planner import Planner, get_planner
from agent.session.memory import Memory
from agent.session.regions import RegionMemory
from agent.session.results import name_of
from agent.session.state import Node, StateGraph
from pipelines.config import Settings
from pipelines.editors.base import Editor, EditRequest
from pipelines.editors.registry import available_editors, get_editor, pick_editor
from pipelines.localizers import Localizer, get_localizer

#: Critique score at or above which an attempt is accepted without retrying: the critic's
#: one pass threshold (``Critique.passed``), not a second number.
ACCEPT_SCORE = PASS_SCORE
#: Critique score below which even the best attempt is rolled back (the keep floor); an
#: edit of a thing the agent found itself must also pass the critic (``Critique.passed``)
MIN_SCORE = 4.0
MAX_ATTEMPTS = 3

#: ``(request, prefer) -> editor``: an injected editor picker (tests, a fixed backend)
EditorPicker = Callable[[EditRequest, str | None], Editor]


class Backends:
    """The planner, critic, localiser and editor picker of a session, each built on first
    use from the settings unless one was given."""

    def __init__(self, settings: Settings | None = None, *, planner: Planner | None = None,
                 critic: Critic | None = None, localizer: Localizer | None = None,
                 editor_picker: EditorPicker | None = None) -> None:
        self.settings = settings
        self._planner, self._critic, self._localizer = planner, critic, localizer
        self._pick = editor_picker

    @property
    def planner(self) -> Planner:
        if self._planner is None:
            self._planner = get_planner(self.settings)
        return self._planner

    @property
    def critic(self) -> Critic:
        if self._critic is None:
            self._critic = get_critic(self.settings)
        return self._critic

    @property
    def localizer(self) -> Localizer:
        if self._localizer is None:
            self._localizer = get_localizer()
        return self._localizer

    def pick_editor(self, request: EditRequest, prefer: str | None = None) -> Editor:
        """The editor for a request (raises ``EditError`` when none can do it)."""
        if self._pick is not None:
            return self._pick(request, prefer)
        return pick_editor(request, prefer=prefer)

    def other_editors(self, request: EditRequest, tried: set[str]) -> list[Editor]:
        """Available editors, other than those in ``tried``, that can serve ``request``
        (a retry's "another editor"); none when an editor picker was injected."""
        if self._pick is not None:
            return []
        out = []
        for name, status in available_editors().items():
            if name in tried or not status["available"]:
                continue
            try:
                editor = get_editor(name)
            except Exception:  # noqa: BLE001 — a broken backend is just not an option
                continue
            if editor.supports(request):
                out.append(editor)
        return out

    def names(self) -> dict[str, str]:
        """Which backend serves each role, for an honest status line."""
        out = {"planner": name_of(self.planner), "critic": name_of(self.critic),
               "localizer": name_of(self.localizer)}
        live = [n for n, s in available_editors().items() if s["available"]]
        out["editor"] = ", ".join(live) or "none"
        return out


@dataclass(frozen=True)
class TurnPolicy:
    """How hard a turn tries: the seed, the attempts per step and the two score bars."""

    seed: int = 0
    max_attempts: int = MAX_ATTEMPTS
    accept_score: float = ACCEPT_SCORE
    min_score: float = MIN_SCORE


@dataclass
class TurnContext:
    """Everything one turn reads and writes.

    Attributes:
        graph: the state graph (the turn moves its head and adds nodes).
        memory: the session memory (planning context; the turn folds into it).
        regions: where earlier steps found their targets.
        backends: planner, critic, localiser, editors.
        policy: seed, attempts and score bars.
        turn: the number this turn gets (1 for the first).
        on_node: called with each new node and its action, in order.
        on_commit: called once the turn's nodes and memory are in place (saves the session).
        prepare: called with the planned actions before they run (fills in the session's
            reference photos); raises ``SessionError`` to refuse the turn.
    """

    graph: StateGraph
    memory: Memory
    regions: RegionMemory
    backends: Backends
    policy: TurnPolicy
    turn: int
    on_node: Callable[[Node, dict[str, Any] | None], None]
    on_commit: Callable[[], Any]
    prepare: Callable[[list[Any]], list[Any]] = lambda actions: actions
