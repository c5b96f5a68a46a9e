"""Is this photo tilted? Only reliable cues answer: a horizon, or plumb lines that agree.

``eval.noref.estimate_tilt_lines`` votes with every long near-level or near-plumb line, so
lines that lean because of perspective (a road, a roof seen at an angle, a tower's edges
converging upwards) or natural diagonals can "measure" a tilt of several degrees on a
level photo. Straightening on that evidence rotates and crops a photo that was right.

``level_evidence(image)`` trusts two cues only, and says how far:

* **horizon** — one straight line that runs across most of the frame (sea, lake, flat
  land meeting sky): line segments (LSD) that are collinear, within 12° of level and
  cover at least ``HORIZON_COVERAGE`` of the width together, with two different regions
  on either side of it (the one above smoother, or both smooth: sky over land, sky over
  water);
* **verticals** — at least three separate near-plumb lines (buildings, poles, frames)
  spread across the frame that lean by the same angle. Lines whose lean changes steadily
  from one side of the frame to the other converge in perspective (a camera tilted up):
  they say nothing about the roll and are refused.

The answer is the correction (degrees, counter-clockwise +, as ``straighten`` takes it),
a confidence in [0, 1] and the cue. The Autopilot applies a straighten only at
``APPLY_CONFIDENCE`` or more and offers it as a suggestion from ``SUGGEST_CONFIDENCE``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pipelines.images import downscale

#: Long side (px) the lines are found at (LSD is sub-pixel: 768 px gives ~0.1° on a
#: full-width line).
LEVEL_SIZE = 768
#: Lines within this many degrees of level/plumb may be a cue (photos tilted by more are
#: rare and a larger window lets real diagonals in).
MAX_TILT = 12.0
#: Share of the frame's width a horizon's collinear segments must cover together.
HORIZON_COVERAGE = 0.4
#: Length (share of the frame's height, pieces of one line added up) a plumb line needs to
#: count: buildings, poles and frames run long; fur, grass and limbs do not.
MIN_VERTICAL = 0.2
#: Confidence from which the Autopilot straightens by itself.
APPLY_CONFIDENCE = 0.5
#: Confidence from which a straighten is offered as a suggestion (not applied).
SUGGEST_CONFIDENCE = 0.2
#: Below this correction (degrees) a photo counts as level.
LEVEL_TOLERANCE = 0.4


@dataclass(frozen=True)
class LevelEvidence:
    """What the reliable cues say about a photo's roll."""

    correction: float      # degrees, counter-clockwise +, that level the photo (0: none)
    confidence: float      # 0–1
    cue: str               # "horizon", "verticals", "horizon+verticals" or "none"
    detail: str            # one line for people

    @property
    def apply(self) -> bool:
        """Strong enough for the Autopilot to straighten by itself."""
        return self.confidence >= APPLY_CONFIDENCE and abs(self.correction) >= LEVEL_TOLERANCE

    @property
    def suggest(self) -> bool:
        """Worth offering (not applying) a straighten."""
        return not self.apply and self.confidence >= SUGGEST_CONFIDENCE and \
            abs(self.correction) >= LEVEL_TOLERANCE

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"correction": round(self.correction, 2), "confidence": round(self.confidence, 3),
                "cue": self.cue, "detail": self.detail}


NO_CUE = LevelEvidence(0.0, 0.0, "none", "no horizon and no agreeing vertical lines")


def _segments(gray: np.ndarray) -> np.ndarray:
    """LSD segments ``(x0, y0, x1, y1)`` of a grey image."""
    lines = cv2.createLineSegmentDetector().detect(cv2.GaussianBlur(gray, (0, 0), 0.8))[0]
    return np.zeros((0, 4)) if lines is None else lines.reshape(-1, 4).astype(np.float64)


def _fit_angle(points: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """Total-least-squares direction (degrees, CCW +, image y down) through weighted points,
    and the weighted RMS distance of the points to the line."""
    w = weights / weights.sum()
    centre = (points * w[:, None]).sum(axis=0)
    d = points - centre
    cov = (d * w[:, None]).T @ d
    vals, vecs = np.linalg.eigh(cov)
    vx, vy = vecs[:, 1]
    if vx < 0:
        vx, vy = -vx, -vy
    return math.degrees(math.atan2(-vy, vx)), float(math.sqrt(max(vals[0], 0.0)))


def _horizon(seg: np.ndarray, angle: np.ndarray, length: np.ndarray, gray: np.ndarray
             ) -> tuple[float, float, str] | None:
    """The best horizon line: (tilt, confidence, detail) or None."""
    h, w = gray.shape
    near = (np.abs(angle) <= MAX_TILT) & (length >= 0.03 * w)
    if near.sum() == 0:
        return None
    idx = np.flatnonzero(near)
    mid = (seg[:, :2] + seg[:, 2:]) / 2
    best: tuple[float, np.ndarray] | None = None
    for i in idx[np.argsort(-length[idx])][:40]:
        t = math.radians(angle[i])
        normal = np.array([math.sin(t), math.cos(t)])     # unit normal of the line (y down)
        dist = np.abs((mid[idx] - mid[i]) @ normal)
        member = idx[(dist <= 1.5 + 0.006 * h) & (np.abs(angle[idx] - angle[i]) <= 1.0)]
        xs = np.sort(np.stack([np.minimum(seg[member, 0], seg[member, 2]),
                               np.maximum(seg[member, 0], seg[member, 2])], axis=1), axis=0)
        covered, reach = 0.0, -1.0
        for x0, x1 in sorted(map(tuple, xs)):
            covered += max(0.0, x1 - max(x0, reach))
            reach = max(reach, x1)
        if best is None or covered > best[0]:
            best = (covered, member)
    covered, member = best
    coverage = covered / w
    if coverage < HORIZON_COVERAGE:
        return None
    points = np.concatenate([seg[member, :2], seg[member, 2:]])
    tilt, rms = _fit_angle(points, np.concatenate([length[member]] * 2))
    if rms > 2.0 + 0.004 * h:   # not one straight line
        return None
    # the two sides of the line: different regions, the upper one smoother (sky over
    # land) or both smooth (sky over water)
    centre = points.mean(axis=0)
    slope = -math.tan(math.radians(tilt))
    ys = np.arange(h)[:, None]
    line_y = centre[1] + slope * (np.arange(w)[None, :] - centre[0])
    band = 0.08 * h
    above = (ys < line_y) & (ys >= line_y - band)
    below = (ys > line_y) & (ys <= line_y + band)
    if above.sum() < 0.01 * h * w or below.sum() < 0.01 * h * w:
        return None
    g = gray.astype(np.float32)
    grad = np.abs(cv2.Laplacian(cv2.GaussianBlur(g, (0, 0), 1.0), cv2.CV_32F))
    tex_a, tex_b = float(np.median(grad[above])), float(np.median(grad[below]))
    step = abs(float(np.median(g[above])) - float(np.median(g[below])))
    smooth_above = tex_a <= 0.7 * tex_b or max(tex_a, tex_b) <= 1.5
    if not smooth_above or step < 6:
        return None
    conf = float(np.clip((coverage - 0.25) / 0.45, 0, 1)) * \
        float(np.clip(step / 25, 0.4, 1)) * float(np.clip(1.5 - rms / (2 + 0.004 * h), 0, 1))
    return tilt, conf, f"a horizon across {coverage:.0%} of the width leans {tilt:+.1f}°"


def _verticals(seg: np.ndarray, angle: np.ndarray, length: np.ndarray, shape: tuple[int, int]
               ) -> tuple[float, float, str] | None:
    """Agreeing plumb lines: (tilt, confidence, detail) or None."""
    h, w = shape
    lean = (angle % 180.0) - 90.0        # 0 = plumb; + = top leans left (counter-clockwise)
    near = (np.abs(lean) <= MAX_TILT) & (length >= 0.1 * h)
    if near.sum() < 3:
        return None
    idx = np.flatnonzero(near)
    mid = (seg[idx, :2] + seg[idx, 2:]) / 2
    # x where each segment's line crosses mid-height: pieces and both edges of one line
    # (a pole, a door frame) make one line
    x_mid = mid[:, 0] + (mid[:, 1] - h / 2) * np.tan(np.radians(lean[idx]))
    groups: list[list[int]] = []
    for j in np.argsort(x_mid):
        if groups and abs(x_mid[j] - x_mid[groups[-1][-1]]) <= 0.02 * w and \
                abs(lean[idx[j]] - lean[idx[groups[-1][-1]]]) <= 0.6:
            groups[-1].append(j)
        else:
            groups.append([j])
    if len(groups) < 2:
        return None
    g_lean = np.array([np.average(lean[idx[g]], weights=length[idx[g]]) for g in groups])
    g_len = np.array([length[idx[g]].sum() for g in groups]) / h
    g_x = np.array([np.average(x_mid[g], weights=length[idx[g]]) for g in groups]) / w - 0.5
    long_enough = g_len >= MIN_VERTICAL
    if long_enough.sum() < 2:
        return None
    order = np.flatnonzero(long_enough)[np.argsort(g_lean[long_enough])]
    cum = np.cumsum(g_len[order])
    median = float(g_lean[order][np.searchsorted(cum, cum[-1] / 2)])
    # lines converging in perspective (a camera tilted up or down): among the near-plumb
    # lines, the lean changes steadily from one side of the frame to the other
    close = (np.abs(g_lean - median) <= 2.5) & long_enough
    if close.sum() >= 3 and float(np.ptp(g_x[close])) >= 0.3:
        xs, ls, sw = g_x[close], g_lean[close], g_len[close]
        xm, lm = np.average(xs, weights=sw), np.average(ls, weights=sw)
        var = float(np.average((xs - xm) ** 2, weights=sw))
        if var > 1e-4:
            slope = float(np.average((xs - xm) * (ls - lm), weights=sw) / var)
            resid = ls - lm - slope * (xs - xm)
            total = float(np.average((ls - lm) ** 2, weights=sw))
            explained = 1 - float(np.average(resid ** 2, weights=sw)) / max(total, 1e-9)
            if abs(slope) >= 2.0 and explained >= 0.5:
                return 0.0, 0.0, (f"vertical lines converge in perspective (their lean "
                                  f"changes by {abs(slope) / 2:.1f}° to each side)")
    agree = (np.abs(g_lean - median) <= 0.75) & (g_len >= MIN_VERTICAL)
    n = int(agree.sum())
    if n < 2:
        return None
    spread = float(np.ptp(g_x[agree]))
    share = float(g_len[agree].sum() / g_len[close].sum())
    tilt = float(np.average(g_lean[agree], weights=g_len[agree]))   # lean CCW = tilt +
    sd = float(np.sqrt(np.average((g_lean[agree] - tilt) ** 2, weights=g_len[agree])))
    conf = float(np.clip(n / 3, 0, 1)) * float(np.clip(spread / 0.25, 0, 1)) * \
        float(np.clip((share - 0.3) / 0.4, 0, 1)) * float(np.clip(1 - sd / 0.5, 0, 1))
    return tilt, conf, f"{n} vertical lines agree on a lean of {tilt:+.1f}°"


def level_evidence(image: np.ndarray) -> LevelEvidence:
    """The roll of a photo as reliable cues measure it (see the module doc).

    Args:
        image: ``uint8`` RGB/RGBA or grey photo of any size.

    Returns:
        A ``LevelEvidence``; ``NO_CUE`` when neither a horizon nor agreeing plumb lines
        were found.
    """
    rgb = image if image.ndim == 2 else np.ascontiguousarray(image[..., :3])
    gray = rgb if rgb.ndim == 2 else cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    gray = downscale(np.ascontiguousarray(gray), LEVEL_SIZE)
    if min(gray.shape) < 32:
        return NO_CUE
    seg = _segments(gray)
    if len(seg) == 0:
        return NO_CUE
    h, w = gray.shape
    edge = 0.02 * max(h, w)   # the frame's own edges (and letterbox bars) are no cue
    xs, ys = seg[:, 0::2], seg[:, 1::2]
    on_edge = (xs.max(axis=1) < edge) | (xs.min(axis=1) > w - 1 - edge) | \
        (ys.max(axis=1) < edge) | (ys.min(axis=1) > h - 1 - edge)
    seg = seg[~on_edge]
    dx, dy = seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]
    length = np.hypot(dx, dy)
    angle = (np.degrees(np.arctan2(-dy, dx)) + 90.0) % 180.0 - 90.0   # level lines near 0
    hor = _horizon(seg, angle, length, gray)
    ver = _verticals(seg, angle, length, gray.shape)
    found = [(t, c, d, name) for name, r in (("horizon", hor), ("verticals", ver))
             if r is not None for t, c, d in [r] if c > 0]
    if not found:
        return NO_CUE
    if len(found) == 2:
        (t1, c1, d1, _), (t2, c2, d2, _) = found
        if abs(t1 - t2) <= 0.75:
            conf = 1 - (1 - c1) * (1 - c2)
            tilt = (t1 * c1 + t2 * c2) / (c1 + c2)
            return LevelEvidence(-tilt, conf, "horizon+verticals", f"{d1}; {d2}")
        t, c, d, name = max(found, key=lambda f: f[1])
        return LevelEvidence(-t, 0.4 * c, name, f"{d} (other lines disagree)")
    t, c, d, name = found[0]
    return LevelEvidence(-t, c, name, d)
