"""Context folding: the planner's memory of a session, in three levels.

* ``ImageContext`` — one per image state (id, parent, description, transformation): the
  asset level, a text graph of how the image evolved.
* ``ToolContext`` — one per attempt inside a step (tool, params, reasoning, critique):
  transient working memory, dropped once the step is verified.
* ``ActionContext`` — one per verified turn (the intent, the targets, the values used and
  the key states): the persistent memory the planner reads.

``render(budget_chars)`` folds all of it into a text that fits the budget however long
the session, and keeps naming the recent targets and every state the user referred to.
References ("it", "the same colour", "before the sky change") resolve from here.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

_WORD = re.compile(r"[a-z0-9#]+")
#: words that name the photo as it was loaded ("go back to the original")
_ORIGINAL = frozenset({"original", "unedited", "beginning", "start"})
_STOP = frozenset("""a an the to of and or in on at by for with from it its this that these
those one ones go back before after undo revert return restore state version image photo
picture please can you me my we our us i change changed changes edit edits edited step
steps when was were is are be been how what make made last previous earlier same as
again""".split())
#: operations after which the target no longer exists
REMOVING_OPS = frozenset({"inpaint"})
_PRONOUNS = frozenset({"it", "its", "that", "this", "them", "they", "those", "these",
                       "one", "ones"})


@dataclass
class ImageContext:
    """One image state, as text: id, parent, description and the transformation."""

    id: str
    parent: str | None
    description: str
    transformation: str = ""
    target: str = ""


@dataclass
class ToolContext:
    """One attempt at one step (transient: dropped when the step is verified)."""

    step: str
    tool: str
    params: dict[str, Any]
    reasoning: str = ""
    score: float | None = None
    fix: list[str] = field(default_factory=list)


@dataclass
class ActionContext:
    """One verified turn: what the user wanted and the states that carry it out."""

    turn: int
    intent: str
    targets: list[str] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    states: list[str] = field(default_factory=list)
    outcome: str = "done"
    #: what the critic said about steps that were not applied (reaches the planner)
    notes: list[str] = field(default_factory=list)


class Memory:
    """The folded history of a session (see the module doc)."""

    def __init__(self) -> None:
        self.images: dict[str, ImageContext] = {}
        self.tools: list[ToolContext] = []
        self.actions: list[ActionContext] = []
        self.referred: list[str] = []
        self.head: str | None = None

    # ---- writing ------------------------------------------------------------------
    def add_image(self, ctx: ImageContext) -> None:
        """Record an image state (the root or a new node)."""
        self.images[ctx.id] = ctx

    def record_attempt(self, ctx: ToolContext) -> None:
        """Record one attempt of the step in progress (working memory)."""
        self.tools.append(ctx)

    def fold_turn(self, intent: str, *, targets: list[str], operations: list[str],
                  values: dict[str, Any], states: list[str], outcome: str = "done",
                  notes: list[str] | None = None) -> ActionContext:
        """Close a turn: keep its intent and key states, drop the attempts' details.

        Args:
            intent: the user's instruction (or the planner's reading of it).
            targets: the target phrases edited.
            operations: the operations applied.
            values: the parameter values used (e.g. ``{"color": "red"}``).
            states: the node ids the turn created or moved to, in order.
            outcome: ``done``, ``partial``, ``undo`` or ``nothing``.
            notes: the critic's reasons for steps that were not applied (short lines).

        Returns:
            The new ``ActionContext``.
        """
        ctx = ActionContext(turn=len(self.actions) + 1, intent=intent.strip()[:300],
                            targets=[t for t in targets if t], operations=list(operations),
                            values=_small_values(values), states=list(states), outcome=outcome,
                            notes=[n[:160] for n in (notes or [])][:4])
        self.actions.append(ctx)
        self.tools.clear()
        return ctx

    def drop_tools(self) -> None:
        """Forget the working memory of the step in progress."""
        self.tools.clear()

    def refer(self, node_id: str) -> None:
        """Remember that the user referred to this state (kept in every render)."""
        if node_id in self.referred:
            self.referred.remove(node_id)
        self.referred.append(node_id)
        del self.referred[:-32]

    # ---- reading ------------------------------------------------------------------
    def last_target(self) -> str | None:
        """The most recent target that still exists in the current state, for "it"/"that
        one": a target removed on the way to the head is skipped (undo brings it back)."""
        gone = self.removed_targets()
        for act in reversed(self.actions):
            for target in reversed(act.targets):
                if target and target.lower() not in _PRONOUNS and target.lower() not in gone:
                    return target
        return None

    def removed_targets(self) -> set[str]:
        """Targets (lower case) removed by a state on the path from the root to the head."""
        path = self._path()
        gone: set[str] = set()
        for act in self.actions:
            for target, op, state in zip(act.targets, act.operations, act.states):
                if op in REMOVING_OPS and state in path:
                    gone.add(target.lower())
        return gone

    def _path(self) -> set[str]:
        seen: set[str] = set()
        node = self.head
        while node is not None and node in self.images and node not in seen:
            seen.add(node)
            node = self.images[node].parent
        return seen

    def last_value(self, param: str) -> Any | None:
        """The most recent value used for ``param`` (e.g. ``color``), for "the same …"."""
        for act in reversed(self.actions):
            if param in act.values:
                return act.values[param]
        return None

    def find_node(self, query: str) -> str | None:
        """The state a phrase like "before the sky change" points at.

        Returns the parent of the latest state whose description or target matches the
        query's words ("after …" returns that state itself); a node id in the query is
        returned as is; None when nothing matches.
        """
        text = query.lower()
        ids = [w for w in _WORD.findall(text) if w in self.images]
        if ids:
            return ids[-1]
        words = {w for w in _WORD.findall(text) if w not in _STOP}
        if not words:
            return None
        if words & _ORIGINAL:       # "back to the original": the photo as loaded
            root = next((c.id for c in self.images.values() if c.parent is None), None)
            if root is not None:
                self.refer(root)
                return root
        for ctx in reversed(list(self.images.values())):
            if ctx.parent is None:
                continue
            haystack = set(_WORD.findall(f"{ctx.description} {ctx.target} "
                                         f"{ctx.transformation}".lower()))
            if words & haystack and _matches(words, haystack):
                found = ctx.id if re.search(r"\bafter\b", text) else ctx.parent
                self.refer(found)
                return found
        return None

    def resolve(self, text: str) -> dict[str, Any]:
        """What the references in ``text`` point at.

        Returns a dict with ``target`` (for a pronoun), ``color`` (for "same colour"),
        and ``node`` (for "before/after the … change"); keys absent when not referenced.
        """
        low = text.lower()
        words = set(_WORD.findall(low))
        out: dict[str, Any] = {}
        if words & _PRONOUNS and self.last_target():
            out["target"] = self.last_target()
        if re.search(r"\bsame (colou?r|shade)\b", low) and self.last_value("color"):
            out["color"] = self.last_value("color")
        if re.search(r"\b(before|after)\b", low):
            node = self.find_node(text)
            if node is not None:
                out["node"] = node
        return out

    def render(self, budget_chars: int = 2000) -> str:
        """The planner's context, at most ``budget_chars`` characters.

        Order of priority: the current state, the states the user referred to, the recent
        targets and values, then the turns from the newest back as far as the budget goes
        (older ones summarised by a count).
        """
        budget = max(0, int(budget_chars))
        head = self.images.get(self.head or "")
        lines = [f"current state: {self._label(head.id)}" if head else "current state: none"]
        if self.referred:
            lines.append("states referred to: " + "; ".join(
                self._label(n) for n in reversed(self.referred) if n in self.images))
        gone = self.removed_targets()
        targets = _unique(t for act in reversed(self.actions) for t in reversed(act.targets)
                          if t.lower() not in gone)
        if targets:
            lines.append("recent targets: " + ", ".join(targets[:6]))
        if gone:
            lines.append("removed (no longer in the image): " + ", ".join(sorted(gone)[:6]))
        values = _latest_values(self.actions)
        if values:
            lines.append("recent values: " + ", ".join(f"{k}={v}" for k, v in values.items()))
        fixed = "\n".join(lines)
        turns: list[str] = []
        used = len(fixed)
        for act in reversed(self.actions):
            line = (f"turn {act.turn}: {act.intent} -> {act.outcome}"
                    + (f" [{', '.join(act.states[-3:])}]" if act.states else "")
                    + (f" (critic: {'; '.join(act.notes)})" if act.notes else ""))
            if used + len(line) + 1 > budget - 40:
                break
            turns.append(line)
            used += len(line) + 1
        older = len(self.actions) - len(turns)
        if older:
            turns.append(f"({older} earlier turn{'s' if older > 1 else ''} folded)")
        text = "\n".join([fixed, *reversed(turns)]) if turns else fixed
        return text if len(text) <= budget else text[:max(0, budget - 1)] + "…"

    def _label(self, node_id: str) -> str:
        ctx = self.images.get(node_id)
        if ctx is None:
            return node_id
        return f"{ctx.id} ({_clip(ctx.description, 60)})"

    # ---- JSON ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """JSON-able dict (the transient ToolContexts are not saved)."""
        return {"images": [asdict(c) for c in self.images.values()],
                "actions": [asdict(a) for a in self.actions],
                "referred": list(self.referred), "head": self.head}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Memory:
        mem = cls()
        for item in data.get("images", []):
            mem.add_image(ImageContext(**item))
        mem.actions = [ActionContext(**item) for item in data.get("actions", [])]
        mem.referred = [str(x) for x in data.get("referred", [])]
        mem.head = data.get("head")
        return mem


def _matches(words: set[str], haystack: set[str]) -> bool:
    """Most of the query's content words appear in the state's text."""
    return len(words & haystack) * 2 >= len(words)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _unique(items: Any) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item)
    return out


def _small_values(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items()
            if isinstance(v, (str, int, float, bool)) and len(str(v)) <= 60}


def _latest_values(actions: list[ActionContext]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for act in reversed(actions):
        for k, v in act.values.items():
            out.setdefault(k, v)
        if len(out) >= 6:
            break
    return dict(list(out.items())[:6])
