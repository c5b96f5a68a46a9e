"""The operation: one class that declares everything Loupe knows about one edit.

An ``Operation`` subclass says, in one place:

* what it is: ``name``, ``kinds`` (the action kinds it serves), ``description``,
  ``flags`` (keys of ``FLAGS``), ``needs_target``, ``generative`` and, for generative
  ones, the ``model_role`` it needs;
* its bounded ``params`` and its ``main`` one (the parameter a bare sign, size or value
  refers to: "a bit more", "+30", "by half");
* the words that ask for it (``words``: plain phrases, no two operations share one;
  ``pattern``: the planner's keyword expression; ``positive``/``negative``: the words
  that set its direction beyond the shared ones of ``pipelines.operations.lexicon``) and
  its example requests (``asks``: the intent library's phrasings);
* its plain-words ``wording`` for the chat (``"sharpen {where}"``, or a pair for the two
  signs of the main parameter);
* ``apply()``: the classical implementation at native resolution;
* ``check()``: the measured check the critic runs on its result.

Instances double as the catalogue's ``OperationSpec`` (``validate``, ``clamp``, ``has``,
``param_names``), so ``pipelines.editors.operations`` is a view over the registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pipelines.operations.colours import parse_color
from pipelines.operations.errors import OperationError
from pipelines.operations.lexicon import percent
from pipelines.operations.measures import Measured, Verdict

KINDS = ("adjust", "remove", "replace", "add", "undo")


@dataclass(frozen=True)
class ParamSpec:
    """One named, bounded parameter of an operation.

    ``type`` is one of ``float``, ``int``, ``bool``, ``str``, ``color`` (a colour name
    from ``NAMED_COLORS`` or ``#rrggbb``), ``choice`` (one of ``choices``) or ``image``
    (an RGB/RGBA uint8 array passed in by the caller, never by a model).
    """

    name: str
    type: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    required: bool = False

    def check(self, value: Any, op: str) -> Any:
        """Return ``value`` converted to this parameter's type, or raise ``OperationError``."""
        where = f"{op}.{self.name}"
        if self.type in ("float", "int"):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise OperationError(f"{where} must be a number, got {value!r}")
            try:
                number = float(value)
            except ValueError:
                raise OperationError(f"{where} must be a number, got {value!r}") from None
            if number != number:  # NaN
                raise OperationError(f"{where} must be a number, got NaN")
            if self.minimum is not None and number < self.minimum or \
                    self.maximum is not None and number > self.maximum:
                raise OperationError(
                    f"{where}={number:g} is out of range [{self.minimum:g}, {self.maximum:g}]")
            return int(round(number)) if self.type == "int" else number
        if self.type == "bool":
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                return value.lower() in ("true", "1")
            if not isinstance(value, (bool, int)):
                raise OperationError(f"{where} must be true or false, got {value!r}")
            return bool(value)
        if self.type == "color":
            parse_color(value, where=where)
            return str(value).strip().lower()
        if self.type == "choice":
            if value not in self.choices:
                raise OperationError(f"{where} must be one of {', '.join(self.choices)}; "
                                     f"got {value!r}")
            return value
        if self.type == "str":
            if not isinstance(value, str):
                raise OperationError(f"{where} must be text, got {value!r}")
            if len(value) > 500:
                raise OperationError(f"{where} is too long ({len(value)} characters, max 500)")
            return value
        if self.type == "image":
            return value
        raise OperationError(f"{where}: unknown parameter type {self.type}")


def amount(description: str, lo: float = -1.0, hi: float = 1.0,
           default: float = 0.3) -> ParamSpec:
    """The usual signed ``amount`` parameter."""
    return ParamSpec("amount", "float", default, description, lo, hi)


#: What an operation may declare about itself (``Operation.flags``):
FLAGS: dict[str, str] = {
    "pointwise": "a pixel's result depends only on that pixel (and statistics of the "
                 "masked pixels): the patch needs no surrounding context",
    "curve": "a per-channel tone curve: on large frames it runs as a 1-D look-up table",
    "low_frequency": "a smooth gain field: on large frames it is computed on a small copy "
                     "and carried over",
    "colour_balance": "changes the colour balance (white point, temperature, tint)",
    "strong": "changes texture or colour strongly: toned down on people by Autopilot",
    "frame_filter": "a whole-frame look when the instruction's target is a pronoun",
    "moves_target": "moves or resizes the target: it changes the pixels where the target "
                    "was and where it lands (the caller gives the frame geometry)",
    "object_edge": "works on a whole object: its mask is first grown over the object's "
                   "anti-aliased edge and cast shadow, measured on the edge",
    "frame": "changes the frame itself (size or orientation): the state graph stores a "
             "frame change, later edits live in the new frame",
    "tonal": "changes tones or colours, not content: the search's tonal reward applies",
    "fine_detail": "changes fine detail: the critic judges it on a full-resolution crop",
    "removes_target": "removes the target: the critic re-runs the localiser to see it gone",
    "content": "draws new content the measured critic cannot judge (its score is capped)",
}


@dataclass(frozen=True)
class Ask:
    """One thing a user asks for, said several ways (an entry of the intent library).

    Attributes:
        name: unique key (``brightness_up``).
        params: the operation's parameters at the default strength (signs included).
        label: a short button label ("Brighter").
        phrasings: ways to ask, in our own words.
        group: for the help text (light, colour, detail, looks, frame).
        instruction: what a button sends back (default: the label in lower case).
    """

    name: str
    params: dict[str, Any]
    label: str
    phrasings: tuple[str, ...]
    group: str
    instruction: str = ""


def asks(name: str, params: dict[str, Any], label: str, phrasings: str, group: str,
         instruction: str = "") -> Ask:
    """An ``Ask`` from ``"a|b|c"`` phrasings."""
    return Ask(name, params, label, tuple(p.strip() for p in phrasings.split("|") if p.strip()),
               group, instruction)


@dataclass(frozen=True)
class ChecklistWords:
    """A global checklist item this operation serves (``agent.brain.checklist``): a request
    matching ``pattern`` holds when the measured ``statistic`` moved in direction ``sign``.

    ``order`` keeps the items' reading order across operations."""

    pattern: str
    statistic: str
    sign: int
    params: dict[str, Any]
    order: float = 0.0


@dataclass(frozen=True)
class Proposal:
    """An Autopilot proposal this operation makes (``agent.brain.perceiver``).

    ``role`` is ``correction`` (a first-aid fix tried on every photo), ``polish`` (a mild
    fill-in), a mood style's name, or ``need:<deficit>`` (the remedy for a deficit the
    perceiver measures; it fills in the main parameter when it sizes the remedy);
    ``order`` keeps the proposals' reading order across operations.
    """

    role: str
    params: dict[str, Any]
    reason: str = ""
    order: float = 0.0


class Operation:
    """One edit operation (see the module doc). Subclass, set the class attributes, and
    implement ``apply`` (or one of the engine hooks of ``pipelines.operations.engines``)."""

    name: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ("adjust",)
    description: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    #: the parameter a bare sign/size/value refers to ("" = ``amount`` or the first one)
    main: ClassVar[str] = ""
    #: the parameter size words ("a bit", "a lot") scale when the main one is not a number
    size: ClassVar[str] = ""
    #: False for operations that make sense on the whole frame (exposure, vignette…)
    needs_target: ClassVar[bool] = False
    #: needs a generative model (the embedded editor cannot do it)
    generative: ClassVar[bool] = False
    #: the model role a generative operation needs (``pipelines.model_cards``)
    model_role: ClassVar[str] = ""
    flags: ClassVar[frozenset[str]] = frozenset()
    family: ClassVar[str] = ""
    # --- words ------------------------------------------------------------------------
    #: plain phrases that name this operation (no two operations share one)
    words: ClassVar[tuple[str, ...]] = ()
    #: how the rule planner reads it: "adjuster" (signed amount), "filter" (apply it) or ""
    grammar: ClassVar[str] = ""
    #: the planner's keyword expression (default: ``words`` as whole words)
    pattern: ClassVar[str] = ""
    #: words that set the + direction (adjusters; beyond ``lexicon.INCREASE``)
    positive: ClassVar[str] = ""
    #: words around its name that are part of the request, not a target ("cut through")
    filler: ClassVar[str] = ""
    #: words that set the - direction (shared by all adjusters' clauses, as before)
    negative: ClassVar[str] = ""
    #: the planner's default size of the main parameter (scaled by degree words)
    base: ClassVar[float] = 0.0
    #: the order the rule planner tries operations of one grammar in
    reading_order: ClassVar[float] = 100.0
    #: adjusters: a level of light (brightness, exposure, shadows, highlights)
    light_level: ClassVar[bool] = False
    #: adjusters: its words can name the target of another adjustment ("the shadows")
    can_be_target: ClassVar[bool] = False
    #: filters: words that say the photo already has the effect, as a complaint ("it is
    #: blurry", "too blurry"): the request is for ``remedy``, the operation that undoes it
    complaint: ClassVar[str] = ""
    #: filters: the operation a ``complaint`` asks for ("blurry" → "sharpen")
    remedy: ClassVar[str] = ""
    #: filters: a percentage or degree word never asks for more than the full effect
    capped: ClassVar[bool] = False
    #: what the planner's grammar asks of it beyond its words ("remove", "recolour",
    #: "write", "generate", "decolour", "look"): one operation per role
    role: ClassVar[str] = ""
    #: replacing a region fills it, adding fits inside it (the editor passes ``fill``)
    fills_on_replace: ClassVar[bool] = False
    #: when Autopilot leaves it out for a whole run: "cast" (unless the input shows a
    #: colour cast), "noise" (when the input is noisy), "" (never)
    gate: ClassVar[str] = ""
    #: Autopilot makes it bolder on the background when faces are protected
    bolder_off_faces: ClassVar[bool] = False
    #: the intent library's entries for this operation
    asks: ClassVar[tuple[Ask, ...]] = ()
    #: the global checklist items it serves
    checklist: ClassVar[tuple[ChecklistWords, ...]] = ()
    #: Autopilot's proposals with this operation
    proposals: ClassVar[tuple[Proposal, ...]] = ()
    # --- wording ----------------------------------------------------------------------
    #: plain words for the chat: "sharpen {where}", or (if main > 0, if main < 0)
    wording: ClassVar[str | tuple[str, str]] = ""

    def __init__(self) -> None:
        unknown = set(self.flags) - set(FLAGS)
        if unknown:
            raise OperationError(f"{self.name}: unknown flag(s) {', '.join(sorted(unknown))}")
        if not self.name:
            raise OperationError(f"{type(self).__name__} has no name")

    def __repr__(self) -> str:
        return f"<operation {self.name}>"

    # --- the catalogue view (``OperationSpec``) ------------------------------------------
    @property
    def param_names(self) -> tuple[str, ...]:
        """The parameters' names, in order."""
        return tuple(p.name for p in self.params)

    @property
    def main_param(self) -> str:
        """The main parameter: ``main``, else ``amount``, else the first one ("" if none)."""
        if self.main:
            return self.main
        names = self.param_names
        return "amount" if "amount" in names or not names else names[0]

    def param(self, name: str) -> ParamSpec:
        """The parameter called ``name``."""
        for spec in self.params:
            if spec.name == name:
                return spec
        raise OperationError(f"{self.name} has no parameter {name}")

    def clamp(self, name: str, value: float, digits: int = 4) -> float:
        """``value`` brought inside parameter ``name``'s bounds (rounded to ``digits``)."""
        spec = self.param(name)
        lo = spec.minimum if spec.minimum is not None else value
        hi = spec.maximum if spec.maximum is not None else value
        return round(float(min(hi, max(lo, value))), digits)

    def has(self, flag: str) -> bool:
        """Whether the operation declares ``flag`` (a key of ``FLAGS``)."""
        return flag in self.flags

    def validate(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """Fill defaults and check bounds; unknown names are errors, not ignored."""
        params = dict(params or {})
        unknown = sorted(set(params) - set(self.param_names))
        if unknown:
            raise OperationError(
                f"{self.name} has no parameter {', '.join(unknown)}; "
                f"it takes {', '.join(self.param_names) or 'no parameters'}")
        clean: dict[str, Any] = {}
        for spec in self.params:
            if spec.name in params:
                clean[spec.name] = spec.check(params[spec.name], self.name)
            elif spec.required:
                raise OperationError(f"{self.name} needs the parameter {spec.name}")
            else:
                clean[spec.name] = spec.default
        return clean

    # --- words --------------------------------------------------------------------------
    def keyword_pattern(self) -> str:
        """The planner's keyword expression for this operation."""
        if self.pattern:
            return self.pattern
        return "|".join(rf"\b{re.escape(w)}\b" for w in self.words)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        """The adjuster's direction for ``clause`` (its keyword ``keyword``), given the
        shared reading ``negative``; operations whose own words decide override it."""
        return negative

    def explicit_value(self, clause: str) -> float | None:
        """A value the clause spells out for the main parameter (None: none).

        The default reads a percentage; operations with units (stops, degrees) override.
        """
        return percent(clause)

    def bare_value(self, value: float) -> float:
        """A unitless number written after the operation ("saturation -20"): -1..1
        amounts read values beyond 1 as percent."""
        return value / 100.0 if abs(value) > 1 else value

    def planned_value(self, factor: float, negative: bool, explicit: float | None) -> float:
        """The main parameter for a clause read with degree ``factor`` and direction."""
        magnitude = abs(explicit) if explicit is not None else self.base * factor
        return -magnitude if negative or (explicit is not None and explicit < 0) \
            else magnitude

    def filter_value(self, clause: str, factor: float) -> float:
        """Filters: the main parameter for a clause read with degree ``factor``."""
        explicit = self.explicit_value(clause)
        if self.capped:
            return explicit if explicit is not None else min(1.0, self.base * factor)
        return self.filter_sign(clause) * (explicit if explicit is not None
                                           else self.base * factor)

    def clause_params(self, clause: str) -> dict[str, Any]:
        """Filters: parameters beyond the main one that the clause's words set (which
        reference, which part of it); none by default."""
        return {}

    def filter_sign(self, clause: str) -> float:
        """Filters: -1 when the clause asks for the opposite of the effect."""
        return 1.0

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        """Plain words for this operation applied to ``where`` ("" when it has none)."""
        if isinstance(self.wording, tuple):
            value = params.get(self.main_param)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return (self.wording[0] if value >= 0 else self.wording[1]).format(where=where)
            return self.wording[0].format(where=where)
        return self.wording.format(where=where) if self.wording else ""

    # --- pixels -------------------------------------------------------------------------
    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        """The classical implementation on 8-bit RGB at native resolution.

        Args:
            rgb8: uint8 (H, W, 3).
            mask: bool (H, W); statistics come from it, the caller keeps what lies outside.
            params: parameters already validated by ``validate``.

        Returns:
            uint8 (H, W, 3).
        """
        raise OperationError(f"the classical editor has no implementation of {self.name!r}")

    @property
    def classical(self) -> bool:
        """Whether ``apply`` has a classical implementation."""
        return type(self).apply is not Operation.apply

    # --- the measured check -------------------------------------------------------------
    def check(self, m: Measured) -> Verdict:
        """The critic's measured verdict on one attempt (the caller has checked that
        something changed, that the outside is untouched and that nothing clipped)."""
        return Verdict(0.9, keep=[f"{self.name} applied"])

    def stronger(self, params: dict[str, Any]) -> dict[str, Any]:
        """Parameters that push this operation harder (for "nothing changed")."""
        out: dict[str, Any] = {}
        for spec in self.params:
            value = params.get(spec.name)
            if spec.type == "float" and isinstance(value, (int, float)):
                out[spec.name] = self.clamp(spec.name, value * 2 if value else 0.3, digits=3)
        return out

    def softer(self, params: dict[str, Any]) -> dict[str, Any]:
        """Parameters that pull this operation back (for clipping)."""
        for name in ("amount", "stops"):
            value = params.get(name)
            if isinstance(value, (int, float)) and value and name in self.param_names:
                return {name: self.clamp(name, value * 0.6, digits=3)}
        return {}

    def clipping_expected(self, params: dict[str, Any]) -> bool:
        """Whether new clipped whites/blacks are what was asked for (not a fault)."""
        return False


#: Every registered operation by name (filled by ``register``; read it through
#: ``pipelines.operations.registry``, which imports every family first).
REGISTRY: dict[str, Operation] = {}


def register(cls: type[Operation]) -> type[Operation]:
    """Add an operation class to the registry (one instance per name)."""
    if cls.name in REGISTRY and type(REGISTRY[cls.name]) is not cls:
        raise OperationError(f"two operations are called {cls.name!r}")
    REGISTRY[cls.name] = cls()
    return cls


@dataclass
class Family:
    """The operations one family module declares, in reading order (a decorator)."""

    name: str
    operations: list[type[Operation]] = field(default_factory=list)

    def __call__(self, cls: type[Operation]) -> type[Operation]:
        cls.family = self.name
        self.operations.append(cls)
        return register(cls)
