"""Autopilot's direct fix (issue 33): the photo's estimated global fault, inverted.

``eval.restore.estimate`` says which fault the photo most likely has (exposure or white
balance — gains in linear light — or a fade), the operation that inverts it, how far that
moves the photo and the calibrated probability that the photo is degraded at all. When
that probability is at least ``SURE`` the inverse is the run's first step, applied in full,
before the search polishes what is left (the do-no-harm guard holds the search's own steps
as before). When it is lower but at least ``PART``, the part of the inverse that stays
within the do-no-harm bound is the first step (an untouched photo may not move further,
so that is where the expected gain is largest) and the search goes on within the same
bound. From ``SUGGEST`` the whole inverse is what the held-back suggestion offers (one
click), instead of the search's own steps replayed at full strength.

Each inverse has a *tone part* (``tone``): the same correction with one gain, or one
stretch, for all three channels, so the photo's colours keep their balance. It is the
identity on a photo with a white (gains) or a black and a white (fade) in any channel, as
nearly every untouched photo has, and it is what a one-hue scene cannot be confused on (a
cast makes a photo one-hued, a lack of light does not): there it needs ``SURE``, and only
the colour part ``SURE_NATURAL``. When the whole inverse is sure, the tone part alone is
applied instead when the evaluator finds its result far more natural (``TONE_MARGIN``: a
scene in warm evening light has no neutral white, and the whole inverse would neutralise it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from agent.actions import Action
from agent.brain.perceiver import Candidate
from agent.search.reward import HARM_BOUND
from agent.search.suggestions import FULL_STRENGTH
from eval import naturalness, restore
from pipelines.color import srgb_to_linear
from pipelines.images import downscale
from pipelines.operations import registry

#: Apply the estimated inverse in full at this calibrated probability that the photo is
#: degraded (issue 33's figure; the calibration is fitted on ``REAL_VALIDATION``, on the
#: photos whose estimated inverse would move them past 35 dB: ``scripts/train_restore.py``).
SURE = 0.9
#: The same for scenes of one hue (``agent.brain.context``'s ``one_hue`` flag): a cast makes
#: a photo one-hued, so the estimate cannot tell such a scene from a cast. Chosen on issue
#: 28's untouched validation photos (``eval.photos.VALIDATION_UNTOUCHED``): the cheetah
#: close-up, one hue, reads 0.992 and the retina close-up 0.977 (every photo without the
#: flag 0.52 or less). 0.996 is the judge's same raw score as wave 8's 0.99 under its
#: calibration (on every moving row). The other natural-scene flags (strong subject, low
#: key, twilight) keep ``SURE``: dark photos often carry them.
SURE_NATURAL = 0.996
#: The flags that ask for ``SURE_NATURAL``.
NATURAL_FLAGS = frozenset({"one_hue"})
#: Offer the whole inverse as the suggestion from this probability (chosen on validation:
#: ``scripts/train_restore.py`` prints the figures; BENCHMARKS.md).
SUGGEST = 0.5
#: Apply the part of the inverse within the do-no-harm bound from this probability
#: (chosen on validation: ``scripts/train_restore.py`` prints the figures).
PART = 0.5
#: The share of the bound the part uses (the 8-bit result may round a little past it).
PART_MARGIN = 0.97
#: An inverse that moves the photo less than this (grey levels RMSE at ``restore.SIZE``)
#: is no fix worth a step.
MIN_MOVES = 1.0
#: The tone part is applied instead of a sure whole inverse when the evaluator's predicted
#: distance to a natural photo (``eval.naturalness``, log(1 + RMSE), its best head) is at
#: least this much lower after it. Chosen on ``REAL_VALIDATION``: where the whole inverse
#: was right the tone part was preferred by at most 0.24 (voc_2011_000006 dark and cool,
#: whole +21.7 dB better); where the tone part was right by at least 1.01 (after_the_rain,
#: warm evening light, under-exposed or faded: the whole inverse neutralised its colour);
#: 0.6 lies between.
TONE_MARGIN = 0.6
#: The fade's tone part: ``auto_levels`` with this percentage clipped at each end (the
#: pooled channels' darkest and brightest values; 0 would not move the black).
TONE_CLIP = 0.001
#: Most stops the exposure op takes (its parameter's bound).
MAX_STOPS = 3.0


def estimate(image: np.ndarray) -> restore.Estimate | None:
    """The photo's estimated fault (``None`` without the model or when nothing to undo)."""
    est = restore.estimate(image)
    if est is None or est.moves < MIN_MOVES:
        return None
    return est


def candidate(est: restore.Estimate) -> Candidate:
    """The estimated inverse as an Autopilot candidate (one whole-image action)."""
    fault = est.describe()
    action = Action(kind="adjust", operation=est.operation, params=est.params,
                    target="the whole image",
                    instruction=f"undo the estimated fault: {fault}")
    return Candidate(action, est.operation, f"the photo looks {fault}; this inverts it", 1.0)


@dataclass(frozen=True)
class Tone:
    """The tone part of an estimated inverse (``tone``) and what the evaluator says of it."""

    candidate: Candidate
    moves: float            # RMSE (grey levels at ``restore.SIZE``) it moves the photo
    natural: float          # predicted log distance to a natural photo after it
    natural_whole: float    # the same after the whole inverse

    @property
    def preferred(self) -> bool:
        """Whether the evaluator prefers it to the whole inverse by ``TONE_MARGIN``."""
        return self.natural <= self.natural_whole - TONE_MARGIN


def _apply(image: np.ndarray, action: Action) -> np.ndarray:
    op = registry.get(action.operation)
    return op.apply(image, np.ones(image.shape[:2], bool), op.validate(action.params))


def _natural(small: np.ndarray) -> float:
    model = naturalness.load_model()
    if model is None:
        return 0.0
    return float(np.min(model.predict_log(naturalness.features(small))))


def tone(image: np.ndarray, est: restore.Estimate) -> Tone | None:
    """The tone part of ``est``'s inverse (see the module doc), or ``None`` when it would
    move the photo less than ``MIN_MOVES`` or the photo is not one the fault model explains.

    Gains: an exposure change that takes the brightest value of any channel (read on the
    photo as given, as ``channel_levels`` reads its white) to white. Fade: ``auto_levels``
    from the pooled channels' darkest and brightest values."""
    if not est.explained:
        return None
    fault = est.describe()
    if est.family == "gains":
        white = float(np.max(image[..., :3])) / 255.0
        stops = -math.log2(max(float(srgb_to_linear(np.float32(white))), 1e-3))
        if stops < 0.01:
            return None
        action = Action(kind="adjust", operation="exposure",
                        params={"stops": round(min(stops, MAX_STOPS), 3)},
                        target="the whole image",
                        instruction=f"undo the estimated fault's tone: {fault}")
    else:
        action = Action(kind="adjust", operation="auto_levels", params={"clip": TONE_CLIP},
                        target="the whole image",
                        instruction=f"undo the estimated fault's tone: {fault}")
    small = np.ascontiguousarray(downscale(np.ascontiguousarray(image[..., :3]), restore.SIZE))
    toned = _apply(small, action)
    moves = restore._rmse(toned, small)
    if moves < MIN_MOVES:
        return None
    whole = _apply(small, candidate(est).action)
    cand = Candidate(action, action.operation,
                     f"the photo looks {fault}; this undoes its tone, keeping its colours", 1.0)
    return Tone(cand, moves, _natural(toned), _natural(whole))


def sure(est: restore.Estimate, need: float) -> bool:
    """Whether to apply the inverse in full: at least ``need`` sure, and the photo is one the
    fault model can explain (``restore.Estimate.explained``: a photo with no black of its
    own, fog, is never fixed in full; it may still get the part within the bound)."""
    return est.probability >= need and est.explained


def _why_not(est: restore.Estimate, need: float) -> str:
    if est.probability >= need:
        return (f"but its darkest tone is {est.darkest:.0%} grey, and no fault undone here "
                f"lifts black that far")
    return f"below the {need:.0%} a whole fix needs"


def fade_agrees(est: restore.Estimate | None) -> bool:
    """Whether the estimate lets issue 28's faded-black rule keep a step in full: it reads
    the photo as faded, at least ``PART`` sure (or there is no estimate). A hazy scene's
    black point is lifted too, by the air, not by a fade (issue 33's fog; on validation
    the hazy bridge, warm-cast, went from 18.6 to 12.2 dB through that rule)."""
    return est is None or (est.family == "fade" and est.probability >= PART)


def required(flags: tuple[str, ...] | list[str]) -> float:
    """The probability the inverse needs to be applied in full in a scene with ``flags``."""
    return SURE_NATURAL if NATURAL_FLAGS.intersection(flags) else SURE


def sure_record(est: restore.Estimate, cand: Candidate, need: float) -> dict[str, Any]:
    """The ``considered`` record of an inverse applied in full."""
    return {"description": cand.action.describe(), "operation": cand.action.operation,
            "reason": cand.reason, "probability": round(est.probability, 3),
            "required_probability": need, "fault": est.describe(),
            "moves": round(est.moves, 2),
            "decision": f"kept in full: {est.probability:.0%} sure the photo is degraded "
                        f"({est.describe()}), so its estimated inverse is applied whole"}


def tone_record(est: restore.Estimate, part: Tone, need: float, whole_sure: bool
                ) -> dict[str, Any]:
    """The ``considered`` record of the tone part of an inverse applied in full."""
    why = (f"the evaluator finds the photo more natural with one correction for all three "
           f"channels than with the colour change too (predicted distance "
           f"{math.expm1(part.natural):.1f} against {math.expm1(part.natural_whole):.1f} grey "
           f"levels)" if whole_sure else
           f"in a scene of one hue its colour part needs {need:.0%}, so only its tone part "
           f"(one correction for all three channels) is applied whole")
    return {"description": part.candidate.action.describe(),
            "operation": part.candidate.action.operation, "reason": part.candidate.reason,
            "probability": round(est.probability, 3), "required_probability": need,
            "fault": est.describe(), "moves": round(part.moves, 2),
            "decision": f"kept in full, tone only: {est.probability:.0%} sure the photo is "
                        f"degraded ({est.describe()}); {why}"}


def part_record(est: restore.Estimate, part: restore.Estimate, need: float
                ) -> dict[str, Any]:
    """The ``considered`` record of the part of an inverse applied within the bound."""
    share = part.amount / est.amount if est.amount > 0 else 0.0
    return {"description": f"undo the estimated fault: {est.describe()}",
            "operation": est.operation, "reason": f"the photo looks {est.describe()}",
            "probability": round(est.probability, 3), "required_probability": need,
            "fault": est.describe(), "moves": round(est.moves, 2),
            "share": round(share, 3),
            "decision": f"kept in part ({share:.0%} of it): {est.probability:.0%} sure the "
                        f"photo is degraded ({est.describe()}), {_why_not(est, need)}, so "
                        f"its inverse is applied only as far as {HARM_BOUND:g} grey levels "
                        f"and the whole is offered"}


def suggestion(est: restore.Estimate | None, need: float = SURE, toned: bool = False
               ) -> dict[str, Any] | None:
    """The whole inverse offered (a ``FULL_STRENGTH`` suggestion) when the estimate is at
    least ``SUGGEST`` sure but not ``sure`` (or only its tone part was applied: ``toned``)
    and the inverse moves the photo past the do-no-harm bound; ``None`` otherwise."""
    if est is None or est.probability < SUGGEST or (sure(est, need) and not toned) or \
            est.moves <= HARM_BOUND:
        return None
    cand = candidate(est)
    return {"operation": FULL_STRENGTH,
            "params": {"steps": [{"action": cand.action.model_dump(mode="json"),
                                  "protect": [], "protect_strength": 0.35}]},
            "description": f"apply the whole fix: {cand.action.describe()}",
            "confidence": round(est.probability, 3), "cue": "estimated_fault",
            "probability": round(est.probability, 3), "required_probability": need,
            "reason": f"held back: Autopilot is {est.probability:.0%} sure the photo is "
                      f"{est.describe()}, " + (
                          "and undid only its tone (one correction for all three channels), "
                          "keeping its colours — the whole fix, colours too, is available"
                          if toned else
                          f"{_why_not(est, need)}, so it moved the photo at most "
                          f"{HARM_BOUND:g} grey levels — a stronger fix is available")}


def merge_suggestions(own: list[dict[str, Any]], est: restore.Estimate | None,
                      need: float = SURE, toned: bool = False) -> list[dict[str, Any]]:
    """The run's suggestions with the whole inverse in place of the held-back replay."""
    offered = suggestion(est, need, toned)
    if offered is None:
        return own
    return [s for s in own if s.get("operation") != FULL_STRENGTH] + [offered]
