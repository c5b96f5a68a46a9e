"""The planner's vocabulary: colour words, verbs, fillers, pronouns and mask words, and the
helpers that clean a clause down to its target words.

What asks for an operation lives on the operation (``pipelines.operations``); the shared
intensities and negations in ``pipelines.operations.lexicon``.
"""

from __future__ import annotations

import re

from pipelines.operations import get
from pipelines.operations.colours import NAMED_COLORS
from pipelines.operations.lexicon import SLIGHT, STRONG, strip_degrees
from pipelines.operations.wordnet import lexicon

EXTRA_COLORS = {
    "dark blue": "navy", "light blue": "#8cc8f0", "sky blue": "#87ceeb",
    "dark green": "#1e5a28", "light green": "lime", "dark red": "maroon",
    "light grey": "silver", "light gray": "silver", "dark grey": "#404040",
    "dark gray": "#404040", "golden": "gold", "crimson": "#c0182c", "scarlet": "#e0301e",
    "indigo": "#4b0082", "lavender": "#b4a0e6", "cream": "#f5ecd0", "tan": "#d2b48c",
    "emerald": "#1e9a5a", "khaki": "#c3b091", "coral": "#ff7f50", "peach": "#ffcba4",
}
COLOR_WORDS = sorted(list(EXTRA_COLORS) + list(NAMED_COLORS), key=len, reverse=True)
COLOR_RE = r"(?:#[0-9a-f]{6}\b|#[0-9a-f]{3}\b|" + "|".join(
    re.escape(c) for c in COLOR_WORDS) + r")"
COMPARATIVE = {"whiter": "white", "greyer": "gray", "grayer": "gray",
                "redder": "red", "bluer": "blue", "greener": "green", "yellower": "yellow",
                "pinker": "pink", "oranger": "orange", "browner": "brown"}


VERBS = (r"make|turn|change|set|give|apply|add|increase|decrease|reduce|lower|raise|boost|"
          r"bump|push|pull|drop|put|paint|colou?r|recolou?r|dye|brighten|darken|lighten|dim|"
          r"sharpen|blur|soften|denoise|remove|erase|delete|replace|swap|fix|correct|adjust|"
          r"enhance|improve|lift|deepen|recover|tone|crank|warm|cool|saturate|desaturate|"
          r"straighten|level|rotate|write|insert|place|draw|convert|transform|let|can you|"
          r"please|could you|i want|i'd like")
FILLER = (r"\b(?:please|can you|could you|would you|i want|i'd like|i would like|let's|"
           r"let us|go ahead and|kindly|try to|a bit of|some|more|less|up|down|the amount of|"
           r"is|are|looks?|seems?|feels?|appears?|too dark|too bright|"
           r"the level of|overall|too|so that it is|so it is|so it's|to be|be|just|"
           r"needs?|could use)\b")
WHOLE = {"", "image", "photo", "picture", "pic", "everything", "texture", "textures",
          "detail", "details", "tone", "exposure", "whole image", "whole photo",
          "whole picture", "entire image", "entire photo", "whole thing", "scene", "frame",
          "all", "whole scene", "it all", "shot", "whole frame", "full image", "colours",
          "colors", "colour", "color", "tones", "lighting", "light", "look", "overall look",
          "things", "full photo", "full picture", "entire picture", "whole pic", "cast",
          "color cast", "colour cast", "one", "whole one"}
#: the colour a region has by nature: "bluer" said of it asks for more of its own colour
NATURAL_COLOURS = {**dict.fromkeys(("sky", "skies", "sea", "ocean", "water", "lake", "river",
                                    "pool", "bay"), "blue"),
                   **dict.fromkeys(("grass", "lawn", "leaves", "leaf", "foliage", "tree",
                                    "trees", "forest", "field", "fields", "hedge", "moss",
                                    "meadow", "greenery"), "green")}


def natural_colour(target: str) -> str:
    """"blue" for "the sky", "green" for "the grass"; "" for things of any colour."""
    words = re.findall(r"[a-z]+", target.lower())
    return NATURAL_COLOURS.get(words[-1], "") if words else ""


#: "this"/"that" said of the whole request: the selection when there is one, else the photo
DEICTIC = {"this", "that", "this one", "that one", "it"}
PRONOUNS = {"it", "them", "that", "that one", "those", "these", "the same one",
             "same one", "the same thing", "him", "her", "they"}
MASK_WORDS = {"here", "this", "this area", "this part", "this region", "this spot",
               "the marked area", "marked area", "the selection", "selection",
               "the selected area", "selected area", "the masked area", "masked area",
               "the marked region", "marked region", "the brushed area", "brushed area",
               "the painted area", "the highlighted area", "this bit", "there",
               "the mask", "mask", "what i marked", "what i selected", "the marked part"}

INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier)|disregard (?:all |the )?"
    r"(?:previous|prior|above)|system prompt|you are now|developer mode|jailbreak|"
    r"<\s*/?\s*(?:script|system|im_start)|\brm -rf\b|\bimport os\b|\beval\(|\bexec\(|"
    r"__import__|api[_ ]key|password|reveal your|print your (?:instructions|prompt)",
    re.IGNORECASE)
QUESTION = re.compile(r"^\s*(?:what|who|whom|why|how|when|where|which|is|are|was|were|do|"
                       r"does|did|will|tell me|explain)\b", re.IGNORECASE)


def clamp(value: float, op: str, param: str) -> float:
    """``value`` inside operation ``op``'s bounds for ``param``."""
    return get(op).clamp(param, value)


def bare_number(text: str, op: str) -> float | None:
    """'set brightness to +30', 'saturation -20', 'hue +45': a unitless number; for
    -1..1 amounts, values beyond 1 are read as percent."""
    match = re.search(r"(?:^|\s)(?:to|by|of|at)?\s*([+-]?\d+(?:\.\d+)?)(?=\s*$|\s*[,;])", text)
    if not match:
        return None
    return get(op).bare_value(float(match.group(1)))


def strip_numbers(text: str) -> str:
    return re.sub(r"\b(?:by|to|of|at)?\s*[+-]?\d+(?:\.\d+)?\s*(?:%|percent|per cent|stops?|"
                  r"ev|degrees?|deg|°|px|pixels?)?", " ", text)


def clean(text: str) -> str:
    """Normalise a target phrase: drop fillers, prepositions, articles and 'of the image'."""
    text = re.sub(FILLER, " ", text)
    text = re.sub(r"\s+", " ", text).strip(" ,.!?;:'\"")
    text = re.sub(r"\s+(?:of|in|on|across|throughout)\s+(?:the\s+)?(?:whole\s+|entire\s+)?"
                  r"(?:image|photo|picture|pic|scene|frame)$", "", text)
    # "this photo", "that whole picture": the photo itself (deixis, issue 34)
    text = re.sub(r"^(?:this|that)\s+(?=(?:whole\s+|entire\s+|full\s+)?(?:image|photo|"
                  r"picture|shot|frame|scene|thing|one)$)", "", text)
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"^(?:of|in|on|to|for|at|across|within|inside|around|with|from|the|a|"
                      r"an|my|our|its)\s+", "", text).strip()
        text = re.sub(r"\s+(?:a|an|the|to|with|by|of|in|on)$", "", text).strip()
        text = re.sub(r"^(?:a|an|the|to|with|by|of|in|on|for|at|into)$", "", text)
    return text


def leftover(clause: str, *patterns: str) -> str:
    """The clause minus the verbs, degree words, numbers and the given keyword patterns."""
    text = strip_degrees(clause)
    text = strip_numbers(text)
    for pattern in patterns:
        text = re.sub(pattern, " ", text)
    text = re.sub(rf"^\s*(?:{VERBS})\b", " ", text.strip())
    text = re.sub(rf"^\s*(?:{VERBS})\b", " ", text.strip())
    return clean(strip_verb_slot(clause, text))


#: words after a clause's first word that show it is a verb ("pump up", "flatten the")
_AFTER_VERB = (r"up|down|out|off|back|in|over|away|the|a|an|it|this|that|my|its|all|some|"
               r"these|those|things|everything|on")


def strip_verb_slot(clause: str, target: str) -> str:
    """``target`` without the clause's verb: a word in the verb (or particle) slot is never
    an object (issue 34). The clause's first word is in the verb slot when WordNet says it
    is a verb and either it is no noun or a particle, article or pronoun follows it
    ("flatten the contrast", "pump up the contrast"; but "sky darker" keeps the sky and
    "remove the pump" keeps the pump). Without the lexicon, ``target`` is returned as is."""
    lex = lexicon()
    first = re.match(r"\s*([a-z]+)(?:\s+([a-z]+))?", clause)
    words = target.split()
    if lex is None or not first or not words or words[0] != first.group(1):
        return target
    verb, after = first.group(1), first.group(2) or ""
    if not lex.is_verb(verb) or (lex.is_noun(verb) and not re.fullmatch(_AFTER_VERB, after)):
        return target
    rest = words[1:]
    if rest and re.fullmatch(r"up|down|out|off|back|in|over|away", rest[0]):
        rest = rest[1:]
    return " ".join(rest)


#: tone and temperature adjectives that, right after a definite determiner and before a
#: noun, describe the thing ("the dark sky", "the cool lake"), not the change asked for
DESCRIBING = r"dark|bright|dim|pale|warm|cool|cold|icy|chilly|hot|sunny|gloomy"
_DEFINITE = r"the|this|that|these|those|my|our|your|his|her|their"
#: what may follow a describing adjective without a noun there ("the sky dark and moody",
#: "the dark brighter")
_NOT_NOUN = (r"and|or|but|a|an|the|to|of|in|on|at|by|for|with|enough|too|so|very|bit|"
             r"little|brighter|darker|lighter|warmer|cooler|colder|dimmer|paler")


#: focus and grain adjectives that, in the same place, describe the thing ("the blurred
#: dandelion", "the noisy sky"): a filter's word there names which thing, not the edit
FOCUS_DESCRIBING = r"blurr?ed|blurry|out[- ]of[- ]focus|unsharp|sharp|noisy|grainy"


def describing_blanked(clause: str, *, focus: bool = False) -> str:
    """``clause`` with the describing adjectives (``DESCRIBING``, or with ``focus``
    ``FOCUS_DESCRIBING``) blanked where they stand between a definite determiner and the
    next word: "make the dark sky brighter" → "make the sky brighter" for reading the
    change (the sky is still "the dark sky" to the localiser). "Make the sky dark" and
    "give it a warm look" keep theirs."""
    words = FOCUS_DESCRIBING if focus else DESCRIBING
    return re.sub(rf"\b((?:{_DEFINITE})\s+)(?:{words})\s+(?!(?:{_NOT_NOUN})\b)(?=[a-z])",
                  r"\1", clause)


def complains(clause: str, keyword: str) -> bool:
    """Whether ``clause`` complains about the photo with ``keyword`` ("too dark", "the photo
    is dark", "it looks dim"): it asks for the opposite. "Make the sky look dark" asks for
    it."""
    if re.search(rf"\btoo\s+(?:much\s+)?{re.escape(keyword)}", clause):
        return True
    said = re.search(rf"\b(?:is|are|looks?|seems?|feels?)\s+(?:(?:{SLIGHT}|{STRONG}|quite|"
                     rf"pretty|rather|kinda|very|really|so|way)\s+)*{re.escape(keyword)}\b",
                     clause)
    # "make it look dark", "lift it so it looks brighter", "until it is warm": the wish
    return bool(said) and not re.search(r"\b(?:make|makes|making|turn|get|keep|let|so|until|"
                                        r"till|want|wish|should|could|would|to)\b",
                                        clause[:said.start()])
