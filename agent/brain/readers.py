"""The rule planner's clause readers: one clause of an instruction → steps.

Each reader tries one grammar (undo, text, frame edits, removal, replacement, looks,
filters, recolouring, signed adjustments, the intent library, additions). The words that
ask for an operation, its direction and its default size come from the operation itself
(``pipelines.operations``: ``words``/``pattern``, ``positive``/``negative``, ``base``,
``main``); the grammar names only roles and flags."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.brain.framing import Reading, read_frame, read_transform
from agent.brain.intents import default_matcher
from agent.brain.shades import REGION_DRAMA, RELATIVE_SHADE, drama, shade
from agent.brain.words import (
    COLOR_RE,
    COMPARATIVE,
    DEICTIC,
    EXTRA_COLORS,
    MASK_WORDS,
    PRONOUNS,
    VERBS,
    WHOLE,
    bare_number,
    clamp,
    clean,
    complains,
    describing_blanked,
    leftover,
    natural_colour,
)
from pipelines.operations import by_grammar, for_role, with_flag, word_owner
from pipelines.operations import get as get_operation
from pipelines.operations.lexicon import (
    COMPLAINT,
    EXTREME,
    INCREASE,
    NEGATIONS,
    SLIGHT,
    STRONG,
    degree,
    strip_degrees,
)

log = logging.getLogger(__name__)


class MemoryLike(Protocol):
    """What the planner reads from the session memory (``agent.session.memory.Memory``)."""

    def last_target(self) -> str | None: ...

    def last_value(self, param: str) -> Any | None: ...

    def find_node(self, query: str) -> str | None: ...

    def render(self, budget_chars: int) -> str: ...


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


#: The operations read as a signed amount ("brighter", "less contrast") and as a filter
#: applied ("sepia", "sharpen"), in reading order; the first whose words match wins.
_ADJUSTERS = by_grammar("adjuster")
_FILTERS = by_grammar("filter")
#: words that turn an adjustment down: the shared ones and every adjuster's own
_NEGATIVE = "|".join([NEGATIONS, *(op.negative for op in _ADJUSTERS if op.negative)])
#: negative words that name a hue or a temperature: they reverse only their own
#: operation ("make the green hills brighter" is not darker)
_HUED = frozenset({"green", "cool", "cooler", "cold", "colder", "icier"})


#: per adjuster, the words that reverse it: every operation's, less the hue words of others
_NEGATIVES = {op.name: "|".join(w for w in _NEGATIVE.split("|") if w not in _HUED or
                                w in str(op.negative or "").split("|"))
              for op in _ADJUSTERS}
#: Filters that mean the whole frame when the target is a pronoun.
_FRAME_FILTERS = with_flag("frame_filter")
#: the operations the grammar itself asks for, by role
_LOOK = for_role("named_look")
_GENERATE = for_role("new_content").name
_REMOVE = for_role("remove").name
_RECOLOUR = for_role("recolour").name
_WRITE = for_role("write").name
_DECOLOUR = for_role("decolour").name
_MOVE = for_role("move").name
#: words that carry an operation: never the name of an object to move ("push the exposure up")
_OPERATION_WORDS = frozenset(word_owner())
#: looks that need new content ("night", "winter"): a generative edit
_GENERATIVE_LOOKS = for_role("new_content").look_pattern


def _region_for(target: str, ctx: _Context) -> tuple[str, bool]:
    """(clean target, is_mask) for the words naming a target. A bare "this"/"that" is the
    selection when the user sent one, else the whole photo ("brighten this")."""
    cleaned = clean(target)
    if cleaned in DEICTIC or target.strip() in DEICTIC:
        return "", ctx.has_mask
    if cleaned in MASK_WORDS or target.strip() in MASK_WORDS:
        return "", True
    if not cleaned and ctx.has_mask:
        return "", True
    return cleaned, False


def _is_pronoun(text: str) -> bool:
    return clean(text) in PRONOUNS or text.strip() in PRONOUNS


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
    color = re.search(rf"\b(?:in|colou?red)\s+({COLOR_RE})\b", rest)
    if color:
        params["color"] = _color_value(color.group(1))
        rest = rest[:color.start()] + rest[color.end():]
    where = re.search(r"\b(?:at|on|in|across|along|to|near|over|under|above|below)\b\s+(.+)$",
                      rest)
    return _Step("add", _WRITE, params, target="", region_phrase=clean(where.group(1)) if where
                 else "", clause=clause)


def _color_value(word: str) -> str:
    word = word.strip().lower()
    return EXTRA_COLORS.get(word, word)


def _read_remove(clause: str) -> _Step | None:
    match = re.match(r"^(?:remove|erase|delete|get rid of|take out|take away|take off|eliminate|"
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
    if re.search(r"^(?:all )?(?:the )?(?:colou?rs?|saturation)\b", what):
        return _Step("adjust", _DECOLOUR, {"amount": 1.0}, target=clean(
            re.sub(r"^(?:all )?(?:the )?(?:colou?rs?|saturation)\s*(?:from|of|in)?", "", what)),
            clause=clause)
    if re.search(r"^(?:the )?blur\b", what):
        return None  # handled as sharpen
    return _Step("remove", _REMOVE, {}, target=what, clause=clause)


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
        y_colour = re.fullmatch(rf"(?:a\s+|the\s+)?(?:colou?r\s+)?({COLOR_RE})"
                                rf"(?:\s+colou?r|\s+one)?", y.strip())
        if y_colour:
            target = colour_of.group(1) if colour_of else re.sub(r"(?:'s)?\s+colou?r$", "", x)
            if re.fullmatch(r"(?:the\s+)?(?:colou?rs?|shade)", target.strip()):
                return None
            return _Step("replace", _RECOLOUR, {"color": _color_value(y_colour.group(1))},
                         target=target, clause=clause)
        if re.search(r"\blook\b|\bstyle\b", x) or re.fullmatch(r"(?:it|this|the (?:image|photo|"
                                                              r"picture|scene))", x.strip()):
            return None  # a look, handled later
        if re.search(rf"\b(?:{VERBS})\b", x) and x.split()[0] in ("make", "the"):
            return None
        return _Step("replace", _GENERATE, {"prompt": clean(y) or y.strip()}, target=x,
                     clause=clause)
    return None


def _yields(keyword: str, clause: str) -> bool:
    """Whether a filter's ``keyword`` is a direction word said of an adjustment the clause
    names ("soften the contrast", "crisper tones"): the adjuster reads the clause."""
    def names(op: Any) -> bool:
        found = re.search(op.keyword_pattern(), clause)
        return bool(found) and found.group(0) != keyword

    return any(re.fullmatch(rf"(?:{NEGATIONS}|{INCREASE}|{op.positive}|{op.negative})",
                            keyword) and names(op)
               for op in _ADJUSTERS if not op.light_level and (op.positive or op.negative))


def _read_filter(clause: str) -> _Step | None:
    said = describing_blanked(clause, focus=True)   # "the blurred one brighter": which one
    for op in _FILTERS:
        match = re.search(pattern := op.keyword_pattern(), said)
        if not match or _yields(match.group(0), clause):
            continue
        if op.complaint and re.search(rf"{COMPLAINT}(?:{op.complaint})\b", clause):
            # "it is blurry": a complaint about the photo asks for the remedy
            remedy = get_operation(op.remedy)
            target = leftover(clause, pattern, COMPLAINT, r"\b(?:the|it|this|a|an|image|"
                                                          r"photo|picture)\b")
            value = remedy.filter_value(clause, degree(clause))
            return _Step("adjust", remedy.name,
                         {remedy.main_param: clamp(value, remedy.name, remedy.main_param)},
                         target=target, clause=clause)
        name = op.main_param
        params: dict[str, Any] = {name: clamp(op.filter_value(clause, degree(clause)),
                                              op.name, name)}
        params.update(op.clause_params(clause))
        own = [op.filler] if op.filler else []
        target = leftover(clause, pattern, *own, r"\b(?:apply|add|fix|correct|give|use|"
                                           r"the|effect|filter|look|style|a|an|image is|"
                                           r"levels|remove|reduce|get rid of|out|more)\b")
        if op.name in _FRAME_FILTERS and _is_pronoun(target):
            target = ""  # "make it black and white": the photo, not the last object
        return _Step("adjust", op.name, params, target=target, clause=clause)
    return None


def _read_adjuster(said: str) -> _Step | None:
    clause = describing_blanked(said)   # "the dark sky brighter": "dark" says which sky
    if clause != said and not any(re.search(op.keyword_pattern(), clause) for op in _ADJUSTERS):
        clause = said
    for op in _ADJUSTERS:
        pattern, positive = op.keyword_pattern(), op.positive
        match = re.search(pattern, clause)
        if not match:
            continue
        if op.can_be_target and any(
                re.search(other.keyword_pattern(), clause.replace(match.group(0), " "))
                for other in _ADJUSTERS if not other.light_level):
            continue  # "make the shadows warmer": the shadows are the target
        keyword = match.group(0)
        negatives = _NEGATIVES[op.name]
        negative = bool(re.search(rf"\b(?:{negatives})", clause.replace(keyword, " ")) or
                        re.search(rf"^(?:{negatives})", keyword))
        negative = op.reads_negative(clause, keyword, negative)
        if complains(clause, keyword):     # "too dark", "it is dim": the opposite
            negative = not negative
        explicit = op.explicit_value(clause)
        if explicit is None:
            explicit = bare_number(clause, op.name)
        name = op.main_param
        value = op.planned_value(degree(clause), negative, explicit)
        params = {name: clamp(value, op.name, name)}
        target = leftover(clause, pattern, rf"\b(?:{positive}|{negatives})\b",
                          r"\b(?:the|a|an|add|give|make|fix|correct|increase|colou?rs?|look|"
                          r"tones?|areas?|parts?)\b(?=.*\b(?:of|in|on|to)\b)|\blevels?\b")
        return _Step("adjust", op.name, params, target=target, clause=clause)
    return None


def _read_recolor(clause: str, ctx: _Context) -> _Step | list[_Step] | None:
    same = re.search(r"\b(?:the\s+)?same\s+(?:colou?r|shade)(?:\s+as\s+(?:before|that|it|the "
                     r"last one))?\b", clause)
    if same:
        color = ctx.memory_value("color")
        target = leftover(clause, re.escape(same.group(0)), r"\b(?:for|on|to|too|also|use|"
                                                             r"with|do|apply)\b")
        if color is None:
            ctx.problems.append("I don't know which colour 'the same colour' means yet; "
                                "name the colour")
            return _Step("replace", _RECOLOUR, {}, target=target, clause=clause)
        return _Step("replace", _RECOLOUR, {"color": str(color)}, target=target, clause=clause)
    comp = re.match(r"^(?:make|turn)\s+(?P<t>.+?)\s+(?:a\s+bit\s+|slightly\s+|much\s+)?"
                    r"(?:(?P<w>redder|bluer|greener|yellower|pinker|browner|whiter|greyer|"
                    r"grayer)|more\s+"
                    rf"(?P<c>{COLOR_RE}))$", clause) or \
        re.match(r"^(?:a\s+bit\s+|slightly\s+|much\s+)?(?P<w>redder|bluer|greener|yellower)"
                 r"\s+(?P<t>[a-z ]+)$", clause)
    if comp:
        color = COMPARATIVE.get(comp.group("w") or "", comp.groupdict().get("c") or "")
        target = strip_degrees(comp.group("t"))
        if natural_colour(re.sub(r"\s+(?:except|other than|excluding)\b.*$", "", target)) \
                == color:  # "bluer sky" (or "the sky except the clouds"): its own blue
            return _relative(clause, target, "richer", color)
        strength = clamp(0.4 * degree(clause), _RECOLOUR, "strength")
        return _Step("adjust", _RECOLOUR, {"color": _color_value(color), "strength": strength},
                     target=target, clause=clause)
    relative = re.match(rf"^(?:(?:make|turn|give)\s+(?P<t>.+?)\s+(?:a\s+|an\s+)?)?"
                        rf"(?:a\s+)?(?:{SLIGHT}\s+)?(?P<r>{RELATIVE_SHADE})\s+(?:shade of\s+)?"
                        rf"(?P<c>{COLOR_RE})(?:\s+(?P<t2>[a-z ]+))?$", clause)
    if relative and (relative.group("t") or relative.group("t2")):
        return _relative(clause, relative.group("t") or relative.group("t2"),
                         relative.group("r"), relative.group("c"))
    match = re.match(rf"^(?:make|paint|colou?r|recolou?r|turn|change|dye|set|tint|do)\s+"
                     rf"(?P<t>.+?)(?<!\bless)\s+(?:to\s+|into\s+|in\s+)?(?:be\s+)?(?:a\s+|an\s+)?"
                     rf"(?:(?:bright|deep|pale|pastel|soft|nice|warm|cool|strong)\s+)?"
                     rf"(?P<c>{COLOR_RE})(?:\s+colou?r(?:ed)?|\s+instead|\s+too|\s+also)?$",
                     clause)
    if match:
        target = re.sub(r"(?:'s)?\s+colou?r$", "", match.group("t"))
        colour = match.group("c")
        if not clean(target) and " " in colour:     # "make the sky blue": not "sky blue"
            named, colour = colour.rsplit(" ", 1)
            target = f"{target} {named}"
        return _Step("replace", _RECOLOUR, {"color": _color_value(colour)},
                     target=target, clause=clause)
    return None


def _relative(clause: str, target: str, word: str, colour: str = "") -> list[_Step]:
    """A relative colour word on a region ("a deeper blue", "bluer sky"): its saturation and
    brightness, and a cast when it asks for more of the region's own colour (``shades``)."""
    target = clean(strip_degrees(target))
    return [_Step("adjust", name, params, target=target, clause=clause)
            for name, params in shade(word, degree(clause), colour, target)]


def _read_look(clause: str) -> list[_Step] | None:
    """A named look (one ``look`` action), "enhance" (auto levels + vibrance), or a look
    that needs new content (``generate``)."""
    for pattern, style in _LOOK.styles:
        match = re.search(pattern, clause)
        if not match:
            continue
        if style.endswith("_"):
            style += next(g for g in match.groups() if g)
        if style == _LOOK.content_style and re.search(r"\b(?:replace|add|put|with)\b", clause):
            continue  # "replace the sky with a sunset": new content
        factor = degree(clause)
        target = leftover(clause, pattern, r"\b(?:look|feel|mood|style|vibe|like|more|"
                                            r"a|an|the|give|apply|effect|atmosphere|grade|"
                                            r"colou?rs?|tones?|finish|filter|with|and|"
                                            r"black|white|grayscale|through)\b")
        for other, _ in _LOOK.styles:
            target = clean(re.sub(other, " ", target))
        target = clean(re.sub(_LOOK.look_words, " ", target))
        if _is_pronoun(target):
            target = ""  # a look is for the frame: "make it look vintage"
        if target and target not in WHOLE and style in REGION_DRAMA:   # "a dramatic sky"
            return [_Step("adjust", name, params, target=target, clause=clause)
                    for name, params in drama(factor)]
        strength = clamp(min(1.0, factor), _LOOK.name, "strength")
        return [_Step("adjust", _LOOK.name, {"style": style, "strength": strength},
                      target=target, clause=clause)]
    if re.search(_LOOK.enhance, clause):
        return [_Step("adjust", op, dict(params), clause=clause)
                for op, params in _LOOK.enhance_steps]
    if re.search(_GENERATIVE_LOOKS, clause) or re.search(r"\blook like\b", clause):
        return [_Step("adjust", _GENERATE, {"prompt": clause}, clause=clause)]
    return None


def _read_framing(clause: str) -> _Step | None:
    """Frame edits (crop, rotate, flip, straighten, resize) and object moves/resizes."""
    factor = degree(clause)
    found: Reading | None = read_frame(clause, factor) or read_transform(clause, factor)
    if found is None:
        return None
    params = {k: clamp(v, found.operation, k) if isinstance(v, float) else v
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
    factor = degree(clause)
    params = {}
    for name, value in intent.params.items():
        if name == "strength":
            value = min(1.0, value * factor)
        elif name in intent.scalable:
            value = value * factor
        params[name] = clamp(value, intent.operation, name) if isinstance(value, float) \
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
    cleaned = clean(obj)
    if not cleaned:
        return None
    return _Step("add", _GENERATE, {"prompt": obj.strip()}, target=cleaned,
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
    if looks and looks[0].operation != _GENERATE:
        return looks
    new_content = bool(looks) and bool(re.search(_GENERATIVE_LOOKS, clause))
    for reader in (_read_filter, lambda c: _read_recolor(c, ctx), _read_adjuster,
                   lambda c: None if new_content else _read_intent(c, ctx)):
        step = reader(clause)
        if isinstance(step, list):      # a relative colour word: several adjustments
            return step
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
        step.operation not in (_GENERATE, "")


def _generative_leftover(clause: str) -> _Step | None:
    """'make the person smile': a change no classical operation names → ``generate``."""
    clause = clause.strip(" ,.!;:")
    if re.match(r"^(?:make|turn|change|transform|let)\s+\S+(?:\s+\S+){1,}", clause) and \
            not _is_constraint(clause):
        return _Step("adjust", _GENERATE, {"prompt": clause}, clause=clause)
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
                    rf"(?:so (?:that )?it(?: is|'s)\s+)?(?P<deg>(?:{SLIGHT}|{STRONG}|"
                    rf"{EXTREME})\s+)?(?P<w>{_BIGGER}|{_SMALLER})?$", clause)
    verb = re.match(r"^(enlarge|shrink|grow)\b", clause)
    if size and (size.group("w") or verb):
        word = size.group("w") or verb.group(1)
        grow = re.fullmatch(_BIGGER, word) is not None or word in ("enlarge", "grow")
        step = 0.3 * degree(clause)
        scale = 1.0 + step if grow else 1.0 / (1.0 + step)
        target = clean(size.group("t"))
        if target and target not in WHOLE and target not in _OPERATION_WORDS and \
                not re.fullmatch(r"(?:image |photo )?file", target):
            return _Step("adjust", _MOVE, {"scale": round(scale, 3)}, target=target,
                         clause=clause)
    move = re.match(rf"^(?:move|shift|push|nudge|slide)\s+(?P<t>.+?)\s+(?:(?:{SLIGHT}|"
                    rf"{STRONG}|{EXTREME})\s+)?(?:to the |towards the |)"
                    rf"(?P<d>left|right|up|down|higher|lower)\b", clause)
    if move:
        name, sign = _DIRECTIONS[move.group("d")]
        target = clean(strip_degrees(move.group("t")))
        if target and target not in WHOLE and target not in _OPERATION_WORDS:
            return _Step("adjust", _MOVE, {name: round(sign * 0.1 * degree(clause), 3)},
                         target=target, clause=clause)
    return None
