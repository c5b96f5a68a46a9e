"""The agent's language backend: a configured model, else the rule planner in its place.

Model clients (the ``LLM`` protocol, endpoints, local VLMs, JSON validation) live in
``pipelines.llm``; this module adds ``RuleBased``, which answers planning requests with
``RulePlanner`` so that the protocol exists everywhere, and ``get_llm``, which picks one.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from agent.brain.rules import RulePlanner
from pipelines.config import Settings
from pipelines.llm import LLM, Check, LLMError, get_model_llm, text_of, validate_answer

#: the request line of ``agent.brain.prompts.planner_user``: up to its own ``>>>``, which
#: ends the text or comes just before the "(as typed: <<<…>>>)" echo — never that echo
_REQUEST = re.compile(r"Request: <<<(.*?)>>>(?=\n\(as typed: <<<|\s*$)", re.DOTALL)


class RuleBased:
    """The embedded backend: no model. It answers planning requests (``PLAN_SCHEMA``) with
    the rule planner; any other request fails with a clear ``LLMError``."""

    name = "rule-based"

    def complete_json(self, system: str, messages: list[dict[str, Any]],
                      images: list[np.ndarray] | None, schema: dict[str, Any], *,
                      check: Check | None = None) -> dict[str, Any]:
        """Plan the last user message with ``RulePlanner``; see ``LLM.complete_json``."""
        if "actions" not in (schema or {}).get("properties", {}):
            raise LLMError("the rule-based backend only plans edits; configure a VLM "
                           "(LOUPE_MODEL_VLM) or an endpoint (LOUPE_LLM_BASE_URL) for this")
        users = [m for m in messages if m.get("role") == "user"]
        text = text_of(users[-1]["content"]) if users else ""
        has_mask = "user brushed a mask this turn" in text
        quoted = _REQUEST.search(text)
        plan = RulePlanner().plan(quoted.group(1) if quoted else text, has_mask=has_mask)
        data = {"actions": [a.model_dump(mode="json") for a in plan.actions],
                "is_edit": plan.is_edit, "message": plan.message}
        try:
            data = validate_answer(data, schema)
            if check is not None:
                check(data)
        except ValueError as err:
            raise LLMError(f"rule-based plan failed validation: {err}") from None
        return data


def get_llm(settings: Settings | None = None) -> LLM:
    """The configured backend: an endpoint if ``LOUPE_LLM_BASE_URL`` is set, else a local
    VLM whose weights are present, else ``RuleBased``.

    Args:
        settings: defaults to ``get_settings()``.

    Returns:
        An object following the ``LLM`` protocol.
    """
    return get_model_llm(settings) or RuleBased()
