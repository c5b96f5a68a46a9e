"""What one turn reports: ``TurnResult`` with one ``StepResult`` per action and one
``Attempt`` per try, and the JSON helpers that make actions and extras storable."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from agent.actions import Action
from agent.session.state import StateGraph
from agent.session.store import SessionError
from pipelines.config import get_settings
from pipelines.editors.operations import get_operation
from pipelines.models import get_manager


@dataclass
class Attempt:
    """One try at one step: the parameters, the editor, the critique and the time."""

    index: int
    editor: str
    params: dict[str, Any]
    region: str
    score: float = 0.0
    keep: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    #: the critic passed it (score at the bar, every measured check passed)
    passed: bool = False
    #: the critic found the change off the named thing or of the wrong extent
    wrong_extent: bool = False
    #: the critic's checks that failed ("changed", "relative_visible", "extent", …)
    failed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class StepResult:
    """One action of a turn and what became of it.

    ``status`` is ``applied``, ``rolled_back`` (the best attempt was unacceptable: under
    the keep floor, or a found target's edit the critic did not pass),
    ``unchanged`` (the edit changed no pixel), ``not_needed`` (a step of a relative word
    that changed nothing on this photo, the word's other steps judged without it:
    ``agent.session.word_steps``), ``failed``, ``skipped`` (it depended on a step that did
    not apply), ``needs_mask``, ``unsupported`` or ``undo``.
    """

    index: int
    action: dict[str, Any]
    description: str
    status: str = "pending"
    message: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    chosen: int | None = None
    score: float | None = None
    node: str | None = None
    region: str = ""
    bbox: list[int] | None = None
    seconds: float = 0.0

    @property
    def applied(self) -> bool:
        return self.status == "applied"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["attempts"] = [a.to_dict() for a in self.attempts]
        return out


@dataclass
class TurnResult:
    """Everything a chat needs about one turn.

    Attributes:
        instruction: the user's words.
        ok: the request was carried out (fully, or partly with the rest explained).
        status: (derived) ``done`` every step of the plan was applied; ``partial`` some
            were applied and others asked, were refused or failed (the message says which);
            ``asked`` nothing was changed and a question is asked (which one, where, or
            which reading); ``refused`` nothing was changed and nothing is asked. Only
            ``done`` means the whole request was carried out.
        changed: the head moved (a new image state or a navigation).
        message: one human paragraph saying what happened and why.
        plan: ``{"actions": [...], "descriptions": [...], "message": str, "is_edit": bool}``.
        steps: one ``StepResult`` per action.
        head: the head after the turn.
        nodes: ids of the states this turn created.
        timings: seconds per phase (``plan``, ``execute``, ``save``, ``total``).
        extra: search topologies and the like (JSON-able).
        choices: when the request could mean two things, ``[{"label", "instruction"}]``:
            a UI shows them as buttons and sends the chosen ``instruction`` as the next turn.
    """

    instruction: str
    ok: bool
    changed: bool
    message: str
    plan: dict[str, Any]
    steps: list[StepResult]
    head: str
    nodes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    choices: list[dict[str, str]] = field(default_factory=list)
    #: when the target is unsure: ``[{"id", "label", "score", "box"}]`` to pick from
    #: (``EditSession.choose``); nothing was changed
    candidates: list[dict[str, Any]] = field(default_factory=list)
    #: nothing was changed because the target is not known: the message asks for it
    asking: bool = False

    @property
    def status(self) -> str:
        """``done``, ``partial``, ``asked`` or ``refused`` (the class doc)."""
        if self.ok:
            left = [s for s in self.steps if s.status not in DONE_STEPS]
            return "partial" if left else "done"
        asks = self.candidates or self.choices or any(s.status in ASKING_STEPS
                                                      for s in self.steps)
        return "asked" if asks or self.asking else "refused"

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "steps"}
        out["steps"] = [s.to_dict() for s in self.steps]
        out["status"] = self.status
        return out


#: a step's statuses that carry out its part of the request
DONE_STEPS = ("applied", "undo", "not_needed")
#: a step's statuses that wait on the user (a click, a pick, a brush)
ASKING_STEPS = ("needs_mask",)


def name_of(obj: Any) -> str:
    """A backend's name (its ``name`` attribute, else its class name)."""
    return str(getattr(obj, "name", "") or type(obj).__name__)


def plain_params(params: dict[str, Any]) -> dict[str, Any]:
    """JSON-able params (arrays shown by their shape)."""
    return {k: (f"<image {v.shape[1]}x{v.shape[0]}>" if hasattr(v, "shape") else v)
            for k, v in params.items()}


def action_dict(action: Action | dict[str, Any] | None) -> dict[str, Any] | None:
    """An action as the JSON-able dict the graph stores (None stays None)."""
    if action is None:
        return None
    if isinstance(action, Action):
        data = action.model_dump(mode="python")
        data["params"] = plain_params(action.params)
        return json.loads(json.dumps(data, default=str))
    if isinstance(action, dict):
        return json.loads(json.dumps(action, default=str))
    raise SessionError(f"an action must be an Action or a dict, got {type(action).__name__}")


def jsonable(data: Any) -> Any:
    """``data`` as plain JSON values (anything else as its ``str``)."""
    return json.loads(json.dumps(data, default=str))


#: the model roles that serve generative operations, in the order a message names them
GENERATIVE_ROLES = ("editor", "inpainter")


def unavailable_message(action: Action, err: Exception, settings: Any = None) -> str:
    """Why a step cannot run, naming the configured model ids (never a hard-coded one).

    Args:
        action: the step.
        err: the ``EditError`` from picking an editor.
        settings: the session's settings (default ``get_settings()``).
    """
    spec = get_operation(action.operation)
    if not spec.generative:
        return f"'{action.describe()}' cannot run here: {err}"
    models = (settings or get_settings()).models
    try:
        manager = get_manager()
        named = [f"{role} model '{models.get(role, '')}' ({manager.role_status(role).reason})"
                 for role in GENERATIVE_ROLES if models.get(role)]
    except Exception:  # noqa: BLE001 — a broken manager must not hide the step's reason
        named = [f"{role} model '{models[role]}'" for role in GENERATIVE_ROLES
                 if models.get(role)]
    which = "; ".join(named) or "no generative model is configured"
    return (f"'{action.describe()}' needs a generative editor, and none can run here: "
            f"{which}. Set LOUPE_MODEL_EDITOR / LOUPE_MODEL_INPAINTER to weights that are "
            "present to enable it")


def outcome(steps: list[StepResult], applied: list[StepResult], moved: bool) -> str:
    """How a turn ended, for the memory: done, partial, undo or nothing."""
    if applied and len(applied) == sum(1 for s in steps if s.status not in ("undo",
                                                                             "not_needed")):
        return "done"
    if applied:
        return "partial"
    return "undo" if moved else "nothing"


def summary(steps: list[StepResult], navigated: bool, graph: StateGraph) -> str:
    """The one paragraph a chat shows for a turn."""
    parts = []
    for step in steps:
        if step.status == "applied":
            parts.append(f"{step.description}: {step.message}")
        elif step.status == "undo":
            parts.append(step.message)
        else:
            parts.append(f"{step.description}: {step.status.replace('_', ' ')} — {step.message}")
    if not any(s.status in ("applied", "undo") for s in steps):
        parts.append("Nothing was changed.")
    elif navigated:
        parts.append(f"Now at {graph.head}.")
    return " ".join(p if p.endswith(".") else p + "." for p in parts)


def dependency_order(actions: list[Action]) -> list[Action]:
    """Stable topological order: an action comes after every action it depends on."""
    by_id = {a.id: a for a in actions}
    done: set[str] = set()
    out: list[Action] = []

    def visit(action: Action, stack: tuple[str, ...]) -> None:
        if action.id in done or action.id in stack:
            return
        for dep in action.depends_on:
            if dep in by_id:
                visit(by_id[dep], stack + (action.id,))
        done.add(action.id)
        out.append(action)

    for action in actions:
        visit(action, ())
    return out


def merged_values(actions: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for action in actions:
        out.update({k: v for k, v in action.params.items() if not hasattr(v, "shape")})
    return out
