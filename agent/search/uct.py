"""Autopilot's search tree: nodes of edit paths, UCT selection, expansion from the
proposal pool, simulations scored by the reward (``agent.search.mcts`` runs it)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agent.brain.perceiver import Candidate
from agent.search.autopilot_memory import AutopilotMemory
from agent.search.candidates import apply_candidate
from agent.search.reward import Carried, natural_term, predictions, score_with, unchanged

#: Exploration constant of UCT (rewards lie in [0, 1]).
UCT_C = 0.35
#: Children of a node below the root (the pool's best families not yet on its path).
CHILD_K = 4


@dataclass
class Node:
    id: int
    cand: Candidate | None
    parent: Node | None
    depth: int
    image: np.ndarray | None = None
    children: list[Node] = field(default_factory=list)
    expanded: bool = False
    visits: int = 0
    total: float = 0.0
    score: float | None = None
    pred: dict[str, float] | None = None    # the learned model's distances for this state

    def predictions(self) -> dict[str, float]:
        """The learned model's predictions for this state (computed once)."""
        if self.pred is None:
            self.pred = predictions(self.image) if self.image is not None else {}
        return self.pred

    @property
    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0

    def path(self) -> list[Candidate]:
        """The candidates applied from the root to this node, in order."""
        node, out = self, []
        while node is not None and node.cand is not None:
            out.append(node.cand)
            node = node.parent
        return out[::-1]

    def path_key(self) -> str:
        """The path as text (seeds this node's rollouts and breaks ties)."""
        return "/".join(c.key for c in self.path())

    def families(self) -> set[str]:
        return {c.family for c in self.path()}

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "depth": self.depth,
                "action": self.cand.action.model_dump(mode="json") if self.cand else None,
                "description": self.cand.action.describe() if self.cand else "current image",
                "reason": self.cand.reason if self.cand else "",
                "visits": self.visits, "mean_reward": round(self.mean, 5),
                "score": None if self.score is None else round(self.score, 5),
                "children": [c.to_json() for c in self.children]}


@dataclass
class Search:
    """One MCTS over a reduced copy of the current image."""

    original: np.ndarray              # reduced original (preservation and mood reference)
    full_size: tuple[int, int]
    style: str | None
    depth: int
    k: int
    seed: int
    carried: Carried
    next_id: int = 0
    evals: int = 0
    pool: list[Candidate] = field(default_factory=list)
    first_order: list[str] = field(default_factory=list)   # root children's keys, by memory

    def reward(self, image: np.ndarray, path: list[Candidate],
               before: dict[str, float] | None = None,
               start: np.ndarray | None = None) -> float:
        """Score a state reached by ``path``; ``before`` = the predictions of ``start``, the
        state its last edit was applied to."""
        self.evals += 1
        natural = natural_term(image, before, path[-1] if path else None, start)
        return score_with(image, self.original, self.style, self.carried.after_all(path),
                          natural=natural)[0]

    def new_node(self, cand: Candidate | None, parent: Node | None) -> Node:
        self.next_id += 1
        return Node(self.next_id, cand, parent, parent.depth + 1 if parent else 0)

    def materialise(self, node: Node) -> np.ndarray:
        if node.image is None:
            node.image = apply_candidate(node.parent.image, node.cand,
                                         full_size=self.full_size)
            node.score = self.reward(node.image, node.path(), node.parent.predictions(),
                                     node.parent.image)
        return node.image

    def screen(self, root: Node, proposals: list[Candidate],
               memory: AutopilotMemory | None, scene: str) -> None:
        """Score every proposal once; the best ``k`` become the root's children.

        The pool's order (score, then key) never depends on the memory; the memory only
        orders the children's first visits.
        """
        scored = []
        for cand in proposals:
            node = self.new_node(cand, root)
            self.materialise(node)
            if not unchanged(node.image, root.image):   # an edit that does nothing is no option
                scored.append(node)
        scored.sort(key=lambda n: (-(n.score or 0.0), n.cand.key))
        self.pool = [n.cand for n in scored]
        root.children = scored[: self.k]
        root.expanded = True
        prior = (lambda c: memory.prior(scene, c.family)) if memory is not None else \
            (lambda c: 0.0)
        self.first_order = [n.cand.key for n in sorted(
            root.children, key=lambda n: -prior(n.cand))]

    def expand(self, node: Node) -> None:
        used = node.families()
        picks = [c for c in self.pool if c.family not in used][:CHILD_K]
        node.children = [self.new_node(c, node) for c in picks]
        node.expanded = True

    def select(self, root: Node) -> Node:
        fresh = {c.cand.key: c for c in root.children if c.visits == 0}
        if fresh:
            return next(fresh[k] for k in self.first_order if k in fresh)
        node = root
        while node.expanded and node.children:
            log_n = math.log(max(1, node.visits))
            node = max(node.children, key=lambda c: (
                math.inf if c.visits == 0 else c.mean + UCT_C * math.sqrt(log_n / c.visits)))
        return node

    def simulate(self, root: Node) -> None:
        node = self.select(root)
        self.materialise(node)
        if node.depth < self.depth and not node.expanded:
            self.expand(node)
            if node.children:
                node = node.children[0]
                self.materialise(node)
        best, state, path = node.score or 0.0, node.image, node.path()
        rng = random.Random(f"{self.seed}|{node.path_key()}|{node.visits}")
        options = [c for c in self.pool[: self.k + CHILD_K]
                   if c.family not in {p.family for p in path}]
        steps, last_start = 0, state
        for _ in range(node.depth, self.depth):
            if not options:
                break
            cand = options.pop(rng.randrange(len(options)))
            options = [c for c in options if c.family != cand.family]
            last_start = state
            state = apply_candidate(state, cand, full_size=self.full_size)
            path.append(cand)
            steps += 1
        if steps:   # the last edit is read off the state it started from
            before = node.predictions() if steps == 1 else predictions(last_start)
            best = max(best, self.reward(state, path, before, last_start))
        while node is not None:
            node.visits += 1
            node.total += best
            node = node.parent

    def best_node(self, root: Node) -> Node | None:
        """The best-scoring state the search has materialised (None: only the root)."""
        found: list[Node] = []
        stack = list(root.children)
        while stack:
            node = stack.pop()
            if node.score is not None:
                found.append(node)
            stack.extend(node.children)
        return max(found, key=lambda n: (n.score or 0.0, -n.depth, n.path_key()),
                   default=None)
