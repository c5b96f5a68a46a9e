"""What a critic returns (``Critique``), how it is called (``Critic``), the one pass
threshold (``PASS_SCORE``) and the JSON a model critic answers (``CRITIQUE_SCHEMA``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agent.brain.work_copies import note_pasted, pasted_frame

#: The widest feather the turn loop composes with (``agent.session`` retries with 24).
MAX_FEATHER = 24


@dataclass
class Critique:
    """A verdict on one attempt.

    Attributes:
        score: 0 (failed) … 10 (perfect).
        keep: what worked, in plain words.
        fix: what to fix, in plain words.
        retry_params: parameter values to try next (names of the action's operation).
        measures: the numbers behind the verdict (for logs and the UI).
    """

    score: float
    keep: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    retry_params: dict[str, Any] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)
    #: measured checks by name → passed (a failing one caps the score below the bar)
    checks: dict[str, bool] = field(default_factory=dict)
    #: pixels to grow the target's mask by on the next attempt (a rim was left)
    grow: int = 0
    #: checks that could not decide, name → why (never counted as passed)
    undecided: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """At or above the acceptance bar, with every measured check passed."""
        return self.score >= PASS_SCORE and all(self.checks.values())

    def to_dict(self) -> dict[str, Any]:
        """``{"score", "passed", "reasons", "keep", "checks", "undecided", "measures"}``
        (JSON-able)."""
        return {"score": round(float(self.score), 2), "passed": self.passed,
                "reasons": list(self.fix), "keep": list(self.keep),
                "checks": dict(self.checks), "undecided": dict(self.undecided),
                "measures": {k: float(v) for k, v in self.measures.items()}}


#: The one pass threshold: an attempt at or above it (with every measured check passed)
#: is accepted; the turn loop's ``ACCEPT_SCORE`` is this value. A failed check caps below.
PASS_SCORE = 7.0
FAILED_CHECK_CAP = 6.0
#: the change is not on the named target (found again by a second route): not followed
WRONG_TARGET_CAP = 3.0


@dataclass
class Scene:
    """Where a patch sits in its frame, so a critic can look beyond the patch.

    Attributes:
        before: the whole frame before the edit.
        offset: (x0, y0) of the patch in the frame.
        next_action: the action the turn runs on this attempt's result if it is kept (a
            critic may start looking at that frame early; None: none follows).
        model_fill: the edit's pixels were drawn by a model (an editor with weights), not
            copied from the photo: a check of what a fill from the surroundings can do
            (``fill.DEEP_HOLE``) says nothing about them.
        extent_judged: the region's extent passed the extent checks on the photo in an
            earlier step of the turn; they are not run again on the frame that step
            changed (its edge now runs where that step stopped, not where the photo does).
    """

    before: np.ndarray
    offset: tuple[int, int] = (0, 0)
    next_action: Any = None
    model_fill: bool = False
    extent_judged: bool = False

    def frames(self, after_patch: np.ndarray, mask: np.ndarray | None, *,
               pixels: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """The whole after frame and the mask at frame size (None stays None when the
        patch is the whole frame).

        ``pixels=False``: the frame is read through ``agent.brain.work_copies.work_copy``
        alone, whose copies come from the before frame's and the patch (inside a
        ``shared_work_copies()`` block the frame is a ``pasted_frame``: the 12-MP copy
        of the before frame is made only if a copy needs it)."""
        x0, y0 = (int(v) for v in self.offset)
        h, w = after_patch.shape[:2]
        if (x0, y0) == (0, 0) and self.before.shape[:2] == (h, w):
            return after_patch, mask
        after = None if pixels else pasted_frame(self.before, after_patch, (x0, y0))
        if after is None:
            after = np.array(self.before, copy=True)
            after[y0:y0 + h, x0:x0 + w] = after_patch[..., :after.shape[2]]
            if not pixels:   # its work copies: the before frame's + the patch
                note_pasted(after, self.before, (x0, y0, x0 + w, y0 + h))
        full = np.zeros(self.before.shape[:2], bool)
        full[y0:y0 + h, x0:x0 + w] = True if mask is None else mask
        return after, full


@runtime_checkable
class Critic(Protocol):
    """Judges one attempt: the turn loop calls every critic this way."""

    name: str

    def critique(self, before: np.ndarray, after: np.ndarray, action: Any,
                 mask: np.ndarray | None = None, *, feather: int | None = None,
                 params: dict[str, Any] | None = None, scene: Scene | None = None
                 ) -> Critique:
        """Score ``after`` (the composed patch) against ``before`` for ``action``.

        Args:
            before: the layer's patch before the edit (uint8 HxWx3/4).
            after: the composed patch after the edit, same size.
            action: the ``agent.actions.Action`` attempted.
            mask: the target mask at the patch's size (None: the whole patch).
            feather: the feather width the attempt was composed with.
            params: the parameters the attempt used (default: the action's).
            scene: the whole frame around the patch; with it the critic also runs the
                checks that do not trust the mask (``agent.brain.independent``).

        Returns:
            The ``Critique``.
        """
        ...


#: The JSON a VLM critic (and the aggregator) must answer.
CRITIQUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 10},
        "keep": {"type": "array", "items": {"type": "string", "maxLength": 200},
                 "maxItems": 8},
        "fix": {"type": "array", "items": {"type": "string", "maxLength": 200},
                "maxItems": 8},
        "retry_params": {"type": "object"},
    },
    "required": ["score", "keep", "fix"],
}


