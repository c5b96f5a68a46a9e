"""The Autopilot's reward: the evaluator, the run's carried measures, the mood, the margins.

``evaluate(image, original, style, carried)`` is what the search maximises: the
no-reference evaluator of ``eval.noref`` (the learned naturalness model with noise, tilt and
preservation terms when the model is present, the hand-set norms otherwise), blended with
the mood term when a style is set. Tilt and colour cast are measured once on the run's input
and carried through the edits that act on them (``Carried``). A step is kept only when it
beats the current score by ``required_gain``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from agent.brain.perceiver import Candidate, mood_score
from eval import naturalness, restore
from eval.noref import (
    combine,
    default_weights,
    quality_indices,
    score_components,
    to_analysis,
)
from pipelines.arrays import channel_min
from pipelines.color import delta_e76, rgb_to_lab
from pipelines.editors.operations import operations_with

#: A full-resolution result must beat the current score by this much to be kept: a photo
#: that already looks right is left alone rather than nudged by the evaluator's noise.
MIN_GAIN = 0.02
#: Each step already kept raises the margin the next one must clear by this much: the
#: evaluator is uncertain, so a run prefers few confident fixes to many marginal ones.
STEP_MARGIN = 0.01
#: Cost per unit of mean CIELAB ΔE a step moves the image, times the steps already kept:
#: later steps must pay for how far they move the photo (the first step, the main fix, is
#: free of it).
FIDELITY_COST = 0.0005
#: Weight of the mood term relative to the evaluator (when a mood is given): a mood is a
#: request for a change, so it must be able to outweigh the evaluator's preference for the
#: untouched look up to the mood's target.
MOOD_WEIGHT = 1.5

#: Do no harm: the largest RMSE (grey levels, measured at ``HARM_SIZE`` px) by which a run
#: may move a photo away from its last confident state without the learned evaluator being
#: confident of a gain. 35 dB PSNR is 4.5 grey levels; a change that would move it further
#: is scaled down to this bound unless its predicted gain clears ``harm_margin``.
HARM_BOUND = 3.5
#: Long side (px) the do-no-harm deviation is measured at.
HARM_SIZE = 512
#: The predicted gain (``predicted_gain``: log(1 + RMSE) units of the learned evaluator) a
#: change larger than ``HARM_BOUND`` must clear to be kept in full, for ordinary scenes and
#: for scenes whose colour or tone is unusual by nature (``agent.brain.context``: one hue,
#: a strongly coloured subject or faces, low key, twilight). Calibrated by
#: ``scripts/calibrate_harm.py`` on untouched training photos and close-up crops of them,
#: each judged by the evaluator fitted without that photo (held out by photo): the largest
#: gain the evaluator predicted for a correction that would have moved an untouched photo
#: past the bound (ordinary 1.69, natural 1.91), plus a slack for photos it has not seen
#: (1.23: by how much one photo's largest untouched gain exceeded all the others' of its
#: group, left out in turn — groot's close-ups against the other ordinary photos).
HARM_MARGIN = {"ordinary": 2.92, "natural": 3.14}
#: The smallest slack added to the calibrated untouched maximum.
HARM_SLACK = 0.05
#: A second, independent measure of a deficit: a photo whose darkest 0.5 % (the smallest
#: channel of each pixel, at ``HARM_SIZE``) lies at this grey level or above has a lifted
#: black point (faded). On the training photos (``scripts/calibrate_harm.py`` prints it)
#: the untouched photos and their close-ups reach at most 30 (rocket's centre), their faded
#: copies at least 41. When it fires, the step brings the black point to half of it or
#: below (it removes the fade it is justified by) and the evaluator agrees the change helps
#: (a predicted gain above 0), the step is kept in full without clearing ``HARM_MARGIN``.
FADED_BLACK = 36.0
#: ... but only up to the widest lift of the fault model (``eval.restore.MAX_LIFT``, 71 grey
#: levels): a photo whose black point lies above it is not a faded copy of a photo with a
#: black (fog, a cloud: no black of its own), so pulling its black down is not justified by
#: a fade (a fog-like render went to 12.7 dB that way: issue 33).
FADED_MAX = restore.MAX_LIFT * 255.0

#: Operations that change the colour balance (the only ones that move the cast term).
COLOUR_OPS = operations_with("colour_balance")
#: Operations that change tone or colour (the learned model reads their results).
TONAL_OPS = (operations_with("pointwise") | operations_with("low_frequency")
             | operations_with("tonal"))


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

    def after_all(self, cands: list[Candidate]) -> Carried:
        """The carried measures after a sequence of edits."""
        out = self
        for cand in cands:
            out = out.after(cand)
        return out

    @property
    def residual(self) -> float:
        """Remaining tilt in degrees (+ = counter-clockwise)."""
        return self.tilt_deg + self.rotation

    def level_score(self) -> float:
        """The evaluator's level term for the remaining tilt (as ``eval.noref`` scores it)."""
        excess = max(0.0, abs(self.residual) - 0.5)
        return float(math.exp(-(excess / 2.0) ** 2))

    def apply(self, idx: dict[str, Any]) -> dict[str, Any]:
        """``idx`` with the carried tilt and cast (until a colour edit).

        The tilt always comes from the input: a state's own lines are never re-measured.
        """
        out = dict(idx)
        confident = self.tilt_confidence >= 6
        out.update(tilt_deg=self.residual if confident else 0.0,
                   tilt_confidence=self.tilt_confidence,
                   level_score=self.level_score() if confident else 1.0)
        if not self.colour_changed:
            out.update(cast=self.cast, cast_score=self.cast_score)
        return out


def _rotation_of(cand: Candidate) -> float:
    if cand.action.operation != "straighten":
        return 0.0
    return float(cand.action.params.get("angle", 0.0))


def measure(image: np.ndarray) -> dict[str, Any]:
    """The indices a search state needs: no tilt (carried), BRISQUE only if weighted."""
    return quality_indices(image, tilt=False,
                           with_brisque=default_weights().get("brisque", 0) > 0)


def predictions(image: np.ndarray) -> dict[str, float]:
    """The learned model's distances for ``image`` as it is and after each correction
    (``eval.naturalness.predict``; empty without the model)."""
    return naturalness.predict(image)


#: Mean change (grey levels, at 256 px) below which an edit left the photo as it was.
NO_CHANGE = 0.5


def unchanged(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two images differ by less than ``NO_CHANGE`` on average (at 256 px)."""
    sa, sb = to_analysis(a, 256), to_analysis(b, 256)
    if sa.shape != sb.shape:
        return False
    return float(cv2.absdiff(sa, sb).mean()) < NO_CHANGE


def natural_term(image: np.ndarray, before: dict[str, float] | None = None,
                 cand: Candidate | None = None,
                 start: np.ndarray | None = None) -> float | None:
    """The learned term of a state reached by ``cand`` from ``start``, a photo whose
    predictions are ``before``: that photo's head for ``cand`` when the model has one (it
    ranks corrections far better than reading their result alone), else the state's own
    head. An edit that changed nothing (a stretch of a histogram already at full range)
    leaves the start's own distance."""
    floor = 0.0
    if before and cand is not None:
        if cand.key in before:
            if start is not None and unchanged(image, start):
                return naturalness.distance_to_score(before[naturalness.SELF])
            return naturalness.distance_to_score(before[cand.key])
        if cand.action.operation not in TONAL_OPS:
            # denoise, sharpen, straighten: they leave tone and colour as they were (the
            # model never saw noise or blur); the hand-set terms judge them
            return naturalness.distance_to_score(before[naturalness.SELF])
        # a tone edit the model has no head for (contrast, a mood look) is read off its
        # result, and a stretched histogram looks natural whether or not the stretch was
        # right: it may not look closer to the undegraded photo than the best the model
        # expects from anything it knows how to do to the start (leaving it included)
        floor = min(before.values())
    own = predictions(image)
    return naturalness.distance_to_score(max(own[naturalness.SELF], floor)) if own else None


def predicted_gain(before: dict[str, float], natural_after: float | None) -> float:
    """How much closer to its undegraded self the learned evaluator expects a change to
    bring the photo, in log(1 + RMSE) units (0 without the model).

    Args:
        before: the model's predictions for the photo the change starts from.
        natural_after: ``natural_term`` of the change's result (a 0–1 score).
    """
    if not before or natural_after is None:
        return 0.0
    now = naturalness.distance_to_score(before[naturalness.SELF])
    return float((natural_after - now) * math.log1p(255.0))


def harm_margin(flags: tuple[str, ...] | list[str]) -> float:
    """The predicted gain a large change must clear in a scene with these context flags."""
    return HARM_MARGIN["natural" if flags else "ordinary"]


def black_point(image: np.ndarray) -> float:
    """The 0.5th percentile of each pixel's smallest channel (grey levels, at ``HARM_SIZE``):
    how far above black the photo's darkest pixels lie (``FADED_BLACK``)."""
    small = to_analysis(image, HARM_SIZE)
    return float(np.percentile(channel_min(small), 0.5))


def deviation(a: np.ndarray, b: np.ndarray) -> float:
    """RMSE (grey levels) between two same-size ``uint8`` images."""
    d = a.astype(np.float32) - b.astype(np.float32)
    return float(np.sqrt(np.mean(d * d)))


def bounded_share(start: np.ndarray, result: np.ndarray, reference: np.ndarray,
                  bound: float = HARM_BOUND) -> float:
    """The largest share ``α`` (0–1) of the change ``start → result`` that keeps
    ``start + α (result − start)`` within ``bound`` RMSE of ``reference`` (all the same size,
    at ``HARM_SIZE``). 0 when ``start`` is already past the bound."""
    if start.shape != result.shape or start.shape != reference.shape:
        return 0.0
    if deviation(result, reference) <= bound:
        return 1.0
    s, r, ref = (x.astype(np.float32) for x in (start, result, reference))
    lo, hi = 0.0, 1.0
    if float(np.sqrt(np.mean((s - ref) ** 2))) > bound:
        return 0.0
    for _ in range(12):
        mid = (lo + hi) / 2
        if float(np.sqrt(np.mean((s + mid * (r - s) - ref) ** 2))) <= bound:
            lo = mid
        else:
            hi = mid
    return lo


def score_with(image: np.ndarray, original: np.ndarray, style: str | None,
               carried: Carried | None = None, *,
               natural: float | None = None) -> tuple[float, dict[str, Any]]:
    """``evaluate`` plus the indices it measured (the search reuses them).

    ``natural`` is the learned term when the caller has it (``natural_term``)."""
    idx = measure(image)
    if carried is not None:
        idx = carried.apply(idx)
    score = combine(score_components(image, original, indices=idx, natural=natural))
    if style:
        score = (score + MOOD_WEIGHT * mood_score(image, original, style)) / (1 + MOOD_WEIGHT)
    return score, idx


def evaluate(image: np.ndarray, original: np.ndarray, style: str | None = None,
             carried: Carried | None = None) -> float:
    """The Autopilot's reward: the evaluator, blended with the mood term when a style is set.

    Args:
        image: the candidate state (any resolution).
        original: the image the run started from (preservation and mood reference).
        style: a ``perceiver.match_mood`` style ("warm", "pop+cool"), or None.
        carried: the run's carried tilt and cast (``Carried``); they replace the ones
            measured on ``image``.

    Returns:
        A reward in [0, 1].
    """
    return score_with(image, original, style, carried)[0]


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
    la, lb = rgb_to_lab(to_analysis(a, 256)), rgb_to_lab(to_analysis(b, 256))
    if la.shape != lb.shape:
        lb = cv2.resize(lb, (la.shape[1], la.shape[0]), interpolation=cv2.INTER_AREA)
    return float(delta_e76(la, lb).mean())
