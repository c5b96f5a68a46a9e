"""Straight stretches of an edited area's border, read across (issue 32, part 4).

A thing rarely ends on a straight line with no edge of the photo along it: a half mask is
cut along a line through the thing's own interior, a box-shaped mask through what
surrounds it. Nor does a sky end on a straight line across open sky (``flat_cut``).
``straight_stretches`` finds the border's straight stretches and reads the photo across
each; ``agent.brain.extent`` judges them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from agent.brain.extent_layers import layer_border, on_layer_border

#: a straight stretch of border at least this share of it (and 8 px) is read on its own:
#: a half mask is cut along a line through the thing's own interior (one stretch per part
#: of a plural thing)
STRAIGHT_SHARE, STRAIGHT_PX = 0.08, 8.0
#: ... and it cuts through one region when the photo's change across it is less than this
#: many times the change across lines beside it (no edge runs along it) and weak (ΔE
#: between points 6 px apart across it)
STRAIGHT_PEAK, STRAIGHT_WEAK = 1.3, 25.0
#: ... or when the two sides 3-9 px out are the same stuff (their mean colours this close,
#: ΔE) and the line is faint (its peak under this many times the level beside): a
#: fruit's segment wall does not end it; a dark dog's outline on dark ground peaks twice
#: as high and does
SAME_SIDES, FAINT_PEAK = 7.0, 1.7
#: ... or when the photo's own fine change 5-9 px out is as strong on one side as on the
#: other (the weaker at least this share of the stronger) and the line peaks less than
#: ``TEXTURE_PEAK`` times above it: the line runs through one textured thing (petals, a
#: fruit's flesh, a car's bodywork), where an edge has plainer stuff on one side (a plate's
#: letters against the bumper, a sign against the grille)
SAME_TEXTURE, TEXTURE_PEAK = 0.8, 1.5
#: ... but never when one side is plain and the other textured (the weaker side's fine
#: change under this share of the stronger's)
OTHER_TEXTURE = 0.2
#: a stretch of border where the area covers less than half of the lines read beside it
#: (this many to 9 px in) is no evidence: they read what lies past the thing on its other
#: side (a pole, a rib, a connector's 6-px side wall)
THIN = 5
#: a straight stretch with no edge through smooth stuff (the photo's change across it at
#: most ``SMOOTH_PEAK`` ΔE) at least this many times the area's radius long is a cut: a
#: thing does not end on a straight line in the middle of a flat region. Nor in the
#: middle of a textured one whose two sides are one colour (``FLAT_SIDES``): the halves
#: of a cheetah through its spots, a castle's wall, a field's furrows, a lawn read 2-3 ΔE
#: across cuts 0.7-1.4 radii long and passed; no correct tune edit has such a stretch
#: as long as ``FLAT_PX`` and 0.6 radii (the nearest, a wine glass's 12-px rim, 0.59)
SMOOTH_LENGTH, SMOOTH_PEAK = 0.6, 6.0
#: a stretch within this share of the frame's short side of its edge lies on the edge
FRAME_EDGE = 0.02
#: a sky's border never runs straight across open sky: a straight stretch at least
#: ``FLAT_PX`` long and ``FLAT_RADII`` of the area's radius, across which the photo is flat
#: (its change on the line at most ``FLAT_PEAK`` ΔE) and the two sides are the same colour
#: (at most ``FLAT_SIDES`` ΔE apart), cuts the sky: the halves of 11 tune skies cut through
#: open sky read 0.5-1.7 ΔE there and passed; no correct sky or clouds of the 120 tune
#: pairs has such a stretch (the nearest, a cloud's soft edge, 2.0 ΔE)
FLAT_PEAK, FLAT_SIDES, FLAT_RADII, FLAT_PX = 1.8, 3.5, 0.15, 12.0
#: two straight stretches within this many degrees of one direction and this many pixels
#: of each other's line, with something else between them, are pieces of one line (a half
#: mask's cut, interrupted by a thing standing in front of the stuff it cuts)
LINE_ANGLE, LINE_PX = 3.0, 2.0


def straight_share(stretches: list[Stretch]) -> float:
    """Share of the border made of long straight stretches with no edge along them."""
    return sum(s.share for s in stretches if s.share >= STRAIGHT_SHARE and s.no_edge)


def smooth_cut(stretches: list[Stretch], sky: bool) -> float:
    """The longest straight cut through one region (no edge, and the photo nearly flat
    across it, or one colour on both sides: ``FLAT_SIDES``, at least ``FLAT_PX`` long), in
    the edited area's equivalent radius (0 when none). The pieces of one line that a thing
    in front interrupts are one cut (``Stretch.mates``): the half of the grass a sheep
    stands on is cut above and below the sheep. A sky's lower border may fade into haze
    along the horizon: only its steep stretches count."""
    cuts = [s for s in stretches if s.no_edge and not (sky and not s.steep) and (
        s.peak <= SMOOTH_PEAK or s.sides <= FLAT_SIDES)]
    ids = {id(s) for s in cuts}
    best = 0.0
    for s in cuts:
        line = [s, *(t for t in s.mates if id(t) in ids)]
        if s.peak <= SMOOTH_PEAK or sum(t.length for t in line) >= FLAT_PX:
            best = max(best, sum(t.radii for t in line))
    return best


@dataclass
class Stretch:
    """One straight stretch of an edited area's border (off the frame's edge)."""

    share: float     # of the border's length
    radii: float     # its length in the area's equivalent radius
    peak: float      # the photo's change across it, on the line (Lab ΔE)
    beside: float    # ... and across lines beside it
    steep: bool      # nearer vertical than horizontal
    sides: float = 99.0   # the two sides 3-9 px out, their mean colours apart (Lab ΔE)
    textures: tuple[float, float] = (0.0, 99.0)   # the change across lines 5-9 px out,
    #                                               each side's (Lab ΔE)
    thin: bool = False   # the area is narrower than the lines read beside it
    length: float = 0.0  # in pixels of the work copy
    layer: bool = False  # it lies on the border between two layers of the photo, which
    #                      ends there (``agent.brain.extent_layers``)
    ends: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))
    #: the other stretches of its line, past a thing that interrupts it (``_mates``)
    mates: list[Stretch] = field(default_factory=list, repr=False, compare=False)

    @property
    def no_edge(self) -> bool:
        """No edge of the photo runs along it: the change across it is weak and does
        not peak on the line."""
        if self.thin:
            return False    # both sides read past the thing: no evidence either way
        if self.layer:
            return False    # a layer's faint border runs a few pixels off it
        weaker, stronger = sorted(self.textures)
        if (weaker + 1.0) / (stronger + 1.0) < OTHER_TEXTURE:
            return False    # plain stuff on one side, textured on the other: an edge
        ratio = (self.peak + 1.0) / (self.beside + 1.0)
        if (weaker + 1.0) / (stronger + 1.0) >= SAME_TEXTURE and ratio < TEXTURE_PEAK:
            return True     # the same texture on both sides and no edge standing out
        return self.peak < STRAIGHT_WEAK and (ratio < STRAIGHT_PEAK or (
            self.sides < SAME_SIDES and ratio < FAINT_PEAK))


def layer_lines(stretches: list[Stretch], shape: tuple[int, int]) -> np.ndarray:
    """The pixels within 1 px of the stretches that lie on a layer's border (bool, ``shape``):
    the photo changes across them a few pixels off the line."""
    out = np.zeros(shape, np.uint8)
    for s in stretches:
        if s.layer:
            (x0, y0), (x1, y1) = s.ends
            cv2.line(out, (round(x0), round(y0)), (round(x1), round(y1)), 1, 3)
    return out > 0


def flat_cut(stretches: list[Stretch]) -> float:
    """The longest straight stretch across which the photo is flat and the same colour on
    both sides (``FLAT_PEAK``, ``FLAT_SIDES``), in the area's radius (0 when none): read
    for a sky, which ends on a skyline, a cloud's edge or the frame, never in open sky."""
    return max((s.radii for s in stretches if not s.thin and s.length >= FLAT_PX and
                s.radii >= FLAT_RADII and s.peak <= FLAT_PEAK and s.sides <= FLAT_SIDES),
               default=0.0)


def straight_cut(small: np.ndarray, region: np.ndarray) -> float:
    """The straight stretches of ``region``'s border (off the frame's edge) along which
    the photo shows no edge, as a share of the border (0 when none)."""
    return straight_share(straight_stretches(small, region))


def straight_stretches(small: np.ndarray, region: np.ndarray) -> list[Stretch]:
    """The straight stretches of ``region``'s border (off the frame's edge), at least
    ``STRAIGHT_PX`` long, each read across: the mean Lab distance between points 3 px
    either side of lines parallel to it, 9 px in and out. An edge of the thing peaks on
    the line; a cut through its interior does not."""
    h, w = region.shape
    contours, _ = cv2.findContours(region.astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_NONE)
    perimeter = sum(cv2.arcLength(c, True) for c in contours)
    if perimeter < 24:
        return []
    radius = max(1.0, float(np.sqrt(float(region.sum()) / np.pi)))
    # a border this close to the frame's edge is the frame's (a detector box ending a few
    # pixels inside the frame clips a cat that goes on out of the picture: chelsea, 3 px)
    edge = max(2, round(FRAME_EDGE * min(h, w)))
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0), cv2.COLOR_RGB2LAB)
    lab = lab.astype(np.float32) * np.float32([100 / 255, 1, 1])
    offsets = np.arange(-12, 13, dtype=np.float32)      # 9 px each way, 3 px to read
    area = region.astype(np.float32)
    out_at = offsets[3:-3]            # where each change across is read, signed
    at = np.abs(out_at)
    one_side, other_side = (offsets >= 3) & (offsets <= 9), (offsets <= -3) & (offsets >= -9)
    out: list[Stretch] = []
    ends: list[tuple[np.ndarray, np.ndarray]] = []   # each stretch's start and direction
    for contour in contours:
        poly = cv2.approxPolyDP(contour, 1.5, True)[:, 0, :].astype(np.float32)
        for p0, p1 in zip(poly, np.roll(poly, -1, axis=0), strict=True):
            length = float(np.hypot(*(p1 - p0)))
            if length < STRAIGHT_PX or \
                    max(p0[0], p1[0]) <= edge or min(p0[0], p1[0]) >= w - 1 - edge or \
                    max(p0[1], p1[1]) <= edge or min(p0[1], p1[1]) >= h - 1 - edge:
                continue    # short, or on the frame's edge (no evidence there)
            u = (p1 - p0) / length
            normal = np.float32([-u[1], u[0]])
            along = p0 + np.outer(np.arange(0.1, 0.9, 1.0 / length) * length, u)
            grid = along[:, None, :] + offsets[None, :, None] * normal
            gx, gy = grid[..., 0].astype(np.float32), grid[..., 1].astype(np.float32)
            seen = cv2.remap(lab, gx, gy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
            # the area's width across the stretch: does it cover the lines read beside it?
            wide = cv2.remap(area, gx, gy, cv2.INTER_NEAREST,
                             borderMode=cv2.BORDER_CONSTANT).mean(axis=0)
            thin = max(float(wide[one_side & (offsets >= THIN)].mean()),
                       float(wide[other_side & (offsets <= -THIN)].mean())) < 0.5
            across = np.linalg.norm(seen[:, 6:] - seen[:, :-6], axis=2).mean(axis=0)
            one = seen[:, one_side].reshape(-1, 3).mean(axis=0)
            other = seen[:, other_side].reshape(-1, 3).mean(axis=0)
            out.append(Stretch(length / perimeter, length / radius,
                               float(across[at <= 2].max()),
                               float(np.median(across[at >= 5])),
                               abs(float(u[1])) > abs(float(u[0])),
                               float(np.linalg.norm(one - other)),
                               (float(np.median(across[out_at >= 5])),
                                float(np.median(across[out_at <= -5]))), thin, length,
                               on_layer_border(*layer_border(lab, region, p0, u, length)),
                               (tuple(map(float, p0)), tuple(map(float, p1)))))
            ends.append((p0, u))
    _mates(out, ends, region)
    return out


def _mates(stretches: list[Stretch], ends: list[tuple[np.ndarray, np.ndarray]],
           region: np.ndarray) -> None:
    """Set each stretch's ``mates``: the stretches on its line (``LINE_ANGLE``,
    ``LINE_PX``) with something else between them: most of the line across the gap lies
    ``LINE_PX`` or more outside the area (a thing the cut ran behind). Neighbours along
    one bending outline (a lizard's back) have no such gap."""
    if len(stretches) < 2:
        return
    start = np.float32([p for p, _ in ends])
    u = np.float32([d for _, d in ends])
    stop = start + u * np.float32([s.length for s in stretches])[:, None]
    normal = np.stack([-u[:, 1], u[:, 0]], axis=1)
    # pairs within the angle whose ends both lie within LINE_PX of the other's line
    cross = np.abs(u[:, None, 0] * u[None, :, 1] - u[:, None, 1] * u[None, :, 0])
    near = cross <= np.sin(np.radians(LINE_ANGLE))
    for end in (start, stop):
        off = np.einsum("ik,ijk->ij", normal, end[None, :, :] - start[:, None, :])
        near &= np.abs(off) <= LINE_PX
    away = cv2.distanceTransform((~region).astype(np.uint8), cv2.DIST_L2, 3)
    h, w = region.shape
    for i, j in zip(*np.nonzero(np.triu(near, 1)), strict=True):
        a, b = stretches[i], stretches[j]
        # the two stretches' spans along a's direction, and the gap between them
        sb = sorted(float(u[i] @ (q - start[i])) for q in (start[j], stop[j]))
        lo, hi = (a.length, sb[0]) if a.length <= sb[0] else (sb[1], 0.0)
        if hi - lo < LINE_PX:
            continue
        t = np.arange(lo, hi, 1.0, dtype=np.float32)
        xs = np.clip(np.rint(start[i, 0] + t * u[i, 0]).astype(int), 0, w - 1)
        ys = np.clip(np.rint(start[i, 1] + t * u[i, 1]).astype(int), 0, h - 1)
        if float((away[ys, xs] >= LINE_PX).mean()) >= 0.5:
            a.mates.append(b)
            b.mates.append(a)
