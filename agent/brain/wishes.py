"""A named thing's edit said as a wish or with a dial verb (wave 27).

"the sky would look better darker" was read by the intent library as "make it look
better" (auto levels and vibrance of the whole photo), "turn down the sky" / "dial the sky
down" as recovering the highlights of the whole photo: the thing was dropped, the whole
photo edited, and the turn said done (tune cases ``*_said_otherwise``). "the sky could be
darker" looked for 'sky could'. ``wishes`` says each as the plain command the rules read:

* "(I think) the X would / could / might look better / be nicer ADJ" → "make the X ADJ"
  (the photo or "it": "make it ADJ");
* "the X could / can / might be ADJ" → "make the X ADJ";
* "turn / dial / knock / pull down the X", "turn the X down" → "darken the X";
* "turn / dial up the X", "turn the X up" → "brighten the X".

The X must name a thing (``agent.brain.exclusions.is_thing``): "turn up the saturation"
and "turn down the contrast" are settings, left to the rules that read them.
"""

from __future__ import annotations

import re

from agent.brain.exclusions import is_colour, is_thing
from pipelines.operations.registry import with_flag
from pipelines.operations.wordnet import lexicon

_DET = r"(?:the|its|his|her|their|my|your|our|this|that|these|those)"
_NP = rf"{_DET} (?:[a-z'-]+ ){{0,4}}?[a-z'-]+"
#: what is wished of the thing: a comparative, with a measure before it
_ADJ = (r"(?:(?:a (?:bit|little|touch|tad|lot)|slightly|much|way|far|even) )?"
        r"(?:(?:more|less) [a-z]+|[a-z]+er)")
#: words a setting is named by, never a thing to find (with the tonal operations' own
#: names, from the registry: "the saturation could be higher")
_SETTINGS = frozenset({
    "warmth", "clarity", "sharpness", "noise", "grain", "blacks", "whites", "midtones",
    "colour", "color", "colours", "colors", "volume", "heat", "glare", "haze", "levels",
    "intensity", "light", "lights", "lighting"})

_WISH = re.compile(
    rf"^(?:i think |i feel like |i feel |maybe |perhaps )?(?P<x>{_NP}|it) (?:would|could|might|"
    rf"will) (?:look|be|seem|work) (?:(?:a lot |much |so |way )?(?:better|nicer|best|"
    rf"good|great) )?(?:if (?:it|they) (?:was|were|are|is) )?(?P<adj>{_ADJ})"
    rf"(?P<rest>(?:\s*(?:[,;.!?]|\band\b|\bplease\b).*)?)$")
_MODAL = re.compile(rf"^(?P<x>{_NP}) (?:could|can|might|may) (?:be|get|look) (?P<adj>{_ADJ})"
                    rf"(?P<rest>(?:\s*(?:[,;.!?]|\band\b|\bplease\b).*)?)$")
_DIAL_DOWN = re.compile(rf"\b(?:turn|dial|knock|pull) down (?P<x>{_NP})"
                        rf"|\b(?:turn|dial|knock|pull) (?P<y>{_NP}) down\b")
_WHOLE = re.compile(r"it|(?:the|this|my) (?:whole |entire )?(?:photo|image|picture|pic|shot)")
_DIAL_UP = re.compile(rf"\b(?:turn|dial) up (?P<x>{_NP})|\b(?:turn|dial) (?P<y>{_NP}) up\b")


#: the scene's parts a lexicon sense does not cover
_SCENE = frozenset({"sky", "skies", "clouds", "cloud", "background", "foreground",
                    "sunset", "horizon", "shadows", "shadow", "eyes"})


def _thing(phrase: str) -> bool:
    word = phrase.split()[-1]
    return is_thing(phrase) and word not in _SETTINGS and word not in with_flag("tonal")


def _object(phrase: str) -> bool:
    """A thing a dial verb can be said of: a physical thing (the lexicon's sense) or a
    part of the scene, not a colour's plural ("turn down the reds") nor a quality
    ("turn down the glow"): a setting-like word keeps the reading the rules give it."""
    if not _thing(phrase):
        return False
    word = phrase.split()[-1]
    if word in _SCENE:
        return True
    if word.endswith("s") and is_colour(word[:-1]):
        return False
    lex = lexicon()
    return lex is None or lex.sense(word) is not None


def _dial(verb: str) -> object:
    def repl(match: re.Match[str]) -> str:
        thing = match.group("x") or match.group("y")
        return f"{verb} {thing}" if _object(thing) else match.group(0)
    return repl


def wishes(text: str) -> str:
    """``text`` (lower case, after the front end's rewrites) with a wish or a dial verb
    said of a named thing as a plain command (the module doc); else as it is."""
    for pattern in (_WISH, _MODAL):
        said = pattern.match(text)
        if not said or said.group("adj").startswith(("better", "nicer", "over", "under",
                                                     "after", "never", "ever")):
            continue
        thing = said.group("x")
        if not _thing(thing) and pattern is _WISH and _WHOLE.fullmatch(thing):
            thing = "it"      # "the photo would look better darker": the photo darker
        if _thing(thing) or thing == "it":
            return f"make {thing} {said.group('adj')}{said.group('rest')}"
    text = _DIAL_DOWN.sub(_dial("darken"), text)
    return _DIAL_UP.sub(_dial("brighten"), text)
