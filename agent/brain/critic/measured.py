"""The embedded critic: measurements only, no model.

``MeasuredCritic`` measures whether the target changed as the operation asked (each
operation's ``check`` in ``pipelines/operations/``: the direction and size of a tonal or
colour change against the requested amount, hue distance to a named colour with the
shading kept, a removed region that matches its surroundings with no rim, text present,
detail up or down), that nothing outside the feather band moved, that the feather band
has no seam, and that no highlights or shadows were newly clipped. It returns a 0–10
score, plain-words keep/fix lists and concrete ``retry_params``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from agent.brain.critic.legible import legible
from agent.brain.critic.retry import from_tried, softer, stronger, unique, valid_retry
from agent.brain.critic.verdict import (
    FAILED_CHECK_CAP,
    MAX_FEATHER,
    WRONG_TARGET_CAP,
    Critique,
    Scene,
)
from agent.brain.extent import EXTENT_CHECKS, extent_applies, extent_checks
from agent.brain.independent import (
    TARGET_CHECKS,
    Independent,
    independent_checks,
    names_target,
    prefetch,
)
from pipelines.layers import feather_for
from pipelines.localizers import get_localizer
from pipelines.operations import REGISTRY, Measured, Verdict, with_flag
from pipelines.operations.measures import changed, cmax, cmin, dilate, erode, grad, lab

log = logging.getLogger(__name__)


#: Pixels the statistics are computed on; larger patches are reduced (INTER_AREA) first.
WORK_PIXELS = 600_000
#: a new lightness gradient along the mask's edge above this (and twice the photo's own
#: level there) is a seam, read where the photo's own gradient was no higher
SEAM_LEVEL = 4.0


@dataclass
class _WorkCopy:
    before: np.ndarray
    after: np.ndarray
    inside: np.ndarray
    changed: np.ndarray  # True where any full-resolution pixel of the cell changed
    scale: float

    @classmethod
    def make(cls, before: np.ndarray, after: np.ndarray, inside: np.ndarray,
             changed: np.ndarray, whole: bool) -> _WorkCopy:
        h, w = inside.shape
        if h * w <= WORK_PIXELS:
            return cls(before, after, inside, changed, 1.0)
        scale = math.sqrt(WORK_PIXELS / (h * w))
        size = (max(1, round(w * scale)), max(1, round(h * scale)))

        def shrink(img: np.ndarray) -> np.ndarray:
            return cv2.resize(np.ascontiguousarray(img[..., :3]), size,
                              interpolation=cv2.INTER_AREA)

        def share(m: np.ndarray) -> np.ndarray:
            return cv2.resize(m.astype(np.float32), size, interpolation=cv2.INTER_AREA)

        if whole:  # nothing outside: no need to shrink the masks
            ones = np.ones((size[1], size[0]), bool)
            return cls(shrink(before), shrink(after), ones, ones, scale)
        shared = share(inside)
        small_inside = shared >= 0.5 if (shared >= 0.5).any() else shared > 0
        return cls(shrink(before), shrink(after), small_inside, share(changed) > 0, scale)


def _detail_crop(before: np.ndarray, after: np.ndarray, inside: np.ndarray,
                 side: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A full-resolution window (≤ side×side) centred on the target, for detail checks."""
    h, w = inside.shape
    if h <= side and w <= side:
        return before, after, inside
    ys, xs = np.nonzero(inside[::8, ::8])
    cy, cx = (int(np.median(ys)) * 8, int(np.median(xs)) * 8) if ys.size else (h // 2, w // 2)
    y0 = min(max(0, cy - side // 2), max(0, h - side))
    x0 = min(max(0, cx - side // 2), max(0, w - side))
    window = (slice(y0, y0 + side), slice(x0, x0 + side))
    return before[window], after[window], inside[window]


#: frame operations (#18) change the frame size: not judged pixel by pixel
FRAME_OPS = with_flag("frame")
#: share of pixels outside the target that may change (rounding of a feather) before
#: "outside unchanged" fails
SPILL_SHARE = 0.002


class MeasuredCritic:
    """The embedded critic: measurements only, no model (see the module doc).

    Args:
        localizer: re-run after a removal to check the target is gone (default: the
            configured localiser, loaded on first use; ``False`` turns the check off).
    """

    name = "measured"

    def __init__(self, localizer: Any = None, *, independent: bool = True) -> None:
        self._localizer = localizer
        #: run the checks that do not trust the mask when a ``scene`` is given
        self.independent = independent

    @property
    def localizer(self) -> Any:
        """The localiser of the "target gone" check (None when off or unavailable)."""
        if self._localizer is None:
            try:
                self._localizer = get_localizer()
            except Exception as err:  # noqa: BLE001 — the check is skipped, not the critique
                log.warning("no localiser for the critic: %s", err)
                self._localizer = False
        return self._localizer or None

    def prepare(self, frame: np.ndarray, action: Any) -> None:
        """Start what a critique of ``action`` on ``frame`` (the whole frame before the
        edit) will need, while the edit is made: the detector route's look at the frame
        (``agent.brain.independent.prefetch``; the same answer, only earlier)."""
        if self.independent and names_target(action):
            try:
                prefetch(frame)
            except Exception as err:  # noqa: BLE001 — only a head start; the check runs anyway
                log.warning("could not start the critic's detection early: %s", err)

    def critique(self, before: np.ndarray, after: np.ndarray, action: Any,
                 mask: np.ndarray | None = None, *, feather: int | None = None,
                 params: dict[str, Any] | None = None, scene: Scene | None = None
                 ) -> Critique:
        """Score one attempt.

        Args:
            before: the patch before the edit (uint8 HxWx3/4).
            after: the composed patch after the edit, same size.
            action: the ``agent.actions.Action`` that was attempted.
            mask: the target mask (bool HxW); None means the whole patch.
            feather: the feather width used to compose; None allows the widest the
                session uses (24 px), so a retry with a wider feather is not penalised.
            params: the parameters this attempt actually used, when a retry changed them;
                the result is still judged against the action's (the user's) values, but
                suggested values scale from these, so a second shortfall pushes further.
            scene: the whole frame around the patch: the checks that do not trust the
                mask run on it (``agent.brain.independent``); a failed one caps the score
                (``WRONG_TARGET_CAP`` when the change is not on the named target).

        Returns:
            A ``Critique`` with score 0–10, keep/fix lists and retry parameters.
        """
        op = getattr(action, "operation", "") or ""
        spec = REGISTRY.get(op)
        if op in FRAME_OPS and getattr(before, "shape", None) != getattr(after, "shape", 0):
            return Critique(8.0, keep=[f"{op} changed the frame as asked (a new frame is not "
                                       "compared pixel by pixel)"])
        problem = check_inputs(before, after, mask)
        if problem:
            return Critique(0.0, fix=[problem], checks={"valid_input": False})
        full_inside = np.ones(before.shape[:2], bool) if mask is None else \
            np.asarray(mask, bool)   # no copy of a bool mask (a 50-MP one is 50 MB)
        if not full_inside.any():
            return Critique(0.0, fix=["the target mask is empty; locate the target again"])
        tried = dict(params or {})
        params = dict(getattr(action, "params", {}) or {})
        # 0. statistics on at most WORK_PIXELS; what changed is found at full resolution
        whole = bool(full_inside.all())
        changed_full = np.ones(1, bool) if whole else changed(before, after)
        work = _WorkCopy.make(before, after, full_inside, changed_full, whole)
        inside = work.inside
        diff = np.abs(work.after[..., :3].astype(np.int16) - work.before[..., :3])
        changed_inside = float(diff[inside].mean())
        del diff
        measures: dict[str, float] = {"mean_change_inside": round(changed_inside, 3)}
        keep: list[str] = []
        fix: list[str] = []
        retry: dict[str, Any] = {}
        checks: dict[str, bool] = {}
        # 1. the target changed as asked
        checks["changed"] = not (changed_inside < 0.3 and (whole or
                                                           not changed_full[full_inside].any()))
        del changed_full   # at full resolution; the work copy holds its shrunk share
        # the checks that do not trust the mask, first: their whole frames are freed before
        # the patch's Lab copies are made (they read nothing the ones below compute)
        independent = self._independent(scene, after, full_inside, whole, action, spec) \
            if checks["changed"] else None
        lb, la = lab(work.before), lab(work.after)
        if not checks["changed"]:
            verdict = Verdict(0.0, fix=["nothing visibly changed in the target"],
                               retry=stronger(op, params))
        elif spec is None:
            verdict = Verdict(0.9, keep=[f"{op} applied"])
        elif spec.has("fine_detail"):  # fine detail: a full-resolution crop
            verdict = spec.check(Measured(*_detail_crop(before, after, full_inside), params))
        else:
            frame_side = math.sqrt(scene.before.shape[0] * scene.before.shape[1]) * \
                work.scale if scene is not None and not scene.model_fill else 0.0
            measured = Measured(work.before, work.after, inside, params, frame_side)
            measured.lb, measured.la = lb, la   # already computed: reuse
            verdict = spec.check(measured)
        score = 10.0 * verdict.achieved
        # a rim's width, read on the work copy (a detail crop is at full resolution), in
        # the photo's pixels: the retry dilates the full-resolution layer by it
        grow = verdict.grow if spec is not None and spec.has("fine_detail") else \
            math.ceil(verdict.grow / work.scale)
        checks.update(verdict.checks)
        if spec is not None and spec.has("removes_target") and checks["changed"] and (
                independent is None or "target_gone" not in independent.checks):
            checks["target_gone"] = self._gone(before, after, full_inside, action, fix)
            if not checks["target_gone"]:
                score *= 0.4
        if op == "blur" and checks["changed"]:     # writing blurred must be unreadable
            read = legible(before, after, full_inside)
            if read is not None:
                checks["text_hidden"] = not read.still
                if read.still:
                    fix.append(f"the blurred writing still reads '{read.after}'")
                    verdict.retry["radius"] = max(float(verdict.retry.get("radius", 0)),
                                                  read.radius)
        keep += verdict.keep
        fix += verdict.fix
        retry.update(verdict.retry)
        measures.update({k: round(float(v), 4) for k, v in verdict.measures.items()})
        # 2. the outside is untouched
        if not whole:
            reach = (MAX_FEATHER if feather is None else int(feather)) + 2
            band = dilate(inside, int(math.ceil(reach * work.scale)) + (work.scale < 1))
            outside = ~band
            if outside.any():
                moved = float(work.changed[outside].mean())
                measures["outside_changed_fraction"] = round(moved, 5)
                checks["outside_unchanged"] = moved <= SPILL_SHARE
                if moved > 0:
                    score -= min(6.0, 2.0 + 40.0 * moved)
                    fix.append(f"{moved:.1%} of the pixels outside the target changed; keep "
                               "the rest of the image untouched")
                else:
                    keep.append("everything outside the target is untouched")
            band_for_seams = band
        else:
            band_for_seams = inside
        before, after = work.before, work.after
        band = band_for_seams
        # 3. seams along the feather band, 4. new clipping
        score -= self._seams(lb, la, inside, band, measures, keep, fix)
        score -= self._clipping(before, after, inside, op, params, measures, fix, retry)
        score = float(min(10.0, max(0.0, score)))
        if spec is not None and spec.has("content"):
            keep.append("the content itself was not judged (no vision model configured)")
            score = min(score, 7.0)
        undecided: dict[str, str] = {}
        if independent is not None:
            checks.update(independent.checks)
            keep += independent.keep
            fix += independent.fix
            measures.update(independent.measures)
            undecided.update(independent.undecided)
            if any(independent.checks.get(k) is False for k in TARGET_CHECKS + EXTENT_CHECKS):
                score = min(score, WRONG_TARGET_CAP)
            if independent.checks.get("relative_visible") is False:
                retry.update(stronger(op, params))   # too little to see: more of it
        if not all(checks.values()):
            score = min(score, FAILED_CHECK_CAP)
        return Critique(round(score, 2), unique(keep), unique(fix),
                        valid_retry(op, from_tried(retry, params, tried)), measures,
                        checks, grow, undecided)

    def _independent(self, scene: Scene | None, after: np.ndarray, full_inside: np.ndarray,
                     whole: bool, action: Any, spec: Any) -> Independent | None:
        """The detector route's and the extent checks' answers on the whole frame (None
        when there is no scene or neither has a check for ``action``)."""
        if scene is None or not self.independent or not (
                names_target(action) or extent_applies(action)):   # else both say nothing
            return None
        # one after frame for both routes (a 12-MP copy each was half their cost); both
        # read it through its work copies alone, which come from the before frame's and
        # the patch (``pasted_frame``: the whole frame is copied only if they cannot)
        whole_after, frame_mask = scene.frames(after, full_inside, pixels=False)
        # a whole-patch edit hands the detector route the mask ``frames`` gives None
        whole_mask = None if whole and whole_after is after else frame_mask
        independent = independent_checks(scene.before, whole_after, action, whole_mask,
                                         removal=spec is not None and
                                         spec.has("removes_target"))
        if scene.next_action is not None and names_target(scene.next_action):
            # the next step's frame is this one if it is kept: its detection starts now
            # (the same answer, keyed by content; wasted only when the attempt is not kept)
            self.prepare(whole_after, scene.next_action)
        if not scene.extent_judged:
            _merge(independent, extent_checks(scene.before, whole_after, action, frame_mask))
        return independent

    def _gone(self, before: np.ndarray, after: np.ndarray, inside: np.ndarray, action: Any,
              fix: list[str]) -> bool:
        """Re-run the localiser: a removed target found again where it was has not gone."""
        phrase = str(getattr(action, "target", "") or "").strip()
        localizer = self.localizer
        if not phrase or localizer is None:
            return True
        try:
            was = localizer.locate(before, phrase)
            if was.status == "unresolved" or not was.masks:
                return True   # the localiser cannot see it at all: no evidence either way
            del was   # its full-size masks are not needed while the after frame is located
            now = localizer.locate(after, phrase)
        except Exception as err:  # noqa: BLE001 — a failing localiser is no verdict
            log.warning("re-localising %r failed: %s", phrase, err)
            return True
        near = dilate(inside, 4)
        for found in now.masks:
            m = np.asarray(found.mask, bool)
            if m.shape == inside.shape and m.any() and (m & near).sum() >= 0.3 * m.sum() \
                    and (m & inside).sum() >= 0.1 * inside.sum():
                fix.append(f"the localiser still finds '{phrase}' where it was removed")
                return False
        return True

    @staticmethod
    def _seams(lb: np.ndarray, la: np.ndarray, inside: np.ndarray, band: np.ndarray,
               measures: dict[str, float], keep: list[str], fix: list[str]) -> float:
        """A seam is a new lightness step along the mask edge: the gradient there grows by
        much more than the image's own gradient level (a feathered edge spreads it out)."""
        if inside.all():
            return 0.0
        width = feather_for(inside)
        band = dilate(inside, width + 2)
        edge = band & ~erode(inside, width + 1)
        if edge.sum() < 10:
            return 0.0
        gb, ga = grad(lb[..., 0]), grad(la[..., 0])
        own = float(np.median(gb[band]))
        # a seam is a step where the photo had none: where the mask's edge follows an edge
        # of the photo (a recoloured tube against the sky), that edge's contrast may change
        flat = edge & (gb <= max(SEAM_LEVEL, 2.0 * own))
        jump = float(np.percentile((ga - gb)[flat if flat.sum() >= 10 else edge], 95))
        rim = inside & ~erode(inside, feather_for(inside) + 2)
        step = float(np.abs(la[..., 0] - lb[..., 0])[rim].mean()) if rim.any() else 0.0
        measures["edge_gradient_jump_p95"] = round(jump, 3)
        measures["own_gradient_median"] = round(own, 3)
        measures["edge_step"] = round(step, 3)
        # a hard edge turns a lightness step s into a gradient of about s/2; a feather of
        # f pixels into s/f: only steep, large jumps above the image's own texture count
        if jump > max(SEAM_LEVEL, 2.0 * own) and jump > 0.3 * step:
            fix.append("a visible seam runs along the edge of the edited area; feather "
                       "the edge more")
            return 2.0
        keep.append("no seam along the edge of the edited area")
        return 0.0

    @staticmethod
    def _clipping(before: np.ndarray, after: np.ndarray, inside: np.ndarray, op: str,
                  params: dict[str, Any], measures: dict[str, float], fix: list[str],
                  retry: dict[str, Any]) -> float:
        spec = REGISTRY.get(op)
        if spec is not None and spec.clipping_expected(params):
            return 0.0  # e.g. white or black is what was asked for
        # blown to white / crushed to black (a saturated pure colour is not clipping)
        n = max(1, int(inside.sum()))
        high = float(((cmin(after) >= 254) & inside).sum() -
                     ((cmin(before) >= 254) & inside).sum()) / n
        low = float(((cmax(after) <= 1) & inside).sum() -
                    ((cmax(before) <= 1) & inside).sum()) / n
        measures["new_clipped_highlights"] = round(high, 4)
        measures["new_clipped_shadows"] = round(low, 4)
        penalty = 0.0
        if high > 0.02 or low > 0.02:
            where = "highlights" if high >= low else "shadows"
            fix.append(f"{max(high, low):.0%} of the target's {where} are newly clipped")
            penalty = min(3.0, 30.0 * max(high, low))
            for k, v in softer(op, params).items():
                retry.setdefault(k, v)
        return penalty


def _merge(into: Independent, more: Independent) -> None:
    """Add the extent checks' answers to the detector route's."""
    into.checks.update(more.checks)
    into.undecided.update({k: v for k, v in more.undecided.items() if k not in into.checks})
    into.keep += more.keep
    into.fix += more.fix
    into.measures.update(more.measures)


def check_inputs(before: Any, after: Any, mask: Any) -> str:
    for name, img in (("before", before), ("after", after)):
        if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or img.ndim != 3 or \
                img.shape[2] not in (3, 4):
            return f"the {name} patch is not an RGB/RGBA uint8 image"
    if before.shape[:2] != after.shape[:2]:
        return (f"the edit changed the patch size ({before.shape[1]}x{before.shape[0]} → "
                f"{after.shape[1]}x{after.shape[0]})")
    if mask is not None and (not isinstance(mask, np.ndarray) or mask.shape != before.shape[:2]):
        return "the target mask does not match the patch size"
    return ""

