"""Plain words for what the agent did: actions, step outcomes, critic reasons, backends.

The agent describes its work in its own terms (``recolor red cup (color=blue,
strength=1)``, state ids, backend labels with endpoints). People using the app read
these sentences instead. Everything here is a pure function of JSON-able data, so the
chat, the status line and the review page say the same thing the same way.

Each operation words itself (``Operation.wording``/``describe`` in
``pipelines/operations/``); unknown operations fall back to their name in words, never to
``key=value`` syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pipelines.operations import REGISTRY

_STATUS = {
    "applied": "done",
    "rolled_back": "undone: no attempt was good enough",
    "unchanged": "nothing changed",
    "not_needed": "not needed on this photo",
    "failed": "failed",
    "skipped": "skipped",
    "needs_mask": "needs you to click it (or brush it)",
    "unsupported": "not possible here",
    "undo": "went back",
    "pending": "not started",
}

_EDITORS = {"classical": "built-in tools"}

_KEY_VALUE = re.compile(r"\s*\((?:[^()]*=[^()]*)\)")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)


def _where(action: Mapping[str, Any]) -> str:
    region = action.get("region") or {}
    kind = region.get("type") if isinstance(region, Mapping) else None
    target = str(action.get("target") or (region.get("phrase") if isinstance(region, Mapping)
                                          else "") or "").strip()
    if kind == "mask":
        return "the brushed area"
    if kind == "box":
        return f"the {target} in the marked box" if target else "the marked box"
    if target:
        return target if target.lower().startswith(("the ", "my ", "this ", "that ")) \
            else f"the {target}"
    return "the whole photo"


def describe_action(action: Mapping[str, Any] | None) -> str:
    """One action in plain words: ``"Make the red cup blue"``, ``"Warm up the whole photo"``.

    Args:
        action: an action as JSON (``operation``, ``target``, ``region``, ``params``, ``kind``).

    Returns:
        A short sentence starting with a capital letter, without parameter syntax.
    """
    if not isinstance(action, Mapping):
        return "Change the photo"
    op = str(action.get("operation") or "")
    params = action.get("params") if isinstance(action.get("params"), Mapping) else {}
    where = _where(action)
    instr = str(action.get("instruction") or "")
    if action.get("kind") == "undo" or (not op and action.get("steps")):
        steps = int(action.get("steps") or 1)
        text = "go back one step" if steps == 1 else f"go back {steps} steps"
    elif op in REGISTRY and REGISTRY[op].describe(params, where, instr):
        text = REGISTRY[op].describe(params, where, instr)
    elif op:
        text = f"{op.replace('_', ' ')} {where}"
    else:
        text = str(action.get("instruction") or "change the photo")
    return text[:1].upper() + text[1:]


def step_status(status: str | None) -> str:
    """A step's status in words (``rolled_back`` → ``undone: no attempt was good enough``)."""
    return _STATUS.get(str(status or ""), str(status or "done").replace("_", " "))


def editor_name(name: str | None) -> str:
    """The editor that made an attempt, for people (``classical`` → ``built-in tools``)."""
    return _EDITORS.get(str(name or ""), str(name or "an editor").replace("_", " "))


def score_text(score: Any) -> str:
    """``8.5`` → ``"8.5/10"``; anything else → ``"no score"``."""
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        return f"{float(score):.1f}/10".replace(".0/", "/")
    return "no score"


def scrub(text: str) -> str:
    """Remove internal syntax from an agent sentence: ``(key=value, …)`` groups and URLs.

    Args:
        text: a message written by the agent.

    Returns:
        The same sentence without parameter lists or endpoint addresses.
    """
    text = _KEY_VALUE.sub("", str(text or ""))
    text = _URL.sub("(a server)", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _without_asides(text: str) -> str:
    """Drop parenthesised asides, nested ones too (they hold the agent's technical detail)."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\s*\([^()]*\)", "", text)
    return text


def plain_sentence(text: str) -> str:
    """An agent's explanation for people: no internal syntax, no technical asides.

    Args:
        text: a message written by the agent (a refusal, a reason).

    Returns:
        The sentence without ``(…)`` asides, parameter lists or addresses.
    """
    text = _without_asides(scrub(text))
    text = re.sub(r"\bpaint a mask\b", "brush over it", text)
    text = re.sub(r"\s+([.,;:])", r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _backend_words(role: str, name: str) -> str:
    name = scrub(str(name or "")).strip()
    low = name.lower()
    model = low.split("@")[0].split(":", 1)[-1].strip()
    model = re.sub(r"^(openai-compatible|transformers-vlm|rule-based)\s*", "", model)
    model = model.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]  # never a server path
    down = re.search(r"\(unavailable; embedded fallback for ([^)]*)\)", low)
    if down and role == "planner":
        return (f"understands requests with built-in rules for now (the language model is "
                f"unreachable; it is tried again in {down.group(1)})")
    if down and role == "critic":
        return "checks every result by measuring it for now (the AI reviewers are unreachable)"
    if role == "planner":
        if low.startswith("llm") or "vlm" in low or "openai" in low:
            return "understands requests with a language model" + (f" ({model})" if model
                                                                  else "")
        return "understands requests with built-in rules"
    if role == "critic":
        if low.startswith("panel"):
            return "checks every result with a panel of AI reviewers"
        return "checks every result by measuring it"
    if role in ("localizer", "localiser"):
        if low in ("embedded", ""):
            return "finds things by colour, position or your brush"
        if low.startswith("perception"):
            return ("finds things with built-in object, face and text detectors, by colour, "
                    "position or your brush")
        return "finds things with an object detector"
    if role == "editor":
        others = [n.strip() for n in low.split(",") if n.strip() and "classical" not in n]
        if not others:
            return "edits with built-in photo tools"
        return "edits with " + ", ".join(others) + " and built-in photo tools"
    return f"{role}: {name}"


ROLE_ORDER = ("planner", "localizer", "localiser", "editor", "critic")


def backends_sentence(roles: Mapping[str, str]) -> tuple[str, bool]:
    """The status line's sentence about the backends, and whether all are built-in.

    Args:
        roles: role → backend label as the session reports it.

    Returns:
        ``(sentence, embedded)``: e.g. ``"Loupe understands requests with built-in rules,
        finds things by colour, position or your brush, …"`` and True when no model is
        live. Never contains an endpoint address or a key.
    """
    ordered = sorted(roles.items(), key=lambda kv: ROLE_ORDER.index(kv[0])
                     if kv[0] in ROLE_ORDER else len(ROLE_ORDER))
    parts = [_backend_words(role, name) for role, name in ordered]
    embedded = all(p.startswith(("understands requests with built-in", "finds things by",
                                 "finds things with built-in",
                                 "edits with built-in", "checks every result by"))
                   for p in parts)
    if not parts:
        return "", True
    body = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"Loupe {body}.", embedded
