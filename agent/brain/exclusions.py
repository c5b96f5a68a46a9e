"""Exclusions said in other words than "except", and "only X" (wave 27).

The front end dropped "not the wheels" in "make the car red, not the wheels" as a negated
alternative (``frontend._drop_negated``), so the wheels were recoloured with the car and
the turn said done; "brighten the photo, don't touch the sky" brightened the sky too;
"make the sky bluer without touching the clouds" became a generation of the whole photo;
"make only the sky bluer" looked for a thing called 'only'. Each names a thing to leave
out, and the planner already reads "X except Y" as the target less Y (the localiser's
``portion.less``: resolved when both are, a question when Y cannot be told, X as it is
when there is no Y), so ``exclusions`` says them so:

* "X, not Y" / "X but not Y" / "X and not Y" → "X except Y";
* "X without (touching) Y" → "X except Y";
* "X, (but) don't touch / change / brighten Y" → "X except Y";
* "X, (but) leave / keep Y (alone, as it is, white …)" and "keep Y white and X" →
  "X except Y";
* "only X" / "X only" / "X and nothing else" → "X".

Y must name a thing: a determiner ("the", "its", "my" …) then words whose last is a noun
and not a colour, a look or the photo itself. "make it red, not blue" (a value) and
"brighten the dog, not the whole photo" (the photo is no part to leave out) keep today's
reading: the negated part is dropped.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipelines.editors.operations import NAMED_COLORS
from pipelines.operations.wordnet import lexicon

_DET = r"(?:the|its|his|her|their|my|your|our|this|that|these|those)"
#: a noun phrase after a determiner, up to six words
_NP = rf"{_DET} (?:[a-z'-]+ ){{0,5}}?[a-z'-]+"
#: where a clause ends
_END = r"(?=\s*(?:$|[,;.!?]|\band\b|\bthen\b|\bplease\b))"
#: what may follow "leave Y" / "keep Y" and still say "do not change it"
_AS_IT_IS = (r"(?: (?:alone|as (?:it is|they are|is|it was|they were)|untouched|unchanged|"
             r"the same|intact|out of it|out|natural|(?:white|blue|green|grey|gray|black|"
             r"red|yellow|brown|dark|bright)))?")
#: last words that name no thing to leave out
_NOT_THINGS = frozenset({
    "photo", "image", "picture", "shot", "frame", "thing", "whole", "rest", "one", "ones",
    "way", "same", "colour", "color", "colours", "colors", "tone", "tones", "look", "style",
    "effect", "filter", "amount", "much", "bit", "lot", "edit", "change", "changes",
    "brightness", "contrast", "saturation", "exposure", "it", "them", "everything"})


@lru_cache(maxsize=1)
def _colours() -> frozenset[str]:
    return frozenset(w.lower() for w in NAMED_COLORS)


def is_colour(word: str) -> bool:
    """Whether ``word`` is a colour's name ("red", "teal")."""
    return word in _colours()


def is_thing(phrase: str) -> bool:
    """Whether ``phrase`` (a determiner and words) names a thing in a photo: its last word
    a noun (the lexicon), not a colour, a look or the photo itself."""
    words = phrase.split()[1:]
    if not words or words[-1] in _NOT_THINGS or words[-1] in _colours():
        return False
    if any(w in ("whole", "entire", "rest") for w in words):
        return False
    lex = lexicon()
    if lex is None:
        return True
    pos = lex.pos(words[-1])
    return "n" in pos and "a" not in pos


def _edit_before(text: str) -> bool:
    """Something before the exclusion says what to do (not a bare "not the wheels")."""
    return bool(re.search(r"[a-z]", text)) and len(text.split()) >= 2


def _except(match: re.Match[str]) -> str:
    before, thing = match.group("x"), match.group("y")
    if not is_thing(thing) or not _edit_before(before) or " except " in before:
        return match.group(0)
    return f"{before} except {thing}"


_SEP = r"\s*(?:,\s*|\s+)(?:(?:but|and|yet)\s+)?"
_RULES: tuple[tuple[re.Pattern[str], object], ...] = (
    # "make the car red, not the wheels", "darken the background but not the dog"
    (re.compile(rf"(?P<x>[^,;]*?[a-z]){_SEP}not (?:for |including )?(?P<y>{_NP}){_END}"),
     _except),
    # "make the sky bluer without touching the clouds"
    (re.compile(rf"(?P<x>[^,;]*?[a-z])\s+(?:but )?without (?:touching |changing |affecting |"
                rf"editing |altering |including |the change (?:on|to) )?(?P<y>{_NP}){_END}"),
     _except),
    # "brighten the photo, don't touch the sky"
    (re.compile(rf"(?P<x>[^,;]*?[a-z]){_SEP}(?:please )?(?:don't|do not|never|dont) "
                rf"(?:[a-z]+ (?:with |to )?)(?P<y>{_NP}){_END}"), _except),
    # "brighten the photo but leave the sky alone", "darken it, keep the trees as they are"
    (re.compile(rf"(?P<x>[^,;]*?[a-z]){_SEP}(?:just |please |while |whilst )?(?:leave|keep|"
                rf"leaving|keeping) (?P<y>{_NP})"
                rf"{_AS_IT_IS}{_END}"), _except),
)
#: "keep the clouds white and make the sky bluer": the exclusion said first
_LEADING = re.compile(rf"^(?:please )?(?:leave|keep|don't touch|do not touch) (?P<y>{_NP})"
                      rf"{_AS_IT_IS}\s*(?:,\s*)?(?:and |but |, )?(?:then )?(?P<x>[a-z].*?)"
                      rf"\s*(?P<rest>[,;.!?].*)?$")
#: "only X": the thing is X, no more (the localiser read 'only' as a thing)
_ONLY = (
    (re.compile(rf"\b(?:only|solely|just) (?={_DET} )"), ""),
    (re.compile(r"^(?:only|just) (?!(?:a|an|slightly|little|abit|barely)\b)(?=[a-z]+ )"), ""),
    (re.compile(rf"(?<=[a-z]) only{_END}"), ""),
    (re.compile(r"(?:,\s*|\s+)(?:and )?(?:nothing else|nothing more|no more than that|"
                r"not the rest|not anything else|without (?:changing|touching|affecting) "
                r"(?:anything|everything) else|(?:but |and |while )?(?:leave|leaving|keep|"
                r"keeping) (?:everything else|the rest)(?: (?:as it is|alone|untouched|"
                r"unchanged|the same))?)(?=\s*(?:$|[,;.!?]))"), ""),
)


def exclusions(text: str) -> str:
    """``text`` (lower case, after the front end's rewrites) with its exclusions said as
    "X except Y" and "only X" as "X" (the module doc); anything else is left as it is."""
    out = text
    lead = _LEADING.match(out)
    if lead and is_thing(lead.group("y")) and _edit_before(lead.group("x")) and \
            not re.match(r"(?:leave|keep|don't|do not)\b", lead.group("x")):
        out = f"{lead.group('x')} except {lead.group('y')}{lead.group('rest') or ''}"
    for pattern, repl in _RULES:
        out = pattern.sub(repl, out)
    for pattern, words in _ONLY:
        fixed = pattern.sub(words, out)
        if re.search(r"[a-z]", fixed):
            out = fixed
    return out
