"""Multi-instruction editing by Tree-of-States with Graph-of-References (MSRAMIE §3, app. D).

``tree_search(image, instruction)`` decomposes a long request into a checklist
(``agent.brain.checklist``), then grows an inference topology of states. Each new state:

1. Retriever — picks up to ``top_k`` states within ``search_range`` layers of the parent
   whose input resembles the parent's output (similarity 0–100 ≥ ``relevance_threshold``);
2. Instruction generator — writes the state's thought: up to ``instruction_volume``
   checklist items the parent does not satisfy, items the references did not already try
   first (the references steer it toward uncovered items);
3. Actor — executes the thought on the parent's output (``EditorActor``: the classical
   editor, and the configured generative editor for items no rule understood);
4. Evaluator — answers the checklist against the original (root recall) and measures
   structure preservation;
5. Scheduler — stops on completion (all items, depth ≥ ``min_depth``); otherwise goes
   deeper when the child kept its parent's share (within ``degrade_tolerance``) and reaches
   ``stay_threshold``, else backtracks depth-first to the nearest state with a free child
   slot; ``max_steps`` bounds the states. The result is the best state (share satisfied,
   ties → the shallowest, then preservation), preferring depth ≥ ``min_depth``.

``mode`` picks the paper's ablations: ``"direct"`` (everything in one pass), ``"chain"``
(one child per state), ``"tree"`` (no references) and ``"tree_refs"`` (the full method).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import cv2
import numpy as np

from agent import executor
from agent.brain.checklist import (
    Checker,
    Item,
    build_checklist,
    default_checker,
    find_target,
    perceive_objects,
)
from eval.noref import preservation
from pipelines.arrays import rgb_array
from pipelines.editors.base import EditError, EditRequest
from pipelines.editors.registry import get_editor, pick_editor

log = logging.getLogger(__name__)

MODES = ("direct", "chain", "tree", "tree_refs")


@dataclass
class SearchLimits:
    """The scheduler's and retriever's knobs (names follow MSRAMIE's appendix D)."""

    max_steps: int = 8
    max_children: int = 2
    max_depth: int = 4
    min_depth: int = 1
    completion_threshold: float = 1.0     # share of checklist items
    preservation_threshold: float = 0.5   # structure kept, for completion
    degrade_tolerance: float = 0.0
    stay_threshold: float = 0.1
    instruction_volume: int = 2
    search_range: int = 2
    top_k: int = 3
    relevance_threshold: float = 50.0

    @classmethod
    def for_complexity(cls, n_items: int, mode: str = "tree_refs") -> SearchLimits:
        """The paper's settings for a request of ``n_items`` sub-instructions (Table D1/D2).

        Args:
            n_items: the instruction complexity C.
            mode: one of ``MODES``.

        Returns:
            Limits with MaxSteps 2(C+1), MinDepth ⌈(C+1)/2⌉ and the mode's shape.
        """
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        c = max(1, n_items)
        base = dict(max_steps=2 * (c + 1), min_depth=((c + 1) + (c + 1) % 2) // 2)
        if mode == "direct":
            return cls(max_steps=1, max_children=1, max_depth=1, min_depth=1,
                       instruction_volume=c, search_range=0)
        if mode == "chain":
            return cls(**base, max_children=1, max_depth=2 * (c + 1), search_range=0)
        return cls(**base, max_children=2, max_depth=c + 1,
                   search_range=2 if mode == "tree_refs" else 0)

    def check(self) -> None:
        """Reject out-of-range knobs before any work."""
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{f.name} must be a non-negative number, got {value!r}")
        if self.max_steps < 1 or self.max_children < 1 or self.max_depth < 1 \
                or self.instruction_volume < 1 or self.max_steps > 200:
            raise ValueError("max_steps (1–200), max_children, max_depth and "
                             "instruction_volume must be at least 1")


# ----------------------------------------------------------------------------- actor

class Actor(Protocol):
    """Executes a state's thought (checklist items) on the parent's output."""

    def act(self, image: np.ndarray, items: list[Item], original: np.ndarray,
            rng: random.Random) -> np.ndarray: ...


def object_mask(image: np.ndarray, position: tuple[float, float]) -> np.ndarray | None:
    """The saturated blob nearest ``position`` (fractions of width/height), dilated a little."""
    hsv = cv2.cvtColor(np.ascontiguousarray(image[..., :3]), cv2.COLOR_RGB2HSV)
    blob = ((hsv[..., 1] > 90) & (hsv[..., 2] > 50)).astype(np.uint8)
    n, labels = cv2.connectedComponents(blob)
    if n <= 1:
        return None
    h, w = blob.shape
    x, y = int(position[0] * (w - 1)), int(position[1] * (h - 1))
    label = labels[y, x]
    if label == 0:
        ys, xs = np.nonzero(blob)
        i = int(np.argmin((xs - x) ** 2 + (ys - y) ** 2))
        if (xs[i] - x) ** 2 + (ys[i] - y) ** 2 > (0.1 * h) ** 2:
            return None
        label = labels[ys[i], xs[i]]
    mask = (labels == label).astype(np.uint8)
    return cv2.dilate(mask, np.ones((5, 5), np.uint8)).astype(bool)


@dataclass
class ClassicalActor:
    """Runs checklist items with the classical editor.

    ``load_penalty``/``base_failure`` model an imperfect instruction follower (a generative
    editor given a long prompt): each item of a thought with ``n`` items fails with
    probability ``base_failure + load_penalty·(n−1)`` — it is skipped, done weakly, or done
    on the wrong object. Both are 0 by default (a faithful executor).
    """

    load_penalty: float = 0.0
    base_failure: float = 0.0

    def act(self, image: np.ndarray, items: list[Item], original: np.ndarray,
            rng: random.Random) -> np.ndarray:
        """Apply ``items`` in order to ``image``; returns the new image."""
        p_fail = min(0.95, self.base_failure + self.load_penalty * (len(items) - 1))
        out = image
        for item in items:
            mode = "ok"
            if p_fail > 0 and rng.random() < p_fail:
                mode = rng.choice(("skip", "weak", "wrong"))
            if mode != "skip":
                out = self._one(out, item, original, mode, rng)
        return out

    def _one(self, image: np.ndarray, item: Item, original: np.ndarray, mode: str,
             rng: random.Random) -> np.ndarray:
        params = dict(item.params)
        if item.kind == "global":
            if mode == "weak":
                params = {k: v * 0.25 if isinstance(v, float) else v for k, v in params.items()}
            mask = np.ones(image.shape[:2], bool)
        elif item.kind in ("recolor", "remove"):
            mask = self._target_mask(image, item, original, wrong=(mode == "wrong"), rng=rng)
            if mask is None:
                return image
            if mode == "weak" and item.kind == "recolor":
                params["strength"] = 0.3
            elif mode == "weak":
                mask = cv2.erode(mask.astype(np.uint8), np.ones((9, 9), np.uint8)).astype(bool)
        else:
            return image
        kind = {"recolor": "adjust", "remove": "remove"}.get(item.kind, "adjust")
        request = EditRequest(kind=kind, operation=item.operation, params=params,
                              instruction=item.text)
        return executor.execute(image, request, mask).paste(image)

    @staticmethod
    def _target_mask(image: np.ndarray, item: Item, original: np.ndarray, *, wrong: bool,
                     rng: random.Random) -> np.ndarray | None:
        start = find_target(perceive_objects(original), item.target)
        if start is None:
            return None
        position = start.position
        if wrong:
            others = [o for o in perceive_objects(image).objects
                      if abs(o.position[0] - position[0]) + abs(o.position[1] - position[1])
                      > 0.05]
            if others:
                position = rng.choice(others).position
        return object_mask(image, position)


def generative_editor_name() -> str | None:
    """The generative editor the registry would use for a free-form edit (None: none)."""
    try:
        return pick_editor(EditRequest(kind="adjust", operation="generate")).name
    except EditError as err:
        log.info("tree search without a generative actor: %s", err)
        return None


@dataclass
class EditorActor(ClassicalActor):
    """The default actor: checklist items the rules understood run on the classical editor;
    items they did not (``kind == "unknown"``) go to the configured generative editor as
    a whole-frame edit whose prompt is the item's own words.

    Without a generative editor, unknown items are not attempted (``can_do`` is False).
    """

    generative: str | None = None
    editors_used: list[str] = field(default_factory=list)

    @classmethod
    def configured(cls) -> EditorActor:
        """An actor bound to the generative editor configured now (if any)."""
        return cls(generative=generative_editor_name())

    def can_do(self, item: Item) -> bool:
        """Whether this actor can attempt ``item``."""
        return item.kind != "unknown" or self.generative is not None

    def _one(self, image: np.ndarray, item: Item, original: np.ndarray, mode: str,
             rng: random.Random) -> np.ndarray:
        if item.kind != "unknown":
            self.editors_used.append("classical")
            return super()._one(image, item, original, mode, rng)
        if self.generative is None:
            return image
        request = EditRequest(kind="adjust", operation="generate",
                              params={"prompt": item.text}, instruction=item.text,
                              seed=rng.randrange(2 ** 31))
        editor = get_editor(self.generative)
        self.editors_used.append(editor.name)
        return executor.execute(image, request, editor=editor).paste(image)


# ----------------------------------------------------------------------------- topology

@dataclass
class State:
    """One node of the inference topology."""

    id: int
    parent: State | None
    depth: int
    thought: list[int]                    # checklist indices this state was asked to do
    text: str
    image: np.ndarray
    satisfied: list[bool] = field(default_factory=list)
    preservation: float = 1.0
    children: list[State] = field(default_factory=list)
    references: list[int] = field(default_factory=list)
    editors: list[str] = field(default_factory=list)   # who executed each item (if known)

    @property
    def share(self) -> float:
        return float(np.mean(self.satisfied)) if self.satisfied else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "parent": self.parent.id if self.parent else None,
                "depth": self.depth, "thought": self.thought, "text": self.text,
                "satisfied": self.satisfied, "share": round(self.share, 4),
                "preservation": round(self.preservation, 4), "references": self.references,
                "editors": self.editors}


@dataclass
class SearchResult:
    """What ``tree_search`` returns."""

    image: np.ndarray
    steps: list[dict[str, Any]]
    topology: dict[str, Any]
    satisfied: float
    checklist: list[Item] = field(default_factory=list)

    @property
    def best_image(self) -> np.ndarray:
        """Alias of ``image`` (the name in docs/ARCHITECTURE.md)."""
        return self.image

    @property
    def topology_json(self) -> dict[str, Any]:
        """Alias of ``topology``."""
        return self.topology

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (without pixels)."""
        return {"steps": self.steps, "topology": self.topology,
                "satisfied": round(self.satisfied, 4),
                "checklist": [it.to_dict() for it in self.checklist]}


def _similarity(a: np.ndarray, b: np.ndarray) -> float:
    """0–100 image similarity at 64 px (100 = identical)."""
    def small(x: np.ndarray) -> np.ndarray:
        return cv2.resize(np.ascontiguousarray(x[..., :3]), (64, 64),
                          interpolation=cv2.INTER_AREA).astype(np.float32)
    mad = float(np.mean(np.abs(small(a) - small(b))))
    return 100.0 * max(0.0, 1.0 - mad / 32.0)


@dataclass
class _Search:
    items: list[Item]
    original: np.ndarray
    limits: SearchLimits
    actor: Actor
    checker: Checker
    rng: random.Random
    states: list[State] = field(default_factory=list)

    def evaluate(self, state: State) -> None:
        state.satisfied = [bool(v) for v in
                           self.checker.check(self.items, self.original, state.image)]
        state.preservation = preservation(state.image, self.original) if state.parent else 1.0

    def retrieve(self, parent: State) -> list[State]:
        r = self.limits.search_range
        if r <= 0:
            return []
        scored = []
        for s in self.states:
            if s.parent is None or s is parent or abs(s.depth - parent.depth) > r:
                continue
            sim = _similarity(s.parent.image, parent.image)
            if sim >= self.limits.relevance_threshold:
                scored.append((sim, -s.id, s))
        scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
        return [s for _, _, s in scored[: self.limits.top_k]]

    def generate(self, parent: State, refs: list[State]) -> list[int]:
        can_do = getattr(self.actor, "can_do", lambda item: item.kind != "unknown")
        unmet = [i for i, ok in enumerate(parent.satisfied) if not ok
                 and can_do(self.items[i])]
        tried_failed = {i for r in refs for i in r.thought if not r.satisfied[i]}
        tried = {i for r in refs for i in r.thought}
        order = sorted(unmet, key=lambda i: (i in tried_failed, i in tried, i))
        return order[: self.limits.instruction_volume]

    def add(self, parent: State, thought: list[int], refs: list[State]) -> State:
        items = [self.items[i] for i in thought]
        used = getattr(self.actor, "editors_used", None)
        before = len(used) if used is not None else 0
        image = self.actor.act(parent.image, items, self.original, self.rng)
        state = State(len(self.states), parent, parent.depth + 1, thought,
                      "; ".join(it.text for it in items), image,
                      references=[r.id for r in refs],
                      editors=list(used[before:]) if used is not None else [])
        self.evaluate(state)
        parent.children.append(state)
        self.states.append(state)
        return state

    def complete(self, state: State) -> bool:
        return (state.share >= self.limits.completion_threshold and state.depth >=
                self.limits.min_depth and state.preservation >=
                self.limits.preservation_threshold)

    def next_parent(self, child: State) -> State | None:
        lim = self.limits
        keeps = child.share >= child.parent.share - lim.degrade_tolerance
        if keeps and child.share >= lim.stay_threshold and child.depth < lim.max_depth:
            return child
        node = child.parent
        while node is not None:
            if len(node.children) < lim.max_children and node.depth < lim.max_depth:
                return node
            node = node.parent
        return None

    def best(self) -> State:
        pool = [s for s in self.states if s.depth >= self.limits.min_depth] or \
            [s for s in self.states if s.parent is not None] or self.states
        return max(pool, key=lambda s: (round(s.share, 6), -s.depth, s.preservation, -s.id))


def tree_search(image: np.ndarray, instruction: str, *, session: Any = None, seed: int = 0,
                mode: str = "tree_refs", actor: Actor | None = None,
                checker: Checker | None = None, **limits: Any) -> SearchResult:
    """Edit ``image`` to satisfy a long multi-part ``instruction`` by topology search.

    Args:
        image: ``uint8`` RGB/RGBA image.
        instruction: the request; split into checklist items.
        session: an ``agent.session.EditSession``; the chosen path is committed to it.
        seed: makes the search (and a noisy actor) deterministic.
        mode: ``"direct"``, ``"chain"``, ``"tree"`` or ``"tree_refs"`` (default).
        actor: the executor (default: ``EditorActor.configured()`` — the classical
            editor, plus the generative editor for items no rule understood when one is
            configured).
        checker: the checklist answerer (default: VLM when configured, else measured).
        **limits: ``SearchLimits`` overrides (``max_steps=…``, ``top_k=…``, …).

    Returns:
        The best state's image, the steps on its path, the topology (nodes, transition
        edges, reference links, root-recall note) and its share of satisfied items.
    """
    rgb_array(image, "tree_search's image", alpha=True)
    items = build_checklist(instruction)
    unknown = [f.name for f in fields(SearchLimits)]
    bad = sorted(set(limits) - set(unknown))
    if bad:
        raise ValueError(f"unknown search limit(s) {bad}; known: {', '.join(unknown)}")
    lim = SearchLimits.for_complexity(len(items), mode)
    for key, value in limits.items():
        setattr(lim, key, value)
    lim.check()
    search = _Search(items, image, lim, actor or EditorActor.configured(),
                     checker or default_checker(),
                     random.Random(seed))
    root = State(0, None, 0, [], instruction, image)
    search.evaluate(root)
    search.states.append(root)
    parent: State | None = root
    while parent is not None and len(search.states) - 1 < lim.max_steps:
        refs = search.retrieve(parent)
        thought = search.generate(parent, refs)
        if not thought:
            break
        child = search.add(parent, thought, refs)
        if search.complete(child):
            break
        parent = search.next_parent(child)
    best = search.best()
    return _result(search, best, session)


def _result(search: _Search, best: State, session: Any) -> SearchResult:
    path, node = [], best
    while node is not None and node.parent is not None:
        path.append(node)
        node = node.parent
    path.reverse()
    steps = [{"state": s.id, "thought": s.text, "items": s.thought,
              "share": round(s.share, 4)} for s in path]
    if session is not None:
        for s in path:
            node = session.commit(s.image, {"kind": "adjust", "operation": "tree_search",
                                            "instruction": s.text}, f"tree search: {s.text}")
            steps[path.index(s)]["node_id"] = getattr(node, "id", None)
    topology = {
        "root": 0, "best": best.id, "mode_limits": {f.name: getattr(search.limits, f.name)
                                                   for f in fields(search.limits)},
        "checklist": [it.to_dict() for it in search.items],
        "nodes": [s.to_json() for s in search.states],
        "edges": [[s.parent.id, s.id] for s in search.states if s.parent is not None],
        "references": [[r, s.id] for s in search.states for r in s.references],
        "root_recall": "every state is evaluated against the root's image and instruction",
        "active_path": [0] + [s.id for s in path],
    }
    return SearchResult(best.image if path else search.original, steps, topology,
                        best.share if path else search.states[0].share, search.items)
