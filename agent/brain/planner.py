"""Planners: turn an instruction into atomic, ordered, validated Actions.

``RulePlanner`` (``agent.brain.rules``) is the embedded default, no model. ``LLMPlanner``
asks a configured LLM/VLM with our own prompt (``agent.brain.prompts``) and validates the
answer with ``agent.actions.parse_actions``; when the model fails it falls back to the rules.
``get_planner`` picks one from the settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from agent.actions import PLAN_SCHEMA, parse_actions
from agent.brain.frontend import normalise
from agent.brain.llm import get_llm
from agent.brain.prompts import planner_system, planner_user
from agent.brain.rules import MemoryLike, Plan, RulePlanner, guard, not_edit_message
from pipelines.config import Settings, get_settings
from pipelines.llm import LLMError, describe, llm_configured
from pipelines.plugins import Registry

log = logging.getLogger(__name__)


@runtime_checkable
class Planner(Protocol):
    """Turns one instruction into validated Actions: the turn loop calls every planner so."""

    name: str

    def plan(self, instruction: str, *, memory: MemoryLike | None = None,
             has_mask: bool = False, image_size: tuple[int, int] | None = None) -> Plan:
        """Plan ``instruction`` (see ``RulePlanner.plan``); never raises for bad words."""
        ...


#: PLAN_SCHEMA plus the planner's verdict and a message for the user.
PLANNER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": dict(PLAN_SCHEMA["properties"], is_edit={"type": "boolean"},
                       message={"type": "string", "maxLength": 500}),
    "required": ["actions", "is_edit"],
    "$defs": PLAN_SCHEMA["$defs"],
}


class LLMPlanner:
    """Plans with an LLM/VLM through the ``pipelines.llm`` protocol and our own prompt.

    Args:
        llm: a backend (``agent.brain.llm.get_llm()``).
        fallback: the planner used when the model gives no valid plan (None: report it).
        memory_budget: characters of memory context sent to the model.
    """

    def __init__(self, llm: Any, *, fallback: RulePlanner | None = None,
                 memory_budget: int = 1500) -> None:
        self.llm, self.fallback, self.memory_budget = llm, fallback, memory_budget

    @property
    def name(self) -> str:
        """'llm: <backend and model>' for the status line."""
        return f"llm: {describe(self.llm)}"

    def plan(self, instruction: str, *, memory: MemoryLike | None = None,
             has_mask: bool = False, image_size: tuple[int, int] | None = None,
             image: Any = None) -> Plan:
        """Ask the model for a plan; validate it (``parse_actions``), re-ask on errors.

        Args:
            instruction: the user's words.
            memory: session memory, rendered into the prompt.
            has_mask: the user sent a brush mask.
            image_size: (width, height) of the image.
            image: optional current image (RGB uint8) for a VLM.

        Returns:
            A ``Plan``; on model failure the fallback's plan, with the failure in its message.
        """
        refusal = guard(instruction)
        if refusal:
            return Plan([], False, refusal)
        context = memory.render(self.memory_budget) if memory is not None else ""
        plain = normalise(instruction.strip()).text or instruction.strip()
        user = planner_user(plain, context=context, has_mask=has_mask,
                            image_size=image_size, typed=instruction)

        def _check(data: dict[str, Any]) -> None:
            parse_actions(data.get("actions", []))

        try:
            data = self.llm.complete_json(planner_system(), [{"role": "user", "content": user}],
                                          [image] if image is not None else None,
                                          PLANNER_SCHEMA, check=_check)
        except LLMError as err:
            if self.fallback is None:
                return Plan([], False, f"The planner model failed: {err}")
            plan = self.fallback.plan(instruction, memory=memory, has_mask=has_mask,
                                      image_size=image_size)
            if err.quiet:  # an open circuit: said once, when it opened
                log.debug("planner endpoint down; rule planner used")
                return plan
            log.warning("LLM planner failed (%s); using the rule planner", err)
            plan.message = f"(planner model unavailable, used rules) {plan.message}".strip()
            return plan
        actions = parse_actions(data.get("actions", []))
        is_edit = bool(data.get("is_edit", True)) and bool(actions)
        message = str(data.get("message", "")).strip()[:500]
        if not is_edit:
            return Plan([], False, message or not_edit_message(instruction.strip()))
        return Plan(actions, True, message or "; ".join(a.describe() for a in actions))


#: name → a factory taking the settings.
PLANNERS: Registry[Callable[[Settings], Planner]] = Registry("planner", {
    "rules": lambda settings: RulePlanner(),
    "llm": lambda settings: LLMPlanner(get_llm(settings), fallback=RulePlanner()),
})


def get_planner(settings: Settings | None = None, name: str | None = None) -> Planner:
    """The planner registered under ``name``; by default ``llm`` when an endpoint or a
    local VLM is configured, else ``rules``.

    Args:
        settings: defaults to ``get_settings()``.
        name: a key of ``PLANNERS``.
    """
    settings = settings or get_settings()
    name = name or ("llm" if llm_configured(settings) else "rules")
    if name not in PLANNERS:
        raise ValueError(f"unknown planner {name!r}; known: {', '.join(PLANNERS)}")
    return PLANNERS[name](settings)


__all__ = ["Plan", "Planner", "RulePlanner", "LLMPlanner", "PLANNER_SCHEMA", "PLANNERS",
           "get_planner"]
