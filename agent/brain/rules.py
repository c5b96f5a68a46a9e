"""The rule planner: turn an instruction into atomic, ordered, validated Actions, no model.

``RulePlanner`` (the embedded default) splits the instruction into clauses
("and", "then", commas, sentences), reads each clause against the operation catalogue
(``pipelines.editors.operations``), resolves pronouns and "the same colour" through the
session memory, and says plainly when a request is not a visual edit. ``agent.brain.planner``
holds the model-backed planner, which falls back to this one.

Decisions (documented here because users will meet them):

* Generative asks the classical editor cannot do ("add a dog", "replace the sky with a
  sunset", "make it snowy") become a ``generate`` action; the session then reports that a
  generative editor is needed. Where a classical operation fits, it is used instead:
  "add the text 'hi'" → ``text``, "remove the red ball" → ``inpaint``, "replace the car's
  colour with blue" → ``recolor``, "remove the noise" → ``denoise``.
* A few whole-frame "looks" are classical recipes of atomic global adjustments: "evening"
  / "dusk" / "golden hour" → darker exposure + warmer temperature; "vintage" / "old photo"
  → partial sepia + vignette; "moody" / "dramatic" → more contrast + darker exposure.
  Looks that need new content ("night", "winter", "snowy", "rainy") are ``generate``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.actions import (
    Action,
    ActionValidationError,
    Region,
    RegionType,
    parse_actions,
)
from agent.brain.framing import Reading, read_frame, read_transform
from agent.brain.frontend import normalise
from agent.brain.intents import capabilities, default_matcher
from pipelines.editors.operations import NAMED_COLORS, get_operation, operations_with

log = logging.getLogger(__name__)

MAX_CHARS = 1000  # Action.instruction's limit; longer requests are refused, not truncated


class MemoryLike(Protocol):
    """What the planner reads from the session memory (``agent.session.memory.Memory``)."""

    def last_target(self) -> str | None: ...

    def last_value(self, param: str) -> Any | None: ...

    def find_node(self, query: str) -> str | None: ...

    def render(self, budget_chars: int) -> str: ...


@dataclass
class Plan:
    """A planner's answer: the actions in execution order, or why there are none."""

    actions: list[Action] = field(default_factory=list)
    is_edit: bool = True
    message: str = ""
    #: when the request could mean two things: ``[{"label", "instruction"}, …]`` for buttons
    choices: list[dict[str, str]] = field(default_factory=list)


# --- vocabulary -------------------------------------------------------------------------

_EXTRA_COLORS = {
    "dark blue": "navy", "light blue": "#8cc8f0", "sky blue": "#87ceeb",
    "dark green": "#1e5a28", "light green": "lime", "dark red": "maroon",
    "light grey": "silver", "light gray": "silver", "dark grey": "#404040",
    "dark gray": "#404040", "golden": "gold", "crimson": "#c0182c", "scarlet": "#e0301e",
    "indigo": "#4b0082", "lavender": "#b4a0e6", "cream": "#f5ecd0", "tan": "#d2b48c",
    "emerald": "#1e9a5a", "khaki": "#c3b091", "coral": "#ff7f50", "peach": "#ffcba4",
}
_COLOR_WORDS = sorted(list(_EXTRA_COLORS) + list(NAMED_COLORS), key=len, reverse=True)
_COLOR_RE = r"(?:#[0-9a-f]{6}\b|#[0-9a-f]{3}\b|" + "|".join(
    re.escape(c) for c in _COLOR_WORDS) + r")"
_COMPARATIVE = {"whiter": "white", "greyer": "gray", "grayer": "gray",
                "redder": "red", "bluer": "blue", "greener": "green", "yellower": "yellow",
                "pinker": "pink", "oranger": "orange", "browner": "brown"}

_SLIGHT = (r"very slightly|a tiny bit|a little bit|a little|a bit|a touch|a tad|slightly|"
           r"somewhat|subtly|gently|mildly|marginally|a hint|barely|just a bit|subtle|gentle|"
           r"mild|slight|small")
_STRONG = (r"a lot|a great deal|lots|much|very|way|really|strongly|significantly|"
           r"considerably|dramatically|heavily|greatly|substantially|far|strong|heavy|"
           r"intense|big")
_EXTREME = r"extremely|massively|hugely|super|enormously|drastically"
_DEGREES = [(_EXTREME, 3.0), (_SLIGHT, 0.5), (_STRONG, 2.0)]

_VERBS = (r"make|turn|change|set|give|apply|add|increase|decrease|reduce|lower|raise|boost|"
          r"bump|push|pull|drop|put|paint|colou?r|recolou?r|dye|brighten|darken|lighten|dim|"
          r"sharpen|blur|soften|denoise|remove|erase|delete|replace|swap|fix|correct|adjust|"
          r"enhance|improve|lift|deepen|recover|tone|crank|warm|cool|saturate|desaturate|"
          r"straighten|level|rotate|write|insert|place|draw|convert|transform|let|can you|"
          r"please|could you|i want|i'd like")
_FILLER = (r"\b(?:please|can you|could you|would you|i want|i'd like|i would like|let's|"
           r"let us|go ahead and|kindly|try to|a bit of|some|more|less|up|down|the amount of|"
           r"is|are|looks?|seems?|feels?|appears?|too dark|too bright|"
           r"the level of|overall|too|so that it is|so it is|so it's|to be|be)\b")
_WHOLE = {"", "image", "photo", "picture", "pic", "everything", "texture", "textures",
          "detail", "details", "tone", "exposure", "whole image", "whole photo",
          "whole picture", "entire image", "entire photo", "whole thing", "scene", "frame",
          "all", "whole scene", "it all", "shot", "whole frame", "full image", "colours",
          "colors", "colour", "color", "tones", "lighting", "light", "look", "overall look"}
_PRONOUNS = {"it", "them", "that", "that one", "those", "these", "the same one",
             "same one", "the same thing", "him", "her", "they"}
_MASK_WORDS = {"here", "this", "this area", "this part", "this region", "this spot",
               "the marked area", "marked area", "the selection", "selection",
               "the selected area", "selected area", "the masked area", "masked area",
               "the marked region", "marked region", "the brushed area", "brushed area",
               "the painted area", "the highlighted area", "this bit", "there",
               "the mask", "mask", "what i marked", "what i selected", "the marked part"}

_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier)|disregard (?:all |the )?"
    r"(?:previous|prior|above)|system prompt|you are now|developer mode|jailbreak|"
    r"<\s*/?\s*(?:script|system|im_start)|\brm -rf\b|\bimport os\b|\beval\(|\bexec\(|"
    r"__import__|api[_ ]key|password|reveal your|print your (?:instructions|prompt)",
    re.IGNORECASE)
_QUESTION = re.compile(r"^\s*(?:what|who|whom|why|how|when|where|which|is|are|was|were|do|"
                       r"does|did|will|tell me|explain)\b", re.IGNORECASE)


def _clamp(value: float, op: str, param: str) -> float:
    return get_operation(op).clamp(param, value)


def _degree(text: str) -> float:
    for pattern, factor in _DEGREES:
        if re.search(rf"\b(?:{pattern})\b", text):
            return factor
    return 1.0


def _strip_degrees(text: str) -> str:
    for pattern, _ in _DEGREES:
        text = re.sub(rf"\b(?:{pattern})\b", " ", text)
    return text


def _number(text: str, unit: str) -> float | None:
    match = re.search(rf"([+-]?\d+(?:\.\d+)?)\s*(?:{unit})", text)
    return float(match.group(1)) if match else None


def _percent(text: str) -> float | None:
    value = _number(text, r"%|percent\b|per cent\b")
    return None if value is None else value / 100.0


def _bare_number(text: str, op: str) -> float | None:
    """'set brightness to +30', 'saturation -20', 'hue +45': a unitless number; for
    -1..1 amounts, values beyond 1 are read as percent."""
    match = re.search(r"(?:^|\s)(?:to|by|of|at)?\s*([+-]?\d+(?:\.\d+)?)(?=\s*$|\s*[,;])", text)
    if not match:
        return None
    value = float(match.group(1))
    if op in ("hue", "exposure"):
        return value
    return value / 100.0 if abs(value) > 1 else value


def _strip_numbers(text: str) -> str:
    return re.sub(r"\b(?:by|to|of|at)?\s*[+-]?\d+(?:\.\d+)?\s*(?:%|percent|per cent|stops?|"
                  r"ev|degrees?|deg|°|px|pixels?)?", " ", text)


def _clean(text: str) -> str:
    """Normalise a target phrase: drop fillers, prepositions, articles and 'of the image'."""
    text = re.sub(_FILLER, " ", text)
    text = re.sub(r"\s+", " ", text).strip(" ,.!?;:'\"")
    text = re.sub(r"\s+(?:of|in|on|across|throughout)\s+(?:the\s+)?(?:whole\s+|entire\s+)?"
                  r"(?:image|photo|picture|pic|scene|frame)$", "", text)
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"^(?:of|in|on|to|for|at|across|within|inside|around|with|from|the|a|"
                      r"an|my|our|its)\s+", "", text).strip()
        text = re.sub(r"\s+(?:a|an|the|to|with|by|of|in|on)$", "", text).strip()
        text = re.sub(r"^(?:a|an|the|to|with|by|of|in|on|for|at|into)$", "", text)
    return text


def _leftover(clause: str, *patterns: str) -> str:
    """The clause minus the verbs, degree words, numbers and the given keyword patterns."""
    text = _strip_degrees(clause)
    text = _strip_numbers(text)
    for pattern in patterns:
        text = re.sub(pattern, " ", text)
    text = re.sub(rf"^\s*(?:{_VERBS})\b", " ", text.strip())
    text = re.sub(rf"^\s*(?:{_VERBS})\b", " ", text.strip())
    return _clean(text)


# --- clause reading ---------------------------------------------------------------------

@dataclass
class _Step:
    """A parsed clause before it becomes an Action."""

    kind: str
    operation: str
    params: dict[str, Any]
    target: str = ""          # words as the user wrote them; "" = the whole image
    region_phrase: str = ""   # where (for add: the location); defaults to the target
    clause: str = ""
    steps: int = 1
    node: str = ""


@dataclass
class _Context:
    memory: MemoryLike | None
    has_mask: bool
    last_target: str = ""     # the latest target named in this plan
    problems: list[str] = field(default_factory=list)
    asks: list[tuple[Any, ...]] = field(default_factory=list)   # close intent pairs
    asked: set[str] = field(default_factory=set)                # clauses that asked

    def memory_target(self) -> str | None:
        return self.memory.last_target() if self.memory is not None else None

    def memory_value(self, param: str) -> Any | None:
        return self.memory.last_value(param) if self.memory is not None else None


_ADJUSTERS: list[tuple[str, str, str, float, str]] = [
    # (operation, parameter, sign-positive words | sign-negative words, base, keyword pattern)
    ("exposure", "stops", r"underexposed|increase|raise|more|up|boost|brighter|brighten|\+",
     0.5, r"\b(?:under|over)?exposed\b|\bexposure\b|\b(?<=\d )stops?\b|\b(?<=\d)\s?ev\b"),
    ("highlights", "amount", r"boost|increase|brighten|brighter|more|raise|lift",
     0.3, r"\bhighlights?\b|\bblown(?:[- ]out)? (?:areas|sky|parts)\b"),
    ("shadows", "amount", r"lift|brighten|brighter|open|recover|raise|more detail|increase|"
     r"lighten|boost|reveal", 0.3, r"\bshadows?\b|\bdark areas\b"),
    ("vibrance", "amount", r"more|increase|boost|add|raise|vibrant|pop",
     0.3, r"\bvibran(?:ce|t)\b"),
    ("saturation", "amount", r"more|increase|boost|add|raise|saturate(?!d)|colou?rful|vivid|"
     r"richer|punchier|stronger", 0.25,
     r"\b(?:de)?saturat(?:ion|ed?|e)\b|\b(?:more |less )?colou?rful\b|\bvivid\b|\bmuted\b|"
     r"\bduller\b|\bwashed[- ]out\b|\brich(?:er)? colou?rs?\b|\bcolou?rs? (?:pop|stronger|"
     r"weaker|richer)\b|\bpop\b"),
    ("contrast", "amount", r"more|increase|boost|add|raise|higher|punchier|stronger|crisper",
     0.2, r"\bcontrast(?:y)?\b|\bpunchier\b|\bflatter\b"),
    ("temperature", "amount", r"warm|warmer|warmth|golden|amber|hotter|increase",
     0.2, r"\bwarm(?:er|th)?\b|\bcool(?:er)?\b|\bcold(?:er)?\b|\bcolou?r temperature\b|"
     r"\btemperature\b|\bhotter\b|\bicier\b"),
    ("tint", "amount", r"magenta|pink|increase|more", 0.1, r"\btint\b"),
    ("gamma", "gamma", r"increase|raise|more|brighter|up", 1.2, r"\bgamma\b|\bmid-?tones\b"),
    ("hue", "degrees", r"increase|forward|clockwise|\+", 15.0,
     r"\bhues?\b(?: (?:shift|rotation))?"),
    ("brightness", "amount", r"bright|lighter|lighten|lift|increase|raise|more light|light up|"
     r"illuminate", 0.2,
     r"\bbright(?:en|er|ness)?\b|\blight(?:en|er)\b|\blight up\b|\bdark(?:en|er|ness)?\b|"
     r"\bdim(?:mer)?\b|\billuminate\b|\bdull\b"),
]
_NEGATIVE = (r"less|decrease|reduce|lower|down|darker|darken|deepen|deeper|crush|tone down|"
             r"cool|cooler|"
             r"cold|colder|icier|muted|duller|flatter|washed|desaturat|dim|dimmer|drop|pull|"
             r"recover|tame|soften|overexposed|green|minus|\-\d|underexposed")

_FILTERS: list[tuple[str, str]] = [
    ("grayscale", r"\b(?:grayscale|greyscale|monochrome|black and white|black & white|b&w|"
                  r"bw|desaturate (?:it )?(?:completely|fully)|no colou?rs?|colou?rless)\b"),
    ("sepia", r"\bsepia\b"),
    ("vignette", r"\bvignett(?:e|ing)\b"),
    ("auto_white_balance", r"\bwhite[- ]balance\b|\bcolou?r cast\b|\b(?:yellow|blue|green|"
                           r"orange|magenta) cast\b|\bneutrali[sz]e the colou?rs?\b|"
                           r"\b(?:fix|correct) the colou?rs?\b(?: cast)?"),
    ("auto_levels", r"\bauto[- ]?levels?\b|\bfix the levels\b|\bstretch the levels\b|"
                    r"\bauto[- ]?enhance\b|\bauto[- ]?correct\b"),
    ("clahe", r"\blocal contrast\b|\bclarity\b|\bclahe\b|\bhdr\b|\bmicro-?contrast\b"),
    ("sharpen", r"\bsharpen\b|\bsharper\b|\bcrisper\b|\bcrisp\b|\bmore detail(?:ed)?\b|"
                r"\bbring out (?:the |more )?details?\b|"
                r"\bunblur\b|\bde-?blur\b|\bin focus\b"),
    ("denoise", r"\bdenoise\b|\bde-?noise\b|\bnoise\b|\bgrain(?:y|iness)?\b|\bnoisy\b|"
                r"\bspeckles?\b|\bsmooth(?:en)? (?:out )?the skin\b|\bsmoother\b"),
    ("blur", r"\bblur(?:red|ry)?\b|\bbokeh\b|\bout of focus\b|\bsoften\b|\bsofter\b|"
             r"\bdefocus\b"),
]
#: Filters that mean the whole frame when the target is a pronoun.
_FRAME_FILTERS = operations_with("frame_filter")
_FILTER_BASE = {"grayscale": ("amount", 1.0), "sepia": ("amount", 1.0),
                "vignette": ("amount", 0.3), "auto_white_balance": ("amount", 1.0),
                "auto_levels": ("clip", 0.5), "clahe": ("clip_limit", 2.0),
                "sharpen": ("amount", 0.6), "denoise": ("strength", 0.5),
                "blur": ("radius", 4.0)}
#: Named looks (``pipelines.editors.looks``), each one ``look`` action (one undo step).
_LOOKS: list[tuple[str, str]] = [
    (r"\b(?:black and white|grayscale)\b.*\b(red|orange|yellow|green|blue)\b(?: colou?r)? "
     r"filter\b|\b(red|orange|yellow|green|blue) filter\b", "bw_"),
    (r"\bmatte\b|\b(?:lifted|faded) blacks\b", "matte"),
    (r"\b(?:vintage\w*|retro|old[- ]school|old photo|old film|(?:faded|old|analog(?:ue)?) "
     r"film|film look|nostalgic|seventies|70s|aged|old-fashioned|faded)\b", "vintage"),
    (r"\b(?:golden hour|golden light|magic hour|late afternoon sun|(?:sunset|sunrise) "
     r"(?:look|light|glow|tones|colou?rs|vibe))\b|\blike (?:a )?(?:sunset|sunrise)\b",
     "golden_hour"),
    (r"\b(?:evening|dusk|twilight)\b", "evening"),
    (r"\b(?:high[- ]?key|bright and airy|light and airy|airy)\b", "high_key"),
    (r"\b(?:low[- ]?key|chiaroscuro)\b", "low_key"),
    (r"\bteal\b.*\borange\b|\borange\b.*\bteal\b|\bblockbuster\b|\bhollywood\b|"
     r"\bcinematic\b|\bmovie (?:look|colou?rs?|grade)\b", "teal_orange"),
    (r"\b(?:moody|brooding|gloomy|dramatic)\b", "moody"),
    (r"\bsepia (?:look|style|print|photo|vibe)\b|\bold brown photo\b", "sepia"),
]
#: Not a named look, but a classical recipe: "enhance" = auto levels + a little vibrance.
_ENHANCE = (r"^(?:enhance|improve|polish|auto[- ]?fix|auto[- ]?enhance)\b|\b(?:look|make "
            r"it) (?:better|nicer|nice|good|great|pretty|prettier|professional|amazing)\b")
#: Words left over around a look's name that are part of the look, not a target.
_LOOK_WORDS = (r"\b(?:dark|bright|light|soft|subtle|strong|heavy|nice|warm|cool|cold|deep|"
               r"classic|old|film|dramatic|faded|retro|vintage|moody|matte|cinematic|"
               r"looking|kind of|sort of|type|feel|tone|toned|glow|light|sun|vibe|tones|"
               r"colou?rs?|grade|grading|edit)\b")
_GENERATIVE_LOOKS = (r"\b(?:night(?:time)?|winter|snowy|snow|rainy|rain|autumn|fall|spring|"
                     r"summer|foggy|fog|stormy|cartoon|anime|painting|sketch|watercolou?r|"
                     r"van gogh|cyberpunk|sunset|sunrise|underwater|desert|beach)\b")


def _region_for(target: str, ctx: _Context) -> tuple[str, bool]:
    """(clean target, is_mask) for the words naming a target."""
    clean = _clean(target)
    if clean in _MASK_WORDS or target.strip() in _MASK_WORDS:
        return "", True
    if not clean and ctx.has_mask:
        return "", True
    return clean, False


def _is_pronoun(text: str) -> bool:
    return _clean(text) in _PRONOUNS or text.strip() in _PRONOUNS


def _read_undo(clause: str, ctx: _Context) -> _Step | None:
    match = re.match(r"^(?:please\s+)?(?:undo|revert|go back|roll ?back|step back|take back|"
                     r"cancel|reverse)\b(.*)$", clause)
    if not match:
        return None
    rest = match.group(1).strip()
    before = re.search(r"\b(?:before|after|to)\b\s+(.+)$", rest)
    if before and not re.search(r"\b(?:last|previous)\b", before.group(1)):
        query = rest[before.start():]
        node = ctx.memory.find_node(query) if ctx.memory is not None else None
        if node is None:
            ctx.problems.append(f"I could not find the state '{query}' in this session's "
                                "history; use the history panel to pick it")
            return _Step("undo", "", {}, clause=clause, steps=0)
        return _Step("undo", "", {}, clause=clause, node=node)
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9, "ten": 10, "twice": 2, "thrice": 3}
    steps = 1 + len(re.findall(r"\bundo\b", rest))
    number = re.search(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twice|"
                       r"thrice)\b", rest)
    if number:
        token = number.group(1)
        steps = int(token) if token.isdigit() else words[token]
    return _Step("undo", "", {}, clause=clause, steps=max(1, min(50, steps)))


def _read_text(clause: str, quotes: list[str]) -> _Step | None:
    match = re.search(r"\b(?:add|write|put|place|insert|type|print|caption|label|overlay)\b",
                      clause)
    slot = re.search(r"\x00(\d+)\x00", clause)
    if not (match and slot):
        return None
    words = quotes[int(slot.group(1))]
    rest = clause[slot.end():]
    params: dict[str, Any] = {"text": words}
    color = re.search(rf"\b(?:in|colou?red)\s+({_COLOR_RE})\b", rest)
    if color:
        params["color"] = _color_value(color.group(1))
        rest = rest[:color.start()] + rest[color.end():]
    where = re.search(r"\b(?:at|on|in|across|along|to|near|over|under|above|below)\b\s+(.+)$",
                      rest)
    return _Step("add", "text", params, target="", region_phrase=_clean(where.group(1)) if where
                 else "", clause=clause)


def _color_value(word: str) -> str:
    word = word.strip().lower()
    return _EXTRA_COLORS.get(word, word)


def _read_remove(clause: str) -> _Step | None:
    match = re.match(r"^(?:remove|erase|delete|get rid of|take out|take away|eliminate|"
                     r"clean up|clear|wipe out|wipe away|cut out|drop)\s+(.+)$", clause)
    if not match:
        return None
    what = match.group(1)
    if re.search(r"\b(?:noise|grain|graininess|speckles?)\b", what):
        return None  # handled as denoise
    if re.search(r"\bcolou?r cast\b|\bcast\b", what):
        return None  # handled as white balance
    if re.search(r"\bvignett(?:e|ing)\b|\b(?:tint|haze|glare)\b", what):
        return None  # an adjustment, not an object
    if re.search(r"^(?:the )?(?:colou?rs?|saturation)\b", what):
        return _Step("adjust", "grayscale", {"amount": 1.0}, target=_clean(
            re.sub(r"^(?:the )?(?:colou?rs?|saturation)\s*(?:from|of|in)?", "", what)),
            clause=clause)
    if re.search(r"^(?:the )?blur\b", what):
        return None  # handled as sharpen
    return _Step("remove", "inpaint", {}, target=what, clause=clause)


def _read_replace(clause: str) -> _Step | None:
    patterns = [r"^(?:replace|swap|substitute)\s+(?P<x>.+?)\s+(?:with|for|by)\s+(?P<y>.+)$",
                r"^(?:change|turn|transform|convert|make)\s+(?P<x>.+?)\s+(?:into|to)\s+"
                r"(?P<y>.+)$",
                r"^(?:swap out)\s+(?P<x>.+?)\s+for\s+(?P<y>.+)$",
                r"^(?:fill|cover|paint over)\s+(?P<x>.+?)\s+with\s+(?P<y>.+)$"]
    for pattern in patterns:
        match = re.match(pattern, clause)
        if not match:
            continue
        x, y = match.group("x"), match.group("y")
        colour_of = re.match(r"^(?:the\s+)?colou?r\s+of\s+(.+)$", x)
        y_colour = re.fullmatch(rf"(?:a\s+|the\s+)?(?:colou?r\s+)?({_COLOR_RE})"
                                rf"(?:\s+colou?r|\s+one)?", y.strip())
        if y_colour:
            target = colour_of.group(1) if colour_of else re.sub(r"(?:'s)?\s+colou?r$", "", x)
            if re.fullmatch(r"(?:the\s+)?(?:colou?rs?|shade)", target.strip()):
                return None
            return _Step("replace", "recolor", {"color": _color_value(y_colour.group(1))},
                         target=target, clause=clause)
        if re.search(r"\blook\b|\bstyle\b", x) or re.fullmatch(r"(?:it|this|the (?:image|photo|"
                                                              r"picture|scene))", x.strip()):
            return None  # a look, handled later
        if re.search(rf"\b(?:{_VERBS})\b", x) and x.split()[0] in ("make", "the"):
            return None
        return _Step("replace", "generate", {"prompt": _clean(y) or y.strip()}, target=x,
                     clause=clause)
    return None


def _read_filter(clause: str) -> _Step | None:
    for op, pattern in _FILTERS:
        match = re.search(pattern, clause)
        if not match:
            continue
        factor = _degree(clause)
        params: dict[str, Any] = {}
        name, base = _FILTER_BASE.get(op, ("", 0.0))
        if op == "blur":
            radius = _number(clause, r"px|pixels?")
            params["radius"] = _clamp(radius if radius is not None else base * factor, op,
                                      name)
        elif op in ("grayscale", "sepia", "auto_white_balance"):
            pct = _percent(clause)
            params[name] = _clamp(pct if pct is not None else min(1.0, base * factor), op, name)
        elif name:
            pct = _percent(clause)
            sign = -1.0 if op == "vignette" and re.search(r"\b(?:lighten|remove|reduce|less|"
                                                          r"lighter)\b", clause) else 1.0
            params[name] = _clamp(sign * (pct if pct is not None else base * factor), op, name)
        target = _leftover(clause, pattern, r"\b(?:apply|add|fix|correct|give|use|"
                                            r"the|effect|filter|look|style|a|an|image is|"
                                            r"levels|remove|reduce|get rid of|out|more)\b")
        if op in _FRAME_FILTERS and _is_pronoun(target):
            target = ""  # "make it black and white": the photo, not the last object
        return _Step("adjust", op, params, target=target, clause=clause)
    return None


def _read_adjuster(clause: str) -> _Step | None:
    for op, param, positive, base, pattern in _ADJUSTERS:
        match = re.search(pattern, clause)
        if not match:
            continue
        if op in ("shadows", "highlights") and any(
                re.search(other[4], clause.replace(match.group(0), " "))
                for other in _ADJUSTERS if other[0] not in ("shadows", "highlights",
                                                             "brightness", "exposure")):
            continue  # "make the shadows warmer": the shadows are the target
        keyword = match.group(0)
        negative = re.search(rf"\b(?:{_NEGATIVE})", clause.replace(keyword, " ")) or \
            re.search(rf"^(?:{_NEGATIVE})", keyword)
        if op == "exposure" and "overexposed" in keyword:
            negative = True
        elif op == "exposure" and "underexposed" in keyword:
            negative = False
        if op == "highlights":  # "recover/tone down the highlights" is the common ask
            negative = not re.search(rf"\b(?:{positive})\b", clause)
        if op == "shadows":
            negative = bool(re.search(r"\b(?:deepen|darken|darker|crush|deeper|richer)\b",
                                      clause))
        if op == "brightness" and re.match(r"dark|dim|dull", keyword):
            negative = True
        if op == "temperature":
            negative = bool(re.match(r"cool|cold|ic", keyword))
        if re.search(rf"\btoo\s+(?:much\s+)?{re.escape(keyword)}", clause):
            negative = not negative  # "too dark" asks for the opposite
        factor = _degree(clause)
        if op == "exposure":
            explicit = _number(clause, r"stops?|ev\b")
        elif op == "hue":
            explicit = _number(clause, r"degrees?|deg|°")
        else:
            explicit = _percent(clause)
        if explicit is None and op != "gamma":
            explicit = _bare_number(clause, op)
        if op == "gamma":
            explicit = _number(clause, r"(?=\s|$)") if re.search(r"\bgamma\b.*\d", clause) \
                else None
            value = explicit if explicit is not None else (
                1.0 / (1 + 0.2 * factor) if negative else 1 + 0.2 * factor)
        else:
            magnitude = abs(explicit) if explicit is not None else base * factor
            value = -magnitude if negative or (explicit is not None and explicit < 0) \
                else magnitude
        params = {param: _clamp(value, op, param)}
        target = _leftover(clause, pattern, rf"\b(?:{positive}|{_NEGATIVE})\b",
                           r"\b(?:the|a|an|add|give|make|fix|correct|increase|colou?rs?|look|"
                           r"tones?|areas?|parts?)\b(?=.*\b(?:of|in|on|to)\b)|\blevels?\b")
        return _Step("adjust", op, params, target=target, clause=clause)
    return None


def _read_recolor(clause: str, ctx: _Context) -> _Step | None:
    same = re.search(r"\b(?:the\s+)?same\s+(?:colou?r|shade)(?:\s+as\s+(?:before|that|it|the "
                     r"last one))?\b", clause)
    if same:
        color = ctx.memory_value("color")
        target = _leftover(clause, re.escape(same.group(0)), r"\b(?:for|on|to|too|also|use|"
                                                             r"with|do|apply)\b")
        if color is None:
            ctx.problems.append("I don't know which colour 'the same colour' means yet; "
                                "name the colour")
            return _Step("replace", "recolor", {}, target=target, clause=clause)
        return _Step("replace", "recolor", {"color": str(color)}, target=target, clause=clause)
    comp = re.match(r"^(?:make|turn)\s+(?P<t>.+?)\s+(?:a\s+bit\s+|slightly\s+|much\s+)?"
                    r"(?:(?P<w>redder|bluer|greener|yellower|pinker|browner|whiter|greyer|"
                    r"grayer)|more\s+"
                    rf"(?P<c>{_COLOR_RE}))$", clause)
    if comp:
        color = _COMPARATIVE.get(comp.group("w") or "", comp.group("c") or "")
        strength = _clamp(0.4 * _degree(clause), "recolor", "strength")
        target = _strip_degrees(comp.group("t"))
        return _Step("adjust", "recolor", {"color": _color_value(color), "strength": strength},
                     target=target, clause=clause)
    match = re.match(rf"^(?:make|paint|colou?r|recolou?r|turn|change|dye|set|tint|do)\s+"
                     rf"(?P<t>.+?)\s+(?:to\s+|into\s+|in\s+)?(?:be\s+)?(?:a\s+|an\s+)?"
                     rf"(?:(?:deeper|darker|lighter|brighter|richer|more vivid|vivid|bright|"
                     rf"deep|pale|pastel|soft|nice|warm|cool|strong)\s+)?"
                     rf"(?P<c>{_COLOR_RE})(?:\s+colou?r(?:ed)?|\s+instead|\s+too|\s+also)?$",
                     clause)
    if match:
        target = re.sub(r"(?:'s)?\s+colou?r$", "", match.group("t"))
        return _Step("replace", "recolor", {"color": _color_value(match.group("c"))},
                     target=target, clause=clause)
    return None


def _read_look(clause: str) -> list[_Step] | None:
    """A named look (one ``look`` action), "enhance" (auto levels + vibrance), or a look
    that needs new content (``generate``)."""
    for pattern, style in _LOOKS:
        match = re.search(pattern, clause)
        if not match:
            continue
        if style == "bw_":
            style += next(g for g in match.groups() if g)
        if style == "golden_hour" and re.search(r"\b(?:replace|add|put|with)\b", clause):
            continue  # "replace the sky with a sunset": new content
        factor = _degree(clause)
        target = _leftover(clause, pattern, r"\b(?:look|feel|mood|style|vibe|like|more|"
                                            r"a|an|the|give|apply|effect|atmosphere|grade|"
                                            r"colou?rs?|tones?|finish|filter|with|and|"
                                            r"black|white|grayscale|through)\b")
        for other, _ in _LOOKS:
            target = _clean(re.sub(other, " ", target))
        target = _clean(re.sub(_LOOK_WORDS, " ", target))
        if _is_pronoun(target):
            target = ""  # a look is for the frame: "make it look vintage"
        strength = _clamp(min(1.0, factor), "look", "strength")
        return [_Step("adjust", "look", {"style": style, "strength": strength},
                      target=target, clause=clause)]
    if re.search(_ENHANCE, clause):
        return [_Step("adjust", "auto_levels", {"clip": 0.5}, clause=clause),
                _Step("adjust", "vibrance", {"amount": 0.2}, clause=clause)]
    if re.search(_GENERATIVE_LOOKS, clause) or re.search(r"\blook like\b", clause):
        return [_Step("adjust", "generate", {"prompt": clause}, clause=clause)]
    return None


def _read_framing(clause: str) -> _Step | None:
    """Frame edits (crop, rotate, flip, straighten, resize) and object moves/resizes."""
    degree = _degree(clause)
    found: Reading | None = read_frame(clause, degree) or read_transform(clause, degree)
    if found is None:
        return None
    params = {k: _clamp(v, found.operation, k) if isinstance(v, float) else v
              for k, v in found.params.items()}
    return _Step("adjust", found.operation, params, target=found.target, clause=clause)


def _read_intent(clause: str, ctx: _Context) -> _Step | None:
    """The intent library's reading of a clause the rules did not understand: one
    operation (scaled by the clause's degree words), or a question recorded in ``ctx``."""
    words = re.findall(r"[a-z]+", clause)
    if not words or "\x00" in clause or len(clause) > 300 or \
            re.fullmatch(r"(?:the|a|an|my|this|that|these|those)\s+[a-z' -]+", clause) and \
            not re.search(r"\b(?:is|are|looks?|seems?)\b", clause):
        return None  # a bare noun phrase is an object, not an intent
    try:
        decision = default_matcher().decide(clause)
    except Exception as err:  # noqa: BLE001 - a missing model leaves the rules alone
        log.warning("intent matcher unavailable (%s)", err)
        return None
    if decision.kind == "ask":
        ctx.asks.append(decision.intents)
        ctx.asked.add(clause)
        return None
    if decision.kind != "plan":
        return None
    intent = decision.intents[0]
    factor = _degree(clause)
    params = {}
    for name, value in intent.params.items():
        if name == "strength":
            value = min(1.0, value * factor)
        elif name in intent.scalable and intent.operation not in ("straighten",):
            value = value * factor
        params[name] = _clamp(value, intent.operation, name) if isinstance(value, float) \
            else value
    return _Step("adjust", intent.operation, params, clause=clause)


def _read_add(clause: str) -> _Step | None:
    match = re.match(r"^(?:add|insert|put|place|draw|include|give)\s+(?P<o>.+)$", clause)
    if not match:
        return None
    obj = match.group("o")
    where = re.search(r"\s+\b(?:to|on|in|into|onto|next to|beside|behind|in front of|near|"
                      r"above|below|under|over|at|by|inside|on top of)\b\s+(?P<w>.+)$", obj)
    location = ""
    if where:
        location = where.group("w")
        obj = obj[:where.start()]
    cleaned = _clean(obj)
    if not cleaned:
        return None
    return _Step("add", "generate", {"prompt": obj.strip()}, target=cleaned,
                 region_phrase=location, clause=clause)


def _normalise_clause(clause: str) -> str:
    """Strip politeness and connectives; rewrite wishes ('the cat should be orange',
    "I'd like the sky to be bluer") as commands ('make the cat orange')."""
    prev = None
    clause = clause.strip(" ,.!;:?").strip()
    while prev != clause:
        prev = clause
        clause = re.sub(r"^(?:and|then|also|plus|finally|after that|afterwards|next|lastly|"
                        r"first|firstly|second|secondly|please|now|and then|ok|okay|so)\b"
                        r"[, ]*", "", clause)
        clause = re.sub(r"^(?:can|could|would|will) you\s+|^i(?:'d| would) like (?:you )?to\s+|"
                        r"^i want (?:you )?to\s+|^let's\s+|^please\s+|^try to\s+", "",
                        clause).strip()
        clause = re.sub(r"\s+(?:please|for me|thanks|thank you)$", "", clause)
    wish = re.match(r"^(?:i(?:'d| would) like|i want|i need|let)\s+(.+?)\s+to\s+(?:be|look)\s+"
                    r"(.+)$", clause) or re.match(r"^(.+?)\s+(?:should|must|needs to|has to)\s+"
                                                 r"(?:be|look)\s+(.+)$", clause)
    if wish:
        clause = f"make {wish.group(1)} {wish.group(2)}"
    clause = re.sub(r"^(whiten|redden|blacken|yellow|green)\s+(.+)$",
                    lambda m: f"make {m.group(2)} " + {"whiten": "whiter", "redden": "redder",
                                                       "blacken": "black", "yellow": "yellower",
                                                       "green": "greener"}[m.group(1)], clause)
    return clause


def _read_clause(clause: str, ctx: _Context, quotes: list[str]) -> list[_Step]:
    """All steps one clause asks for (usually one); [] when nothing was recognised."""
    raw, clause = clause, _normalise_clause(clause)
    if not clause or _is_constraint(clause):
        return []  # a constraint on the other edits, not an edit
    moved = _read_transform(clause)   # issue 14: before the frame-geometry refusal
    if moved is not None:
        return [moved]
    unsupported = _unsupported(clause)
    if unsupported:
        ctx.problems.append(unsupported)
        return []
    for reader in (lambda c: _read_undo(c, ctx), lambda c: _read_text(c, quotes),
                   _read_framing, lambda c: _read_recolor(c, ctx) if "same" in c else None,
                   _read_remove, _read_replace):
        step = reader(clause)
        if step is not None:
            return [step]
    looks = _read_look(clause)
    if looks and looks[0].operation != "generate":
        return looks
    new_content = bool(looks) and bool(re.search(_GENERATIVE_LOOKS, clause))
    for reader in (_read_filter, lambda c: _read_recolor(c, ctx), _read_adjuster,
                   lambda c: None if new_content else _read_intent(c, ctx)):
        step = reader(clause)
        if step is not None:
            return [step]
    if looks or clause in ctx.asked:
        ctx.asked.add(raw)
        return looks or []
    step = _read_add(clause)
    return [step] if step is not None else []


def _bare_verb(step: _Step) -> bool:
    """An adjustment said with one verb and nothing else ('brighten')."""
    words = _normalise_clause(step.clause).split()
    return step.kind == "adjust" and not step.target and len(words) == 1 and \
        step.operation not in ("generate", "")


def _generative_leftover(clause: str) -> _Step | None:
    """'make the person smile': a change no classical operation names → ``generate``."""
    clause = clause.strip(" ,.!;:")
    if re.match(r"^(?:make|turn|change|transform|let)\s+\S+(?:\s+\S+){1,}", clause) and \
            not _is_constraint(clause):
        return _Step("adjust", "generate", {"prompt": clause}, clause=clause)
    return None


def _is_constraint(clause: str) -> bool:
    return bool(re.match(r"^(?:but\s+)?(?:keep|leave|preserve|don't touch|do not touch|"
                         r"don't change|do not change|without changing|except)\b",
                         clause.strip()))


def _unsupported(clause: str) -> str:
    """A plain message for requests Loupe's operations do not cover, else ''."""
    if re.match(r"^redo\b", clause):
        return ("Redo is a history command, not an edit: use Redo in the history panel "
                "(or `python -m agent redo`).")
    if re.match(r"^(?:upscale|upsample|enlarge (?:the )?(?:photo|image|picture|it))\b", clause):
        return (f"'{clause}' asks for more pixels than the photo has; Loupe keeps the native "
                "resolution (crop, rotate, flip, straighten and make smaller are possible).")
    return ""


# --- object move / resize (issue 14; the language front end folds this in) -------------

_BIGGER = r"bigger|larger|enlarged?|grow|scale (?:it )?up|taller"
_SMALLER = r"smaller|shrink|shrunk|reduced?|scale (?:it )?down|tinier"
_DIRECTIONS = {"left": ("dx", -1.0), "right": ("dx", 1.0), "up": ("dy", -1.0),
               "down": ("dy", 1.0), "higher": ("dy", -1.0), "lower": ("dy", 1.0)}


def _read_transform(clause: str) -> _Step | None:
    """'make the triangle a little bigger', 'shrink the ball', 'move the box to the left'
    → ``transform`` (scale about the object's centre, shift in fractions of the frame)."""
    size = re.match(rf"^(?:make|resize|scale|enlarge|shrink|grow)\s+(?P<t>.+?)\s*"
                    rf"(?:so (?:that )?it(?: is|'s)\s+)?(?P<deg>(?:{_SLIGHT}|{_STRONG}|"
                    rf"{_EXTREME})\s+)?(?P<w>{_BIGGER}|{_SMALLER})?$", clause)
    verb = re.match(r"^(enlarge|shrink|grow)\b", clause)
    if size and (size.group("w") or verb):
        word = size.group("w") or verb.group(1)
        grow = re.fullmatch(_BIGGER, word) is not None or word in ("enlarge", "grow")
        step = 0.3 * _degree(clause)
        scale = 1.0 + step if grow else 1.0 / (1.0 + step)
        target = _clean(size.group("t"))
        if target and target not in _WHOLE:
            return _Step("adjust", "transform", {"scale": round(scale, 3)}, target=target,
                         clause=clause)
    move = re.match(rf"^(?:move|shift|push|nudge|slide)\s+(?P<t>.+?)\s+(?:(?:{_SLIGHT}|"
                    rf"{_STRONG}|{_EXTREME})\s+)?(?:to the |towards the |)"
                    rf"(?P<d>left|right|up|down|higher|lower)\b", clause)
    if move:
        name, sign = _DIRECTIONS[move.group("d")]
        target = _clean(_strip_degrees(move.group("t")))
        if target and target not in _WHOLE:
            return _Step("adjust", "transform", {name: round(sign * 0.1 * _degree(clause), 3)},
                         target=target, clause=clause)
    return None


# --- the planner ------------------------------------------------------------------------

_QUOTE = re.compile(r"[\"“”'‘’]([^\"“”‘’]{1,200}?)[\"“”'‘’](?=\s|$|[,.;!?])")


_WORD_NUMBERS = [(r"\bhalf an? (stop|degree)", r"0.5 \1s"),
                 (r"\ba third of an? stop", "0.33 stops"),
                 (r"\b(?:a|one|an) (stop|degree)\b", r"1 \1"),
                 (r"\btwo (stops|degrees)", r"2 \1"), (r"\bthree (stops|degrees)", r"3 \1"),
                 (r"\b(?:a|one) and a half (stops|degrees)", r"1.5 \1")]


def _split(text: str) -> list[str]:
    """Clauses, in order: sentences, ';', 'then', commas and 'and'."""
    for pattern, repl in _WORD_NUMBERS:
        text = re.sub(pattern, repl, text)
    text = re.sub(r"\b(?:black|white)\s+(?:and|&)\s+(?:white|black)\b", "grayscale", text)
    text = re.sub(r"\bshadows and highlights\b", "shadows and recover highlights", text)
    parts = re.split(r"(?<!\d)[.;!?](?!\d)\s*|\s*\bthen\b\s*|\s*\b(?:after that|afterwards|"
                     r"and also|as well as|also|plus|finally)\b\s*|,\s*|\s+\band\b\s+|\s+&\s+",
                     text)
    return [p.strip() for p in parts if p and p.strip()]


def guard(instruction: Any) -> str | None:
    """A plain-words refusal for input that is not an edit request, else None."""
    if not isinstance(instruction, str):
        return "The instruction must be text."
    text = instruction.strip()
    if not text:
        return "Tell me what to change, e.g. 'make the sky bluer' or 'remove the red ball'."
    if len(text) > MAX_CHARS:
        return (f"That instruction is {len(text)} characters long; please keep it under "
                f"{MAX_CHARS} characters and describe the edits plainly.")
    if _INJECTION.search(text):
        return ("That reads like instructions to the assistant, not a picture edit; nothing "
                "was changed. Describe what to change in the image.")
    return None


def not_edit_message(text: str) -> str:
    """The reply when nothing in ``text`` is an edit: what the app can do instead."""
    if _QUESTION.match(text) or text.rstrip().endswith("?"):
        return ("That is not a visual edit, so nothing was changed. " + capabilities())
    return (f"I could not find an edit in '{text[:80]}'. " + capabilities())


def ask_message(pairs: list[tuple[Any, ...]]) -> tuple[str, list[dict[str, str]]]:
    """The question and the buttons for the first close pair of intents."""
    first = pairs[0]
    labels = " or ".join(f"'{i.label.lower()}'" for i in first)
    return (f"Did you mean {labels}? Pick one, or say it another way.",
            [{"label": i.label, "instruction": i.instruction} for i in first])


def _merge_repeats(steps: list[_Step]) -> list[_Step]:
    """One step for the same change said twice ("washed out, needs more contrast")."""
    out: list[_Step] = []
    for step in steps:
        same = [s for s in out if s.kind == step.kind == "adjust" and s.operation ==
                step.operation and s.target == step.target and s.params.keys() ==
                step.params.keys() and all(
                    isinstance(v, (int, float)) and isinstance(step.params[k], (int, float))
                    and v * step.params[k] > 0 or v == step.params[k]
                    for k, v in s.params.items())]
        if not same:
            out.append(step)
    return out


class RulePlanner:
    """The embedded planner: rules over the operation catalogue, no model."""

    name = "rules"

    def plan(self, instruction: str, *, memory: MemoryLike | None = None,
             has_mask: bool = False, image_size: tuple[int, int] | None = None) -> Plan:
        """Decompose ``instruction`` into atomic Actions.

        Args:
            instruction: the user's words.
            memory: session memory for pronouns, "the same colour" and "before the … change".
            has_mask: the user sent a brush mask with this turn.
            image_size: (width, height), unused by the rules (kept for the protocol).

        Returns:
            A ``Plan``; ``is_edit`` False with a plain message when nothing can be done.
        """
        refusal = guard(instruction)
        if refusal:
            return Plan([], False, refusal)
        text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", instruction).strip()
        text = normalise(text).text or text
        quotes: list[str] = []

        def _hold(match: re.Match[str]) -> str:
            quotes.append(match.group(1))
            return f" \x00{len(quotes) - 1}\x00 "

        low = _QUOTE.sub(_hold, text)
        low = re.sub(r"\s+", " ", low.lower()).strip()
        low = re.sub(r"\b(it|that|this|what|there)'s\b", r"\1 is", low)
        low = re.sub(r"\s*,?\s*(?:but )?not (?:too much|too strong(?:ly)?|overdone|too far)\b",
                     " slightly", low)
        low = re.sub(r"\bbut\b", ",", low)
        ctx = _Context(memory, has_mask)
        steps = _merge_repeats(self._read_all(_split(low), ctx, quotes))
        if ctx.problems:
            return Plan([], False, " ".join(dict.fromkeys(ctx.problems)))
        if not steps and ctx.asks:
            question, choices = ask_message(ctx.asks)
            return Plan([], False, question, choices)
        if not steps:
            return Plan([], False, not_edit_message(instruction.strip()))
        try:
            actions = _to_actions(steps, ctx)
        except _Unresolved as err:
            return Plan([], False, str(err))
        return Plan(actions, True, "; ".join(a.describe() for a in actions))

    def _read_all(self, clauses: list[str], ctx: _Context, quotes: list[str]) -> list[_Step]:
        steps: list[_Step] = []
        pending: list[tuple[str, str]] = []  # (target, clause) waiting for an operation
        verb = ""
        for clause in clauses:
            if _is_constraint(clause):
                continue
            found = _read_clause(clause, ctx, quotes)
            head = re.match(rf"^(?:{_VERBS})\b(?:\s+(?:rid of|out|away|up))?", clause)
            if not found and not head and verb:
                found = _read_clause(f"{verb} {clause}", ctx, quotes)
            if head:
                verb = head.group(0)
            if not found:
                leftover = _clean(re.sub(rf"^(?:{_VERBS})\b", "", clause))
                if leftover and head and clause not in ctx.asked:
                    pending.append((leftover, clause))
                continue
            if pending and len(found) == 1 and found[0].operation not in ("", "generate"):
                for target, _ in pending:
                    steps.append(_Step(found[0].kind, found[0].operation,
                                       dict(found[0].params), target=target, clause=clause))
                pending = []
            if steps and found[0].kind == "adjust" and found[0].target and \
                    _bare_verb(steps[-1]):  # "brighten and sharpen the face"
                steps[-1].target = found[0].target
            steps.extend(found)
        for _, clause in pending:  # nothing classical fits these
            step = _generative_leftover(clause)
            if step is not None:
                steps.append(step)
        return steps


class _Unresolved(ValueError):
    """A reference the planner cannot resolve; the message tells the user what to say."""


def _resolve_target(step: _Step, ctx: _Context) -> tuple[str, Region]:
    """The target words and region of a step, with pronouns and mask words resolved."""
    raw = step.target.strip()
    spec = get_operation(step.operation) if step.operation else None
    if _is_pronoun(raw):
        target = ctx.last_target or ctx.memory_target() or ""
        if target:
            return target, Region(type=RegionType.phrase, phrase=target)
        if ctx.has_mask:
            return "", Region(type=RegionType.mask)
        if spec is not None and spec.needs_target:
            raise _Unresolved(f"I don't know what '{raw}' refers to yet; name the object "
                              "(e.g. 'the car') or mark it with the brush.")
        return "", Region(type=RegionType.image)
    target, is_mask = _region_for(raw, ctx)
    if is_mask:
        return "", Region(type=RegionType.mask)
    if target in _WHOLE:
        if step.kind == "remove":
            raise _Unresolved("Removing the whole image is not an edit; name what to remove "
                              "(e.g. 'remove the cup') or paint it with the brush.")
        return "", Region(type=RegionType.image)
    return target, Region(type=RegionType.phrase, phrase=target[:200])


def _location(step: _Step, ctx: _Context) -> Region:
    """Where an added thing goes: its location phrase, the brush mask, or the frame."""
    phrase = step.region_phrase.strip()
    if phrase:
        if _is_pronoun(phrase) and (ctx.last_target or ctx.memory_target()):
            phrase = ctx.last_target or ctx.memory_target() or phrase
        where, is_mask = _region_for(phrase, ctx)
        if is_mask:
            return Region(type=RegionType.mask)
        if where and where not in _WHOLE:
            return Region(type=RegionType.phrase, phrase=where[:200])
    return Region(type=RegionType.mask) if ctx.has_mask else Region(type=RegionType.image)


def _to_actions(steps: list[_Step], ctx: _Context) -> list[Action]:
    """Resolve targets, order dependencies first, validate into Actions."""
    items: list[dict[str, Any]] = []
    for step in steps:
        if step.kind == "undo":
            item: dict[str, Any] = {"kind": "undo", "steps": step.steps,
                                    "instruction": step.clause[:1000]}
            if step.node:
                item["target"] = step.node
            items.append(item)
            continue
        if step.operation in ("text",) or (step.operation == "generate" and step.kind == "add"):
            target = _clean(step.target) if step.target else ""
            region = _location(step, ctx)
        else:
            target, region = _resolve_target(step, ctx)
        params = dict(step.params)
        if step.operation == "generate" and not params.get("prompt"):
            params["prompt"] = step.clause
        items.append({"kind": step.kind, "operation": step.operation, "target": target,
                      "region": region.model_dump(mode="json", exclude_none=True),
                      "params": params, "instruction": step.clause[:1000]})
        if target and step.kind != "remove":   # "it" never binds to a removed object
            ctx.last_target = target
    items = _order(items)
    try:
        return parse_actions(items)
    except ActionValidationError as err:
        raise _Unresolved(f"I could not turn that into a valid edit ({err}).") from None


def _head_noun(target: str) -> str:
    words = re.findall(r"[a-z]+", target.lower())
    return words[-1] if words else ""


def _order(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Creators before users: an edit of something a later action adds moves after it;
    ids a1…; ``depends_on`` names earlier actions on the same target."""
    ordered = list(items)
    for item in list(ordered):
        if item["kind"] != "add" or not item.get("target"):
            continue
        noun = _head_noun(item["target"])
        idx = ordered.index(item)
        users = [j for j, other in enumerate(ordered[:idx])
                 if other.get("target") and _head_noun(other["target"]) == noun]
        if users:
            ordered.remove(item)
            ordered.insert(users[0], item)
    for n, item in enumerate(ordered, start=1):
        item["id"] = f"a{n}"
        nouns = set()
        if item["kind"] != "undo":
            nouns = {_head_noun(item.get("target", "")),
                     _head_noun((item.get("region") or {}).get("phrase") or "")} - {""}
        item["depends_on"] = [prev["id"] for prev in ordered[:n - 1]
                              if prev["kind"] != "undo"
                              and _head_noun(prev.get("target", "")) in nouns][-1:]
    return ordered


# --- the LLM planner --------------------------------------------------------------------
