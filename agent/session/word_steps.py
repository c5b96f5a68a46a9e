"""The steps one relative word expands into are judged as one edit (issue 32).

"Make the sky a deeper blue" is planned as a saturation step, a brightness step and a
cast toward blue (``agent.brain.shades``), each on the same words and target, each
depending on the one before. Judged one by one, a grey sky's saturation step changes
nothing (a monochrome photo) or too little to see, is rolled back, and the cast that would
turn the grey blue is skipped after it. Here:

* a step of such a word, not its last, whose best attempt failed only because it changed
  nothing or too little to see (``SOFT``: every other check passed) is not failed: one that
  changed nothing is left out with a note (status ``not_needed``), one that changed a little
  is kept for now; the word's other steps run;
* when the word's last step has run, its whole change (the frame before its first step
  against the frame after its last) must move the region's colour visibly (mean ΔE76 at
  least ``VISIBLE_DE``) and pass the critic's extent checks
  (``agent.brain.extent.extent_checks``: the size the relative words ask for, visibly more
  colour when they ask for it, the extent of the named thing); every step of the word is
  rolled back when it does not, or when a step of the word did not apply. A wrong edit
  still fails: only a step that did too little is left to its word.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import cv2
import numpy as np

from agent.actions import Action, ActionKind, RegionType
from agent.brain.extent import SIDE, extent_checks
from agent.brain.extent_relative import MORE_COLOUR_OPS, VISIBLE_DE
from agent.brain.work_copies import work_copy
from agent.session.results import Attempt
from pipelines.color import delta_e76, rgb_to_lab

log = logging.getLogger(__name__)

#: the critic's checks whose failure only says a step did too little on this photo
SOFT = frozenset({"changed", "relative_visible"})


@dataclass
class _Word:
    """One relative word's steps (indices into the turn's actions) and its state."""

    steps: list[int]
    before: np.ndarray | None = None   # the frame before its first step (work copy)
    deferred: list[int] = field(default_factory=list)   # its steps left to its judgement
    region: np.ndarray | None = None   # the mask its steps were made with


def word_groups(actions: list[Action]) -> dict[int, _Word]:
    """Step index → its word, for the runs of two or more actions that one relative word
    expands into: adjustments with the same words and the same named target, each
    depending on the one before."""
    groups: dict[int, _Word] = {}
    run: list[int] = []

    def close() -> None:
        if len(run) > 1:
            word = _Word(list(run))
            groups.update(dict.fromkeys(run, word))
        run.clear()

    for n, action in enumerate(actions):
        prev = actions[run[-1]] if run else None
        if prev is not None and _same_word(prev, action):
            run.append(n)
            continue
        close()
        if action.kind is ActionKind.adjust and action.instruction and \
                action.region.type is RegionType.phrase:
            run.append(n)
    close()
    return groups


def _same_word(prev: Action, action: Action) -> bool:
    return action.kind is ActionKind.adjust and action.instruction == prev.instruction \
        and action.region == prev.region and prev.id in action.depends_on


def soft_failure(attempt: Attempt) -> bool:
    """Whether ``attempt`` failed only because it did too little (``SOFT``)."""
    return bool(attempt.failed) and set(attempt.failed) <= SOFT and not attempt.error \
        and not attempt.wrong_extent


class WordSteps:
    """The turn's relative words whose steps are judged together (module doc)."""

    def __init__(self, actions: list[Action]) -> None:
        self.actions = actions
        self.groups = word_groups(actions)
        self.judged: set[int] = set()   # first step of each word judged

    def starts(self, index: int, image: np.ndarray) -> None:
        """Step ``index`` is about to edit ``image``: the first step of a word keeps a
        work copy of the frame before it."""
        word = self.groups.get(index)
        if word is not None and word.steps[0] == index:
            word.before = np.array(work_copy(image, SIDE))

    def may_defer(self, index: int, attempt: Attempt, region: np.ndarray) -> bool:
        """Whether step ``index`` (its best attempt failed) is left to its word's judgement:
        not the word's last step, and it only did too little. ``region``: its mask."""
        word = self.groups.get(index)
        if word is None or index == word.steps[-1] or not soft_failure(attempt):
            return False
        word.deferred.append(index)
        word.region = region
        return True

    def due(self, upto: int) -> list[_Word]:
        """The words with a deferred step whose last step is before ``upto``, not judged
        yet (each is returned once)."""
        out = []
        for word in {id(w): w for w in self.groups.values()}.values():
            if word.deferred and word.steps[-1] < upto and word.steps[0] not in self.judged:
                self.judged.add(word.steps[0])
                out.append(word)
        return out

    def judge(self, word: _Word, after: np.ndarray) -> list[str]:
        """The critic's complaints about ``word``'s whole change (``after``: the frame after
        its last step). Empty when that change is visible and passes every extent check
        that applies (the size its relative words ask for, the named thing's extent)."""
        if word.before is None or word.region is None:
            return ["the frame before the word was not kept"]
        small_after = np.array(work_copy(after, SIDE))
        if small_after.shape != word.before.shape:
            return ["the frame changed size"]
        aimed = cv2.resize(np.asarray(word.region, np.float32), small_after.shape[1::-1],
                           interpolation=cv2.INTER_AREA) >= 0.5
        moved = float(delta_e76(rgb_to_lab(word.before[aimed]),
                                rgb_to_lab(small_after[aimed])).mean()) if aimed.any() else 0.0
        action = next((self.actions[n] for n in word.steps      # the step the relative
                       if self.actions[n].operation in MORE_COLOUR_OPS),  # words
                      self.actions[word.steps[-1]])                 # are read on
        if moved < VISIBLE_DE:
            return [f"'{action.instruction}' moved the colour ΔE {moved:.1f} on average: "
                    "too little to see"]
        out = extent_checks(word.before, small_after, action, word.region)
        failed = [k for k, ok in out.checks.items() if ok is False]
        log.info("word %r judged whole: ΔE %.1f, %s %s", action.instruction, moved,
                 out.checks, out.measures)
        if failed:
            return out.fix or [f"its {', '.join(failed)} check failed"]
        return []
