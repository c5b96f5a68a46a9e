"""Autopilot: "make it better" by Monte Carlo tree search over perceiver proposals.

One Autopilot iteration (PhotoAgent §3, appendices A, C, F):

1. screen — every proposal of the perceiver (the photographer's corrections, the measured
   deficits' remedies, the mood's actions) is applied once to a reduced copy (long side
   ``sim_size``, 512 by default) and scored; the ``k`` best become the root's children;
2. plan — MCTS over that pool: UCT selection, expansion into the pool's remaining
   families, a random rollout to ``depth`` edits, the reward
   (``agent.search.reward.evaluate``) backed up as visit counts and mean rewards;
3. execute — the ``top_k`` most-visited root actions run on the full-resolution image and
   are re-scored there;
4. keep or stop — the best result is kept only if it beats the current image by
   ``required_gain`` (a step that lowers the score is never taken, and a photo that
   already looks right is left alone); it lands in the session's state graph when a
   session is given.

Results depend on the photo, the mood, the budget and the seed only. The memory of past
runs decides the order in which the root's children are first tried ("where the search
starts"), which matters only when a run is cancelled early; every child is tried once
before UCT takes over, rollouts draw from a generator seeded by their own path, and ties
break on the candidates' keys, so a full run gives the same result whatever came before.

Cancelling keeps the best state found so far: the kept steps plus, when the search had
found a better state, that state's path executed at full resolution.

Differences from the paper, on purpose: the reward backed up is the better of the expanded
node's own score and the rollout's terminal score (a random bad rollout does not hide a
good first edit), node scores are computed once, and full-resolution execution of
per-channel tone/colour operations goes through 1-D look-up tables computed by the same
editor (the operation's own curve, at a fraction of the cost on 12-MP photos);
low-frequency ones (shadows, highlights, vignette) carry their gain map over from a
1024-px copy.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from agent import executor
from agent.actions import Action
from agent.brain.context import SceneContext, describe, scene_context
from agent.brain.perceiver import Candidate, perceive, propose, run_gates
from agent.search.autopilot_memory import AutopilotMemory
from agent.search.reward import (  # noqa: F401  (re-exported: the module's public names)
    COLOUR_OPS,
    FADED_BLACK,
    FIDELITY_COST,
    HARM_BOUND,
    HARM_SIZE,
    MIN_GAIN,
    MOOD_WEIGHT,
    STEP_MARGIN,
    Carried,
    black_point,
    bounded_share,
    deviation,
    evaluate,
    harm_margin,
    mean_delta_e,
    natural_term,
    predicted_gain,
    predictions,
    required_gain,
    score_with,
    unchanged,
)
from eval.level import APPLY_CONFIDENCE
from eval.naturalness import SELF, distance_to_score
from eval.noref import to_analysis

log = logging.getLogger(__name__)

ProgressFn = Callable[[int, int, str], None]
CancelFn = Callable[[], bool]

#: Exploration constant of UCT (rewards lie in [0, 1]).
UCT_C = 0.35
#: Proposals screened at the root of each iteration (the best ``k`` become its children).
POOL_SIZE = 24
#: Children of a node below the root (the pool's best families not yet on its path).
CHILD_K = 4
#: A step the do-no-harm bound would scale below this share is skipped instead (a step
#: scaled down still moves the photo towards the full correction, so any share helps).
MIN_SHARE = 0.01


# ----------------------------------------------------------------------------- execute

@lru_cache(maxsize=16)
def _protect_alpha(shape: tuple[int, int], boxes: tuple[tuple[int, int, int, int], ...],
                   strength: float, scale: float) -> np.ndarray:
    """1 outside the boxes, ``strength`` inside soft ellipses fitted to them.

    Drawn and feathered at ≤ 256 px, then resized up (a smooth map needs no more).
    """
    h, w = shape
    s = min(1.0, 256 / max(h, w))
    sh, sw = max(1, round(h * s)), max(1, round(w * s))
    alpha = np.ones((sh, sw), np.float32)
    for x0, y0, x1, y1 in boxes:
        cx, cy = (x0 + x1) / 2 * scale * s, (y0 + y1) / 2 * scale * s
        ax, ay = (x1 - x0) / 2 * scale * s, (y1 - y0) / 2 * scale * s
        cv2.ellipse(alpha, (round(cx), round(cy)), (max(1, round(ax)), max(1, round(ay))),
                    0, 0, 360, float(strength), -1)
    alpha = cv2.GaussianBlur(alpha, (0, 0), max(1.0, 0.02 * max(sh, sw)))
    return cv2.resize(alpha, (w, h), interpolation=cv2.INTER_LINEAR)


def apply_candidate(image: np.ndarray, cand: Candidate, *, full_size: tuple[int, int]
                    | None = None, fast: bool = True, seed: int = 0) -> np.ndarray:
    """Run one proposed edit on ``image`` (any resolution), protecting people if asked.

    Args:
        image: ``uint8`` RGB/RGBA image.
        cand: the candidate (its ``protect`` boxes are in ``full_size`` pixels).
        full_size: (width, height) the boxes refer to; ``None`` = ``image``'s size.
        fast: use look-up tables / gain maps for the operations that allow it.
        seed: passed to the editor.

    Returns:
        The edited image, same shape as ``image``.
    """
    rgb = np.ascontiguousarray(image[..., :3])
    alpha_ch = image[..., 3:] if image.shape[2] == 4 else None
    out = executor.execute(rgb, cand.action, seed=seed, fast=fast).patch
    if cand.protect:
        scale = rgb.shape[1] / (full_size or (rgb.shape[1], rgb.shape[0]))[0]
        a = _protect_alpha(rgb.shape[:2], tuple(tuple(b) for b in cand.protect),
                           cand.protect_strength, scale)
        a3 = cv2.merge([a, a, a])
        base = rgb.astype(np.float32)
        out = cv2.add(base, cv2.multiply(cv2.subtract(out.astype(np.float32), base), a3))
        out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    if alpha_ch is not None:
        out = np.dstack([out, alpha_ch])
    return np.ascontiguousarray(out)


# ----------------------------------------------------------------------------- tree

@dataclass
class _Node:
    id: int
    cand: Candidate | None
    parent: _Node | None
    depth: int
    image: np.ndarray | None = None
    children: list[_Node] = field(default_factory=list)
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
class _Search:
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

    def new_node(self, cand: Candidate | None, parent: _Node | None) -> _Node:
        self.next_id += 1
        return _Node(self.next_id, cand, parent, parent.depth + 1 if parent else 0)

    def materialise(self, node: _Node) -> np.ndarray:
        if node.image is None:
            node.image = apply_candidate(node.parent.image, node.cand,
                                         full_size=self.full_size)
            node.score = self.reward(node.image, node.path(), node.parent.predictions(),
                                     node.parent.image)
        return node.image

    def screen(self, root: _Node, proposals: list[Candidate],
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

    def expand(self, node: _Node) -> None:
        used = node.families()
        picks = [c for c in self.pool if c.family not in used][:CHILD_K]
        node.children = [self.new_node(c, node) for c in picks]
        node.expanded = True

    def select(self, root: _Node) -> _Node:
        fresh = {c.cand.key: c for c in root.children if c.visits == 0}
        if fresh:
            return next(fresh[k] for k in self.first_order if k in fresh)
        node = root
        while node.expanded and node.children:
            log_n = math.log(max(1, node.visits))
            node = max(node.children, key=lambda c: (
                math.inf if c.visits == 0 else c.mean + UCT_C * math.sqrt(log_n / c.visits)))
        return node

    def simulate(self, root: _Node) -> None:
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

    def best_node(self, root: _Node) -> _Node | None:
        """The best-scoring state the search has materialised (None: only the root)."""
        found: list[_Node] = []
        stack = list(root.children)
        while stack:
            node = stack.pop()
            if node.score is not None:
                found.append(node)
            stack.extend(node.children)
        return max(found, key=lambda n: (n.score or 0.0, -n.depth, n.path_key()),
                   default=None)


# ----------------------------------------------------------------------------- autopilot

@dataclass
class AutopilotStep:
    """One executed, kept step."""

    action: dict[str, Any]
    description: str
    reason: str
    score_before: float
    score_after: float
    node_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"action": self.action, "description": self.description, "reason": self.reason,
                "score_before": round(self.score_before, 5),
                "score_after": round(self.score_after, 5), "node_id": self.node_id}


@dataclass
class AutopilotResult:
    """What ``autopilot`` returns."""

    image: np.ndarray
    steps: list[AutopilotStep]
    tree: dict[str, Any]
    score_before: float
    score_after: float
    cancelled: bool = False
    reason: str = ""                                   # why it changed, or left it alone
    considered: list[dict[str, Any]] = field(default_factory=list)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def tree_json(self) -> dict[str, Any]:
        """Alias of ``tree`` (the name in docs/ARCHITECTURE.md)."""
        return self.tree

    @property
    def left_alone(self) -> bool:
        """Whether the run kept no step (the photo comes back as it was)."""
        return not self.steps

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (without pixels).

        Keys: ``steps``, ``tree``, ``score_before``, ``score_after``, ``cancelled``,
        ``size``, ``left_alone`` (no step kept), ``reason`` (one line: why it left the photo
        alone, or what it changed), ``considered`` (every change executed at full
        resolution: ``iteration``, ``description``, ``operation``, ``decision``, and where
        measured ``predicted_gain``, ``margin``, ``moves``, ``share``), ``suggestions``
        (offered, not applied: ``operation``, ``params``, ``description``, ``confidence``,
        ``cue``, ``reason``) and ``context`` (the scene cues: ``flags``, ``reasons``).
        """
        return {"steps": [s.to_dict() for s in self.steps], "tree": self.tree,
                "score_before": round(self.score_before, 5),
                "score_after": round(self.score_after, 5), "cancelled": self.cancelled,
                "size": [int(self.image.shape[1]), int(self.image.shape[0])],
                "left_alone": self.left_alone, "reason": self.reason,
                "considered": list(self.considered), "suggestions": list(self.suggestions),
                "context": dict(self.context)}


def _check_args(image: Any, iterations: int, simulations: int, depth: int, top_k: int,
                sim_size: int) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 \
            or image.shape[2] not in (3, 4):
        raise ValueError("autopilot needs a uint8 RGB or RGBA image array")
    if min(image.shape[:2]) < 16:
        raise ValueError(f"image {image.shape[1]}x{image.shape[0]} is too small (min 16 px)")
    for name, value, hi in (("iterations", iterations, 20), ("simulations", simulations, 500),
                            ("depth", depth, 8), ("top_k", top_k, 10)):
        if not isinstance(value, int) or not 1 <= value <= hi:
            raise ValueError(f"{name} must be an integer in [1, {hi}], got {value!r}")
    if not 64 <= sim_size <= 4096:
        raise ValueError(f"sim_size must be in [64, 4096], got {sim_size}")


@dataclass
class _Run:
    """The state of one Autopilot run between iterations."""

    original: np.ndarray
    style: str | None
    carried: Carried
    current: np.ndarray
    score: float
    session: Any
    context: SceneContext = field(default_factory=SceneContext)
    steps: list[AutopilotStep] = field(default_factory=list)
    pred: dict[str, float] | None = None     # the learned model on ``current``
    reference: np.ndarray | None = None      # the last confident state, at HARM_SIZE
    considered: list[dict[str, Any]] = field(default_factory=list)
    full: list[Candidate] = field(default_factory=list)   # each kept or skipped step, whole
    held: list[dict[str, Any]] = field(default_factory=list)  # guard records: scaled/skipped

    def __post_init__(self) -> None:
        if self.reference is None:
            self.reference = to_analysis(self.current, HARM_SIZE)
        self.carried0 = self.carried
        self.faded = black_point(self.original) >= FADED_BLACK

    def predictions(self) -> dict[str, float]:
        """The learned model's predictions for the current image (computed once per image)."""
        if self.pred is None:
            self.pred = predictions(self.current)
        return self.pred

    def score_step(self, cand: Candidate, result: np.ndarray,
                   before: dict[str, float] | None = None,
                   carried: Carried | None = None, start: np.ndarray | None = None) -> float:
        """The reward of ``result`` = ``cand`` applied to the image predicted by ``before``."""
        natural = natural_term(result, before if before is not None else self.predictions(),
                               cand, start if start is not None else self.current)
        return score_with(result, self.original, self.style,
                          (carried or self.carried).after(cand), natural=natural)[0]

    def confident(self, cand: Candidate, result: np.ndarray) -> bool:
        """Whether the evaluator's predicted gain for ``cand`` clears this scene's margin."""
        before = self.predictions()
        gain = predicted_gain(before, natural_term(result, before, cand, self.current))
        return gain >= harm_margin(self.context.flags)

    def guard(self, cand: Candidate, result: np.ndarray, score: float
              ) -> tuple[np.ndarray | None, float, dict[str, Any]]:
        """Do no harm: let a step move the photo far only when the evaluator is confident.

        A tone or colour step whose result lies more than ``HARM_BOUND`` RMSE from the last
        confident state is kept in full only when its predicted gain clears the margin for
        this scene (``harm_margin``); otherwise it is scaled down to the bound, or skipped
        when almost nothing of it would remain. Straightening is gated by the level
        evidence instead (``eval.level``); a run with a mood was asked for a change and is
        not held back.

        Returns:
            ``(result or None when skipped, its score, a record for ``considered``)``; a
            scaled step's score is interpolated between the current score and the step's.
        """
        record: dict[str, Any] = {"description": cand.action.describe(),
                                  "operation": cand.action.operation, "reason": cand.reason}
        if cand.action.operation == "straighten":
            record["decision"] = "kept: the level was measured from a reliable cue"
            self.reference = None
            return result, score, record
        if self.style:
            record["decision"] = "kept: the mood asks for a change"
            self.reference = None
            return result, score, record
        now, after = to_analysis(self.current, HARM_SIZE), to_analysis(result, HARM_SIZE)
        before = self.predictions()
        gain = predicted_gain(before, natural_term(result, before, cand, self.current))
        margin = harm_margin(self.context.flags)
        reference = self.reference if self.reference is not None and \
            self.reference.shape == now.shape else now
        moves = deviation(after, reference)
        record.update(predicted_gain=round(gain, 3), margin=round(margin, 3),
                      moves=round(moves, 2))
        if gain >= margin:
            record["decision"] = "kept: the evaluator is confident of the gain"
            self.reference = None             # the new state becomes the reference
            return result, score, record
        if gain > 0 and self.faded and black_point(self.current) >= FADED_BLACK and \
                black_point(result) <= FADED_BLACK / 2:
            record["decision"] = ("kept: the photo's black point is lifted (faded), the "
                                  "change brings it down and the evaluator agrees it helps")
            self.reference = None
            return result, score, record
        share = bounded_share(now, after, reference)
        record["share"] = round(share, 3)
        if share >= 1.0:
            record["decision"] = "kept: a small change"
            return result, score, record
        if share < MIN_SHARE:
            record["decision"] = (f"skipped: it would move the photo by {moves:.1f} grey "
                                  f"levels and the predicted gain {gain:.2f} is below the "
                                  f"margin {margin:.2f}")
            self.held.append(record)
            self.full.append(cand)
            return None, self.score, record
        self.held.append(record)
        mixed = cv2.addWeighted(np.ascontiguousarray(self.current), 1.0 - share,
                                np.ascontiguousarray(result), share, 0.0)
        record["decision"] = (f"kept at {share:.0%}: the predicted gain {gain:.2f} is below "
                              f"the margin {margin:.2f}, so the change stays within "
                              f"{HARM_BOUND:g} grey levels")
        return mixed, self.score + share * (score - self.score), record

    def keep(self, cand: Candidate, result: np.ndarray, score: float) -> None:
        """Land one step: commit it to the session, record it, move on from it."""
        node_id = None
        if self.session is not None:
            node = self.session.commit(result, cand.action,
                                       f"Autopilot: {cand.action.describe()}")
            node_id = getattr(node, "id", None)
        self.steps.append(AutopilotStep(cand.action.model_dump(mode="json"),
                                        cand.action.describe(), cand.reason, self.score,
                                        score, node_id))
        self.current, self.score, self.pred = result, score, None
        self.carried = self.carried.after(cand)
        self.full.append(cand)
        if self.reference is None:
            self.reference = to_analysis(result, HARM_SIZE)

    def full_strength(self) -> tuple[list[Candidate], np.ndarray]:
        """The run's steps replayed whole on the original photo (the ones the guard held
        back included), each kept only when it still raises the score; ``([], original)``
        when the guard held nothing back."""
        if not self.held:
            return [], self.original
        image, carried, kept = self.original, self.carried0, []
        own = predictions(image)
        score = score_with(image, self.original, self.style, carried, natural=(
            distance_to_score(own[SELF]) if own else None))[0]
        for cand in self.full:
            result = apply_candidate(image, cand)
            after = carried.after(cand)
            new = score_with(result, self.original, self.style, after,
                             natural=natural_term(result, own, cand, image))[0]
            if new <= score:
                continue
            image, carried, score, own = result, after, new, predictions(result)
            kept.append(cand)
        return kept, image

    def keep_path(self, path: list[Candidate]) -> bool:
        """Execute a path found by the search at full resolution; keep it if it scores
        better than the current image (each edit lands as its own step, through the same
        do-no-harm ``guard`` as a finished run's)."""
        if not path:
            return False
        images, scores, image, carried = [], [], self.current, self.carried
        before = self.predictions()
        for cand in path:
            result = apply_candidate(image, cand)
            scores.append(self.score_step(cand, result, before, carried, image))
            carried = carried.after(cand)
            image, before = result, predictions(result)
            images.append(result)
        if scores[-1] <= self.score:
            return False
        kept, rebuild = False, False
        for cand, result, score in zip(path, images, scores, strict=True):
            if rebuild:   # the path's later states grew from a step that was scaled down
                result = apply_candidate(self.current, cand)
                score = self.score_step(cand, result)
            guarded, score, record = self.guard(cand, result, score)
            self.considered.append({"iteration": len(self.steps) + 1, "on_cancel": True,
                                    **record})
            if guarded is None:
                break
            rebuild = rebuild or guarded is not result
            self.keep(cand, guarded, score)
            kept = True
        return kept


def autopilot(image: np.ndarray, *, mood: str | None = None, iterations: int = 3,
              simulations: int = 20, depth: int = 3, top_k: int = 3, seed: int = 0,
              session: Any = None, progress: ProgressFn | None = None,
              cancel: CancelFn | None = None, k: int = 8, sim_size: int = 512,
              memory: AutopilotMemory | None = None) -> AutopilotResult:
    """Improve a photo by MCTS over perceiver proposals (see the module doc).

    Args:
        image: ``uint8`` RGB/RGBA photo at full resolution.
        mood: optional intent ("warmer and cosy", "crisp and cool", "cinematic").
        iterations: executed steps at most (one MCTS per step).
        simulations: MCTS simulations per iteration.
        depth: rollout depth (edits per simulated sequence).
        top_k: most-visited actions executed at full resolution per iteration.
        seed: makes the whole run deterministic.
        session: an ``agent.session.EditSession``; each kept step is committed to it.
        progress: ``progress(done, total, message)`` after each simulation.
        cancel: ``cancel()`` → True stops early; the best state found so far is returned
            (and committed to ``session``).
        k: children of the root (at most ``simulations``, so that each is tried).
        sim_size: long side of the simulation copy.
        memory: strategy memory (default: the persisted one under the data dir); it orders
            the first visits only.

    Returns:
        An ``AutopilotResult`` with the final full-resolution image, the kept steps, the
        search trees as JSON and the scores before/after.
    """
    _check_args(image, iterations, simulations, depth, top_k, sim_size)
    memory = memory if memory is not None else AutopilotMemory.load()
    orig_small = to_analysis(image, sim_size)
    perception0 = perceive(image, mood)
    context = scene_context(image, faces=len(perception0.faces))
    gates = run_gates(perception0.indices)
    carried = Carried.of(perception0.indices)
    style = perception0.style
    run = _Run(image, style, carried, image, 0.0, session, context)
    own = run.predictions()
    run.score = score_with(image, image, style, carried, natural=distance_to_score(
        own[SELF]) if own else None)[0]
    score0, trees = run.score, []
    total, done, cancelled = iterations * simulations, 0, False
    for it in range(iterations):
        perception = perception0 if it == 0 else perceive(run.current, mood)
        perception.indices = run.carried.apply(perception.indices)
        search = _Search(orig_small, (image.shape[1], image.shape[0]), style, depth,
                         min(k, simulations), seed, run.carried)
        root = search.new_node(None, None)
        root.image = to_analysis(run.current, sim_size)
        root.score = search.reward(root.image, [])
        root.pred = run.predictions()     # the same photo: the features are read at 256 px
        exclude = gates | {s.action["operation"] for s in run.steps}
        search.screen(root, propose(perception=perception, k=POOL_SIZE, mood=mood,
                                    exclude=exclude, polish=False), memory, perception.scene)
        for _ in range(simulations):
            if cancel is not None and cancel():
                cancelled = True
                break
            search.simulate(root)
            done += 1
            if progress is not None:
                progress(done, total, f"iteration {it + 1}/{iterations}: simulation "
                         f"{done - it * simulations}/{simulations}")
        trees.append({"iteration": it + 1, "scene": perception.scene,
                      "evaluations": search.evals, "first_visits": search.first_order,
                      "root": root.to_json()})
        if cancelled:
            best = search.best_node(root)
            if best is not None and (best.score or 0.0) > (root.score or 0.0):
                trees[-1]["kept_on_cancel"] = run.keep_path(best.path())
            break
        kept = _execute_best(root, top_k, run, memory, perception.scene)
        trees[-1]["executed"] = kept["tried"]
        run.considered += [{"iteration": it + 1, **t} for t in kept["tried"]
                           if t is not kept["best_record"]]
        if kept["best"] is None:
            break
        result, score, record = run.guard(*kept["best"])
        run.considered.append({"iteration": it + 1, **kept["best_record"], **record})
        if result is None:
            break
        run.keep(kept["best"][0], result, score)
    _save_memory(memory)
    tree = {"seed": seed, "mood": mood, "style": style, "iterations": trees,
            "perception": perception0.to_dict(), "context": context.to_dict()}
    return AutopilotResult(run.current, run.steps, tree, score0, run.score, cancelled,
                           _reason(run, context), run.considered,
                           _suggestions(perception0.level) + _held_back(run),
                           context.to_dict())


#: The ``operation`` of the suggestion that offers, whole, the changes the guard held back.
FULL_STRENGTH = "full_strength"
#: The most steps a full-strength suggestion may carry.
MAX_FULL_STEPS = 8


def _held_back(run: _Run) -> list[dict[str, Any]]:
    """When the do-no-harm guard scaled a change down (or skipped it), the whole change is
    offered as a suggestion, so nothing useful is hidden."""
    cands, image = run.full_strength()
    if not cands or image.shape != run.current.shape or \
            deviation(to_analysis(image, HARM_SIZE), to_analysis(run.current, HARM_SIZE)) < 1.0:
        return []
    first = run.held[0]
    gains = [r["predicted_gain"] for r in run.held if "predicted_gain" in r]
    description = "; ".join(c.action.describe() for c in cands)
    return [{"operation": FULL_STRENGTH,
             "params": {"steps": [{"action": c.action.model_dump(mode="json"),
                                   "protect": [list(map(int, b)) for b in c.protect],
                                   "protect_strength": float(c.protect_strength)}
                                  for c in cands]},
             "description": f"apply at full strength: {description}",
             "confidence": round(max(gains), 3) if gains else 0.0, "cue": "do_no_harm",
             "reason": f"held back: the evaluator's predicted gain for "
                       f"{first['description']} ({first.get('predicted_gain', 0.0):.2f}) is "
                       f"below the margin {first.get('margin', 0.0):.2f} this scene needs, so "
                       f"Autopilot moved the photo at most {HARM_BOUND:g} grey levels — a "
                       f"stronger fix is available"}]


def accept_full_strength(original: np.ndarray, suggestion: dict[str, Any]
                         ) -> list[tuple[np.ndarray, Action]]:
    """Carry out a held-back (``FULL_STRENGTH``) suggestion the user accepted: its steps,
    whole, on the photo the run started from (they replace the run's own steps).

    Args:
        original: the photo the run started from.
        suggestion: the ``FULL_STRENGTH`` entry of ``AutopilotResult.suggestions``.

    Returns:
        ``[(image after the step, its Action), ...]`` in order.

    Raises:
        ValueError: not such a suggestion, or a step that is not a valid edit.
    """
    if not isinstance(suggestion, dict) or suggestion.get("operation") != FULL_STRENGTH:
        raise ValueError("not a held-back suggestion")
    params = suggestion.get("params")
    steps = params.get("steps") if isinstance(params, dict) else None
    if not isinstance(steps, list) or not 0 < len(steps) <= MAX_FULL_STEPS:
        raise ValueError(f"a held-back suggestion needs 1 to {MAX_FULL_STEPS} steps")
    out, image = [], original
    h, w = original.shape[:2]
    for step in steps:
        if not isinstance(step, dict):
            raise ValueError("each step of a held-back suggestion must be an object")
        try:
            action = Action.model_validate(step.get("action"))
        except Exception as exc:   # pydantic's ValidationError: the message names the field
            raise ValueError(f"a held-back step is not a valid edit: {exc}") from None
        if action.kind.value != "adjust" or action.operation == "straighten":
            raise ValueError("a held-back suggestion holds tone and colour steps only")
        boxes, strength = step.get("protect") or [], step.get("protect_strength", 0.35)
        if not isinstance(boxes, list) or len(boxes) > 32 or not all(
                isinstance(b, list) and len(b) == 4 and all(
                    isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 4 * max(w, h)
                    for v in b) for b in boxes):
            raise ValueError("a held-back step's protected boxes are not valid")
        if not isinstance(strength, (int, float)) or not 0.0 <= float(strength) <= 1.0:
            raise ValueError("a held-back step's protect strength must be within 0-1")
        cand = Candidate(action, action.operation, action.instruction, 1.0,
                         [tuple(b) for b in boxes], float(strength))
        image = apply_candidate(image, cand)
        out.append((image, action))
    return out


def accept_suggestion(image: np.ndarray, suggestion: dict[str, Any]
                      ) -> tuple[np.ndarray, Any]:
    """Carry out a suggestion of ``AutopilotResult.suggestions`` the user accepted.

    Args:
        image: the photo the suggestion was made for (or the run's result).
        suggestion: one entry of ``suggestions`` (from this run or read back from JSON).

    Returns:
        ``(edited image, the Action)``.

    Raises:
        ValueError: not a suggestion this module makes, or parameters out of range.
    """
    if not isinstance(suggestion, dict) or suggestion.get("operation") != "straighten":
        raise ValueError("only a straighten suggestion can be accepted")
    params = suggestion.get("params") or {}
    angle = params.get("angle") if isinstance(params, dict) else None
    if not isinstance(angle, (int, float)) or isinstance(angle, bool) or \
            not math.isfinite(angle) or abs(angle) > 45:
        raise ValueError("a straighten suggestion needs an angle within ±45°")
    action = Action(kind="adjust", operation="straighten", params={"angle": float(angle)},
                    instruction=str(suggestion.get("reason", ""))[:300],
                    target="the whole image")
    cand = Candidate(action, "straighten", action.instruction, 1.0)
    return apply_candidate(image, cand), action


def _suggestions(level: Any) -> list[dict[str, Any]]:
    """A straighten the evidence supports only weakly: offered, never applied."""
    if not level.suggest:
        return []
    angle = round(float(np.clip(level.correction, -45, 45)), 2)
    return [{"operation": "straighten", "params": {"angle": angle},
             "description": f"straighten by {angle:+.1f}°", "confidence":
             round(level.confidence, 3), "cue": level.cue,
             "reason": f"{level.detail}; confidence {level.confidence:.2f} is below "
                       f"{APPLY_CONFIDENCE:g}, so it is offered, not applied"}]


def _reason(run: _Run, context: SceneContext) -> str:
    """One line saying what the run did, or why it left the photo alone."""
    natural = describe(context)
    if run.steps:
        scaled = [c for c in run.considered if str(c.get("decision", "")).startswith(
            "kept at")]
        text = "changed: " + "; ".join(s.description for s in run.steps)
        if scaled:
            text += " (held within the do-no-harm bound: the evaluator was not confident)"
        return text
    skipped = [c for c in run.considered if str(c.get("decision", "")).startswith("skipped")]
    if skipped:
        text = ("left alone: the changes considered would move it far and the evaluator is "
                "not confident they help")
    else:
        text = "left alone: already well exposed and balanced"
    return text + (f" ({natural})" if natural else "")


def _execute_best(root: _Node, top_k: int, run: _Run, memory: AutopilotMemory | None,
                  scene: str) -> dict[str, Any]:
    """Run the ``top_k`` most-visited root actions at full resolution; keep the best gain.

    A result counts only by how far its gain exceeds ``required_gain`` (which grows with the
    steps already kept and with how far the step moves the photo); after the first kept step,
    undiagnosed polish proposals are not executed.

    Ties in visits go to the better simulated single-step score, then the candidate's key,
    and the best single-step action always takes the last slot (small simulation budgets
    credit rollouts noisily).
    """
    visited = [c for c in root.children if c.visits > 0]
    ranked = sorted(visited, key=lambda c: (-c.visits, -(c.score or 0.0), c.cand.key))[:top_k]
    greedy = min(visited, key=lambda c: (-(c.score or 0.0), c.cand.key), default=None)
    if greedy is not None and greedy not in ranked:
        ranked[-1] = greedy
    steps_taken = len(run.steps)
    best, tried = None, []
    for child in ranked:
        if steps_taken and not child.cand.diagnosed:
            continue   # after the main fix, only measured deficits justify more change
        result = apply_candidate(run.current, child.cand)
        score = run.score_step(child.cand, result)
        need = required_gain(steps_taken, mean_delta_e(run.current, result)
                             if steps_taken else 0.0)
        excess = score - run.score - need
        tried.append({"node": child.id, "description": child.cand.action.describe(),
                      "operation": child.cand.action.operation, "visits": child.visits,
                      "score": round(score, 5), "required_gain": round(need, 5),
                      "decision": "not kept: the score gain is below the required gain"
                      if excess <= 0 else "not kept: another change scored better"})
        # a change the evaluator is confident of (it may be kept in full: ``guard``) goes
        # before one that would be scaled down to the do-no-harm bound
        sure = run.style is None and child.cand.action.operation != "straighten" and \
            run.confident(child.cand, result)
        rank = (sure, excess)
        if excess > 0 and (best is None or rank > best[3]):
            best = (child.cand, result, score, rank, tried[-1])
    if memory is not None:
        for child in ranked:
            won = best is not None and child.cand is best[0]
            memory.record(scene, child.cand.family, kept=won,
                          gain=(best[2] - run.score) if won else 0.0)
    return {"best": best[:3] if best is not None else None, "tried": tried,
            "best_record": best[4] if best is not None else None}


def _save_memory(memory: AutopilotMemory | None) -> None:
    if memory is None:
        return
    try:
        memory.save()
    except OSError as err:
        log.warning("could not save the autopilot memory: %s", err)
