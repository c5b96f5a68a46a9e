"""A verifiable multi-turn benchmark engine at native 4K (after Agent Banana's HDD-Bench).

A scene is a symbolic state: objects with a name, colour, size, material, shape and
position. Canonical commands (add / remove / replace / adjust / undo) move the state
deterministically, ``s(t+1) = T(s(t), c(t))``; a template paraphraser turns each turn's
commands into one instruction; a procedural renderer draws any state at any resolution
over a textured, photographic-looking background, so every turn has a ground-truth
image; and a classical perception step maps a rendered (or edited) image back to a
state. Instruction Following (IF) and Image Consistency (IC) compare perceived and target
states attribute by attribute.

Objects use distinct, saturated colours from ``NAMED_COLORS`` over a low-saturation
background, so a colour-word localiser can find them and a classical editor can recolour
or remove them.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.arrays import rgb_array
from pipelines.color import NAMED_COLORS, rgb_to_lab

#: Colours objects may take: saturated, far apart in hue or lightness.
PALETTE = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "magenta",
           "pink", "brown")
SHAPES = ("circle", "square", "triangle", "star")
#: The noun a person would use for each shape.
NOUNS = {"circle": "ball", "square": "box", "triangle": "pyramid", "star": "star"}
SIZES = ("small", "medium", "large")
#: Circumradius of each size, in units of the image height.
SIZE_RADIUS = {"small": 0.05, "medium": 0.075, "large": 0.105}
MATERIALS = ("matte", "glossy")
ATTRIBUTES = ("color", "size", "material", "shape")
COMMAND_KINDS = ("add", "remove", "replace", "adjust", "undo")
GRID_COLS, GRID_ROWS = 5, 3
#: Two objects match when their centres are closer than this (image-height units).
MATCH_DISTANCE = 0.09
DEFAULT_SIZE = (3840, 2160)


class HDDError(ValueError):
    """A malformed scene, command or dataset."""


@dataclass(frozen=True)
class SceneObject:
    """One object of a scene.

    Attributes:
        id: stable identity across turns (``"o3"``).
        color: a ``PALETTE`` colour name.
        size: ``small``, ``medium`` or ``large``.
        material: ``matte`` or ``glossy``.
        shape: ``circle``, ``square``, ``triangle`` or ``star``.
        position: centre ``(x, y)`` as fractions of the image width and height.
    """

    id: str
    color: str
    size: str
    material: str
    shape: str
    position: tuple[float, float]

    @property
    def name(self) -> str:
        """The noun for this object's shape (``ball``, ``box`` …)."""
        return NOUNS[self.shape]

    def describe(self, *, with_size: bool = False) -> str:
        """``"red ball"`` (``"small red ball"`` with ``with_size``)."""
        words = [self.size] if with_size else []
        return " ".join([*words, self.color, self.name])

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["position"] = [round(v, 4) for v in self.position]
        data["name"] = self.name
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SceneObject:
        try:
            obj = cls(id=str(data["id"]), color=str(data["color"]), size=str(data["size"]),
                      material=str(data["material"]), shape=str(data["shape"]),
                      position=(float(data["position"][0]), float(data["position"][1])))
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise HDDError(f"malformed scene object {data!r}: {exc}") from None
        _check_object(obj)
        return obj


def _check_object(obj: SceneObject) -> None:
    for value, allowed, what in ((obj.color, PALETTE, "colour"), (obj.size, SIZES, "size"),
                                 (obj.material, MATERIALS, "material"),
                                 (obj.shape, SHAPES, "shape")):
        if value not in allowed:
            raise HDDError(f"object {obj.id}: unknown {what} {value!r}")
    if not all(0.0 <= v <= 1.0 for v in obj.position):
        raise HDDError(f"object {obj.id}: position {obj.position} is outside the frame")


@dataclass(frozen=True)
class SceneState:
    """A symbolic scene: its objects and the background they sit on.

    Attributes:
        objects: the objects, in drawing order.
        background: seed of the procedural background (unchanged by edits).
        next_id: the number the next added object's id gets.
    """

    objects: tuple[SceneObject, ...] = ()
    background: int = 0
    next_id: int = 0

    def get(self, object_id: str) -> SceneObject:
        """The object with this id (``HDDError`` when absent)."""
        for obj in self.objects:
            if obj.id == object_id:
                return obj
        raise HDDError(f"no object {object_id!r} in the scene")

    def ids(self) -> set[str]:
        return {obj.id for obj in self.objects}

    def to_json(self) -> dict[str, Any]:
        return {"background": self.background, "next_id": self.next_id,
                "objects": [obj.to_json() for obj in self.objects]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SceneState:
        try:
            objects = tuple(SceneObject.from_json(o) for o in data["objects"])
            return cls(objects=objects, background=int(data.get("background", 0)),
                       next_id=int(data.get("next_id", len(objects))))
        except (KeyError, TypeError, ValueError) as exc:
            raise HDDError(f"malformed scene state: {exc}") from None


@dataclass(frozen=True)
class Command:
    """One canonical edit.

    ``add``: ``attrs`` holds the new object's color/size/material/shape and ``position``.
    ``remove``: ``target`` only. ``replace``: ``target`` becomes a new object (``attrs``:
    shape and colour, optionally size/material) at the same place. ``adjust``: ``attrs``
    holds the attributes to change (color, size or material). ``undo``: back to the
    state before the previous turn.
    """

    kind: str
    target: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.target is not None:
            data["target"] = self.target
        if self.attrs:
            data["attrs"] = {k: (list(v) if isinstance(v, tuple) else v)
                             for k, v in self.attrs.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Command:
        if not isinstance(data, dict) or data.get("kind") not in COMMAND_KINDS:
            raise HDDError(f"malformed command {data!r}")
        attrs = dict(data.get("attrs") or {})
        if "position" in attrs:
            attrs["position"] = tuple(float(v) for v in attrs["position"])
        return cls(kind=data["kind"], target=data.get("target"), attrs=attrs)


# --- transition ------------------------------------------------------------------------


def apply(state: SceneState, command: Command,
          history: Sequence[SceneState] = ()) -> SceneState:
    """The deterministic transition ``T(state, command)``.

    Args:
        state: the scene before the command.
        command: the canonical edit.
        history: the states before earlier turns, oldest first; ``undo`` returns the last.

    Returns:
        The new state (``state`` itself is never modified).

    Raises:
        HDDError: unknown target, attribute or kind; ``undo`` with no history.
    """
    kind, attrs = command.kind, command.attrs
    if kind == "undo":
        if not history:
            raise HDDError("undo needs an earlier state")
        return history[-1]
    if kind == "add":
        obj = SceneObject(id=f"o{state.next_id}", color=attrs["color"], size=attrs["size"],
                          material=attrs["material"], shape=attrs["shape"],
                          position=tuple(attrs["position"]))
        _check_object(obj)
        return replace(state, objects=(*state.objects, obj), next_id=state.next_id + 1)
    if kind not in ("remove", "replace", "adjust"):
        raise HDDError(f"unknown command kind {kind!r}")
    target = state.get(command.target or "")
    others = tuple(o for o in state.objects if o.id != target.id)
    if kind == "remove":
        return replace(state, objects=others)
    allowed = {"replace": ("shape", "color", "size", "material"),
               "adjust": ("color", "size", "material")}[kind]
    unknown = set(attrs) - set(allowed)
    if unknown:
        raise HDDError(f"{kind} cannot change {', '.join(sorted(unknown))}")
    new = replace(target, **attrs)
    _check_object(new)
    return replace(state, objects=tuple(new if o.id == target.id else o
                                        for o in state.objects))


def apply_turn(state: SceneState, commands: Sequence[Command],
               history: Sequence[SceneState] = ()) -> SceneState:
    """Apply one turn's commands in order (see ``apply``)."""
    for command in commands:
        state = apply(state, command, history)
    return state


# --- paraphrase ------------------------------------------------------------------------


@dataclass
class Dialogue:
    """What the paraphraser knows of the session so far.

    Attributes:
        state: the scene the instruction is said about (before this turn).
        mentioned: object ids targeted in earlier turns, oldest first.
    """

    state: SceneState
    mentioned: list[str] = field(default_factory=list)


_ADJUST = {
    "color": ("make {t} {v}", "turn {t} {v}", "change the colour of {t} to {v}",
              "recolour {t} {v}", "paint {t} {v}"),
    "size": ("make {t} {v}", "resize {t} so it is {v}"),
    "material": ("give {t} a {v} finish", "make {t} look {v}"),
}
_REMOVE = ("remove {t}", "get rid of {t}", "delete {t}", "erase {t}", "take out {t}")
_REPLACE = ("replace {t} with {v}", "swap {t} for {v}", "turn {t} into {v}")
_ADD = ("add {v} {w}", "put {v} {w}", "place {v} {w}")
_UNDO = ("undo the last change", "go back to how it was before the last edit",
         "revert the previous step", "undo that")
_JOIN = (", and ", ", then ", " and also ", "; after that, ")


def _a(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def _where(position: tuple[float, float]) -> str:
    x, y = position
    col = "on the left" if x < 0.38 else "on the right" if x > 0.62 else "in the middle"
    row = "near the top" if y < 0.36 else "near the bottom" if y > 0.64 else ""
    return f"{col} {row}".strip() if col != "in the middle" or not row else row


def _refer(obj: SceneObject, dialogue: Dialogue, rng: random.Random, used_it: list[bool]) -> str:
    """A noun phrase for ``obj``; a back-reference when it was the last turn's target."""
    if dialogue.mentioned and dialogue.mentioned[-1] == obj.id and not used_it[0]:
        used_it[0] = True
        return rng.choice((f"that {obj.color} {obj.name}", f"the same {obj.color} {obj.name}",
                           f"the {obj.color} {obj.name} from before"))
    return "the " + obj.describe()


def paraphrase(commands: Sequence[Command], rng: random.Random, history: Dialogue) -> str:
    """Turn one turn's canonical commands into one natural instruction.

    Args:
        commands: the turn's commands (targets must be in ``history.state``).
        rng: the random source (templates are picked from it; deterministic per seed).
        history: the scene before this turn and the targets of earlier turns; an object
            that was the last turn's target is referred back to ("that …", "the same …").

    Returns:
        One sentence mixing every intent of the turn.
    """
    used_it = [False]
    parts = []
    for command in commands:
        if command.kind == "undo":
            parts.append(rng.choice(_UNDO))
            continue
        if command.kind == "add":
            a = command.attrs
            what = f"{a['size']} {a['color']} {a['material']} {NOUNS[a['shape']]}"
            parts.append(rng.choice(_ADD).format(v=_a(what), w=_where(a["position"])))
            continue
        obj = history.state.get(command.target or "")
        ref = _refer(obj, history, rng, used_it)
        if command.kind == "remove":
            parts.append(rng.choice(_REMOVE).format(t=ref))
        elif command.kind == "replace":
            a = {**{"color": obj.color}, **command.attrs}
            new = _a(f"{a['color']} {NOUNS[a['shape']]}")
            parts.append(rng.choice(_REPLACE).format(t=ref, v=new))
        else:
            (attr, value), = command.attrs.items()
            shown = value
            if attr == "size":
                shown = "bigger" if SIZES.index(value) > SIZES.index(obj.size) else "smaller"
            parts.append(rng.choice(_ADJUST[attr]).format(t=ref, v=shown))
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(_JOIN) + part
    text = text[0].upper() + text[1:]
    return text + rng.choice((".", ", please.", ".", " if you can."))


# --- rendering -------------------------------------------------------------------------


def _value_noise(rng: np.random.Generator, grid: tuple[int, int], size: tuple[int, int]
                 ) -> np.ndarray:
    small = rng.standard_normal(grid).astype(np.float32)
    return cv2.resize(small, size, interpolation=cv2.INTER_CUBIC)


def _background(width: int, height: int, seed: int) -> np.ndarray:
    """A muted, textured backdrop: wall and floor gradients, soft light, wood grain, grain."""
    rng = np.random.default_rng(seed)
    hue = rng.uniform(0, 180)
    sat = rng.uniform(0.05, 0.16)
    wall = _hsv_rgb(hue, sat, rng.uniform(0.72, 0.88))
    wall_low = _hsv_rgb(hue + rng.uniform(-12, 12), sat, rng.uniform(0.6, 0.72))
    floor = _hsv_rgb(hue + rng.uniform(-25, 25), rng.uniform(0.06, 0.18), rng.uniform(0.45, 0.6))
    horizon = rng.uniform(0.42, 0.58)
    y = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None]
    x = np.linspace(0.0, 1.0, width, dtype=np.float32)[None, :]
    t_wall = np.clip(y / horizon, 0, 1)[..., None]
    blend = np.clip((y - horizon) / 0.02 + 0.5, 0, 1)[..., None]
    column = (wall * (1 - t_wall) + wall_low * t_wall) * (1 - blend) + floor * blend  # (H,1,3)
    size = (width, height)
    light = 1.0 + 0.10 * _value_noise(rng, (3, 5), size) + 0.035 * _value_noise(rng, (9, 16), size)
    light += (0.12 * rng.uniform(-1, 1)) * (x - 0.5)
    light -= 0.28 * ((x - 0.5) ** 2 + (y - 0.5) ** 2)
    warp = 2.5 * _value_noise(rng, (6, 10), size)
    grain = np.sin((y * rng.uniform(30, 60) + warp) * (2 * math.pi)).astype(np.float32)
    light += 0.035 * grain * blend[..., 0]
    light += rng.standard_normal((height, width), dtype=np.float32) * 0.012
    out = column * light[..., None]
    return np.clip(out * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _hsv_rgb(h: float, s: float, v: float) -> np.ndarray:
    pixel = np.array([[[(2 * h) % 360, s, v]]], dtype=np.float32)  # h in [0, 180)
    return cv2.cvtColor(pixel, cv2.COLOR_HSV2RGB).reshape(3).astype(np.float32)


def _outline(shape: str, cx: float, cy: float, r: float) -> np.ndarray:
    """Polygon vertices of a shape with circumradius ``r`` (pixels)."""
    if shape == "square":
        d = r / math.sqrt(2)
        pts = [(cx - d, cy - d), (cx + d, cy - d), (cx + d, cy + d), (cx - d, cy + d)]
    elif shape == "triangle":
        pts = [(cx + r * math.cos(a), cy + r * math.sin(a))
               for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)]
    else:  # star
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else 0.45 * r
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
    return np.array(pts, dtype=np.float64)


def _draw_object(image: np.ndarray, obj: SceneObject) -> None:
    """Draw ``obj`` into ``image`` in place: antialiased edge, soft shading, highlight."""
    height, width = image.shape[:2]
    r = SIZE_RADIUS[obj.size] * height
    cx, cy = obj.position[0] * width, obj.position[1] * height
    x0, y0 = max(0, int(cx - r) - 3), max(0, int(cy - r) - 3)
    x1, y1 = min(width, int(math.ceil(cx + r)) + 3), min(height, int(math.ceil(cy + r)) + 3)
    if x1 <= x0 or y1 <= y0:
        return
    alpha = np.zeros((y1 - y0, x1 - x0), np.uint8)
    shift = 4
    lx, ly = cx - x0, cy - y0
    if obj.shape == "circle":
        cv2.circle(alpha, (round(lx * 16), round(ly * 16)), round(r * 16), 255, -1,
                   cv2.LINE_AA, shift)
    else:
        pts = np.round(_outline(obj.shape, lx, ly, r) * 16).astype(np.int32)
        cv2.fillPoly(alpha, [pts], 255, cv2.LINE_AA, shift)
    yy, xx = np.mgrid[0:y1 - y0, 0:x1 - x0].astype(np.float32)
    dx, dy = (xx - lx) / r, (yy - ly) / r
    if obj.shape == "circle":
        shade = 1.12 - 0.32 * np.sqrt((dx + 0.35) ** 2 + (dy + 0.35) ** 2)
    else:
        shade = 1.04 - 0.09 * (dx + dy)
    color = np.array(NAMED_COLORS[obj.color], np.float32)
    body = color[None, None, :] * shade[..., None]
    if obj.material == "glossy":
        spot = np.exp(-((dx + 0.12) ** 2 + (dy + 0.08) ** 2) / (2 * 0.1 ** 2))[..., None]
        body = body * (1 - 0.92 * spot) + 250.0 * 0.92 * spot
    a = alpha.astype(np.float32)[..., None] / 255.0
    region = image[y0:y1, x0:x1].astype(np.float32)
    region = region * (1 - a) + np.clip(body, 0, 255) * a
    image[y0:y1, x0:x1] = np.clip(region + 0.5, 0, 255).astype(np.uint8)


def render(state: SceneState, size: tuple[int, int] = DEFAULT_SIZE, seed: int = 0) -> np.ndarray:
    """Draw ``state`` at ``size`` = ``(width, height)``.

    Args:
        state: the scene.
        size: output width and height in pixels (3840×2160 by default; any size works).
        seed: extra variation of the background on top of ``state.background``.

    Returns:
        ``uint8`` RGB image; the same state, size and seed give the same bytes.
    """
    width, height = int(size[0]), int(size[1])
    if width < 32 or height < 32 or width * height > 80_000_000:
        raise HDDError(f"render size {width}x{height} is out of range (32 px … 80 MP)")
    image = _background(width, height, (state.background * 1_000_003 + seed) & 0x7FFFFFFF)
    for obj in state.objects:
        _draw_object(image, obj)
    return image


# --- perception ------------------------------------------------------------------------

_WORK_HEIGHT = 540
#: saturation (0–255) above which a pixel belongs to an object; backgrounds stay below ~50
_MIN_SAT = 64
_UNIT_AREA = {"circle": math.pi, "square": 2.0, "triangle": 3 * math.sqrt(3) / 4,
              "star": 10 * 0.5 * 0.45 * math.sin(math.pi / 5)}


def _lab(rgb: np.ndarray) -> np.ndarray:
    return rgb_to_lab(np.asarray(rgb, np.float32).reshape(-1, 3) / 255.0)


_PALETTE_LAB = _lab(np.array([NAMED_COLORS[c] for c in PALETTE]))


def _classify_shape(contour: np.ndarray, area: float) -> str:
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    perimeter = cv2.arcLength(contour, True)
    if hull_area <= 0 or perimeter <= 0:
        return "circle"
    if area / hull_area < 0.8:
        return "star"
    circularity = 4 * math.pi * area / perimeter ** 2
    if circularity > 0.86:
        return "circle"
    vertices = len(cv2.approxPolyDP(contour, 0.05 * perimeter, True))
    if vertices == 3:
        return "triangle"
    if vertices == 4:
        return "square"
    return "square" if circularity > 0.7 else "triangle"


def perceive(image: np.ndarray) -> SceneState:
    """Map a rendered (or edited) scene back to a symbolic state.

    Objects are the saturated blobs on the muted background; colour is the nearest
    palette colour (CIELAB) of the blob's median, shape comes from solidity, circularity
    and a polygon fit, size from the area relative to the shape's unit area, material from
    a bright, unsaturated highlight inside the blob.

    Args:
        image: ``uint8`` RGB/RGBA image of any size.

    Returns:
        The perceived state (ids ``p0``, ``p1`` … in reading order; background 0).
    """
    rgb = rgb_array(image, "perceive's image", error=HDDError)
    height, width = rgb.shape[:2]
    scale = min(1.0, _WORK_HEIGHT / height)
    small = rgb if scale == 1.0 else cv2.resize(
        rgb, (max(1, round(width * scale)), max(1, round(height * scale))),
        interpolation=cv2.INTER_AREA)
    h_s, w_s = small.shape[:2]
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    sat, val = hsv[..., 1], hsv[..., 2]
    blob = ((sat > _MIN_SAT) & (val > 50)).astype(np.uint8)
    blob = cv2.morphologyEx(blob, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    found = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if area < 0.0015 * h_s * h_s:
            continue
        filled = np.zeros((h_s, w_s), np.uint8)
        cv2.drawContours(filled, [contour], -1, 1, -1)
        found.append(_describe_blob(small, sat, val, contour, filled.astype(bool), area))
    found.sort(key=lambda o: (round(o[1][1] * 3), o[1][0]))
    objects = tuple(SceneObject(id=f"p{i}", color=c, size=s, material=m, shape=sh, position=p)
                    for i, ((c, s, m, sh), p) in enumerate(found))
    return SceneState(objects=objects, next_id=len(objects))


def _describe_blob(small: np.ndarray, sat: np.ndarray, val: np.ndarray, contour: np.ndarray,
                   filled: np.ndarray, area: float) -> tuple[tuple[str, str, str, str],
                                                         tuple[float, float]]:
    h_s, w_s = small.shape[:2]
    shape = _classify_shape(contour, area)
    inner = cv2.erode(filled.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    inner = inner if inner.sum() > 8 else filled
    body = inner & (sat > _MIN_SAT)
    pixels = small[body] if body.sum() > 4 else small[inner]
    color = PALETTE[int(np.argmin(np.linalg.norm(
        _PALETTE_LAB - _lab(np.median(pixels, axis=0)), axis=1)))]
    body_sat = float(np.median(sat[body])) if body.any() else 255.0
    highlight = inner & (sat < 0.55 * body_sat) & (val > 200)
    material = "glossy" if highlight.sum() > 0.004 * inner.sum() + 1 else "matte"
    radius = math.sqrt(area / _UNIT_AREA[shape]) / h_s
    size = "small" if radius < 0.0625 else "medium" if radius < 0.09 else "large"
    m = cv2.moments(contour)
    if m["m00"] > 0:
        cx, cy = m["m10"] / m["m00"], m["m01"] / m["m00"]
    else:
        cx, cy = float(contour[:, 0, 0].mean()), float(contour[:, 0, 1].mean())
    return (color, size, material, shape), ((cx + 0.5) / w_s, (cy + 0.5) / h_s)


# --- scoring ---------------------------------------------------------------------------


def _distance(a: tuple[float, float], b: tuple[float, float], aspect: float) -> float:
    return math.hypot((a[0] - b[0]) * aspect, a[1] - b[1])


def match_objects(reference: Sequence[SceneObject], predicted: Sequence[SceneObject],
                  aspect: float = 16 / 9) -> dict[str, SceneObject]:
    """Pair reference objects with predicted ones by position, greedily, one to one.

    Args:
        reference: objects of the target state.
        predicted: objects of the perceived state.
        aspect: image width / height (positions are fractions of each side).

    Returns:
        ``{reference id: predicted object}`` for pairs closer than ``MATCH_DISTANCE``.
    """
    pairs = sorted((_distance(r.position, p.position, aspect), i, j)
                   for i, r in enumerate(reference) for j, p in enumerate(predicted))
    used_r: set[int] = set()
    used_p: set[int] = set()
    out: dict[str, SceneObject] = {}
    for dist, i, j in pairs:
        if dist > MATCH_DISTANCE:
            break
        if i in used_r or j in used_p:
            continue
        used_r.add(i)
        used_p.add(j)
        out[reference[i].id] = predicted[j]
    return out


def _attribute_score(target: SceneObject, found: SceneObject | None) -> float:
    if found is None:
        return 0.0
    return sum(getattr(target, a) == getattr(found, a) for a in ATTRIBUTES) / len(ATTRIBUTES)


def targeted_ids(previous: SceneState, target: SceneState) -> tuple[set[str], set[str]]:
    """Ids the turn changed: ``(present in target, removed from previous)``."""
    before = {o.id: o for o in previous.objects}
    changed = {o.id for o in target.objects if before.get(o.id) != o}
    removed = set(before) - target.ids()
    return changed, removed


def _removed_score(gone: SceneObject, target: SceneState, predicted: SceneState,
                   aspect: float) -> float:
    """1 when nothing is left where a removed object was (a new object there is fine)."""
    taken = match_objects(target.objects, predicted.objects, aspect)
    free = [p for p in predicted.objects if all(p is not q for q in taken.values())]
    leftover = match_objects([gone], free, aspect)
    return 0.0 if leftover else 1.0


def instruction_following(predicted: SceneState, target: SceneState, previous: SceneState,
                          aspect: float = 16 / 9) -> float | None:
    """IF: attribute-level correctness averaged over the objects the turn targeted.

    Args:
        predicted: the state perceived from the editor's output.
        target: the ground-truth state after the turn.
        previous: the ground-truth state before the turn.
        aspect: image width / height.

    Returns:
        A score in [0, 1]; a removed object scores 1 when it is gone; ``None`` when the
        turn targeted nothing.
    """
    changed, removed = targeted_ids(previous, target)
    if not changed and not removed:
        return None
    matches = match_objects(target.objects, predicted.objects, aspect)
    scores = [_attribute_score(target.get(i), matches.get(i)) for i in sorted(changed)]
    scores += [_removed_score(previous.get(i), target, predicted, aspect) for i in sorted(removed)]
    return float(sum(scores) / len(scores))


def image_consistency(predicted: SceneState, target: SceneState, previous: SceneState,
                      aspect: float = 16 / 9) -> float | None:
    """IC: attribute-level correctness averaged over the objects the turn left alone.

    Args:
        predicted: the state perceived from the editor's output.
        target: the ground-truth state after the turn.
        previous: the ground-truth state before the turn.
        aspect: image width / height.

    Returns:
        A score in [0, 1] (a missing object scores 0); ``None`` when nothing was untouched.
    """
    changed, _ = targeted_ids(previous, target)
    kept = [o for o in target.objects if o.id not in changed]
    if not kept:
        return None
    matches = match_objects(target.objects, predicted.objects, aspect)
    return float(sum(_attribute_score(o, matches.get(o.id)) for o in kept) / len(kept))


# --- generation ------------------------------------------------------------------------


def _slot_position(slot: int, rng: random.Random, aspect: float) -> tuple[float, float]:
    col, row = slot % GRID_COLS, slot // GRID_COLS
    reach = SIZE_RADIUS["large"] + 0.015  # image-height units
    jx = max(0.0, 0.5 / GRID_COLS - reach / aspect)
    jy = max(0.0, 0.5 / GRID_ROWS - reach)
    x = (col + 0.5) / GRID_COLS + rng.uniform(-jx, jx)
    y = (row + 0.5) / GRID_ROWS + rng.uniform(-jy, jy)
    return round(x, 4), round(y, 4)


def _slot_of(position: tuple[float, float]) -> int:
    col = min(GRID_COLS - 1, int(position[0] * GRID_COLS))
    row = min(GRID_ROWS - 1, int(position[1] * GRID_ROWS))
    return row * GRID_COLS + col


def _new_attrs(state: SceneState, rng: random.Random, aspect: float) -> dict[str, Any] | None:
    used_colors = {o.color for o in state.objects}
    free_slots = sorted(set(range(GRID_COLS * GRID_ROWS)) - {_slot_of(o.position)
                                                             for o in state.objects})
    colors = [c for c in PALETTE if c not in used_colors]
    if not free_slots or not colors:
        return None
    return {"color": rng.choice(colors), "size": rng.choice(SIZES),
            "material": rng.choice(MATERIALS), "shape": rng.choice(SHAPES),
            "position": _slot_position(rng.choice(free_slots), rng, aspect)}


def initial_state(rng: random.Random, aspect: float = 16 / 9, objects: tuple[int, int] = (3, 5),
                  background: int | None = None) -> SceneState:
    """A random first scene with distinct colours, one object per grid slot."""
    state = SceneState(background=rng.randrange(1 << 30) if background is None else background)
    for _ in range(rng.randint(*objects)):
        attrs = _new_attrs(state, rng, aspect)
        if attrs is None:
            break
        state = apply(state, Command("add", attrs=attrs))
    return state


def _random_command(state: SceneState, rng: random.Random, aspect: float,
                    busy: set[str]) -> Command | None:
    kinds = ["adjust"] * 5 + ["remove"] * 2 + ["add"] * 2 + ["replace"] * 2
    kind = rng.choice(kinds)
    candidates = [o for o in state.objects if o.id not in busy]
    if kind == "add" or not candidates:
        attrs = _new_attrs(state, rng, aspect)
        return Command("add", attrs=attrs) if attrs else None
    obj = rng.choice(candidates)
    free_colors = [c for c in PALETTE if c not in {o.color for o in state.objects}]
    if kind == "remove":
        return Command("remove", obj.id) if len(state.objects) > 1 else None
    if kind == "replace":
        shape = rng.choice([s for s in SHAPES if s != obj.shape])
        attrs = {"shape": shape}
        if free_colors and rng.random() < 0.5:
            attrs["color"] = rng.choice(free_colors)
        return Command("replace", obj.id, attrs)
    attr = rng.choice(["color"] * 4 + ["size", "material"])
    if attr == "color":
        return Command("adjust", obj.id, {"color": rng.choice(free_colors)}) if free_colors \
            else None
    if attr == "size":
        here = SIZES.index(obj.size)
        choices = [s for i, s in enumerate(SIZES) if abs(i - here) == 1]
        return Command("adjust", obj.id, {"size": rng.choice(choices)})
    material = "matte" if obj.material == "glossy" else "glossy"
    return Command("adjust", obj.id, {"material": material})


def make_turn(states: Sequence[SceneState], rng: random.Random, aspect: float = 16 / 9,
              max_commands: int = 2) -> list[Command]:
    """Draw one turn's commands: one or two edits on distinct objects, or an undo."""
    state = states[-1]
    if len(states) >= 2 and rng.random() < 0.12:
        return [Command("undo")]
    commands: list[Command] = []
    busy: set[str] = set()
    want = 1 if rng.random() < 0.45 else max_commands
    for _ in range(10 * want):
        if len(commands) == want:
            break
        command = _random_command(state, rng, aspect, busy)
        if command is None:
            continue
        state = apply(state, command)
        busy |= {command.target} if command.target else set()
        busy |= {f"o{state.next_id - 1}"} if command.kind == "add" else set()
        commands.append(command)
    return commands


@dataclass
class Session:
    """One generated multi-turn session: states ``s0 … sT``, commands and instructions."""

    id: str
    states: list[SceneState]
    commands: list[list[Command]]
    instructions: list[str]

    def to_json(self, size: tuple[int, int]) -> dict[str, Any]:
        return {"id": self.id, "size": list(size), "source": "turn_0.png",
                "states": [s.to_json() for s in self.states],
                "turns": [{"turn": t + 1, "instruction": q,
                           "commands": [c.to_json() for c in cs],
                           "target": f"turn_{t + 1}.png"}
                          for t, (q, cs) in enumerate(zip(self.instructions, self.commands))]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        try:
            return cls(id=str(data["id"]),
                       states=[SceneState.from_json(s) for s in data["states"]],
                       commands=[[Command.from_json(c) for c in t["commands"]]
                                 for t in data["turns"]],
                       instructions=[str(t["instruction"]) for t in data["turns"]])
        except (KeyError, TypeError) as exc:
            raise HDDError(f"malformed HDD session: {exc}") from None


def make_session(session_id: str, rng: random.Random, turns: int = 3,
                 aspect: float = 16 / 9) -> Session:
    """Generate one session of ``turns`` turns (states, commands, instructions)."""
    states = [initial_state(rng, aspect)]
    commands: list[list[Command]] = []
    instructions: list[str] = []
    mentioned: list[str] = []
    for _ in range(turns):
        turn = make_turn(states, rng, aspect)
        instructions.append(paraphrase(turn, rng, Dialogue(states[-1], list(mentioned))))
        states.append(apply_turn(states[-1], turn, states[:-1]))
        mentioned += [c.target for c in turn if c.target]
        commands.append(turn)
    return Session(session_id, states, commands, instructions)


def write_png(image: np.ndarray, path: Path) -> None:
    """Write an RGB image as PNG (deterministic bytes for the same pixels)."""
    ok, data = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR),
                            [cv2.IMWRITE_PNG_COMPRESSION, 3])
    if not ok:
        raise HDDError(f"could not encode {path}")
    path.write_bytes(data.tobytes())


def make_dataset(out: str | Path, sessions: int = 96, turns: int = 3,
                 size: tuple[int, int] = DEFAULT_SIZE, seed: int = 0, *,
                 targets: bool = True) -> Path:
    """Write an HDD dataset: one folder per session with ``session.json`` and images.

    Args:
        out: the dataset folder (created; existing session folders are overwritten).
        sessions: number of sessions.
        turns: turns per session.
        size: ``(width, height)`` of every image.
        seed: the master seed; the same seed gives the same bytes.
        targets: also write each turn's ground-truth image (``turn_<t>.png``); the source
            ``turn_0.png`` is always written.

    Returns:
        The dataset folder (with ``manifest.json``).
    """
    if sessions < 1 or turns < 1:
        raise HDDError("sessions and turns must be at least 1")
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    aspect = size[0] / size[1]
    names = []
    for index in range(sessions):
        rng = random.Random(f"hdd-{seed}-{index}")
        session = make_session(f"s{index:04d}", rng, turns, aspect)
        folder = root / session.id
        folder.mkdir(exist_ok=True)
        shown = session.states if targets else session.states[:1]
        for t, state in enumerate(shown):
            write_png(render(state, size), folder / f"turn_{t}.png")
        (folder / "session.json").write_text(json.dumps(session.to_json(size), indent=1))
        names.append(session.id)
    manifest = {"benchmark": "hdd", "version": 1, "size": list(size), "seed": seed,
                "turns": turns, "targets": targets, "sessions": names}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return root


def load_session(folder: str | Path) -> Session:
    """Read one session folder written by ``make_dataset``."""
    path = Path(folder) / "session.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise HDDError(f"cannot read {path}: {exc}") from None
    return Session.from_json(data)
