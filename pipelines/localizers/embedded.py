"""``EmbeddedLocalizer``: brush masks, boxes (GrabCut), colour and spatial words, sky,
subject/background and the whole image — no weights.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.color import rgb_to_lab
from pipelines.localizers import portion
from pipelines.localizers.base import (
    Box,
    Candidate,
    Evidence,
    Hint,
    Localization,
    Localizer,
    as_rgb,
    resolved,
)
from pipelines.localizers.focus import in_focus
from pipelines.localizers.phrases import (
    WHOLE,
    Phrase,
    noun_words,
    parse_phrase,
    select_candidates,
)
from pipelines.localizers.segment import (
    centroid,
    clip_box,
    colour_mask,
    components,
    grabcut_object,
    hsv,
    smooth_resize,
    to_size,
    work_copy,
)

#: how far a clicked region may drift from its neighbours (ΔL, Δa, Δb; L in 0–100)
_FLOOD_STEP = (4.7, 10.0, 10.0)


class EmbeddedLocalizer(Localizer):
    """Brush masks, boxes (GrabCut), colour and spatial words — no weights."""

    name = "embedded"
    #: why words that name nothing it knows are refused
    unnamed = "names no colour or place the embedded localiser can find (no detection " \
        "model is configured)"

    def locate(self, image: np.ndarray, phrase: str, hint: Hint | None = None) -> Localization:
        """Find the target of ``phrase`` in ``image``.

        Args:
            image: uint8 HWC RGB/RGBA (any size; analysed on a ≤768-px copy).
            phrase: e.g. ``"the left red one"``, ``"sky"``, ``"whole image"``.
            hint: the user's brush mask, box or point, used first when given.

        Returns:
            A ``Localization`` whose masks are bool arrays at the image's size.

        Raises:
            LocalizationError: malformed image or hint.
        """
        rgb = as_rgb(image)
        shape = rgb.shape[:2]
        parsed = parse_phrase(phrase)
        if hint is not None and hint.given:
            return self._from_hint(rgb, parsed, hint)
        part = portion.split(parsed.text)
        if part:        # "the left half of the sky": the sky, then its left half
            return portion.of(self.locate, rgb, *part)
        if WHOLE.search(parsed.text) and parsed.exclude is not None:
            return self._all_but(rgb, parsed.exclude.text)
        if WHOLE.search(parsed.text):
            return resolved([Candidate(np.ones(shape, bool), 1.0, "whole image", "phrase")],
                            "the whole image")
        small = work_copy(rgb)
        if parsed.colors:
            found = self._by_colour(small, parsed)
        elif {"sky"} & set(parsed.words):
            side = portion.side_of(parsed.words)     # "the sky on the left": a part of it
            if side:
                return portion.of(self.locate, rgb, side, "", "the sky")
            found = self._sky(small)
        elif {"background", "foreground", "subject"} & set(parsed.words):
            found = self._figure_ground(small, "background" in parsed.words)
        elif parsed.spatial:
            found = self._region(small, parsed)
        else:
            what = f"{parsed.text!r}" if parsed.text else "an empty phrase"
            return Localization([], "unresolved", f"{what} {self.unnamed}; click it, paint "
                                "a mask, draw a box, or name its colour or position")
        return _upscale(found, shape)

    # --- hints --------------------------------------------------------------------

    def _all_but(self, image: np.ndarray, left_out: str) -> Localization:
        """"Everything except the cup": the whole frame but what ``left_out`` names."""
        inner = self.locate(image, left_out)
        if inner.status != "resolved" or inner.union() is None:
            return Localization([], "unresolved", f"everything except {left_out!r}: "
                                f"{inner.reason}", candidates=inner.candidates)
        rest = ~inner.union()
        return Localization([Candidate(rest, inner.masks[0].score, "everything else",
                                       inner.masks[0].source, {"user": 0.0})], "resolved",
                            f"everything except {left_out} ({inner.reason})")

    def _from_hint(self, rgb: np.ndarray, parsed: Phrase, hint: Hint) -> Localization:
        shape = rgb.shape[:2]
        label = parsed.text or "selection"
        if hint.mask is not None:
            mask = to_size(hint.mask, shape)
            if not mask.any():
                return Localization([], "unresolved", "the painted mask is empty")
            if hint.refine and parsed.colors:   # "the red car" painted loosely
                refined = _colour_within(rgb, mask, parsed.colors)
                if refined is not None:
                    return resolved([Candidate(refined, 0.9, label, "brush+colour",
                                               {"user": 1.0, "colour": 1.0})],
                                    f"the {' or '.join(parsed.colors)} part of the painted "
                                    "mask")
            return resolved([Candidate(mask, 1.0, label, "brush", {"user": 1.0})],
                            "the painted mask")
        if hint.box is not None:
            box = clip_box(hint.box, shape)
            if box is None:
                return Localization([], "unresolved", f"the box {hint.box} is empty or "
                                    "outside the image")
            return self._from_box(rgb, box, label)
        return self._from_point(rgb, hint.point, label)

    def _from_box(self, rgb: np.ndarray, box: Box, label: str) -> Localization:
        x0, y0, x1, y1 = box
        pad = max(8, (x1 - x0 + y1 - y0) // 8)
        cx0, cy0 = max(0, x0 - pad), max(0, y0 - pad)
        cx1, cy1 = min(rgb.shape[1], x1 + pad), min(rgb.shape[0], y1 + pad)
        crop = rgb[cy0:cy1, cx0:cx1]
        scale = min(1.0, 384 / max(crop.shape[:2]))
        small = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
            if scale < 1 else crop
        sbox = (int((x0 - cx0) * scale), int((y0 - cy0) * scale),
                max(int((x0 - cx0) * scale) + 1, int(round((x1 - cx0) * scale))),
                max(int((y0 - cy0) * scale) + 1, int(round((y1 - cy0) * scale))))
        refined = grabcut_object(small, sbox)
        full = np.zeros(rgb.shape[:2], bool)
        if refined is None:
            full[y0:y1, x0:x1] = True
            return resolved([Candidate(full, 0.6, label, "box", {"user": 1.0})],
                            "the box (GrabCut found no clear object in it)")
        full[cy0:cy1, cx0:cx1] = smooth_resize(refined, crop.shape[:2])
        full[:y0], full[y1:], full[:, :x0], full[:, x1:] = False, False, False, False
        return resolved([Candidate(full, 0.8, label, "box+grabcut", {"user": 1.0})],
                        "the object in the box")

    def _from_point(self, rgb: np.ndarray, point: tuple[int, int], label: str
                    ) -> Localization:
        x, y = (int(round(v)) for v in point)
        h, w = rgb.shape[:2]
        if not (0 <= x < w and 0 <= y < h):
            return Localization([], "unresolved", f"the point {point} is outside the image")
        small = work_copy(rgb)
        sx, sy = int(x * small.shape[1] / w), int(y * small.shape[0] / h)
        lab = rgb_to_lab(cv2.GaussianBlur(small, (5, 5), 0))
        flood = np.zeros((small.shape[0] + 2, small.shape[1] + 2), np.uint8)
        flags = 8 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (255 << 8)
        cv2.floodFill(lab, flood, (sx, sy), 0, _FLOOD_STEP, _FLOOD_STEP, flags)
        region = flood[1:-1, 1:-1] > 0
        if region.mean() > 0.9:
            return Localization([], "unresolved", "the point is on a region as large as "
                                "the image; paint a mask instead")
        mask = smooth_resize(region, (h, w))
        return resolved([Candidate(mask, 0.6, label, "point", {"user": 1.0})],
                        "the region around the point")

    # --- phrases ------------------------------------------------------------------

    def _by_colour(self, small: np.ndarray, parsed: Phrase) -> Localization:
        match = colour_mask(small, parsed.colors)
        colour = " or ".join(parsed.colors)
        bridge = max(3, round(0.015 * max(match.shape)))
        parts = components(match, max(16, int(4e-4 * match.size)), bridge)
        if not parts:
            return Localization([], "unresolved", f"no {colour} region in the image")
        biggest = parts[0].sum()
        parts = [p for p in parts if p.sum() >= 0.05 * biggest]
        cands = [Candidate(p, _colour_score(p, biggest), f"{colour} region", "colour",
                           _colour_evidence(p, biggest)) for p in parts]
        cands, blurred = in_focus(small, cands)     # not the look-alikes in the bokeh
        found = select_candidates(cands, parsed, colour)
        if blurred:
            found.reason += f" ({blurred} out-of-focus {colour} region(s) left out)"
        return found

    def _sky(self, small: np.ndarray) -> Localization:
        hsv_map = hsv(small)
        h, s, v = hsv_map[..., 0], hsv_map[..., 1], hsv_map[..., 2]
        blue = (h >= 185) & (h <= 250) & (s >= 0.15) & (v >= 0.2)
        overcast = (s <= 0.12) & (v >= 0.75)
        rows = small.shape[0]
        parts = [p for p in components(blue | overcast, max(16, int(2e-3 * blue.size)))
                 if p[: max(1, rows // 20)].any() and centroid(p)[1] < 0.5]
        sky = np.logical_or.reduce(parts) if parts else None
        if sky is not None:
            blueness = float(blue[sky].mean())
            top_cover = float(sky[0].mean())
            if blueness >= 0.5:
                return resolved([Candidate(sky, 0.85, "sky", "colour+position")],
                                "the blue region along the top")
            if top_cover >= 0.4 and sky.mean() >= 0.08:
                return Localization([Candidate(sky, 0.5, "sky", "colour+position")], "ambiguous",
                                    "a bright grey region along the top may be an overcast "
                                    "sky (or a plain backdrop)")
        return Localization([], "unresolved", "no blue-ish region along the top of the image "
                            "looks like sky")

    def _figure_ground(self, small: np.ndarray, background: bool) -> Localization:
        scale = min(1.0, 256 / max(small.shape[:2]))
        small = cv2.resize(small, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
            if scale < 1 else small
        h, w = small.shape[:2]
        fg = grabcut_object(small, (w // 10, h // 10, w - w // 10, h - h // 10))
        source = "grabcut"
        if fg is None:
            fg, source = spectral_saliency(small), "saliency"
        if fg is None or not fg.any():
            return Localization([], "unresolved", "no distinct subject stands out from "
                                "the background")
        mask = ~fg if background else fg
        label = "background" if background else "subject"
        return resolved([Candidate(mask, 0.6, label, source)],
                        f"the {label} (estimated, {source})")

    def _region(self, small: np.ndarray, parsed: Phrase) -> Localization:
        h, w = small.shape[:2]
        mask = np.ones((h, w), bool)
        corner = {"corner", "corners"} & set(parsed.words)
        frac = 1 / 3 if corner or parsed.horizontal == "centre" else 1 / 2
        cols, rows = np.arange(w) / w, np.arange(h) / h
        span = {"left": cols < frac, "right": cols >= 1 - frac,
                "centre": (cols >= 0.25) & (cols < 0.75)}
        vspan = {"top": rows < frac, "bottom": rows >= 1 - frac,
                 "centre": (rows >= 0.25) & (rows < 0.75)}
        if parsed.horizontal:
            mask &= span[parsed.horizontal][None, :]
        if parsed.vertical:
            mask &= vspan[parsed.vertical][:, None]
        place = " ".join(x for x in (parsed.vertical, parsed.horizontal) if x)
        label = f"{place} {'corner' if corner else 'region'}"
        nouns = noun_words(parsed)
        if nouns:   # "the dog on the left": we know where to look, not what
            return Localization([Candidate(mask, 0.4, label, "position", {"position": 1.0})],
                                "ambiguous", f"only the place ({label}) was understood; "
                                f"{' '.join(nouns)!r} was not located")
        return Localization([Candidate(mask, 0.9, label, "position", {"position": 1.0})],
                            "resolved", f"the {label}")


def _colour_within(rgb: np.ndarray, mask: np.ndarray, colours: list[str]) -> np.ndarray | None:
    """The pixels of ``mask`` in the named colours, if they are a real part of it (≥ 5 %)."""
    rows, cols = np.nonzero(mask)
    y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    crop, inside = rgb[y0:y1, x0:x1], mask[y0:y1, x0:x1]
    small = work_copy(crop)
    match = colour_mask(small, colours)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    match = cv2.morphologyEx(match.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    match = cv2.morphologyEx(match, cv2.MORPH_CLOSE, kernel) > 0
    refined = smooth_resize(match, inside.shape) & inside
    if refined.sum() < 0.05 * inside.sum():
        return None
    full = np.zeros(mask.shape, bool)
    full[y0:y1, x0:x1] = refined
    return full


def _colour_evidence(mask: np.ndarray, biggest: int) -> Evidence:
    """A colour region's factors: its size against the largest one, how it fills its box."""
    area = mask.sum()
    ys, xs = np.nonzero(mask)
    fill = area / float((np.ptp(xs) + 1) * (np.ptp(ys) + 1))
    return {"colour": 1.0, "size": float(area / biggest), "fill": float(fill)}


def _colour_score(mask: np.ndarray, biggest: int) -> float:
    factors = _colour_evidence(mask, biggest)
    return float(np.clip(0.5 + 0.3 * factors["size"] + 0.15 * factors["fill"], 0.0, 0.95))


def _upscale(found: Localization, shape: tuple[int, int]) -> Localization:
    """Bring work-copy masks to the image's size."""
    for m in found.candidates:
        m.mask = smooth_resize(m.mask, shape)
    return found


def spectral_saliency(small: np.ndarray) -> np.ndarray | None:
    """Spectral-residual saliency (no weights), thresholded to its largest blob."""
    grey = cv2.resize(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY), (64, 64)).astype(np.float32)
    spectrum = np.fft.fft2(grey)
    log_amp = np.log(np.abs(spectrum) + 1e-6)
    residual = log_amp - cv2.blur(log_amp, (3, 3))
    sal = np.abs(np.fft.ifft2(np.exp(residual + 1j * np.angle(spectrum)))) ** 2
    sal = cv2.GaussianBlur(sal.astype(np.float32), (0, 0), 2.5)
    sal = cv2.resize(sal, (small.shape[1], small.shape[0]))
    parts = components(sal > 3 * sal.mean(), max(16, int(0.005 * sal.size)))
    return parts[0] if parts else None
