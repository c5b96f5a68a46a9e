"""The symbolic scene: objects, states, canonical commands and the deterministic
transition ``s(t+1) = T(s(t), c(t))``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

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
