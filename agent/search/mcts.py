"""Autopilot: "make it better" by Monte Carlo tree search over perceiver proposals.

One Autopilot iteration (PhotoAgent §3, appendices A, C, F):

1. plan — MCTS on a reduced copy (long side ``sim_size``, 512 by default): UCT selection,
   expansion through the perceiver's proposals, a random rollout to ``depth`` edits, the
   evaluator's reward (``eval.noref.aesthetic_score``, plus the mood term with a mood)
   backed up as visit counts and mean rewards;
2. execute — the ``top_k`` most-visited root actions run on the full-resolution image and
   are re-scored there;
3. keep or revert — the best result is kept only if it beats the current image, and lands
   in the session's state graph when a session is given; otherwise the run stops.

Differences from the paper, on purpose: the reward backed up is the better of the expanded
node's own score and the rollout's terminal score (a random bad rollout does not hide a
good first edit), node scores are computed once, and full-resolution execution of
per-channel tone/colour operations goes through 1-D look-up tables computed by the same
editor (the operation's own curve, at a fraction of the cost on 12-MP photos);
low-frequency ones (shadows, highlights, vignette) carry their gain map over from a
1024-px copy. Everything is deterministic for a given ``seed``.
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
from agent.brain.perceiver import Candidate, Perception, mood_score, perceive, propose, run_gates
from agent.search.autopilot_memory import AutopilotMemory
from eval.noref import _lab, combine, quality_indices, score_components, to_analysis
from pipelines.editors.operations import operations_with

log = logging.getLogger(__name__)

ProgressFn = Callable[[int, int, str], None]
CancelFn = Callable[[], bool]

#: Exploration constant of UCT (rewards lie in [0, 1]).
UCT_C = 0.35
#: A full-resolution result must beat the current score by this much to be kept.
MIN_GAIN = 0.005
#: Each step already kept raises the margin the next one must clear by this much: the
#: evaluator is uncertain, so a run prefers few confident fixes to many marginal ones.
STEP_MARGIN = 0.02
#: Cost per unit of mean CIELAB ΔE a step moves the image, times the steps already kept:
#: later steps must pay for how far they move the photo (content preservation weighs more
#: as steps accumulate; the first step, the main fix, is free of it).
FIDELITY_COST = 0.001
#: Weight of the mood term relative to the evaluator (when a mood is given).
MOOD_WEIGHT = 0.6


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
    proposals: list[Candidate] = field(default_factory=list)
    expanded: bool = False
    visits: int = 0
    total: float = 0.0
    score: float | None = None

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

    def families(self) -> set[str]:
        node, out = self, set()
        while node is not None and node.cand is not None:
            out.add(node.cand.family)
            node = node.parent
        return out

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

    root_image: np.ndarray            # reduced current image
    original: np.ndarray              # reduced original (preservation reference)
    full_size: tuple[int, int]
    perception: Perception
    mood: str | None
    style: str | None
    memory: AutopilotMemory | None
    depth: int
    k: int
    rng: random.Random
    gates: frozenset[str] = frozenset()
    carried: Carried | None = None
    next_id: int = 0
    evals: int = 0
    indices: dict[int, dict[str, Any]] = field(default_factory=dict)

    def reward(self, image: np.ndarray, path: list[Candidate] | None = None) -> float:
        self.evals += 1
        carried = self.carried
        for cand in path or []:
            carried = carried.after(cand) if carried is not None else None
        score, idx = _evaluate(image, self.original, self.style, carried)
        self.indices[id(image)] = idx
        return score

    def new_node(self, cand: Candidate | None, parent: _Node | None) -> _Node:
        self.next_id += 1
        return _Node(self.next_id, cand, parent, parent.depth + 1 if parent else 0)

    def materialise(self, node: _Node) -> np.ndarray:
        if node.image is None:
            node.image = apply_candidate(node.parent.image, node.cand,
                                         full_size=self.full_size)
            node.score = self.reward(node.image, node.path())
        return node.image

    def proposals(self, node: _Node) -> list[Candidate]:
        if not node.proposals:
            if node.parent is None:
                perception = self.perception
            else:
                perception = perceive_fast(node.image, self.perception,
                                           self.indices.get(id(node.image)))
            node.proposals = propose(perception=perception, k=self.k, mood=self.mood,
                                     memory=self.memory,
                                     exclude=node.families() | self.gates)
        return node.proposals

    def select(self, root: _Node) -> _Node:
        node = root
        while node.expanded and node.children:
            log_n = math.log(max(1, node.visits))
            node = max(node.children, key=lambda c: math.inf if c.visits == 0 else
                       c.mean + UCT_C * math.sqrt(log_n / c.visits))
        return node

    def simulate(self, root: _Node) -> None:
        node = self.select(root)
        self.materialise(node)
        if node.depth < self.depth and not node.expanded:
            node.children = [self.new_node(c, node) for c in self.proposals(node)]
            node.expanded = True
            if node.children:
                node = node.children[0]
        self.materialise(node)
        best, state, used = node.score, node.image, node.families()
        path = node.path()
        options = [c for c in self.proposals(node) if c.family not in used]
        steps = 0
        for _ in range(node.depth, self.depth):
            if not options:
                break
            cand = options.pop(self.rng.randrange(len(options)))
            options = [c for c in options if c.family != cand.family]
            state = apply_candidate(state, cand, full_size=self.full_size)
            path.append(cand)
            steps += 1
        if steps:
            best = max(best, self.reward(state, path))
        while node is not None:
            node.visits += 1
            node.total += best
            node = node.parent


#: Operations that change the colour balance (the only ones that move the cast term).
COLOUR_OPS = operations_with("colour_balance")


@dataclass(frozen=True)
class Carried:
    """Measures of the run's input carried through its edits instead of re-measured.

    Tilt belongs to the framing and a colour cast to the illuminant: both are measured once
    on the input and afterwards change only through the edits that act on them
    (straightening; white balance, temperature, tint). Re-measuring them on every state
    let unrelated edits game the evaluator: lifting shadows hid a few edges from the line
    detector, colour denoising flattened chroma edges into a fake cast that a mild tone
    edit then "fixed".
    """

    tilt_deg: float
    tilt_confidence: int
    cast: float
    cast_score: float
    rotation: float = 0.0          # straightening applied so far
    colour_changed: bool = False   # a colour-balance edit was applied

    @classmethod
    def of(cls, idx: dict[str, Any]) -> Carried:
        """Start from the input's ``quality_indices``."""
        return cls(float(idx["tilt_deg"]), int(idx["tilt_confidence"]), float(idx["cast"]),
                   float(idx["cast_score"]))

    def after(self, cand: Candidate) -> Carried:
        """The carried measures after one more edit."""
        return Carried(self.tilt_deg, self.tilt_confidence, self.cast, self.cast_score,
                       self.rotation + _rotation_of(cand),
                       self.colour_changed or cand.action.operation in COLOUR_OPS)

    @property
    def residual(self) -> float:
        """Remaining tilt in degrees (+ = counter-clockwise)."""
        return self.tilt_deg + self.rotation

    def level_score(self) -> float:
        """The evaluator's level term for the remaining tilt (as ``eval.noref`` scores it)."""
        excess = max(0.0, abs(self.residual) - 0.5)
        return float(math.exp(-(excess / 2.0) ** 2))

    def apply(self, idx: dict[str, Any]) -> dict[str, Any]:
        """``idx`` with the carried tilt (when confident) and cast (until a colour edit)."""
        out = dict(idx)
        if self.tilt_confidence >= 6:
            out.update(tilt_deg=self.residual, tilt_confidence=self.tilt_confidence,
                       level_score=self.level_score())
        if not self.colour_changed:
            out.update(cast=self.cast, cast_score=self.cast_score)
        return out


def _rotation_of(cand: Candidate) -> float:
    if cand.action.operation != "straighten":
        return 0.0
    return float(cand.action.params.get("angle", 0.0))


def perceive_fast(image: np.ndarray, base: Perception,
                  indices: dict[str, Any] | None = None) -> Perception:
    """Re-measure the indices of a simulated state, reusing the root's faces and scene."""
    return Perception(base.size, indices or quality_indices(image), base.faces, base.people,
                      base.sky_fraction, base.scene, base.mood, base.style)


def _evaluate(image: np.ndarray, original: np.ndarray, style: str | None,
              carried: Carried | None = None) -> tuple[float, dict[str, Any]]:
    idx = quality_indices(image)
    if carried is not None:
        idx = carried.apply(idx)
    score = combine(score_components(image, original, indices=idx))
    if style:
        score = (score + MOOD_WEIGHT * mood_score(image, original, style)) / (1 + MOOD_WEIGHT)
    return score, idx


def evaluate(image: np.ndarray, original: np.ndarray, style: str | None = None,
             carried: Carried | None = None) -> float:
    """The Autopilot's reward: the evaluator, blended with the mood term when a style is set.

    Args:
        image: the candidate state (any resolution).
        original: the image the run started from (preservation reference).
        style: a ``perceiver.STYLES`` key, or None.
        carried: the run's carried tilt and cast (``Carried``); they replace the ones
            measured on ``image``.

    Returns:
        A reward in [0, 1].
    """
    return _evaluate(image, original, style, carried)[0]


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

    @property
    def tree_json(self) -> dict[str, Any]:
        """Alias of ``tree`` (the name in docs/ARCHITECTURE.md)."""
        return self.tree

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (without pixels)."""
        return {"steps": [s.to_dict() for s in self.steps], "tree": self.tree,
                "score_before": round(self.score_before, 5),
                "score_after": round(self.score_after, 5), "cancelled": self.cancelled,
                "size": [int(self.image.shape[1]), int(self.image.shape[0])]}


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


def autopilot(image: np.ndarray, *, mood: str | None = None, iterations: int = 3,
              simulations: int = 20, depth: int = 3, top_k: int = 3, seed: int = 0,
              session: Any = None, progress: ProgressFn | None = None,
              cancel: CancelFn | None = None, k: int = 6, sim_size: int = 512,
              memory: AutopilotMemory | None = None) -> AutopilotResult:
    """Improve a photo by MCTS over perceiver proposals (see the module doc).

    Args:
        image: ``uint8`` RGB/RGBA photo at full resolution.
        mood: optional intent ("warmer and cosy", "cinematic", "airy", "make it pop").
        iterations: executed steps at most (one MCTS per step).
        simulations: MCTS simulations per iteration.
        depth: rollout depth (edits per simulated sequence).
        top_k: most-visited actions executed at full resolution per iteration.
        seed: makes the whole run deterministic.
        session: an ``agent.session.EditSession``; each kept step is committed to it.
        progress: ``progress(done, total, message)`` after each simulation.
        cancel: ``cancel()`` → True stops early; the best image so far is returned.
        k: proposals per expansion.
        sim_size: long side of the simulation copy.
        memory: strategy memory (default: the persisted one under the data dir).

    Returns:
        An ``AutopilotResult`` with the final full-resolution image, the kept steps, the
        search trees as JSON and the scores before/after.
    """
    _check_args(image, iterations, simulations, depth, top_k, sim_size)
    memory = memory if memory is not None else AutopilotMemory.load()
    rng = random.Random(seed)
    original, current = image, image
    orig_small = to_analysis(image, sim_size)
    perception0 = perceive(image, mood)
    style = perception0.style
    gates = run_gates(perception0.indices)
    carried = Carried.of(perception0.indices)
    score0 = evaluate(current, original, style, carried)
    current_score, steps, trees = score0, [], []
    total, done, cancelled = iterations * simulations, 0, False
    for it in range(iterations):
        small = to_analysis(current, sim_size)
        perception = perception0 if it == 0 else perceive(current, mood)
        perception.indices = carried.apply(perception.indices)
        search = _Search(small, orig_small, (image.shape[1], image.shape[0]), perception, mood,
                         style, memory, depth, k, rng, gates, carried)
        root = search.new_node(None, None)
        root.image, root.score = small, search.reward(small)
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
                      "evaluations": search.evals, "root": root.to_json()})
        if cancelled:
            break
        kept = _execute_best(root, top_k, current, original, current_score, style,
                             perception, memory, len(steps), carried)
        trees[-1]["executed"] = kept["tried"]
        if kept["best"] is None:
            break
        cand, result, score = kept["best"]
        node_id = None
        if session is not None:
            node = session.commit(result, cand.action, f"Autopilot: {cand.action.describe()}")
            node_id = getattr(node, "id", None)
        steps.append(AutopilotStep(cand.action.model_dump(mode="json"),
                                   cand.action.describe(), cand.reason, current_score, score,
                                   node_id))
        current, current_score = result, score
        carried = carried.after(cand)
    _save_memory(memory)
    tree = {"seed": seed, "mood": mood, "style": style, "iterations": trees,
            "perception": perception0.to_dict()}
    return AutopilotResult(current, steps, tree, score0, current_score, cancelled)


def required_gain(steps_taken: int, delta_e: float) -> float:
    """The score gain a step must clear to be kept.

    Args:
        steps_taken: steps already kept in this run.
        delta_e: mean CIELAB ΔE between the current image and the step's result.

    Returns:
        ``MIN_GAIN + n·STEP_MARGIN + n·FIDELITY_COST·ΔE`` for ``n = steps_taken``.
    """
    n = max(0, steps_taken)
    return MIN_GAIN + n * STEP_MARGIN + n * FIDELITY_COST * max(0.0, delta_e)


def mean_delta_e(a: np.ndarray, b: np.ndarray) -> float:
    """Mean CIELAB ΔE (1976) between two images, measured at 256 px on the long side."""
    la, lb = _lab(to_analysis(a, 256)), _lab(to_analysis(b, 256))
    if la.shape != lb.shape:
        lb = cv2.resize(lb, (la.shape[1], la.shape[0]), interpolation=cv2.INTER_AREA)
    return float(np.sqrt(((la - lb) ** 2).sum(axis=2)).mean())


def _execute_best(root: _Node, top_k: int, current: np.ndarray, original: np.ndarray,
                  current_score: float, style: str | None, perception: Perception,
                  memory: AutopilotMemory | None, steps_taken: int = 0,
                  carried: Carried | None = None) -> dict[str, Any]:
    """Run the ``top_k`` most-visited root actions at full resolution; keep the best gain.

    A result counts only by how far its gain exceeds ``required_gain`` (which grows with the
    steps already kept and with how far the step moves the photo); after the first kept step,
    undiagnosed polish proposals are not executed.

    Ties in visits go to the better simulated single-step score, and the best single-step
    action always takes the last slot (small simulation budgets credit rollouts noisily).
    """
    visited = [c for c in root.children if c.visits > 0]
    ranked = sorted(visited, key=lambda c: (-c.visits, -(c.score or 0.0), c.id))[:top_k]
    # insurance against rollout noise on small budgets: the best single edit is always tried
    greedy = max(visited, key=lambda c: (c.score or 0.0, -c.id), default=None)
    if greedy is not None and greedy not in ranked:
        ranked[-1] = greedy
    best, tried = None, []
    for child in ranked:
        if child.visits == 0 or (steps_taken and not child.cand.diagnosed):
            continue   # after the main fix, only measured deficits justify more change
        result = apply_candidate(current, child.cand)
        score = evaluate(result, original, style,
                         carried.after(child.cand) if carried is not None else None)
        need = required_gain(steps_taken, mean_delta_e(current, result) if steps_taken else 0.0)
        excess = score - current_score - need
        tried.append({"node": child.id, "description": child.cand.action.describe(),
                      "visits": child.visits, "score": round(score, 5),
                      "required_gain": round(need, 5)})
        if excess > 0 and (best is None or excess > best[3]):
            best = (child.cand, result, score, excess)
    if memory is not None:
        for child in ranked:
            won = best is not None and child.cand is best[0]
            memory.record(perception.scene, child.cand.family, kept=won,
                          gain=(best[2] - current_score) if won else 0.0)
    return {"best": best[:3] if best is not None else None, "tried": tried}


def _save_memory(memory: AutopilotMemory | None) -> None:
    if memory is None:
        return
    try:
        memory.save()
    except OSError as err:
        log.warning("could not save the autopilot memory: %s", err)
