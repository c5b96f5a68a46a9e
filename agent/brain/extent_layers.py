"""Level borders between layers of a photo (issue 32, part 4).

A water line, a horizon, a hedge row or the foot of a range of hills is where one layer
of a photo meets the next. It runs level across the frame and is often faint (haze, a
reflection of the same colours), and a labelled border lies a few pixels off it: read on
the line alone it shows no edge, as a half mask's cut through open stuff shows none. What
tells them apart is the line beside it: a layer's border has an edge a few pixels off
the stretch, parallel to it, all along it; a cut through one region has none. And a layer
goes on as far as its border does: where that edge runs on past the edited area's end,
outside it, the layer was cut short (the half of a lake ends in the middle of its
shore line), and the stretch is no end of anything.

``layer_border`` reads one straight stretch this way; ``agent.brain.extent_lines`` leaves
the stretches it finds on a layer's border out of its cut readings.
"""

from __future__ import annotations

import cv2
import numpy as np

#: a stretch at most this many degrees off level may be a layer's border
LAYER_TILT = 15.0
#: the layer's edge lies within this many px of the stretch (the work copy's; a labelled
#: border sits 3-5 px off a faint water line or horizon)
LAYER_NEAR = 5
#: ... and is read against the change this many px and more out (to ``LAYER_FAR``)
LAYER_BESIDE, LAYER_FAR = 9, 14
#: it shows in a piece of the line (``LAYER_CHUNK`` px long) when its change across (ΔE
#: between points 3 px either side) is at least ``LAYER_RATIO`` times the change beside
#: and ``LAYER_MIN`` ΔE
LAYER_CHUNK, LAYER_RATIO, LAYER_MIN = 16, 1.5, 4.0
#: the stretch lies on a layer's border when the edge shows along this share of it (the
#: grown moat of Schwerin's palace, its level border on the facade's terrace line, read 0.7;
#: the pool's and the sea's water lines 0.83-1.0)
LAYER_ALONG = 0.8
#: ... and the layer was cut short when the edge runs on outside the area past the
#: stretch's ends for this share of the stretch's length
LAYER_GOES_ON = 0.25


def layer_border(lab: np.ndarray, region: np.ndarray, p0: np.ndarray, u: np.ndarray,
                 length: float) -> tuple[float, float]:
    """Read the stretch from ``p0`` along unit ``u`` (``length`` px) of ``region``'s
    border against a layer's edge: the share of it along which an edge runs parallel
    within ``LAYER_NEAR`` px, and the length (share of the stretch's) along which that
    edge runs on past the stretch's ends with none of the layer on the area's side of it
    edited (``LAYER_FAR`` px deep). ``lab``: Lab of the work copy
    (L 0-100). ``(0, 0)`` for a stretch too steep to be a layer's border."""
    if abs(float(u[1])) > np.sin(np.radians(LAYER_TILT)):
        return 0.0, 0.0
    h, w = region.shape
    # the whole line across the frame, in the stretch's own parameter t
    lo, hi = -np.inf, np.inf
    for k, lim in ((0, w - 1), (1, h - 1)):
        if abs(float(u[k])) > 1e-6:
            a, b = sorted(((0 - float(p0[k])) / float(u[k]), (lim - float(p0[k])) / float(u[k])))
            lo, hi = max(lo, a), min(hi, b)
    t = np.arange(lo, hi, 1.0, dtype=np.float32)
    if t.size < LAYER_CHUNK:
        return 0.0, 0.0
    normal = np.float32([-u[1], u[0]])
    offsets = np.arange(-(LAYER_FAR + 3), LAYER_FAR + 4, dtype=np.float32)
    grid = (p0[None, None, :] + t[:, None, None] * u[None, None, :]
            + offsets[None, :, None] * normal[None, None, :]).astype(np.float32)
    seen = cv2.remap(lab, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REFLECT)
    across = np.linalg.norm(seen[:, 6:] - seen[:, :-6], axis=2)   # at offsets[3:-3]
    at = np.abs(offsets[3:-3])
    area = region.astype(np.uint8)
    inside = cv2.remap(area, grid[..., 0], grid[..., 1], cv2.INTER_NEAREST,
                       borderMode=cv2.BORDER_CONSTANT)
    on = (t >= 0) & (t <= length)
    # the area's side of the stretch: the layer the edit took
    plus = float(inside[on][:, (offsets >= 3) & (offsets <= 9)].mean()) if on.any() else 0.0
    minus = float(inside[on][:, (offsets <= -3) & (offsets >= -9)].mean()) if on.any() else 0.0
    layer_side = (offsets >= -LAYER_NEAR) if plus >= minus else (offsets <= LAYER_NEAR)
    along: list[bool] = []
    beyond: list[tuple[float, bool, bool]] = []   # past the ends: (t, shows, layer edited)
    for start in range(0, t.size - LAYER_CHUNK + 1, LAYER_CHUNK // 2):
        piece = slice(start, start + LAYER_CHUNK)
        profile = across[piece].mean(axis=0)
        near = float(profile[at <= LAYER_NEAR].max())
        beside = float(np.median(profile[at >= LAYER_BESIDE]))
        shows = near >= max(LAYER_MIN, LAYER_RATIO * beside)
        mid = float(t[piece].mean())
        if 0.0 <= mid <= length:
            along.append(shows)
        else:
            beyond.append((mid, shows, bool(inside[piece][:, layer_side].any())))
    # the edge runs on with none of its layer edited, out to the frame's edge: where the
    # area comes back farther along the line, what lay between was a thing in front
    past = 0.0
    for ahead in ([b for b in beyond if b[0] > length],
                  sorted((b for b in beyond if b[0] < 0), reverse=True)):
        last = max((i for i, b in enumerate(ahead) if b[2]), default=-1)
        past += sum(LAYER_CHUNK / 2 for b in ahead[last + 1:] if b[1])
    return (float(np.mean(along)) if along else 0.0), past / max(1.0, length)


def on_layer_border(along: float, past: float) -> bool:
    """Whether a stretch read by ``layer_border`` ends a layer: its edge runs along it
    (``LAYER_ALONG``) and not on past the area (``LAYER_GOES_ON``)."""
    return along >= LAYER_ALONG and past < LAYER_GOES_ON
