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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from agent.brain.context import SceneContext, scene_context
from agent.brain.perceiver import Candidate, perceive, propose, run_gates
from agent.search import restore_step
from agent.search.autopilot_memory import AutopilotMemory
from agent.search.candidates import apply_candidate
from agent.search.reward import (  # noqa: F401  (re-exported: the module's public names)
    COLOUR_OPS,
    FADED_BLACK,
    FADED_MAX,
    FIDELITY_COST,
    HARM_BOUND,
    HARM_SIZE,
    MIN_GAIN,
    MOOD_WEIGHT,
    STEP_MARGIN,
    TONAL_OPS,
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
from agent.search.suggestions import held_back, reason, straighten_suggestions
from agent.search.uct import Node, Search
from eval.naturalness import SELF, distance_to_score
from eval.noref import to_analysis
from pipelines.arrays import rgb_array
from pipelines.resample import downscale, with_downscale_memo

log = logging.getLogger(__name__)

ProgressFn = Callable[[int, int, str], None]
CancelFn = Callable[[], bool]

#: Proposals screened at the root of each iteration (the best ``k`` become its children).
POOL_SIZE = 24
#: The top actions of an iteration are ranked on a copy this long (a tone or colour
#: change reads the same on it: the scores are read at 512 px anyway), and only the one
#: kept runs at full resolution; spatial ones (sharpen, denoise, CLAHE…) run at full size.
RANK_SIDE = 1024
#: A step the do-no-harm bound would scale below this share is skipped instead (a step
#: scaled down still moves the photo towards the full correction, so any share helps).
MIN_SHARE = 0.01


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
    rgb_array(image, "the autopilot's image", alpha=True)
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
    spent: bool = False     # the bound went to a part of the estimated inverse (``_keep_part``)
    fixed: bool = False     # the estimated inverse was applied in full (``_keep_inverse``)

    def __post_init__(self) -> None:
        if self.reference is None:
            self.reference = to_analysis(self.current, HARM_SIZE)
        self.carried0 = self.carried
        self.faded = FADED_BLACK <= black_point(self.original) <= FADED_MAX

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

    def confident(self, cand: Candidate, result: np.ndarray,
                  start: np.ndarray | None = None) -> bool:
        """Whether the evaluator's predicted gain for ``cand`` clears this scene's margin
        (``result`` is ``cand`` applied to ``start``, default the current photo)."""
        before = self.predictions()
        gain = predicted_gain(before, natural_term(result, before, cand,
                                                   self.current if start is None else start))
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
        if share >= 1.0 and not self.fixed:
            record["decision"] = "kept: a small change"
            return result, score, record
        if share < MIN_SHARE or self.spent or self.fixed:
            record["decision"] = (f"skipped: it would move the photo by {moves:.1f} grey "
                                  f"levels and the predicted gain {gain:.2f} is below the "
                                  f"margin {margin:.2f}" + (
                                      "; the bound went to the estimated fix"
                                      if self.spent else
                                      "; the estimated fix was applied in full, and an "
                                      "unsure change after it would undo part of it"
                                      if self.fixed else ""))
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


@with_downscale_memo   # each state is read at several sizes, many times: resample it once
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
    est = restore_step.estimate(image) if style is None else None
    need = restore_step.required(context.flags)
    run.faded = run.faded and restore_step.fade_agrees(est)
    toned = _restore(run, est, need)
    for it in range(iterations):
        perception = perception0 if it == 0 else perceive(run.current, mood)
        perception.indices = run.carried.apply(perception.indices)
        search = Search(orig_small, (image.shape[1], image.shape[0]), style, depth,
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
            "perception": perception0.to_dict(), "context": context.to_dict(),
            "estimate": est.to_dict() if est is not None else None}
    suggestions = restore_step.merge_suggestions(
        straighten_suggestions(perception0.level) + held_back(run), est, need, toned)
    return AutopilotResult(run.current, run.steps, tree, score0, run.score, cancelled,
                           reason(run, context), run.considered, suggestions,
                           context.to_dict())


def _restore(run: _Run, est: Any, need: float) -> bool:
    """The run's first step from the photo's estimated fault (``agent.search.restore_step``):
    the whole inverse when sure, or its tone part alone when the evaluator prefers that;
    in a one-hue scene ``SURE`` of, the tone part in full and the colour part within the
    bound; otherwise, from ``PART``, the part within the bound. Returns whether only the
    tone part was applied (the whole is then offered)."""
    if est is None:
        return False
    if restore_step.sure(est, need):
        tone = restore_step.tone(run.current, est)
        if tone is None or not tone.preferred:
            _keep_inverse(run, est, need)
            return False
        _keep_tone(run, est, tone, need, whole_sure=True)
        run.fixed = True
        return True
    tone = restore_step.tone(run.current, est) if need > restore_step.SURE and \
        restore_step.sure(est, restore_step.SURE) else None
    if tone is not None:
        _keep_tone(run, est, tone, need, whole_sure=False)
    if est.probability >= restore_step.PART:
        _keep_part(run, est, need)
    return tone is not None


def _keep_tone(run: _Run, est: Any, tone: Any, need: float, whole_sure: bool) -> None:
    """Apply the tone part of the estimated inverse in full (``restore_step.tone``); the
    corrected photo becomes the do-no-harm reference."""
    result = apply_candidate(run.current, tone.candidate)
    run.considered.append({"iteration": 0, **restore_step.tone_record(est, tone, need,
                                                                      whole_sure)})
    run.keep(tone.candidate, result, run.score_step(tone.candidate, result))
    run.reference = to_analysis(result, HARM_SIZE)


def _keep_inverse(run: _Run, est: Any, need: float) -> None:
    """Apply the photo's estimated inverse in full as the run's first step (the estimate
    is ``restore_step.required`` sure); the search goes on from there, its steps guarded with
    the corrected photo as the reference. Only steps the evaluator is confident of are kept
    after it: on validation a step held within the bound took a fixed photo from 53–56 dB
    back to 37 (``fixed``)."""
    cand = restore_step.candidate(est)
    result = apply_candidate(run.current, cand)
    run.considered.append({"iteration": 0, **restore_step.sure_record(est, cand, need)})
    run.keep(cand, result, run.score_step(cand, result))
    run.reference = to_analysis(result, HARM_SIZE)
    run.fixed = True


def _keep_part(run: _Run, est: Any, need: float) -> None:
    """Apply as much of the photo's estimated inverse as the do-no-harm bound allows (the
    estimate is ``restore_step.PART`` sure, below ``need``): the expected gain is best
    there, since an untouched photo must not move further. The reference stays the photo
    as it came, so the search's later steps share the same bound."""
    whole = apply_candidate(run.current, restore_step.candidate(est))
    share = bounded_share(to_analysis(run.current, HARM_SIZE), to_analysis(whole, HARM_SIZE),
                          run.reference) * restore_step.PART_MARGIN
    if share < MIN_SHARE:
        return
    part = est.part(share)
    cand = restore_step.candidate(part)
    result = apply_candidate(run.current, cand)
    run.considered.append({"iteration": 0, **restore_step.part_record(est, part, need)})
    run.keep(cand, result, run.score_step(cand, result))
    run.spent = True


def _execute_best(root: Node, top_k: int, run: _Run, memory: AutopilotMemory | None,
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
    height, width = run.current.shape[:2]
    proxy = downscale(run.current, RANK_SIDE)
    for child in ranked:
        if steps_taken and not child.cand.diagnosed:
            continue   # after the main fix, only measured deficits justify more change
        start = proxy if child.cand.action.operation in TONAL_OPS else run.current
        result = apply_candidate(start, child.cand, full_size=(width, height))
        score = run.score_step(child.cand, result, start=start)
        need = required_gain(steps_taken, mean_delta_e(start, result)
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
            run.confident(child.cand, result, start)
        rank = (sure, excess)
        if excess > 0 and (best is None or rank > best[3]):
            best = (child.cand, result, score, rank, tried[-1])
    if best is not None and best[1].shape[:2] != (height, width):
        # the one kept runs at full resolution and is scored there
        result = apply_candidate(run.current, best[0])
        best = (best[0], result, run.score_step(best[0], result), *best[3:])
        best[4]["score"] = round(best[2], 5)
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
