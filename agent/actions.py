"""Actions: the atomic edits planners emit, validated against one JSON schema.

Planners (rule-based or LLM) produce JSON; ``parse_actions`` turns it into ``Action``
objects or raises ``ActionValidationError`` with a message a person (or the LLM, on a
retry) can act on. Nothing here executes model output.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pipelines.editors.base import EditRequest
from pipelines.editors.operations import OPERATIONS, OperationError, get_operation


class ActionKind(StrEnum):
    adjust = "adjust"
    remove = "remove"
    replace = "replace"
    add = "add"
    undo = "undo"


class RegionType(StrEnum):
    mask = "mask"      # the brush mask the user sent with the turn
    box = "box"        # a box in full-resolution pixels
    phrase = "phrase"  # localise ``phrase`` in the image
    image = "image"    # the whole frame


class Region(BaseModel):
    """Where an action applies."""

    model_config = ConfigDict(extra="forbid")

    type: RegionType = Field(description="mask | box | phrase | image")
    box: list[int] | None = Field(default=None, min_length=4, max_length=4,
                                  description="[x0, y0, x1, y1] for type=box")
    phrase: str | None = Field(default=None, max_length=200,
                               description="what to localise, for type=phrase")

    @model_validator(mode="after")
    def _check(self) -> Region:
        if self.type is RegionType.box:
            if self.box is None:
                raise ValueError("a box region needs box=[x0, y0, x1, y1]")
            x0, y0, x1, y1 = self.box
            if min(self.box) < 0 or x1 <= x0 or y1 <= y0:
                raise ValueError(f"box {self.box} must have 0 <= x0 < x1 and 0 <= y0 < y1")
        if self.type is RegionType.phrase and not (self.phrase or "").strip():
            raise ValueError("a phrase region needs a non-empty phrase")
        return self


class Action(BaseModel):
    """One atomic edit: one target, one operation, not further divisible."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default="a1", max_length=16, pattern=r"^[A-Za-z0-9_-]+$",
                    description="short id, referenced by depends_on")
    kind: ActionKind = Field(description="adjust | remove | replace | add | undo")
    target: str = Field(default="", max_length=200,
                        description="the thing edited, in the user's words ('the red car')")
    region: Region = Field(default_factory=lambda: Region(type=RegionType.image))
    operation: str = Field(default="", max_length=40,
                           description="an operation name from the catalogue; empty for undo")
    params: dict[str, Any] = Field(default_factory=dict,
                                   description="the operation's named parameters")
    instruction: str = Field(default="", max_length=1000,
                             description="the sub-request in plain words")
    depends_on: list[str] = Field(default_factory=list, max_length=16,
                                  description="ids of actions that must run first")
    steps: int = Field(default=1, ge=1, le=50,
                       description="for undo: how many states to go back")

    @model_validator(mode="after")
    def _check_operation(self) -> Action:
        if self.kind is ActionKind.undo:
            if self.operation:
                raise ValueError("an undo action takes no operation")
            return self
        spec = get_operation(self.operation)  # raises OperationError (a ValueError)
        if self.kind.value not in spec.kinds:
            raise ValueError(f"operation {self.operation} cannot serve a {self.kind.value} "
                             f"action (it serves {', '.join(spec.kinds)})")
        # Image parameters (a reference to paste) are supplied by the caller at run time,
        # never by a planner: they may be absent from the plan.
        images = {p.name: self.params.get(p.name) for p in spec.params if p.type == "image"}
        self.params = spec.validate({**self.params, **images})
        return self

    def to_request(self, *, seed: int = 0, **overrides: Any) -> EditRequest:
        """The editor request for this action (``overrides`` set params from a retry)."""
        params = dict(self.params)
        params.update(overrides.pop("params", {}))
        return EditRequest(kind=self.kind.value, operation=self.operation, params=params,
                           instruction=self.instruction, target=self.target, seed=seed,
                           **overrides)

    def describe(self) -> str:
        """A short human description: 'recolor the car (color=red)'."""
        if self.kind is ActionKind.undo:
            return f"undo {self.steps} step{'s' if self.steps > 1 else ''}"
        shown = {k: v for k, v in self.params.items() if not hasattr(v, "shape")}
        args = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in shown.items() if v is not None)
        where = self.target or ("the whole image" if self.region.type is RegionType.image
                                else self.region.type.value)
        return f"{self.operation} {where}" + (f" ({args})" if args else "")


class ActionValidationError(ValueError):
    """Planner output that is not a valid list of actions; the message lists every problem."""


def _plan_schema() -> dict[str, Any]:
    item = Action.model_json_schema()
    defs = item.pop("$defs", {})  # hoisted so "#/$defs/…" resolves from the root
    return {
        "type": "object",
        "properties": {"actions": {"type": "array", "items": item, "maxItems": 16}},
        "required": ["actions"],
        "$defs": defs,
    }


#: The JSON schema a planner's answer must follow: ``{"actions": [Action, …]}``.
PLAN_SCHEMA: dict[str, Any] = _plan_schema()


def parse_actions(data: Any) -> list[Action]:
    """Validate planner output (a JSON string, ``{"actions": [...]}`` or a list).

    Returns the actions with unique ids and ``depends_on`` pointing only at earlier ids.

    Raises:
        ActionValidationError: with every problem found, readable.
    """
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as err:
            raise ActionValidationError(f"not valid JSON: {err}") from None
    if isinstance(data, dict):
        if "actions" not in data:
            raise ActionValidationError('expected an object with an "actions" list')
        data = data["actions"]
    if not isinstance(data, list):
        raise ActionValidationError(f"expected a list of actions, got {type(data).__name__}")
    if len(data) > 16:
        raise ActionValidationError(f"too many actions ({len(data)}, max 16)")
    actions, problems = [], []
    for i, item in enumerate(data):
        try:
            actions.append(Action.model_validate(item))
        except ValidationError as err:
            for e in err.errors():
                where = ".".join(str(p) for p in e["loc"]) or "action"
                problems.append(f"action {i + 1}: {where}: {e['msg']}")
        except (OperationError, ValueError) as err:
            problems.append(f"action {i + 1}: {err}")
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action.id in seen:
            problems.append(f"action {i + 1}: duplicate id {action.id!r}")
        missing = [d for d in action.depends_on if d not in seen]
        if missing:
            problems.append(f"action {i + 1}: depends_on {missing} must name earlier actions")
        seen.add(action.id)
    if problems:
        raise ActionValidationError("; ".join(problems))
    return actions


def operation_catalogue() -> str:
    """The operations and their parameters as compact text for an LLM prompt."""
    lines = []
    for spec in OPERATIONS.values():
        params = ", ".join(
            f"{p.name}:{p.type}" + (f"[{p.minimum:g}..{p.maximum:g}]" if p.minimum is not None
                                    else "") + (f"{{{'|'.join(p.choices)}}}" if p.choices else "")
            for p in spec.params if p.type != "image")
        lines.append(f"- {spec.name} ({'/'.join(spec.kinds)}): {spec.description} {params}")
    return "\n".join(lines)
