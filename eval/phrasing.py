"""Checking a planner's answer against an everyday phrasing's expected plan.

The expected plan is a short, checkable list of steps (``tests/data/phrasing_*.json``):

* a step is alternatives joined by ``|`` (``"brightness+|exposure+"``);
* one alternative is ``OP[.PARAM][+|-][ small|large][=VALUE][@TARGET]``:

  - ``+``/``-``: the main (or named) parameter lies above/below its neutral value (0; 1
    for ``gamma`` and ``scale``);
  - ``small``/``large``: its distance from neutral is below/above the parameter's default
    distance (so "a touch brighter" must be gentler than plain "brighter");
  - ``=VALUE``: a number (within 0.05, or 5 %), a colour, a look (``look=sepia``), an
    aspect ratio (``crop=1:1``), a turn (``rotate=cw|ccw|180``) or an axis (``flip=``);
  - ``@TARGET``: the step's target mentions that word; no ``@`` means the whole photo;
    ``@selection`` means the user's selection (brush or click mask);

* ``ask``: no action, and at least two choices to pick from;
* ``help``: no action, no choices (the reply says what the app can do).

A case with ``"selection": true`` is planned as if the user had a selection.
A case passes when the planned actions match ``plan`` (or one plan in ``also``) one to
one, in any order, with no extra action. Plans are plain dicts (``plan_view``), so this
module needs nothing from the planner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pipelines.editors.operations import get_operation
from pipelines.operations import REGISTRY
from pipelines.operations.wordnet import lexicon

NEUTRAL = {"gamma": 1.0, "scale": 1.0}
_STEP = re.compile(r"^(?P<op>[a-z_]+)(?:\.(?P<param>[a-z_]+))?(?P<sign>[+-])?"
                   r"(?:\s+(?P<size>small|large))?(?:=(?P<value>[^@\s]+))?"
                   r"(?:\s+(?P<size2>small|large))?(?:@(?P<target>.+))?$")


@dataclass(frozen=True)
class Expect:
    """One parsed alternative of an expected step."""

    op: str
    param: str | None = None
    sign: str | None = None
    size: str | None = None
    value: str | None = None
    target: str | None = None


def parse_alternatives(step: str) -> list[Expect]:
    """``"brightness+ small|exposure+ small"`` → two ``Expect``s.

    Raises:
        ValueError: a step that does not follow the grammar.
    """
    out = []
    for alt in step.split("|"):
        alt = alt.strip()
        match = _STEP.match(alt)
        if not match:
            raise ValueError(f"bad expected step {alt!r}")
        g = match.groupdict()
        out.append(Expect(g["op"], g["param"], g["sign"], g["size"] or g["size2"],
                          g["value"], g["target"]))
    return out


def plan_view(actions: list[dict[str, Any]], is_edit: bool,
              choices: list[Any] | None = None) -> dict[str, Any]:
    """The plain form this module checks: actions as dicts, the verdict, the choices."""
    return {"actions": actions, "is_edit": bool(is_edit), "choices": list(choices or [])}


def _rotation(degrees: float) -> str:
    turn = int(round(degrees)) % 360
    return {90: "cw", 270: "ccw", 180: "180"}.get(turn, str(turn))


def _value_ok(op: str, param: str, got: Any, want: str) -> bool:
    spec = REGISTRY.get(op)
    if spec is not None and spec.has("frame") and param == "degrees":   # quarter turns
        return isinstance(got, (int, float)) and _rotation(got) == want
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        try:
            number = float(want)
        except ValueError:
            return False
        return abs(float(got) - number) <= max(0.05, 0.05 * abs(number))
    return str(got).strip().lower() == want.strip().lower()


def _size_ok(op: str, param: str, got: float, size: str) -> bool:
    spec = next((p for p in get_operation(op).params if p.name == param), None)
    if spec is None or not isinstance(spec.default, (int, float)):
        return False
    neutral = NEUTRAL.get(param, 0.0)
    if get_operation(op).has("moves_target") and param == "scale":   # symmetric in log
        import math
        return (abs(math.log(got)) > math.log(1.3)) == (size == "large") and \
            abs(math.log(got)) != math.log(1.3)
    dist, base = abs(got - neutral), abs(spec.default - neutral)
    return dist < base if size == "small" else dist > base


def _target_ok(action: dict[str, Any], want: str | None) -> bool:
    region = action.get("region") or {}
    words = " ".join(str(x) for x in (action.get("target") or "", region.get("phrase") or ""))
    words = words.lower()
    if want is None:
        return not words.strip() and region.get("type", "image") in ("image", "")
    want = want.lower()
    if want == "selection":
        return region.get("type") == "mask"
    return bool(re.search(rf"\b{re.escape(want)}(?:s|es)?\b", words))


def step_ok(action: dict[str, Any], alt: Expect) -> bool:
    """Whether one planned action matches one expected alternative."""
    op = action.get("operation", "")
    if op != alt.op:
        return False
    params = action.get("params") or {}
    spec = REGISTRY.get(op)
    param = alt.param or (spec.main_param if spec is not None else "amount")
    size_param = spec.size if alt.size and spec is not None and spec.size else param
    got = params.get(param)
    if alt.sign:
        if not isinstance(got, (int, float)):
            return False
        neutral = NEUTRAL.get(param, 0.0)
        if (got > neutral) != (alt.sign == "+") or got == neutral:
            return False
    if alt.size:
        size_value = params.get(size_param)
        if not isinstance(size_value, (int, float)) or \
                not _size_ok(op, size_param, float(size_value), alt.size):
            return False
    if alt.value is not None and not _value_ok(op, param, got, alt.value):
        return False
    return _target_ok(action, alt.target)


def _assign(actions: list[dict[str, Any]], steps: list[list[Expect]]) -> bool:
    if not steps:
        return not actions
    first, rest = steps[0], steps[1:]
    for i, action in enumerate(actions):
        if any(step_ok(action, alt) for alt in first) and \
                _assign(actions[:i] + actions[i + 1:], rest):
            return True
    return False


def plan_matches(view: dict[str, Any], plan: list[str]) -> bool:
    """Whether a planner's answer (``plan_view``) matches one expected plan."""
    actions = view["actions"]
    if plan == ["ask"]:
        return not actions and len(view["choices"]) >= 2
    if plan == ["help"]:
        return not actions and not view["choices"] and not view["is_edit"]
    if not view["is_edit"]:
        return False
    return _assign(list(actions), [parse_alternatives(s) for s in plan])


def case_matches(view: dict[str, Any], case: dict[str, Any]) -> bool:
    """Whether the answer matches the case's ``plan`` or any plan in its ``also``."""
    return any(plan_matches(view, p) for p in [case["plan"], *case.get("also", [])])


def describe_view(view: dict[str, Any]) -> str:
    """One line for a failure report: what the planner did."""
    if not view["actions"]:
        return "ask " + str([c.get("label") for c in view["choices"]]) if view["choices"] \
            else "no edit"
    parts = []
    for a in view["actions"]:
        params = {k: v for k, v in (a.get("params") or {}).items() if v not in (0, 0.0, "")}
        target = a.get("target") or (a.get("region") or {}).get("phrase") or ""
        parts.append(f"{a.get('operation')}{params}" + (f"@{target}" if target else ""))
    return "; ".join(parts)


#: what comes before a clause's verb ("could you …", "please …")
_LEAD = re.compile(r"^(?:(?:please|pls|plz|could you|can you|can u|would you|will you|kindly|"
                   r"just|now|ok|okay|yo|hey|so|then|and|also)\s+)*")
_PARTICLES = r"up|down|out|off|back|in"


def verb_slot_words(text: str) -> set[str]:
    """Words of ``text`` in a verb or particle slot: each clause's first word when WordNet
    says it can be a verb, a verb right before a particle ("pump up", "dial down"), and the
    particles themselves. Needs the lexicon (empty without it)."""
    lex = lexicon()
    if lex is None:
        return set()
    out: set[str] = set()
    for clause in re.split(r"[,.;!?]|\band\b|\bthen\b", text.lower()):
        words = re.findall(r"[a-z]+", _LEAD.sub("", clause.strip()))
        for i, word in enumerate(words):
            nxt = words[i + 1] if i + 1 < len(words) else ""
            after_article = i > 0 and words[i - 1] in ("the", "a", "an", "my", "its", "this")
            if after_article:
                continue
            if (i == 0 and lex.is_verb(word)) or (re.fullmatch(_PARTICLES, nxt) and
                                                   lex.is_verb(word)):
                out.add(word)
            if re.fullmatch(_PARTICLES, word) and i > 0:
                out.add(word)
    return out


def verbs_as_objects(text: str, view: dict[str, Any]) -> list[str]:
    """Targets of ``view``'s actions that are only a verb or particle of ``text`` ("pump"
    in "pump up the contrast"), never a noun of it ("pump" in "remove the pump")."""
    slots = verb_slot_words(text)
    nouns = set(re.findall(r"\b(?:the|a|an|my|its|this|that)\s+(?:[a-z]+\s+)?([a-z]+)",
                           text.lower()))
    bad = []
    for action in view["actions"]:
        region = action.get("region") or {}
        target = " ".join(str(x) for x in (action.get("target") or "", region.get("phrase")
                                            or ""))
        bad += sorted({w for w in re.findall(r"[a-z]+", target.lower()) if w in slots and
                       w not in nouns})
    return bad
