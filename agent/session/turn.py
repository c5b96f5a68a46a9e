"""One turn of an ``EditSession``: plan → check → execute (localise, decompose, edit,
compose, critique, retry) → commit, and the results a chat shows.

``TurnRunner`` holds the state of one running turn; ``EditSession.turn`` builds one with a
``TurnContext`` (``agent.session.context``). The result dataclasses (``TurnResult``,
``StepResult``, ``Attempt``) live in ``agent.session.results``.

The steps of one instruction share its words' target: a later step on the same words in
the same frame takes the region the first one found on the photo, not one found anew on
the look that step gave it ("the sky a deeper blue", more saturated then cooler: on the
more saturated frame a windmill's pale sails joined the sky, 55,000 px beyond the true
sky's reach at 16 MP, reported done); its extent, passed on the photo, is not judged again
on the frame the first step changed (``Scene.extent_judged``).
"""

from __future__ import annotations

import inspect
import logging
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from agent import executor
from agent.actions import Action, ActionKind, RegionType
from agent.brain.critic import Scene
from agent.brain.extent import EXTENT_CHECKS
from agent.brain.independent import TARGET_CHECKS
from agent.session.context import TurnContext
from agent.session.frames import FrameResult, is_frame_action, run_frame_action
from agent.session.knobs import Knobs, reflect
from agent.session.memory import ToolContext
from agent.session.results import (
    Attempt,
    StepResult,
    TurnResult,
    action_dict,
    dependency_order,
    merged_values,
    name_of,
    outcome,
    plain_params,
    summary,
    unavailable_message,
)
from agent.session.selection import candidates_of, masks_to_offer, neighbours_of
from agent.session.store import LayerDraft, SessionError, StateError, StoredLayer
from agent.session.word_steps import WordSteps
from agent.session.working import WorkingFrame, release_memory
from pipelines.editors.base import EditError
from pipelines.editors.frame import FrameError
from pipelines.editors.operations import OperationError
from pipelines.images import downscale
from pipelines.layers import Layer
from pipelines.localizers import Hint
from pipelines.localizers.steady import settle
from pipelines.progress import ProgressFn

log = logging.getLogger(__name__)

#: Long side of the image a seeing planner gets.
PLANNER_SIDE = 1024
#: critic checks whose failure means the change is not (all of) the named thing
WRONG_EXTENT = (*TARGET_CHECKS, *EXTENT_CHECKS, "others_unchanged")
#: what a refusal asks the user to do (the CLI words it as ``--point X,Y``)
CLICK_IT = ("Click it on the photo (or paint it with the brush) and send the instruction "
            "again.")
_PICK = re.compile(r"Click one of the \d+ numbered candidates on the photo, or click it")


class _NeedsMask(Exception):
    """A target not found without a brush mask (or a pick among ``candidates``)."""

    def __init__(self, message: str,
                 candidates: dict[str, tuple[str, float, list[int], np.ndarray]] | None = None
                 ) -> None:
        super().__init__(message)
        self.candidates = candidates or {}


@dataclass
class _Region:
    mask: np.ndarray
    source: str
    alternatives: list[np.ndarray] = field(default_factory=list)
    neighbours: np.ndarray | None = None
    #: the user's own brush or box, not a thing located (a rim retry is not bounded by it)
    drawn: bool = False
    #: an earlier step of the turn passed its extent on the photo (``Scene.extent_judged``)
    judged: bool = False


@dataclass
class _Best:
    attempt: Attempt
    composed: LayerDraft
    layer: Layer


class TurnRunner:
    """The state of one turn while it runs; it sees the session only through ``ctx``."""

    def __init__(self, ctx: TurnContext, instruction: str, mask: np.ndarray | None,
                 progress: ProgressFn, plan: Any = None) -> None:
        self.ctx = ctx
        self.graph, self.memory, self.regions = ctx.graph, ctx.memory, ctx.regions
        self.backends, self.policy, self.prepare = ctx.backends, ctx.policy, ctx.prepare
        self.fixed_plan = plan   # a plan given by the caller (a UI button), not planned
        self.instruction = instruction
        self.mask = mask
        self.progress = progress
        self.timings: dict[str, float] = {}
        self.start_head = ctx.graph.head
        self.steps: list[StepResult] = []
        self.staged: list[tuple[StepResult, Action, list[StoredLayer]]] = []
        self.frame = WorkingFrame(ctx.graph)   # the frame a step edits, its carried copies
        self.committed = False
        self.frames: dict[int, FrameResult] = {}   # step index → its frame edit
        self.next_action: Action | None = None     # the step after the running one
        #: an unsure target's candidates (id → mask), for ``EditSession.choose``
        self.offered: dict[str, np.ndarray] = {}
        self.located: dict[tuple[str, str], _Region] = {}   # (words, frame) → region

    # 1. plan ------------------------------------------------------------------------
    def run(self) -> TurnResult:
        """Run the turn; on any failure before the commit nothing has changed."""
        t0 = time.perf_counter()
        try:
            return self._run(t0)
        except (_NeedsMask, SessionError) as err:   # nothing changed; the message says why
            self._undo_staging()
            result = self._result(False, str(err), t0)
            result.asking = isinstance(err, _NeedsMask)
            if isinstance(err, _NeedsMask) and err.candidates:
                result.candidates = [{"id": cid, "label": label, "score": round(score, 3),
                                      "box": box}
                                     for cid, (label, score, box, _) in err.candidates.items()]
                self.offered = {cid: m for cid, (_, _, _, m) in err.candidates.items()}
            return result
        except Exception as err:  # noqa: BLE001 — a broken backend must not cost the session
            log.exception("turn failed: %s", self.instruction)
            self._undo_staging()
            return self._result(False, f"The edit failed ({type(err).__name__}: {err}). "
                                "Nothing was changed.", t0)
        except BaseException:  # cancelled (KeyboardInterrupt, a UI's cancel): leave it as it was
            self._undo_staging()
            raise

    def _undo_staging(self) -> None:
        if not self.committed:
            self.graph.head = self.start_head
            self.memory.drop_tools()

    def _run(self, t0: float) -> TurnResult:
        self.progress(0.0, "planning")
        plan = self.fixed_plan or self.backends.planner.plan(self.instruction, memory=self.memory,
                                   has_mask=self.mask is not None, image_size=self.graph.size,
                                   **self._planner_view())
        self.timings["plan"] = time.perf_counter() - t0
        actions = self.prepare(dependency_order(list(plan.actions)))   # references in
        self.plan_info = {"actions": [action_dict(a) for a in actions],
                          "descriptions": [a.describe() for a in actions],
                          "message": plan.message, "is_edit": bool(plan.is_edit),
                          "notes": list(getattr(plan, "notes", []) or [])}   # typos read
        self.steps = [StepResult(i, action_dict(a) or {}, a.describe())
                      for i, a in enumerate(actions)]
        if not plan.is_edit or not actions:
            msg = plan.message or "That does not read as a change to the image."
            self.choices = list(getattr(plan, "choices", []) or [])
            return self._result(False, msg, t0)
        # 2. check ---------------------------------------------------------------------
        refusal = self._precheck(actions)
        if refusal:
            return self._result(False, refusal, t0)
        # 3. execute -------------------------------------------------------------------
        t1 = time.perf_counter()
        self._execute(actions)
        self.timings["execute"] = time.perf_counter() - t1
        # 4. commit --------------------------------------------------------------------
        return self._commit(t0)

    def _planner_view(self) -> dict[str, Any]:
        """The current image (≤ 1024 px) for a planner that can look at it."""
        try:
            accepts = "image" in inspect.signature(self.backends.planner.plan).parameters
        except (TypeError, ValueError):
            accepts = False
        if not accepts:
            return {}
        return {"image": np.ascontiguousarray(downscale(self.graph.image()[..., :3],
                                                        PLANNER_SIDE))}

    def _precheck(self, actions: list[Action]) -> str:
        """Mark the steps that cannot run (no brush mask, no editor for the operation); the
        others still run. Returns a refusal only when no step can run at all."""
        blocked = 0
        for step, action in zip(self.steps, actions):
            if action.kind is ActionKind.undo:
                continue
            if action.region.type is RegionType.mask and self.mask is None:
                step.status = "needs_mask"
                step.message = (f"'{action.describe()}' needs a brush mask: paint the area "
                                "and send the instruction again")
                blocked += 1
                continue
            if is_frame_action(action):
                continue  # done by pipelines.editors.frame, not an editor
            try:
                self.backends.pick_editor(action.to_request(seed=self.policy.seed))
            except EditError as err:
                step.status = "unsupported"
                step.message = unavailable_message(action, err, self.backends.settings)
                blocked += 1
        if blocked and blocked == len(actions):
            return " ".join(st.message.rstrip(".") + "." for st in self.steps) + \
                " Nothing was changed."
        return ""

    def _execute(self, actions: list[Action]) -> None:
        failed: set[str] = set()
        self.words = WordSteps(actions)   # a relative word's steps are judged together
        for n, (step, action) in enumerate(zip(self.steps, actions)):
            self._judge_words(n, failed)
            self.progress(0.05 + 0.85 * n / len(actions), step.description)
            if step.status in ("unsupported", "needs_mask"):   # said why in _precheck
                failed.add(action.id)
                continue
            if action.kind is ActionKind.undo:
                self._undo(step, action)
                continue
            if failed & set(action.depends_on):
                step.status, step.message = "skipped", "skipped: it depended on a step " \
                                                       "that was not applied"
                failed.add(action.id)
                continue
            t = time.perf_counter()
            self.next_action = next((a for a in actions[n + 1:n + 2] if a.kind is not
                                     ActionKind.undo and not is_frame_action(a)), None)
            try:
                layers = self._run_frame_step(step, action) if is_frame_action(action) \
                    else self._run_step(step, action)
            except _NeedsMask as err:
                if len(actions) == 1:   # nothing else to run: the turn says why
                    raise
                # not found: say so, run the others; no pick (it reruns the whole turn)
                step.status = "needs_mask"
                step.message = _PICK.sub(f"Ask for it on its own ('{step.description}') to "
                                         "pick one, or click it", str(err)).replace(
                                             " Nothing was changed.", "")
                layers = None
            step.seconds = time.perf_counter() - t
            if layers is None:
                if step.status != "not_needed":   # left to its word: the others still run
                    failed.add(action.id)
                continue
            self.staged.append((step, action, layers))
        self._judge_words(len(actions), failed)

    def _judge_words(self, upto: int, failed: set[str]) -> None:
        """Judge the whole change of each relative word whose steps ended before ``upto``
        and had one left to the word (``agent.session.word_steps``): all its steps are
        rolled back when the critic fails that change or one of its steps did not apply."""
        for word in self.words.due(upto):
            steps = [self.steps[n] for n in word.steps]
            why = [f"'{st.description}' did not apply" for st in steps
                   if st.status not in ("applied", "not_needed")]
            why = why or self.words.judge(word, self._image())
            if not why:
                continue
            for st in steps:
                if st.status in ("applied", "not_needed"):
                    st.status = "rolled_back"
                    st.message = "judged with the other steps of the same words: " + \
                        "; ".join(why)
            self.staged = [s for s in self.staged if s[0].index not in word.steps]
            self.frame.forget()
            failed.update(self.steps[n].action.get("id", "") for n in word.steps)

    def _image(self) -> np.ndarray:
        """The image the next step edits: the head plus this turn's staged layers."""
        return self.frame.image(self.staged, self.frames)

    def _undo(self, step: StepResult, action: Action) -> None:
        graph, memory = self.graph, self.memory
        if self.staged:
            drop = min(action.steps, len(self.staged))
            for st, _, _ in self.staged[-drop:]:
                st.status, st.message = "rolled_back", "undone later in the same turn"
            del self.staged[-drop:]
            self.frame.forget()
            step.status, step.message = "undo", f"dropped {drop} step(s) of this turn"
            return
        target = action.target.strip()
        try:
            if target and target in graph.nodes:
                graph.checkout(target)
            elif target:
                found = memory.find_node(target)
                if found is None:
                    raise StateError(f"no earlier state matches '{target}'")
                graph.checkout(found)
            else:
                graph.undo(action.steps)
        except StateError as err:
            step.status, step.message = "failed", str(err)
            return
        memory.refer(graph.head)
        step.status = "undo"
        step.node = graph.head
        step.message = f"went back to {graph.head} ({graph.nodes[graph.head].description})"

    # step: localise → decompose → edit → compose → critique, with retries ----------
    def _run_step(self, step: StepResult, action: Action) -> list[StoredLayer] | None:
        image = self._image()   # not written to until the next step: its copies are shared
        self.words.starts(step.index, image)
        with self.frame.step(image):
            if hasattr(self.backends.critic, "prepare"):   # looks at it while we edit
                self.backends.critic.prepare(image, action)
            region = self._localise(action, image)
            step.region = region.source
            best = self._attempts(step, action, image, region)
        if best is None:
            step.status = "failed"
            step.message = "; ".join(a.error for a in step.attempts if a.error) or "failed"
            return None
        step.chosen, step.score = best.attempt.index, best.attempt.score
        named = action.region.type is RegionType.phrase
        # a step of a relative word that only did too little: its word judges it
        left = not best.attempt.passed and self.words.may_defer(step.index, best.attempt,
                                                                region.mask)
        if left and "changed" in best.attempt.failed:
            step.status, step.message = "not_needed", (
                "it changed nothing on this photo; the other steps of "
                f"'{action.instruction}' are judged without it")
            return None
        if best.attempt.wrong_extent and not best.attempt.passed and named:
            # never "done" on an edit the critic finds off the named thing: ask instead
            raise _NeedsMask(*_unsure(action, best.attempt, region))
        if not left and (best.attempt.score < self.policy.min_score or
                         (named and not best.attempt.passed)):
            # a thing the agent found itself is changed only when the critic passes it; a
            # brushed, boxed or whole-frame edit is the user's extent: kept, said unverified
            step.status = "rolled_back"
            step.message = (f"the best of {len(step.attempts)} attempt(s) "
                            f"scored {best.attempt.score:.1f}/10 and did not pass my check — "
                            + ("; ".join(best.attempt.fix) or "not good enough"))
            return None
        stored = best.composed.layer()   # diffed (and encoded) while the critic looked
        if stored is None:
            step.status, step.message = "not_needed" if left else "unchanged", \
                "the edit changed no pixel"
            return None
        if action.region.type is RegionType.phrase:
            self.regions.put(action.region.phrase or action.target, best.layer,
                               self._frame_key())
            key = (action.region.phrase or action.target, self._frame_key())
            if best.attempt.passed and key in self.located:    # its extent passed
                self.located[key] = replace(self.located[key], judged=True)
        step.status, step.bbox = "applied", list(stored.bbox)
        step.message = f"score {best.attempt.score:.1f}/10 after {len(step.attempts)} " \
                       f"attempt{'s' if len(step.attempts) > 1 else ''}"
        if left:
            step.message += (", too little on its own (" + "; ".join(best.attempt.fix) +
                             f"): judged with the other steps of '{action.instruction}'")
        elif not best.attempt.passed:
            step.message += (", kept unverified: my check did not pass ("
                             + ("; ".join(best.attempt.fix) or "below the bar")
                             + "); say 'undo' to drop it")
        return best.composed.bands()

    def _run_frame_step(self, step: StepResult, action: Action) -> list[StoredLayer] | None:
        """A frame edit (crop, rotate, flip, straighten, resize): no editor, no critic; the
        graph stores a frame record (and the pixels when the edit resamples)."""
        image = self._image()
        try:
            done = run_frame_action(image, action, user_mask=self.mask,
                                    locate=lambda a, im: self._localise(a, im).mask)
        except FrameError as err:
            step.status, step.message = "unchanged", str(err)
            return None
        step.region = "the frame"
        step.status, step.message = "applied", done.message
        # a crop reports the kept box in the frame before it (a UI can show it for adjusting)
        step.bbox = list(done.change.params["box"]) if done.change.kind == "crop" else \
            [0, 0, *done.change.size]
        self.frames[step.index] = done
        return done.layers

    def _frame_key(self) -> str:
        """Which frame the pixels of this step live in (see ``StateGraph.frame_key``)."""
        key = self.graph.frame_key()
        staged = sum(1 for st, _, _ in self.staged if st.index in self.frames)
        return f"{key}+{staged}" if staged else key

    def _localise(self, action: Action, image: np.ndarray) -> _Region:
        height, width = image.shape[:2]
        kind = action.region.type
        if kind is RegionType.mask:
            return _Region(self.mask, "brush mask", drawn=True)
        if kind is RegionType.image:
            return _Region(np.ones((height, width), bool), "whole image")
        if kind is RegionType.box:
            x0, y0, x1, y1 = action.region.box
            mask = np.zeros((height, width), bool)
            mask[max(0, y0):min(height, y1), max(0, x0):min(width, x1)] = True
            if not mask.any():
                raise _NeedsMask(f"the box {action.region.box} lies outside the "
                                 f"{width}x{height} image. Nothing was changed.")
            return _Region(mask, "box", drawn=True)
        return self._locate_phrase(action, image)

    def _locate_phrase(self, action: Action, image: np.ndarray) -> _Region:
        phrase = action.region.phrase or action.target
        key = (phrase, self._frame_key())     # a crop between the steps moves it
        if key not in self.located:     # the steps of one instruction share its target,
            # found on the photo, not on the look a step gave it (module doc)
            self.located[key] = self._find_phrase(action, image, phrase)
            return self.located[key]
        return replace(self.located[key], source=f"'{phrase}' as found for the step before")

    def _find_phrase(self, action: Action, image: np.ndarray, phrase: str) -> _Region:
        hint = Hint(mask=self.mask) if self.mask is not None else None
        found = settle(self.backends.localizer, image, phrase, hint)   # exposure-proof
        masks = [m.mask for m in found.masks if np.asarray(m.mask).any()]
        known = self.regions.get(phrase, image.shape[:2], self._frame_key())
        if found.status == "resolved" and masks:
            # "the cats", "all the red cars": every instance is one target
            plural = found.plural and len(masks) > 1
            target = found.union() if plural else masks[0]
            if target is not None and (known is None or _overlap(target, known) >= 0.3):
                what = f"found {len(masks)} × '{phrase}'" if plural else f"found '{phrase}'"
                why = f" ({found.reason})" if found.reason else ""
                return _Region(target, what + why, [] if plural else masks[1:],
                               neighbours_of(found, target))
        if known is not None:
            # the same words as an earlier step: the same object, even if that step
            # changed how it looks ("make the red circle blue" … "make it brighter")
            return _Region(known, f"'{phrase}' as located earlier", masks)
        if self.mask is not None:
            return _Region(self.mask, "brush mask", drawn=True)
        why = found.reason or ("several candidates match" if found.status == "ambiguous"
                               else "it was not found")
        offered = candidates_of(found) if found.status == "ambiguous" else {}
        if offered:
            raise _NeedsMask(f"I am not sure which '{phrase}' you mean ({why}). Click one of "
                             f"the {len(offered)} numbered candidates on the photo, or click "
                             "it (or paint it with the brush). Nothing was changed.", offered)
        raise _NeedsMask(f"I could not tell where '{phrase}' is ({why}). {CLICK_IT} "
                         "Nothing was changed.")

    def _attempts(self, step: StepResult, action: Action, image: np.ndarray,
                  region: _Region) -> _Best | None:
        """Up to ``max_attempts`` tries; after each poor one, reflect on the critique."""
        request = action.to_request(seed=self.policy.seed)
        editor = self.backends.pick_editor(request)
        knobs = Knobs(dict(action.params), editor, {name_of(editor)},
                       executor.cut(image, region.mask, request, editor, region.neighbours))
        best: _Best | None = None
        for i in range(self.policy.max_attempts):
            attempt, composed, critique = self._try_once(action, knobs, region, i)
            step.attempts.append(attempt)
            self.memory.record_attempt(ToolContext(step.description, attempt.editor,
                                                     attempt.params, "; ".join(attempt.fix),
                                                     attempt.score, attempt.fix))
            if composed is not None and (best is None or _rank(attempt) > _rank(best.attempt)):
                best = _Best(attempt, composed, knobs.layer)
            elif composed is not None:
                composed.cancel()   # not kept: stop encoding its layer
            if composed is not None and attempt.score >= self.policy.accept_score:
                break
            if not reflect(self.backends, self.policy.seed, action, knobs, critique,
                           region, image):
                break
            region.source = region.source.split(" (try")[0] + f" (try {i + 2}: {knobs.change})"
        return best

    def _try_once(self, action: Action, knobs: Knobs, region: _Region,
                  index: int) -> tuple[Attempt, np.ndarray | None, Any]:
        """Edit the patch, compose it at native size and critique it."""
        start = time.perf_counter()
        layer = knobs.layer
        attempt = Attempt(index + 1, name_of(knobs.editor), plain_params(knobs.params),
                          region.source)
        critique = composed = None
        try:
            request = action.to_request(seed=self.policy.seed + index, params=knobs.params)
            done = executor.run(layer, request, knobs.editor, feather=knobs.feather,
                                frame_size=self.graph.size)
            composed = LayerDraft(layer.patch, done.patch, layer.bbox[:2])
            drawn = getattr(knobs.editor, "requires_weights", False) is True   # by a model
            critique = self.backends.critic.critique(layer.patch, done.patch, action,
                                                     done.changed_area, feather=done.feather,
                                                     params=knobs.params,
                                                     scene=Scene(self._image(),
                                                                 layer.bbox[:2],
                                                                 self.next_action,
                                                                 drawn, region.judged))
            attempt.score = float(critique.score)
            attempt.keep, attempt.fix = list(critique.keep), list(critique.fix)
            attempt.passed = bool(getattr(critique, "passed", attempt.score >= 7.0))
            checks = getattr(critique, "checks", {}) or {}
            attempt.wrong_extent = any(checks.get(k) is False for k in WRONG_EXTENT)
            attempt.failed = [k for k, ok in checks.items() if ok is False]
        except (EditError, OperationError, ValueError) as err:
            if composed is not None:
                composed.cancel()   # its layer will not be kept
            attempt.error, composed = str(err), None
        attempt.seconds = time.perf_counter() - start
        return attempt, composed, critique

    # 4. commit ---------------------------------------------------------------------
    def _commit(self, t0: float) -> TurnResult:
        ctx, graph, memory = self.ctx, self.graph, self.memory
        self.committed = True
        t = time.perf_counter()
        nodes: list[str] = []
        parent = graph.head
        for step, action, layers in self.staged:
            act = action_dict(action)
            meta = {"score": step.score, "turn": ctx.turn,
                    "editor": step.attempts[step.chosen - 1].editor if step.chosen else ""}
            if step.index in self.frames:
                node = graph.add_frame(parent, act, action.describe(),
                                         self.frames[step.index].change, layers,
                                         meta=meta | {"editor": "frame"})
            else:
                node = graph.add(parent, act, action.describe(), layers, meta=meta)
            step.node, parent = node.id, node.id
            nodes.append(node.id)
            ctx.on_node(node, act)
        if self.frame.work is not None and nodes and self.frame.applied == len(self.staged):
            graph.cache.put(nodes[-1], self.frame.work)
        applied = [st for st, _, _ in self.staged]
        moved = graph.head != self.start_head
        ok = bool(applied) or (moved and all(st.status in ("undo", "skipped")
                                             for st in self.steps))
        memory.fold_turn(self.instruction, targets=[a.target for _, a, _ in self.staged],
                           operations=[a.operation for _, a, _ in self.staged],
                           values=merged_values(a for _, a, _ in self.staged),
                           states=nodes or [graph.head],
                           outcome=outcome(self.steps, applied, moved),
                           notes=[f"{st.description}: {st.message}" for st in self.steps
                                  if st.status in ("rolled_back", "failed", "unsupported",
                                                   "needs_mask")])
        memory.head = graph.head
        ctx.on_commit()  # the turn's steps land together: their PNGs in parallel, then the JSON
        self.timings["save"] = time.perf_counter() - t
        return self._result(ok, summary(self.steps, moved and not applied, graph), t0,
                            nodes, changed=moved)

    def _result(self, ok: bool, message: str, t0: float, nodes: list[str] | None = None,
                changed: bool = False) -> TurnResult:
        self.timings["total"] = time.perf_counter() - t0
        message = " ".join(getattr(self, "plan_info", {}).get("notes", []) + [message])
        release_memory()
        self.progress(1.0, "done")
        return TurnResult(self.instruction, ok, changed, message,
                          getattr(self, "plan_info", {}), self.steps, self.graph.head,
                          nodes or [], {k: round(v, 4) for k, v in self.timings.items()},
                          choices=list(getattr(self, "choices", [])))


# --------------------------------------------------------------------------- helpers


def _unsure(action: Action, attempt: Attempt, region: _Region
            ) -> tuple[str, dict[str, tuple[str, float, list[int], np.ndarray]]]:
    """The question asked when the best attempt changed something other than the named
    thing (or not all of it): why, and the located masks as candidates to click."""
    phrase = action.region.phrase or action.target
    why = next((f for f in attempt.fix if f), "the change does not match it")
    offered = masks_to_offer(phrase, [region.mask, *region.alternatives])
    ask = (f"Click one of the {len(offered)} numbered candidates on the photo, or click it "
           "(or paint it with the brush)." if offered else CLICK_IT)
    return (f"I am not sure I changed '{phrase}' and only it ({why}). {ask} Nothing was "
            "changed.", offered)


def _rank(attempt: Attempt) -> tuple[float, bool, int, int]:
    """Which attempt is kept: the higher score; on a tie the one the critic passed, else
    the one with fewer failed checks, then fewer complaints (a later attempt that cured one
    of the first's, whose reasons are then the ones shown). Passed ties keep the first."""
    return (attempt.score, attempt.passed, -len(attempt.failed),
            0 if attempt.passed else -len(attempt.fix))


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two masks."""
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 0.0
