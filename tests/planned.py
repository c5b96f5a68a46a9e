"""What the rule planner makes of an instruction, for tests that compare two wordings."""

from __future__ import annotations

from agent.brain.rules import RulePlanner


def plan_of(text: str) -> list[tuple[str, str, dict]]:
    """(operation, region phrase, params) of each step the rule planner plans for ``text``
    (it must plan an edit)."""
    plan = RulePlanner().plan(text)
    assert plan.is_edit, plan.message
    return [(a.operation, a.region.phrase or "", dict(a.params)) for a in plan.actions]
