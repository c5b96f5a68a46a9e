"""Fill and objects: remove (inpaint), move/resize (transform), paste, generate.

The hole fillers (``inpaint``: Telea/NS for thin holes, an exemplar fill continued by
PatchMatch completion for wide ones) are shared by removal and transform.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import cv2
import numpy as np

from pipelines.editors.completion import MAX_WORK_PIXELS, complete, complete_u8
from pipelines.editors.objects import cut_out, move_matrix, moved_mask
from pipelines.operations.base import Family, Operation, ParamSpec
from pipelines.operations.engines import FloatOp
from pipelines.operations.errors import EditError
from pipelines.operations.measures import (
    Measured,
    Verdict,
    colour_regions,
    dilate,
    erode,
    grad,
)
from pipelines.operations.pixels import sigma_blur, to_u8

log = logging.getLogger(__name__)

family = Family("fill")

# ------------------------------------------------------------------------------ pixels

def _masked_down(img: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Half-size image averaged over known pixels only, and its known mask."""
    h, w = img.shape[:2]
    size = (max(1, (w + 1) // 2), max(1, (h + 1) // 2))
    weight = known.astype(np.float32)
    num = cv2.resize(img * weight[..., None], size, interpolation=cv2.INTER_AREA)
    den = cv2.resize(weight, size, interpolation=cv2.INTER_AREA)
    small = num / np.maximum(den, 1e-6)[..., None]
    return small.astype(np.float32), den > 0.2


_CROSS = np.array([[0, 0.25, 0], [0.25, 0, 0.25], [0, 0.25, 0]], dtype=np.float32)


def harmonic_fill(img: np.ndarray, hole: np.ndarray, iterations: int = 60) -> np.ndarray:
    """Fill ``hole`` with the smooth (membrane) interpolation of its border, coarse to fine.

    Args:
        img: float32 (H, W, 3) image; values in the hole are ignored.
        hole: bool (H, W), True where pixels are unknown.
        iterations: relaxation sweeps per pyramid level.

    Returns:
        The image with the hole filled; known pixels unchanged.
    """
    known = ~hole
    if not known.any():
        return img
    if hole.any() and min(img.shape[:2]) > 8 and (~known).sum() > 16:
        small, small_known = _masked_down(img, known)
        coarse = harmonic_fill(small, ~small_known, iterations)
        up = cv2.resize(coarse, (img.shape[1], img.shape[0]), interpolation=cv2.INTER_LINEAR)
    else:
        up = np.broadcast_to(img[known].mean(axis=0), img.shape)
    out = np.where(hole[..., None], up, img).astype(np.float32)
    rows, cols = np.nonzero(hole)
    if rows.size == 0:
        return out
    # relax only the hole's box (plus its known one-pixel rim): the rest never changes
    y0, y1 = max(0, rows.min() - 1), min(hole.shape[0], rows.max() + 2)
    x0, x1 = max(0, cols.min() - 1), min(hole.shape[1], cols.max() + 2)
    window, where = out[y0:y1, x0:x1], np.repeat(hole[y0:y1, x0:x1, None], 3, axis=2)
    for _ in range(iterations):
        relaxed = cv2.filter2D(window, -1, _CROSS, borderType=cv2.BORDER_REPLICATE)
        np.copyto(window, relaxed, where=where)
    return out


def exemplar_fill(img: np.ndarray, hole: np.ndarray, block: int = 9,
                  offsets: np.ndarray | None = None) -> np.ndarray:
    """Criminisi-style exemplar fill: grow the hole's border inwards with copied blocks.

    Each step takes a border pixel with the most known neighbours, finds the fully
    known block nearby that best matches the block's known part (masked SSD), and
    copies the missing pixels from it, so textures and straight structures continue.

    Args:
        img: float32 (H, W, 3); values in the hole are ignored.
        hole: bool (H, W), True where pixels are unknown.
        block: block side in pixels (odd).
        offsets: optional int32 (H, W, 2) array that receives, for every filled pixel,
            the (dy, dx) from it to the known pixel it was copied from.

    Returns:
        The filled image (known pixels unchanged).
    """
    h, w = hole.shape
    half = block // 2
    if min(h, w) <= block:
        return harmonic_fill(img, hole)
    out = np.where(hole[..., None], 0.0, img).astype(np.float32)
    unknown = hole.copy()
    valid = cv2.boxFilter(hole.astype(np.float32), -1, (block, block), normalize=False,
                          anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)[:h - block + 1,
                                                                         :w - block + 1] < 0.5
    if not valid.any():
        return harmonic_fill(img, hole)
    kernel = np.ones((3, 3), np.uint8)
    while unknown.any():
        front = unknown & (cv2.dilate((~unknown).astype(np.uint8), kernel) > 0)
        conf = cv2.boxFilter((~unknown).astype(np.float32), -1, (block, block))
        ys, xs = np.nonzero(front)
        order = np.argsort(-conf[ys, xs], kind="stable")
        for y, x in zip(ys[order], xs[order]):
            if not unknown[y, x]:
                continue
            ty = int(np.clip(y - half, 0, h - block))
            tx = int(np.clip(x - half, 0, w - block))
            sy, sx = _exemplar_source(out, unknown, valid, ty, tx, block)
            todo = unknown[ty:ty + block, tx:tx + block]
            out[ty:ty + block, tx:tx + block][todo] = out[sy:sy + block, sx:sx + block][todo]
            if offsets is not None:
                offsets[ty:ty + block, tx:tx + block][todo] = (sy - ty, sx - tx)
            unknown[ty:ty + block, tx:tx + block] = False
    return out


def _exemplar_source(out: np.ndarray, unknown: np.ndarray, valid: np.ndarray, ty: int,
                     tx: int, block: int) -> tuple[int, int]:
    """Top-left of the fully known block that best matches the known part at (ty, tx)."""
    vh, vw = valid.shape
    radius = 4 * block
    while True:
        y0, y1 = max(0, ty - radius), min(vh, ty + radius + 1)
        x0, x1 = max(0, tx - radius), min(vw, tx + radius + 1)
        ok = valid[y0:y1, x0:x1]
        if ok.any() or (y0 == 0 and x0 == 0 and y1 == vh and x1 == vw):
            break
        radius *= 2
    known = (~unknown[ty:ty + block, tx:tx + block]).astype(np.float32)
    search = out[y0:y1 + block - 1, x0:x1 + block - 1]
    cost = cv2.matchTemplate(search, out[ty:ty + block, tx:tx + block], cv2.TM_SQDIFF,
                             mask=np.repeat(known[..., None], 3, axis=2))
    cost = np.where(ok, cost, np.inf)
    cost += 1e-4 * np.hypot(*np.mgrid[y0 - ty:y1 - ty, x0 - tx:x1 - tx])  # prefer near
    sy, sx = np.unravel_index(int(np.argmin(cost)), cost.shape)
    return int(sy + y0), int(sx + x0)


def inpaint(rgb_u8: np.ndarray, hole: np.ndarray, method: str = "auto",
            radius: int = 5) -> np.ndarray:
    """Fill ``hole`` from its surroundings.

    Args:
        rgb_u8: uint8 (H, W, 3) image.
        hole: bool (H, W), True on the pixels to replace.
        method: ``telea`` / ``ns`` (OpenCV); ``patch``: exemplar fill (blocks copied
            from the surroundings continue textures and straight structures; multi-scale
            for large holes); ``auto``: ``patch``, except for thin holes (scratches,
            wires), which go to Telea.
        radius: neighbourhood radius of the OpenCV methods.

    Returns:
        uint8 image with the hole filled.
    """
    if not hole.any() or hole.all():
        return rgb_u8
    # work on the hole's box plus a margin; the rest is untouched
    x, y, w, h = cv2.boundingRect(np.ascontiguousarray(hole, dtype=bool).view(np.uint8))
    if method == "auto":   # the hole's depth, measured on its box and a 1-px ring
        ring = hole[max(0, y - 1):y + h + 1, max(0, x - 1):x + w + 1]
        depth = cv2.distanceTransform(np.ascontiguousarray(ring, dtype=np.uint8), cv2.DIST_L2,
                                      3).max()
        method = "telea" if depth <= THIN_HOLE else "patch"
    if method in ("telea", "ns"):
        flag = cv2.INPAINT_TELEA if method == "telea" else cv2.INPAINT_NS
        return cv2.inpaint(rgb_u8, hole.astype(np.uint8) * 255, radius, flag)
    margin = int(max(16, 0.5 * max(w, h)))
    y0, y1 = max(0, y - margin), min(hole.shape[0], y + h + margin)
    x0, x1 = max(0, x - margin), min(hole.shape[1], x + w + margin)
    out = rgb_u8.copy()
    crop, sub = out[y0:y1, x0:x1], hole[y0:y1, x0:x1]
    if sub.size > MAX_WORK_PIXELS:   # written in place, hole pixels only (no float crop)
        complete_u8(crop, sub, first_guess=_exemplar_guess)
    else:
        crop[...] = to_u8(patch_fill(crop.astype(np.float32) / 255.0, sub))
    return out


#: holes at most this many pixels from their border (scratches, wires) go to Telea, which
#: measured best on them; wider holes get the exemplar fill
THIN_HOLE = 5.0


def patch_fill(img: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """Exemplar fill at a scale where the hole is at most ``COARSE_SIDE`` px, refined up to
    full resolution by PatchMatch completion (``completion.complete``).

    The exemplar blocks lay out the structure (lines and textures continue); the patch
    rounds at each finer scale replace the blocks by voted full-resolution patches, so no
    block seams or smeared areas remain.

    Args:
        img: float32 (H, W, 3) crop around the hole.
        hole: bool (H, W).

    Returns:
        The filled crop.
    """
    return complete(img, hole, first_guess=_exemplar_guess)


def _exemplar_guess(img: np.ndarray, hole: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(hole)
    size = max(np.ptp(rows) + 1, np.ptp(cols) + 1)
    return exemplar_fill(img, hole, block=int(np.clip(size // 8, 3, 6)) * 2 + 1,
                         offsets=offsets)


def _inpaint(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    hole = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return inpaint(rgb8, hole, p["method"], p["radius"])

# ------------------------------------------------------------------------ transform


def _transform(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any],
               shift: tuple[float, float]) -> np.ndarray:
    """Move/resize the object: fill where it was, paste its unmixed cut-out where it lands.

    Args:
        rgb: float32 (H, W, 3) patch holding both the old and the new place.
        mask: bool (H, W) the object (grown over its edge).
        p: validated ``transform`` parameters.
        shift: ``(dx, dy)`` in pixels.
    """
    if not mask.any():
        return rgb
    matrix = move_matrix(mask, p["scale"], shift)
    dest = moved_mask(mask, p["scale"], shift)
    if dest.sum() < 0.25 * mask.sum() * min(1.0, p["scale"] ** 2):
        raise EditError("the moved object would land mostly outside the image; move it less")
    colour, alpha = cut_out(rgb, mask)
    if p["scale"] < 0.6:   # shrinking: pre-blur so the warp does not alias
        sigma = 0.5 / p["scale"] - 0.5
        colour, alpha = sigma_blur(colour, sigma), sigma_blur(alpha, sigma)
    size = (rgb.shape[1], rgb.shape[0])
    warp = {"flags": cv2.INTER_LINEAR, "borderMode": cv2.BORDER_CONSTANT, "borderValue": 0}
    moved = cv2.warpAffine(colour, matrix, size, **warp)
    moved_alpha = np.clip(cv2.warpAffine(alpha, matrix, size, **warp), 0.0, 1.0)
    hole = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    background = inpaint(to_u8(rgb), hole, "auto").astype(np.float32) / 255.0
    return moved + background * (1.0 - moved_alpha[..., None])


# --------------------------------------------------------------------- paste and text


def _fit_reference(ref: np.ndarray, box_w: int, box_h: int,
                   cover: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Resize ``ref`` to fit (or, with ``cover``, to fill and crop to) the box, keeping its
    aspect; return (rgb float, alpha float)."""
    ref = np.asarray(ref)
    if ref.dtype != np.uint8 or ref.ndim not in (2, 3):
        raise EditError(f"paste.image must be a uint8 RGB/RGBA array, got {ref.dtype} "
                        f"{ref.shape}")
    if ref.ndim == 2:
        ref = np.dstack([ref] * 3)
    if ref.shape[2] not in (3, 4) or min(ref.shape[:2]) == 0:
        raise EditError(f"paste.image must be RGB or RGBA, got shape {ref.shape}")
    pick = max if cover else min
    scale = pick(box_w / ref.shape[1], box_h / ref.shape[0])
    size = (max(1, round(ref.shape[1] * scale)), max(1, round(ref.shape[0] * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    fitted = cv2.resize(ref, size, interpolation=interp)
    if fitted.ndim == 2:
        fitted = fitted[..., None]
    if cover:   # centre crop to the box
        top, left = max(0, (size[1] - box_h) // 2), max(0, (size[0] - box_w) // 2)
        fitted = fitted[top:top + box_h, left:left + box_w]
    alpha = fitted[..., 3].astype(np.float32) / 255.0 if fitted.shape[2] == 4 else \
        np.ones(fitted.shape[:2], np.float32)
    return fitted[..., :3].astype(np.float32) / 255.0, alpha


def _paste(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    if not mask.any():
        return rgb
    rows, cols = np.nonzero(mask)
    y0, x0, bh, bw = rows.min(), cols.min(), np.ptp(rows) + 1, np.ptp(cols) + 1
    # replacing a region fills it; adding an object fits it inside the region
    src, alpha = _fit_reference(p["image"], int(bw), int(bh), cover=p.get("fill", False))
    ph, pw = alpha.shape
    oy, ox = int(y0 + (bh - ph) // 2), int(x0 + (bw - pw) // 2)
    canvas = rgb.copy()
    canvas[oy:oy + ph, ox:ox + pw] = src
    full_alpha = np.zeros(mask.shape, np.float32)
    full_alpha[oy:oy + ph, ox:ox + pw] = alpha
    full_alpha *= mask
    if p["mode"] != "normal":
        canvas = _seamless(rgb, canvas, full_alpha > 0.5, p["mode"])
    a = full_alpha[..., None]
    return canvas * a + rgb * (1.0 - a)


def _seamless(dst: np.ndarray, src: np.ndarray, region: np.ndarray, mode: str) -> np.ndarray:
    """Poisson-clone ``src`` over ``dst`` inside ``region`` (same-size float images)."""
    if region.sum() < 4 or min(dst.shape[:2]) < 3:
        return src
    pad = 8
    dst_p = cv2.copyMakeBorder(to_u8(dst), pad, pad, pad, pad, cv2.BORDER_REFLECT)
    src_p = cv2.copyMakeBorder(to_u8(src), pad, pad, pad, pad, cv2.BORDER_REFLECT)
    reg = cv2.copyMakeBorder(region.astype(np.uint8) * 255, pad, pad, pad, pad,
                             cv2.BORDER_CONSTANT, value=0)
    rows, cols = np.nonzero(reg)
    y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    centre = (int(x0 + (x1 - x0) // 2), int(y0 + (y1 - y0) // 2))
    flag = cv2.MIXED_CLONE if mode == "mixed" else cv2.NORMAL_CLONE
    try:
        out = cv2.seamlessClone(src_p, dst_p, reg, centre, flag)
    except cv2.error as exc:   # degenerate region: fall back to a plain paste
        log.warning("seamless clone failed (%s); pasting without blending", exc)
        return src
    return out[pad:-pad, pad:-pad].astype(np.float32) / 255.0



# ------------------------------------------------------------------------------ checks

_METHODS = ("auto", "patch", "telea", "ns")

#: a removal leaves a rim when more than this share of the ring ±RIM_PX around the old
#: edge still has the object's colour
RIM_PX = 8
RIM_SHARE = 0.005
#: a hole this deep (its inscribed radius over the square root of the photo's area, so
#: no print size changes it) whose surround holds two or more distinct colour regions is
#: not filled convincingly from its surround: the fill must invent where the regions'
#: boundaries run across the hole, and on the real photos it carries one side's colour
#: across, leaves blocks of copied edges or ghosts (a kitten in front of a monitor's
#: bezel, a dark screen and a sheet). A deep hole in one kind of surround (sky, grass, a
#: wall) and a shallow one across bands (a plate on a bumper) are filled plausibly.
DEEP_HOLE = 0.055


def _ring_reach(area: int) -> int:
    """How wide a ring round a hole of ``area`` pixels the fill checks read (6–40 px)."""
    return int(max(6, min(40, 0.3 * math.sqrt(area))))


def _deep_across_regions(la: np.ndarray, inside: np.ndarray, frame_side: float
                         ) -> tuple[float, int]:
    """The hole's depth (``DEEP_HOLE``'s measure) and, when it is deep, how many distinct
    colour regions its surround holds (measured where the hole is at most 128 px across);
    (0, 1) when the frame is not known."""
    if frame_side <= 0:
        return 0.0, 1
    depth = float(cv2.distanceTransform(inside.astype(np.uint8), cv2.DIST_L2, 3).max()) / \
        frame_side
    if depth < DEEP_HOLE:
        return depth, 1
    rows, cols = np.nonzero(inside)
    k = min(1.0, 128.0 / (max(np.ptp(rows), np.ptp(cols)) + 1))
    size = (max(1, round(inside.shape[1] * k)), max(1, round(inside.shape[0] * k)))
    small = cv2.GaussianBlur(cv2.resize(la, size, interpolation=cv2.INTER_AREA), (0, 0), 1.0)
    hole = cv2.resize(inside.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
    reach = _ring_reach(int(hole.sum()))
    ring = dilate(hole, reach + 3) & ~dilate(hole, 3)
    return depth, colour_regions(small[ring]) if ring.any() else 1


def _check_inpaint(op: Operation, p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                   inside: np.ndarray, frame_side: float = 0.0) -> Verdict:
    """The fill matches a ring around it (colour, lightness spread, fine-detail energy), no
    pixel of the object's colour is left within ``RIM_PX`` of the old edge, and the hole is
    not one a fill from the surroundings cannot make convincing (``DEEP_HOLE``)."""
    area = int(inside.sum())
    reach = _ring_reach(area)
    ring = dilate(inside, reach + RIM_PX) & ~dilate(inside, RIM_PX)
    if ring.sum() < 10:
        return Verdict(0.5, fix=["the target fills the whole patch; nothing to match it to"])
    ring_lab, in_lab = la[ring], la[inside]
    core = erode(inside, RIM_PX)
    obj_mean = (lb[core] if core.any() else lb[inside]).mean(axis=0)
    ring_mean, in_mean = ring_lab.mean(axis=0), in_lab.mean(axis=0)
    ring_noise = float(np.percentile(np.linalg.norm(ring_lab - ring_mean, axis=1), 90))
    ring_std = float(ring_lab[:, 0].std()) + 2.0
    de_mean = float(np.linalg.norm(in_mean - ring_mean))
    texture = (float(in_lab[:, 0].std()) + 2.0) / ring_std
    gb = grad(la[..., 0])
    detail = (float(gb[erode(inside, 2)].mean()) + 0.3) / (float(gb[ring].mean()) + 0.3) \
        if erode(inside, 2).any() else 1.0
    # the rim: pixels near the old edge (either side) that look like the object
    edge = dilate(inside, RIM_PX) & ~erode(inside, RIM_PX)
    obj_vs_ring = float(np.linalg.norm(obj_mean - ring_mean))
    rim = 0.0
    if obj_vs_ring > max(12.0, 2.0 * ring_noise):
        px = la[edge]
        d_obj = np.linalg.norm(px - obj_mean, axis=1)
        d_ring = np.linalg.norm(px - ring_mean, axis=1)
        rim = float(((d_obj < d_ring) & (d_ring > max(8.0, 1.5 * ring_noise))).mean())
    m = {"fill_vs_surround_dE": round(de_mean, 2), "texture_ratio": round(texture, 3),
         "detail_ratio": round(detail, 3), "rim_share": round(rim, 4)}
    retry = {"method": _METHODS[(_METHODS.index(p.get("method", "auto")) + 1) % 4],
             "radius": int(op.clamp("radius", p.get("radius", 5) * 2, digits=3))}
    verdict = Verdict(1.0, measures=m)
    verdict.checks["no_rim"] = rim <= RIM_SHARE
    if not verdict.checks["no_rim"]:
        verdict.achieved *= 0.3
        verdict.fix.append(f"traces of the removed object's colour remain near its old edge "
                           f"({rim:.1%} of the pixels within {RIM_PX} px, a rim); grow the "
                           "area")
        verdict.grow = RIM_PX
    verdict.checks["fill_matches_colour"] = de_mean <= max(10.0, 1.5 * ring_std)
    if not verdict.checks["fill_matches_colour"]:
        verdict.achieved *= 0.5
        verdict.fix.append("the filled area does not match its surroundings in colour")
        verdict.retry = retry
    verdict.checks["fill_matches_texture"] = 0.35 <= texture <= 3.0 and 0.3 <= detail <= 3.0
    if not verdict.checks["fill_matches_texture"]:
        verdict.achieved *= 0.6
        verdict.fix.append("the filled area looks " + ("smeared" if min(texture, detail) < 0.35
                                                       else "busier than its surroundings"))
        verdict.retry = verdict.retry or retry
    depth, regions = _deep_across_regions(la, inside, frame_side)
    m["hole_depth"], m["surround_regions"] = round(depth, 3), regions
    verdict.checks["fill_continues_surround"] = regions < 2
    if regions >= 2:   # no other fill or radius does better: no retry
        verdict.achieved *= 0.3
        verdict.fix.append(f"I could not fill the hole convincingly: it is wide and {regions} "
                           "different regions meet around it (a fill from the surroundings "
                           "cannot tell where their edges run across it); brush a smaller "
                           "area or remove it in parts")
    if not verdict.fix:
        verdict.keep.append("the removed area blends with its surroundings, no rim is left")
    return verdict


def _check_transform(p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                     inside: np.ndarray) -> Verdict:
    """The object's colour covers about ``scale²`` of its old area after the move."""
    ring = dilate(inside, 12) & ~dilate(inside, 4)
    if ring.sum() < 10:
        return Verdict(0.6, keep=["the object moved"])
    bg = la[ring].mean(axis=0)
    far = np.linalg.norm(lb - bg, axis=2) > 20
    obj = inside & far
    if obj.sum() < 20:
        return Verdict(0.3, fix=["no object stands out of the background to move"])
    colour = lb[obj].mean(axis=0)
    before = float((np.linalg.norm(lb - colour, axis=2)[inside] < 15).sum())
    after = float((np.linalg.norm(la - colour, axis=2)[inside] < 15).sum())
    ratio = after / max(before, 1.0) / max(p.get("scale", 1.0) ** 2, 1e-3)
    verdict = Verdict(1.0, measures={"area_vs_expected": round(ratio, 3)})
    verdict.checks["size_as_asked"] = 0.6 <= ratio <= 1.6
    if verdict.checks["size_as_asked"]:
        verdict.keep.append("the object has the size and place asked for")
    else:
        verdict.achieved *= 0.4
        verdict.fix.append(f"the object covers {ratio:.0%} of the area asked for")
    return verdict

# ------------------------------------------------------------------------- operations


@family
class Inpaint(Operation):
    name = "inpaint"
    kinds = ("remove",)
    description = "Remove the target and fill from its surroundings."
    params = (ParamSpec("method", "choice", "auto", "fill method",
                        choices=("auto", "telea", "ns", "patch")),
              ParamSpec("radius", "int", 5, "inpainting radius in pixels", 1, 50))
    main = "method"
    needs_target = True
    flags = frozenset({"object_edge", "removes_target"})
    role = "remove"
    words = ("remove", "erase", "delete", "get rid of", "take out", "take away", "eliminate",
             "wipe out", "cut out")
    wording = "remove {where}"

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        # on the 8-bit pixels: a float copy of a 50-MP frame is 600 MB, and the fill
        # itself only ever works on the hole's crop
        return _inpaint(np.ascontiguousarray(rgb8), mask, params)

    def stronger(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"method": "patch"}

    def check(self, m: Measured) -> Verdict:
        return _check_inpaint(self, m.params, m.lb, m.la, m.inside, m.frame_side)


@family
class Transform(Operation):
    name = "transform"
    description = ("Move and/or resize the target object; the place it leaves is filled "
                   "from its surroundings.")
    params = (ParamSpec("scale", "float", 1.0, "size factor (1 keeps the size)", 0.2, 5.0),
              ParamSpec("dx", "float", 0.0, "shift right (+) or left (-), as a fraction "
                        "of the image width", -1.0, 1.0),
              ParamSpec("dy", "float", 0.0, "shift down (+) or up (-), as a fraction of "
                        "the image height", -1.0, 1.0))
    main = "scale"
    needs_target = True
    flags = frozenset({"object_edge", "moves_target"})
    role = "move"
    words = ("move", "bigger", "smaller", "enlarge", "shrink")

    def transform(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any],
                  shift: tuple[float, float]) -> np.ndarray:
        """Move/resize the object by ``shift`` pixels (the caller knows the frame)."""
        return to_u8(_transform(rgb8.astype(np.float32) / 255.0, mask, params, shift))

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return self.transform(rgb8, mask, params, (0.0, 0.0))

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        def num(name: str) -> float:
            value = params.get(name)
            return float(value) if isinstance(value, (int, float)) and \
                not isinstance(value, bool) else 0.0
        scale = num("scale") or 1.0
        dx, dy = num("dx"), num("dy")
        parts = []
        if scale > 1.01:
            parts.append(f"make {where} bigger")
        elif scale < 0.99:
            parts.append(f"make {where} smaller")
        moves = [w for v, w in ((dx, "right" if dx > 0 else "left"),
                                (dy, "down" if dy > 0 else "up")) if abs(v) > 0.005]
        if moves:
            parts.append(f"move {where if not parts else 'it'} {' and '.join(moves)}")
        return " and ".join(parts) or f"move {where}"

    def check(self, m: Measured) -> Verdict:
        return _check_transform(m.params, m.lb, m.la, m.inside)


@family
class Paste(FloatOp):
    name = "paste"
    kinds = ("add", "replace")
    description = "Paste a reference image into the region with seamless cloning."
    params = (ParamSpec("image", "image", None, "reference image (RGB/RGBA)", required=True),
              ParamSpec("mode", "choice", "seamless", "blend mode",
                        choices=("seamless", "mixed", "normal")))
    main = "mode"
    needs_target = True
    flags = frozenset({"content"})
    words = ("paste",)
    fills_on_replace = True
    wording = "paste the reference picture into {where}"

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _paste(rgb, mask, p)

    def check(self, m: Measured) -> Verdict:
        return Verdict(0.9, keep=["the target changed"])


@family
class Generate(Operation):
    name = "generate"
    kinds = ("add", "replace", "remove", "adjust")
    description = "Free-form generative edit described by the instruction."
    params = (ParamSpec("prompt", "str", "", "what the region should show"),)
    main = "prompt"
    generative = True
    model_role = "editor"
    flags = frozenset({"content"})
    role = "new_content"
    words = ("generate",)
    #: looks that need new content, not a grade ("make it snowy", "night time")
    look_pattern = (r"\b(?:night(?:time)?|winter|snowy|snow|rainy|rain|autumn|fall|spring|"
                    r"summer|foggy|fog|stormy|cartoon|anime|painting|sketch|watercolou?r|"
                    r"van gogh|cyberpunk|sunset|sunrise|underwater|desert|beach)\b")

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        prompt = str(params.get("prompt") or instruction or "").strip()
        return f"change {where}: {prompt}" if prompt else f"change {where}"

    def check(self, m: Measured) -> Verdict:
        return Verdict(0.9, keep=["the target changed"])
