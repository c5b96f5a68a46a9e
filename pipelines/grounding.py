"""Localisation: turn a phrase (and an optional hint) into target masks.

The ``Localizer`` protocol returns a ``Localization``: candidate masks with scores and an
honest status — ``resolved`` (use the masks), ``ambiguous`` (several candidates, sorted
best first; the caller decides) or ``unresolved`` (nothing found; the reason says why).
Never a guess presented as certain.

``EmbeddedLocalizer`` needs no weights: the user's brush mask, a box refined with
GrabCut, colour words (HSV ranges, connected components, picked by size, position and
ordinal words), spatial words, sky, foreground/background and the whole image.
Model-based localisers (``pipelines.detection``) register into ``LOCALIZERS`` and are
preferred by ``get_localizer()`` when their weights are present.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import cv2
import numpy as np

from pipelines.images import downscale

log = logging.getLogger(__name__)

Box = tuple[int, int, int, int]
#: long side of the copy the embedded localiser analyses (masks come back at full size)
WORK_SIDE = 768
STATUSES = ("resolved", "ambiguous", "unresolved")
#: a colour region this many times larger than every other one is "the" object
DOMINANT_RATIO = 5.0


class LocalizationError(ValueError):
    """A malformed image or hint (a caller error, not an unresolved phrase)."""


@dataclass
class Hint:
    """What the user pointed at: a brush mask (any size), a box or a point (x, y).

    A brush mask is used exactly as painted, unless ``refine`` is set and the phrase
    names a colour: then it narrows to that colour's pixels inside the brush (a loosely
    painted "red car" to recolour). Leave it off for removals, which need the whole
    painted object.
    """

    mask: np.ndarray | None = None
    box: Box | None = None
    point: tuple[int, int] | None = None
    refine: bool = False


@dataclass
class Mask:
    """One candidate target: a bool mask at the image's size, a score in [0, 1]."""

    mask: np.ndarray
    score: float
    label: str
    source: str

    @property
    def area(self) -> int:
        return int(self.mask.sum())


@dataclass
class Localization:
    """The answer of a localiser for one phrase.

    ``plural`` is set when the phrase asked for every instance ("the cats", "all the red
    ones") and the resolved masks are all targets: edit their ``union()``. Otherwise the
    masks are candidates, best first, and a resolved answer means ``best``.
    """

    masks: list[Mask] = field(default_factory=list)
    status: str = "unresolved"
    reason: str = ""
    plural: bool = False

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def best(self) -> Mask | None:
        """The highest-scoring candidate, or None."""
        return max(self.masks, key=lambda m: m.score) if self.masks else None

    def union(self) -> np.ndarray | None:
        """All candidate masks merged (for plural targets), or None."""
        if not self.masks:
            return None
        return np.logical_or.reduce([m.mask for m in self.masks])


class Localizer(ABC):
    """Base class of every localiser: ``locate(image, phrase, hint) -> Localization``."""

    name: ClassVar[str] = ""
    requires_weights: ClassVar[bool] = False
    #: among available model-based localisers the highest wins (ties: registration order)
    priority: ClassVar[int] = 0

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        """Whether this localiser can run here, and why not (override for model-based)."""
        return True, ""

    @abstractmethod
    def locate(self, image: np.ndarray, phrase: str, hint: Hint | None = None) -> Localization:
        """Find the target ``phrase`` names in ``image`` (uint8 HWC RGB/RGBA)."""


LOCALIZERS: dict[str, type[Localizer]] = {}
_INSTANCES: dict[str, Localizer] = {}


def register_localizer(cls: type[Localizer]) -> type[Localizer]:
    """Class decorator: add a localiser to ``LOCALIZERS`` under its ``name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a name")
    LOCALIZERS[cls.name] = cls
    return cls


def get_localizer(name: str | None = None) -> Localizer:
    """A localiser by name, or the best available one: the model-based one of highest
    ``priority`` (GroundingDINO+SAM, then the embedded perception stack), else ``embedded``.

    Args:
        name: registry key, or None for the best available.

    Returns:
        A cached localiser instance.

    Raises:
        LocalizationError: unknown name, or the named localiser is unavailable.
    """
    if name is None or name not in LOCALIZERS:
        _load_model_localizers()
    if name is None:
        name = "embedded"
        ranked = sorted(LOCALIZERS.items(), key=lambda kv: -kv[1].priority)
        for key, cls in ranked:
            if key != "embedded" and cls.requires_weights and _available(cls)[0]:
                name = key
                break
    cls = LOCALIZERS.get(name)
    if cls is None:
        raise LocalizationError(f"unknown localiser {name!r}; known: "
                                f"{', '.join(sorted(LOCALIZERS))}")
    ok, reason = _available(cls)
    if not ok:
        raise LocalizationError(f"the {name} localiser is unavailable: {reason}")
    if not isinstance(_INSTANCES.get(name), cls):
        _INSTANCES[name] = cls()
    return _INSTANCES[name]


def _available(cls: type[Localizer]) -> tuple[bool, str]:
    try:
        ok, reason = cls.is_available()
    except Exception as exc:  # a broken plugin must not break localisation
        log.warning("availability check of %s failed: %s", cls.name, exc)
        return False, str(exc)
    return bool(ok), reason


def _load_model_localizers() -> None:
    # plugins register themselves on import; they import this module, hence the late
    # import. Order = preference: GroundingDINO+SAM, then the embedded perception stack.
    for module in ("pipelines.detection", "pipelines.perception.localizer"):
        try:
            __import__(module)
        except ImportError as exc:
            log.debug("localiser plugin %s not loaded: %s", module, exc)
        except Exception as exc:
            log.warning("localiser plugin %s failed to load: %s", module, exc)

# ------------------------------------------------------------------- phrase parsing


@dataclass(frozen=True)
class HsvRange:
    """Hue intervals in degrees and saturation/value bounds in [0, 1]."""

    hues: tuple[tuple[float, float], ...] = ((0.0, 360.0),)
    s_min: float = 0.0
    s_max: float = 1.0
    v_min: float = 0.0
    v_max: float = 1.0

    def match(self, hsv: np.ndarray) -> np.ndarray:
        h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
        hue_ok = np.zeros(h.shape, bool)
        for lo, hi in self.hues:
            hue_ok |= (h >= lo) & (h <= hi)
        return hue_ok & (s >= self.s_min) & (s <= self.s_max) & \
            (v >= self.v_min) & (v <= self.v_max)


#: colour words → HSV ranges (broad families, tolerant of shading)
COLOR_RANGES: dict[str, HsvRange] = {
    "red": HsvRange(((0, 14), (340, 360)), 0.45, 1, 0.25),
    "maroon": HsvRange(((0, 15), (335, 360)), 0.45, 1, 0.12, 0.55),
    "orange": HsvRange(((14, 40),), 0.55, 1, 0.3),
    "yellow": HsvRange(((40, 68),), 0.4, 1, 0.35),
    "gold": HsvRange(((36, 56),), 0.45, 1, 0.35),
    "olive": HsvRange(((45, 80),), 0.35, 1, 0.2, 0.6),
    "lime": HsvRange(((68, 105),), 0.45, 1, 0.35),
    "green": HsvRange(((70, 165),), 0.25, 1, 0.12),
    "teal": HsvRange(((160, 200),), 0.35, 1, 0.2, 0.7),
    "turquoise": HsvRange(((160, 190),), 0.3, 1, 0.4),
    "cyan": HsvRange(((175, 200),), 0.35, 1, 0.4),
    "blue": HsvRange(((195, 255),), 0.3, 1, 0.15),
    "navy": HsvRange(((205, 250),), 0.35, 1, 0.08, 0.5),
    "violet": HsvRange(((250, 290),), 0.25, 1, 0.3),
    "purple": HsvRange(((255, 300),), 0.3, 1, 0.15),
    "magenta": HsvRange(((285, 335),), 0.4, 1, 0.3),
    "pink": HsvRange(((300, 360), (0, 10)), 0.15, 0.65, 0.5),
    "brown": HsvRange(((5, 45),), 0.3, 1, 0.1, 0.65),
    "beige": HsvRange(((20, 55),), 0.1, 0.4, 0.65),
    "black": HsvRange(v_max=0.2),
    "white": HsvRange(s_max=0.15, v_min=0.8),
    "gray": HsvRange(s_max=0.15, v_min=0.25, v_max=0.8),
    "grey": HsvRange(s_max=0.15, v_min=0.25, v_max=0.8),
    "silver": HsvRange(s_max=0.12, v_min=0.55, v_max=0.9),
}

ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
            "fourth": 4, "4th": 4, "fifth": 5, "5th": 5, "sixth": 6, "6th": 6}
WHOLE = re.compile(r"\b(whole|entire|everything|full (image|photo|picture|frame)|"
                   r"all of it|the (image|photo|picture|frame))\b")
PLURAL = {"all", "every", "each", "both", "ones", "them", "these", "those"}
FILLER = {
    "the", "a", "an", "of", "on", "in", "at", "to", "and", "one", "ones", "object",
    "objects", "thing", "things", "shape", "shapes", "part", "parts", "region", "area",
    "side", "half", "corner", "corners", "image", "photo", "picture", "frame", "that", "is",
    "which", "with", "most", "color", "colour", "colored", "coloured", "bit", "piece",
    "all", "every", "each", "both", "them", "these", "those", "this", "it", "its",
    "big", "bigger", "biggest", "large", "larger", "largest", "small", "smaller",
    "smallest", "tiny", "last", "light", "dark", "bright", "pale", "deep", "left",
    "leftmost", "right", "rightmost", "top", "topmost", "upper", "bottom", "bottommost",
    "lower", "middle", "centre", "center", "central", "sky", "background", "foreground",
    "subject", "main", "whole", "entire", "everything", "full",
}


@dataclass
class Phrase:
    """What the embedded localiser understood of a phrase."""

    text: str
    words: list[str]
    colors: list[str]
    ordinal: int | None = None
    last: bool = False
    size: str | None = None          # "largest" | "smallest"
    horizontal: str | None = None    # "left" | "right" | "centre"
    vertical: str | None = None      # "top" | "bottom" | "centre"
    plural: bool = False
    unknown: list[str] = field(default_factory=list)

    @property
    def spatial(self) -> bool:
        return bool(self.horizontal or self.vertical)


def parse_phrase(phrase: str) -> Phrase:
    """Split a target phrase into colour, ordinal, size, position and plural cues."""
    text = " ".join(str(phrase or "").lower().split())[:200]
    words = re.findall(r"[a-z0-9]+", text)
    parsed = Phrase(text, words, [w for w in words if w in COLOR_RANGES])
    for w in words:
        if w in ORDINALS and parsed.ordinal is None:
            parsed.ordinal = ORDINALS[w]
        parsed.last |= w == "last"
        if w in ("largest", "biggest", "big", "large", "larger", "bigger"):
            parsed.size = "largest"
        elif w in ("smallest", "small", "tiny", "smaller"):
            parsed.size = "smallest"
        if w in ("left", "leftmost"):
            parsed.horizontal = "left"
        elif w in ("right", "rightmost"):
            parsed.horizontal = "right"
        elif w in ("top", "topmost", "upper", "above"):
            parsed.vertical = "top"
        elif w in ("bottom", "bottommost", "lower", "below"):
            parsed.vertical = "bottom"
    if re.search(r"\b(centre|center|middle|central)\b", text):
        parsed.horizontal = parsed.horizontal or "centre"
        parsed.vertical = parsed.vertical or "centre"
    parsed.unknown = [w for w in words if w not in FILLER and w not in COLOR_RANGES
                      and w not in ORDINALS and not w.isdigit()]
    nouns = [w for w in parsed.unknown if len(w) > 3]
    parsed.plural = bool(PLURAL & set(words)) or any(
        w.endswith("s") and not w.endswith(("ss", "us", "is")) for w in nouns)
    return parsed

# ------------------------------------------------------------------------ pixel work


def _rgb(image: np.ndarray) -> np.ndarray:
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.dstack([image] * 3)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (3, 4) or \
            min(image.shape[:2]) == 0:
        raise LocalizationError(f"image must be uint8 RGB/RGBA, got {image.dtype} "
                                f"{image.shape}")
    return np.ascontiguousarray(image[..., :3])


def _work_copy(rgb: np.ndarray) -> np.ndarray:
    return downscale(rgb, WORK_SIDE)


def _to_size(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Resize a bool/uint8/float mask to ``shape`` (nearest), as bool."""
    mask = np.asarray(mask)
    if mask.ndim == 3:
        mask = mask[..., -1] if mask.shape[2] in (2, 4) else mask.max(axis=2)
    binary = (mask > 0.5 if mask.dtype.kind == "f" else mask > 0).astype(np.uint8)
    if binary.shape != shape:
        binary = cv2.resize(binary, (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST)
    return binary.astype(bool)


def _hsv(rgb: np.ndarray) -> np.ndarray:
    hsv = cv2.cvtColor(rgb.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)
    return hsv


def _components(mask: np.ndarray, min_area: int, bridge: int = 3) -> list[np.ndarray]:
    """Connected parts of a cleaned mask, largest first, dropping specks.

    Pieces closer than ``bridge`` px (one object split by shading or highlights) count
    as one part; each part keeps only its own matching pixels.
    """
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    clean = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    clean = cv2.morphologyEx(clean, cv2.MORPH_CLOSE, kernel)
    joined = clean
    if bridge > 3:
        wide = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (bridge, bridge))
        joined = cv2.morphologyEx(clean, cv2.MORPH_CLOSE, wide)
    count, labels, _, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    if count <= 1:
        return []
    areas = np.bincount(labels[clean > 0], minlength=count)
    order = sorted(range(1, count), key=lambda i: -areas[i])
    return [(labels == i) & (clean > 0) for i in order if areas[i] >= min_area]


def _centroid(mask: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(mask)
    return float(xs.mean()) / mask.shape[1], float(ys.mean()) / mask.shape[0]


def _grabcut(rgb: np.ndarray, box: Box, iterations: int = 4) -> np.ndarray | None:
    """Foreground inside ``box`` by GrabCut, or None when it degenerates."""
    x0, y0, x1, y1 = box
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    gc = np.zeros(rgb.shape[:2], np.uint8)
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    try:
        cv2.grabCut(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), gc, (x0, y0, x1 - x0, y1 - y0),
                    bgd, fgd, iterations, cv2.GC_INIT_WITH_RECT)
    except cv2.error as exc:
        log.info("GrabCut failed: %s", exc)
        return None
    fg = (gc == cv2.GC_FGD) | (gc == cv2.GC_PR_FGD)
    inside = fg[y0:y1, x0:x1].mean()
    if not 0.04 <= inside <= 0.97:
        return None
    parts = _components(fg, max(4, int(0.01 * (x1 - x0) * (y1 - y0))))
    return parts[0] if parts else None

# ---------------------------------------------------------------- the embedded one


@register_localizer
class EmbeddedLocalizer(Localizer):
    """Brush masks, boxes (GrabCut), colour and spatial words — no weights."""

    name = "embedded"

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
        rgb = _rgb(image)
        shape = rgb.shape[:2]
        parsed = parse_phrase(phrase)
        if hint is not None and (hint.mask is not None or hint.box is not None
                                 or hint.point is not None):
            return self._from_hint(rgb, parsed, hint)
        if WHOLE.search(parsed.text):
            return _resolved([Mask(np.ones(shape, bool), 1.0, "whole image", "phrase")],
                             "the whole image")
        small = _work_copy(rgb)
        if parsed.colors:
            found = self._by_colour(small, parsed)
        elif {"sky"} & set(parsed.words):
            found = self._sky(small)
        elif {"background", "foreground", "subject"} & set(parsed.words):
            found = self._figure_ground(small, "background" in parsed.words)
        elif parsed.spatial:
            found = self._region(small, parsed)
        else:
            what = f"{parsed.text!r}" if parsed.text else "an empty phrase"
            return Localization([], "unresolved",
                                f"{what} names no colour or place the embedded localiser "
                                "can find (no detection model is configured); paint a mask, "
                                "draw a box, or name its colour or position")
        return _upscale(found, shape)

    # --- hints --------------------------------------------------------------------

    def _from_hint(self, rgb: np.ndarray, parsed: Phrase, hint: Hint) -> Localization:
        shape = rgb.shape[:2]
        label = parsed.text or "selection"
        if hint.mask is not None:
            mask = _to_size(hint.mask, shape)
            if not mask.any():
                return Localization([], "unresolved", "the painted mask is empty")
            if hint.refine and parsed.colors:   # "the red car" painted loosely
                refined = _colour_within(rgb, mask, parsed.colors)
                if refined is not None:
                    return _resolved([Mask(refined, 0.9, label, "brush+colour")],
                                     f"the {' or '.join(parsed.colors)} part of the painted "
                                     "mask")
            return _resolved([Mask(mask, 1.0, label, "brush")], "the painted mask")
        if hint.box is not None:
            box = _clip_box(hint.box, shape)
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
        refined = _grabcut(small, sbox)
        full = np.zeros(rgb.shape[:2], bool)
        if refined is None:
            full[y0:y1, x0:x1] = True
            return _resolved([Mask(full, 0.6, label, "box")],
                             "the box (GrabCut found no clear object in it)")
        full[cy0:cy1, cx0:cx1] = smooth_resize(refined, crop.shape[:2])
        full[:y0], full[y1:], full[:, :x0], full[:, x1:] = False, False, False, False
        return _resolved([Mask(full, 0.8, label, "box+grabcut")], "the object in the box")

    def _from_point(self, rgb: np.ndarray, point: tuple[int, int], label: str
                    ) -> Localization:
        x, y = (int(round(v)) for v in point)
        h, w = rgb.shape[:2]
        if not (0 <= x < w and 0 <= y < h):
            return Localization([], "unresolved", f"the point {point} is outside the image")
        small = _work_copy(rgb)
        sx, sy = int(x * small.shape[1] / w), int(y * small.shape[0] / h)
        lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_RGB2Lab)
        flood = np.zeros((small.shape[0] + 2, small.shape[1] + 2), np.uint8)
        flags = 8 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (255 << 8)
        cv2.floodFill(lab, flood, (sx, sy), 0, (12, 10, 10), (12, 10, 10), flags)
        region = flood[1:-1, 1:-1] > 0
        if region.mean() > 0.9:
            return Localization([], "unresolved", "the point is on a region as large as "
                                "the image; paint a mask instead")
        mask = smooth_resize(region, (h, w))
        return _resolved([Mask(mask, 0.6, label, "point")], "the region around the point")

    # --- phrases ------------------------------------------------------------------

    def _by_colour(self, small: np.ndarray, parsed: Phrase) -> Localization:
        hsv = _hsv(small)
        match = np.zeros(small.shape[:2], bool)
        for colour in parsed.colors:
            match |= COLOR_RANGES[colour].match(hsv)
        colour = " or ".join(parsed.colors)
        bridge = max(3, round(0.015 * max(match.shape)))
        parts = _components(match, max(16, int(4e-4 * match.size)), bridge)
        if not parts:
            return Localization([], "unresolved", f"no {colour} region in the image")
        biggest = parts[0].sum()
        parts = [p for p in parts if p.sum() >= 0.05 * biggest]
        cands = [Mask(p, _colour_score(p, biggest), f"{colour} region", "colour")
                 for p in parts]
        return select_candidates(cands, parsed, colour)

    def _sky(self, small: np.ndarray) -> Localization:
        hsv = _hsv(small)
        h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
        blue = (h >= 185) & (h <= 250) & (s >= 0.15) & (v >= 0.2)
        overcast = (s <= 0.12) & (v >= 0.75)
        rows = small.shape[0]
        parts = [p for p in _components(blue | overcast, max(16, int(2e-3 * blue.size)))
                 if p[: max(1, rows // 20)].any() and _centroid(p)[1] < 0.5]
        sky = np.logical_or.reduce(parts) if parts else None
        if sky is not None:
            blueness = float(blue[sky].mean())
            top_cover = float(sky[0].mean())
            if blueness >= 0.5:
                return _resolved([Mask(sky, 0.85, "sky", "colour+position")],
                                 "the blue region along the top")
            if top_cover >= 0.4 and sky.mean() >= 0.08:
                return Localization([Mask(sky, 0.5, "sky", "colour+position")], "ambiguous",
                                    "a bright grey region along the top may be an overcast "
                                    "sky (or a plain backdrop)")
        return Localization([], "unresolved", "no blue-ish region along the top of the image "
                            "looks like sky")

    def _figure_ground(self, small: np.ndarray, background: bool) -> Localization:
        scale = min(1.0, 256 / max(small.shape[:2]))
        small = cv2.resize(small, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
            if scale < 1 else small
        h, w = small.shape[:2]
        fg = _grabcut(small, (w // 10, h // 10, w - w // 10, h - h // 10))
        source = "grabcut"
        if fg is None:
            fg, source = _saliency(small), "saliency"
        if fg is None or not fg.any():
            return Localization([], "unresolved", "no distinct subject stands out from "
                                "the background")
        mask = ~fg if background else fg
        label = "background" if background else "subject"
        return _resolved([Mask(mask, 0.6, label, source)],
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
        found = Localization([Mask(mask, 0.9, label, "position")], "resolved", f"the {label}")
        nouns = [w for w in parsed.unknown if len(w) > 2]
        if nouns:   # "the dog on the left": we know where to look, not what
            found.status = "ambiguous"
            found.masks[0].score = 0.4
            found.reason = (f"only the place ({label}) was understood; "
                            f"{' '.join(nouns)!r} was not located")
        return found


def _colour_within(rgb: np.ndarray, mask: np.ndarray, colours: list[str]) -> np.ndarray | None:
    """The pixels of ``mask`` in the named colours, if they are a real part of it (≥ 5 %)."""
    rows, cols = np.nonzero(mask)
    y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    crop, inside = rgb[y0:y1, x0:x1], mask[y0:y1, x0:x1]
    small = _work_copy(crop)
    hsv = _hsv(small)
    match = np.zeros(small.shape[:2], bool)
    for colour in colours:
        match |= COLOR_RANGES[colour].match(hsv)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    match = cv2.morphologyEx(match.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    match = cv2.morphologyEx(match, cv2.MORPH_CLOSE, kernel) > 0
    refined = smooth_resize(match, inside.shape) & inside
    if refined.sum() < 0.05 * inside.sum():
        return None
    full = np.zeros(mask.shape, bool)
    full[y0:y1, x0:x1] = refined
    return full


def _colour_score(mask: np.ndarray, biggest: int) -> float:
    area = mask.sum()
    ys, xs = np.nonzero(mask)
    fill = area / float((np.ptp(xs) + 1) * (np.ptp(ys) + 1))
    return float(np.clip(0.5 + 0.3 * area / biggest + 0.15 * fill, 0.0, 0.95))


def select_candidates(cands: list[Mask], parsed: Phrase, colour: str) -> Localization:
    """Apply plural, ordinal, size and position words to candidates.

    Args:
        cands: colour regions or detected objects, each a ``Mask``.
        parsed: the phrase's cues.
        colour: how the reason names the candidates ("red", "cup").

    Returns:
        The chosen candidate(s), or ``ambiguous`` with all of them.
    """
    cands = sorted(cands, key=lambda m: -m.score)
    if parsed.plural:
        found = _resolved(cands, f"all {len(cands)} {colour} regions")
        found.plural = True
        return found
    if len(cands) == 1:
        return _resolved(cands, f"the only {colour} region")
    if parsed.ordinal or parsed.last:
        reading = sorted(cands, key=lambda m: _centroid(m.mask))   # left to right
        index = len(reading) - 1 if parsed.last else parsed.ordinal - 1
        if index >= len(reading):
            return Localization(cands, "ambiguous", f"asked for number {index + 1} but "
                                f"there are only {len(reading)} {colour} regions")
        return _resolved([reading[index]], f"{colour} region number {index + 1} "
                         "from the left")
    if parsed.size:
        pick = max if parsed.size == "largest" else min
        return _resolved([pick(cands, key=lambda m: m.area)], f"the {parsed.size} {colour} "
                         "region")
    if parsed.spatial:
        ideal = ({"left": 0.0, "right": 1.0, "centre": 0.5, None: None}[parsed.horizontal],
                 {"top": 0.0, "bottom": 1.0, "centre": 0.5, None: None}[parsed.vertical])

        def distance(m: Mask) -> float:
            cx, cy = _centroid(m.mask)
            return sum((c - i) ** 2 for c, i in zip((cx, cy), ideal) if i is not None)

        return _resolved([min(cands, key=distance)], f"the {colour} region nearest the "
                         f"{' '.join(x for x in (parsed.vertical, parsed.horizontal) if x)}")
    by_area = sorted(cands, key=lambda m: -m.area)
    if by_area[0].area >= DOMINANT_RATIO * by_area[1].area:
        main = by_area[0]
        main.score = min(main.score, 0.8)
        return _resolved([main], f"the main {colour} region ({len(cands) - 1} much smaller "
                         "ones ignored)")
    return Localization(cands, "ambiguous", f"{len(cands)} {colour} regions match; say which "
                        "(left/right, largest, first…) or 'all'")


def _saliency(small: np.ndarray) -> np.ndarray | None:
    """Spectral-residual saliency, thresholded to its largest blob."""
    grey = cv2.resize(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY), (64, 64)).astype(np.float32)
    spectrum = np.fft.fft2(grey)
    log_amp = np.log(np.abs(spectrum) + 1e-6)
    residual = log_amp - cv2.blur(log_amp, (3, 3))
    sal = np.abs(np.fft.ifft2(np.exp(residual + 1j * np.angle(spectrum)))) ** 2
    sal = cv2.GaussianBlur(sal.astype(np.float32), (0, 0), 2.5)
    sal = cv2.resize(sal, (small.shape[1], small.shape[0]))
    parts = _components(sal > 3 * sal.mean(), max(16, int(0.005 * sal.size)))
    return parts[0] if parts else None


def _clip_box(box: Box, shape: tuple[int, int]) -> Box | None:
    try:
        x0, y0, x1, y1 = (int(round(float(v))) for v in box)
    except (TypeError, ValueError):
        raise LocalizationError(f"a box is (x0, y0, x1, y1), got {box!r}") from None
    x0, x1 = sorted((max(0, min(shape[1], x0)), max(0, min(shape[1], x1))))
    y0, y1 = sorted((max(0, min(shape[0], y0)), max(0, min(shape[0], y1))))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _resolved(masks: list[Mask], what: str) -> Localization:
    return Localization(masks, "resolved", f"resolved to {what}")


def smooth_resize(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """A bool mask resized to ``shape`` with smooth (not blocky) outlines."""
    if mask.shape == shape:
        return mask.astype(bool)
    soft = cv2.resize(mask.astype(np.float32), (shape[1], shape[0]),
                      interpolation=cv2.INTER_LINEAR)
    return soft >= 0.5


def _upscale(found: Localization, shape: tuple[int, int]) -> Localization:
    """Bring work-copy masks to the image's size."""
    for m in found.masks:
        m.mask = smooth_resize(m.mask, shape)
    return found
