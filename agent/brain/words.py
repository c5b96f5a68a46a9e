"""The planner's vocabulary: colour words, verbs, fillers, pronouns and mask words, and the
helpers that clean a clause down to its target words.

What asks for an operation lives on the operation (``pipelines.operations``); the shared
intensities and negations in ``pipelines.operations.lexicon``.
"""

from __future__ import annotations

import re

from pipelines.operations import get
from pipelines.operations.colours import NAMED_COLORS
from pipelines.operations.lexicon import strip_degrees

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
           r"the level of|overall|too|so that it is|so it is|so it's|to be|be)\b")
WHOLE = {"", "image", "photo", "picture", "pic", "everything", "texture", "textures",
          "detail", "details", "tone", "exposure", "whole image", "whole photo",
          "whole picture", "entire image", "entire photo", "whole thing", "scene", "frame",
          "all", "whole scene", "it all", "shot", "whole frame", "full image", "colours",
          "colors", "colour", "color", "tones", "lighting", "light", "look", "overall look"}
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
    return clean(text)
