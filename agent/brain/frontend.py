"""The text front end: requests as people type them → plain requests the planners read.

``normalise(text)`` runs, in order:

1. chat words and shorthand ("u", "pls", "abit", "b&w", "pic", "its", "to dark");
2. spelling correction against our own vocabulary (operations, colours, looks, frame
   words, everyday objects and the intent library's phrasings) and WordNet's nouns of
   things a photo shows, with SymSpell; a word found in SymSpell's English frequency list
   or in WordNet is left alone, so object names nobody listed are not "corrected" into
   edit words;
3. politeness, filler and question forms ("could you …?", "I want …", "would you mind
   darkening …", "thanks") removed or turned into commands;
4. negation: a thing left out is said "X except Y" ("make the car red, not the wheels",
   "… without touching the clouds", "… don't touch the sky", "only X": ``agent.brain.
   exclusions``); a negated alternative is dropped ("not warmer, cooler"), "less dark" and
   "not so dark" become "brighter", "don't make it too bright, just a little" becomes
   "make it a little brighter";
5. a named thing's wish or dial verb said plainly ("the sky would look better darker",
   "turn down the sky": ``agent.brain.wishes``);
6. photographers' words rewritten to the words the rules know (``agent.brain.rewrites``:
   "blown out" → recover the highlights, "dark areas" → shadows, "darken the corners" →
   vignette, "too yellow" → cooler, "a smidge" → slightly).

Quoted text ("write 'hapy birthday'") is never touched. The result keeps what changed,
for logs and for the LLM planner's prompt.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from agent.brain.exclusions import exclusions
from agent.brain.intents import LIBRARY
from agent.brain.rewrites import REWRITES
from agent.brain.wishes import wishes
from pipelines.editors.looks import LOOKS
from pipelines.editors.operations import NAMED_COLORS, OPERATIONS
from pipelines.operations import word_owner
from pipelines.operations.wordnet import lexicon

log = logging.getLogger(__name__)


@dataclass
class Normalised:
    """A request after the front end.

    Attributes:
        original: the user's text.
        text: the plain request (lower case, quotes kept as typed).
        corrections: ``(typed, corrected)`` spelling fixes.
    """

    original: str
    text: str
    corrections: list[tuple[str, str]] = field(default_factory=list)


# --------------------------------------------------------------------------- vocabulary

#: Chat words and shorthand → plain words (whole tokens).
SHORTHAND = {
    "u": "you", "ur": "your", "pls": "please", "plz": "please", "plzz": "please",
    "pleas": "please", "pleaz": "please", "plse": "please", "thx": "thanks",
    "thnx": "thanks", "thanx": "thanks", "ty": "thanks", "tnx": "thanks", "abit": "a bit",
    "alot": "a lot", "lil": "little", "kinda": "a bit", "sorta": "a bit", "rly": "really",
    "realy": "really", "pic": "photo", "pics": "photo", "pict": "photo", "pik": "photo",
    "img": "image", "foto": "photo", "photograph": "photo", "bc": "because", "cuz": "because",
    "coz": "because", "im": "i'm", "dont": "don't", "cant": "can't", "wont": "won't",
    "isnt": "isn't", "doesnt": "doesn't", "thats": "that's", "whats": "what's",
    "wanna": "want to", "gonna": "going to", "gimme": "give me", "tho": "though",
    "insta": "instagram", "ig": "instagram", "bw": "black and white",
    "b&w": "black and white", "b/w": "black and white", "bnw": "black and white",
    "mono": "black and white", "monochrome": "black and white", "hella": "a lot",
    "mega": "a lot", "v": "very", "sat": "saturation", "temp": "temperature",
    "bg": "background", "backround": "background", "colour": "color", "colours": "colors",
    "coloured": "colored", "colourful": "colorful", "grey": "gray", "greyscale": "grayscale",
    "anticlockwise": "counterclockwise", "anti-clockwise": "counterclockwise",
    "counter-clockwise": "counterclockwise", "w/": "with", "n": "and", "&": "and",
    "blueish": "bluish", "yellowy": "yellowish", "orangy": "orangey",
    "mor": "more", "moar": "more", "lemme": "let me", "photographs": "photo",
}

#: Words of our own domain, beyond the operation table and the intent phrasings.
DOMAIN_WORDS = """
brighter brighten lighter lighten darker darken dim dimmer exposure exposed overexposed
underexposed contrast contrasty saturation saturated desaturate desaturated vibrance vibrant
vivid warmer warm warmth cooler cool colder cold temperature tint magenta green greenish
yellowish bluish reddish orangey pinkish purplish highlights shadows blacks whites midtones
vignette corners edges sharpen sharper sharpness crisp crisper blurry blur blurred soften
softer denoise noise noisy grain grainy clarity detail details sepia vintage retro matte
faded film moody dramatic cinematic golden hour sunset sunrise evening dusk airy high key
low teal orange black white grayscale filter look looks style vibe tone tones crop cropped
square widescreen portrait landscape rotate rotated rotation clockwise counterclockwise
sideways upside down flip flipped mirror mirrored horizontally vertically horizontal
vertical straighten straightened straight level horizon tilt tilted crooked leaning
resize smaller bigger larger enlarge shrink move left right up down top bottom background
foreground sky face faces skin hair eyes teeth person people man woman child kid dog cat
car bus tree trees grass water sea building buildings logo text sign shirt dress hat cup
bottle flower flowers bird window door wall road mountain cloud clouds sun moon remove
erase delete replace change make turn increase decrease reduce lower raise boost add
apply give fix correct recover lift deepen crush open tone bring please thanks photo image
picture frame everything whole slightly little bit touch tad lot much more less way very
really too subtle strong stronger weaker instagram email percent stops stop degrees
pixels wide tall tighter closer zoom undo redo revert whiter redder bluer greener yellower
pinker browner greyer grayer oranger navy crimson scarlet indigo lavender cream tan emerald
khaki coral peach selfie transform scale
"""

_STOP = {"a", "an", "the", "it", "is", "to", "of", "and", "or", "in", "on", "at", "by",
         "for", "with", "me", "my", "i", "you", "this", "that", "so", "be", "do", "can",
         "could", "would", "will", "some", "just", "not", "no", "its", "it's", "as", "but"}


@lru_cache(maxsize=1)
def _english() -> frozenset[str]:
    """English words (SymSpell's frequency list, count ≥ 10k): never corrected."""
    path = resources.files("symspellpy") / "frequency_dictionary_en_82_765.txt"
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        word, _, count = line.partition(" ")
        if count.isdigit() and int(count) >= 10_000:
            words.append(word)
    return frozenset(words)


def vocabulary() -> dict[str, int]:
    """Our vocabulary with weights (how often each word appears in our own texts).

    Counted once per content of the tables it reads (an operation registered later, or
    new words of one, count anew); a fresh dict each call."""
    key = (tuple(OPERATIONS), tuple(sorted(word_owner().items())), tuple(NAMED_COLORS),
           tuple(LOOKS), tuple(SHORTHAND.items()), id(LIBRARY), DOMAIN_WORDS)
    return dict(_vocabulary(key))


@lru_cache(maxsize=4)
def _vocabulary(key: tuple) -> dict[str, int]:   # ``key``: what the count reads
    counts: dict[str, int] = {}
    texts = [DOMAIN_WORDS, " ".join(OPERATIONS), " ".join(NAMED_COLORS),
             " ".join(n.replace("_", " ") for n in LOOKS),
             " ".join(v for v in SHORTHAND.values()),
             " ".join(word_owner())]   # every word that asks for an operation
    texts += [p for intent in LIBRARY for p in intent.phrasings]
    for text in texts:
        for word in re.findall(r"[a-z]+", text.lower().replace("_", " ")):
            if len(word) > 1:
                counts[word] = counts.get(word, 0) + 1
    return counts


@lru_cache(maxsize=1)
def _speller() -> object:
    """SymSpell over our vocabulary (Damerau–Levenshtein, up to 2 edits)."""
    from symspellpy import SymSpell

    speller = SymSpell(max_dictionary_edit_distance=2, prefix_length=7)
    for word, count in vocabulary().items():
        speller.create_dictionary_entry(word, count)
    return speller


@lru_cache(maxsize=1)
def _noun_speller() -> object | None:
    """SymSpell over WordNet's nouns of things a photo shows ("squirel" → "squirrel"), when
    the lexicon is installed; built on the first unknown word (about 0.3 s idle)."""
    from symspellpy import SymSpell

    lex = lexicon()
    if lex is None:
        return None
    speller = SymSpell(max_dictionary_edit_distance=2, prefix_length=5)
    for noun in lex.object_nouns():
        if len(noun) >= 4 and noun not in _STOP:
            speller.create_dictionary_entry(noun, 1)
    return speller


def correct_word(word: str) -> str:
    """The word, or its closest vocabulary word when it is a typo.

    A word is corrected only when it is neither ours nor common English, is alphabetic and
    at least 4 letters, and a vocabulary word lies within 1 edit (2 from 7 letters).
    """
    from symspellpy import Verbosity

    if len(word) < 4 or not word.isalpha() or word in _STOP:
        return word
    vocab = vocabulary()
    lex = lexicon()
    # the lexicon before the English list: it is loaded anyway, the list only for typos
    if word in vocab or (lex is not None and lex.pos(word)) or word in _english():
        return word
    squeezed = re.sub(r"(.)\1{2,}", r"\1\1", word)   # "brighterrr" → "brighterr"
    for candidate in (squeezed, re.sub(r"(.)\1+", r"\1", squeezed)):
        if candidate in vocab:
            return candidate
    distance = 2 if len(word) >= 7 else 1
    found = _speller().lookup(squeezed, Verbosity.CLOSEST, max_edit_distance=distance)
    nouns = _noun_speller()
    if nouns is not None:          # an object's name, unless ours is as close
        closer = [s for s in nouns.lookup(squeezed, Verbosity.CLOSEST,
                                          max_edit_distance=distance)
                  if not found or s.distance < found[0].distance]
        found = closer or found
    if not found:
        return word
    best = max(found, key=lambda s: (-s.distance, s.count))
    return best.term


# --------------------------------------------------------------------- phrasal verbs

#: what a particle after a verb that names no operation asks ("pump up", "dial down")
_PARTICLE = {"up": "increase", "down": "decrease", "back": "decrease", "off": "decrease"}
#: verbs whose particle lessens whatever it is ("ease up on", "let up", "calm down")
_EASING = {"ease", "let", "calm", "settle", "quiet", "tame"}
#: verbs that lessen what they name, with or without a particle ("flatten the contrast")
_LESSENING = {"flatten", "fade", "mute", "tame", "calm", "subdue", "soften"}
#: verbs that move, place or frame things: their particle is a direction, not an amount
_NOT_AMOUNT = {"move", "shift", "nudge", "slide", "drag", "scale", "look", "set", "make",
               "put", "place", "crop", "zoom", "flip", "rotate", "bring", "sit", "stand",
               "go", "come", "write", "get", "give", "show", "pick", "line", "blow", "wipe"}
#: when WordNet is not installed: the phrasal verbs people use most for amounts
_FALLBACK_VERBS = {"pump", "crank", "jack", "beef", "kick", "ramp", "step", "punch", "dial",
                   "bump", "knock", "turn", "tone", "pull", "ease", "calm", "amp", "juice",
                   "liven", "boost", "push", "fill", "open", "lift"}
#: words that name what an amount is of (an operation's own word, or a shared one)
_AMOUNT_WORDS = (r"contrast|brightness|exposure|saturation|vibrance|warmth|temperature|"
                 r"highlights?|shadows?|sharpness|clarity|grain|noise|colou?rs?|tint|"
                 r"vignette|blacks|whites|midtones|haze|detail|details|gamma")
_PRONOUN = (r"it|this|that|things|everything|this (?:photo|image|picture)|"
            r"the (?:photo|image|picture)")
_DETERMINER = {"the", "a", "an", "my", "its", "this", "that", "these", "those", "your",
               "our", "their", "his", "her", "some", "all", "more", "less"}


def _is_verb(word: str) -> bool:
    lex = lexicon()
    return lex.is_verb(word) if lex is not None else word in _FALLBACK_VERBS


def _owns(word: str) -> bool:
    """A single word that itself asks for an operation ("warm", "sharpen", "lighten")."""
    return word in word_owner()


def _phrasal(text: str) -> str:
    """Phrasal verbs as plain amounts: "pump up the contrast" → "increase the contrast",
    "knock the exposure down" → "decrease the exposure", "flatten the contrast" →
    "decrease the contrast"; a particle after a verb that names an operation is dropped
    ("warm it up" → "warm it", "cool down the photo" → "cool the photo"). The verb is a verb
    by WordNet (a short list without it); verbs that move or frame things keep their
    particle ("move the dog up")."""
    def in_verb_slot(m: re.Match[str]) -> bool:
        """Not a noun after its determiner ("the shadows up", "the dog up")."""
        before = re.findall(r"[a-z']+", m.string[:m.start()])
        verb = m.group(1)
        return not (before and before[-1] in _DETERMINER) and verb not in _NOT_AMOUNT and \
            not re.fullmatch(_AMOUNT_WORDS, verb) and _is_verb(verb)

    def together(m: re.Match[str]) -> str:
        verb, particle = m.group(1), m.group(2)
        if f"{verb} {particle}" in word_owner() or not in_verb_slot(m):
            return m.group(0)
        if _owns(verb) and verb not in _LESSENING:
            return verb
        if verb in ("clean", "smooth", "tidy"):     # "clean up the noise": less noise
            rest = m.string[m.end():]
            return verb if re.match(r"\s*(?:the |all the )?(?:noise|grain)", rest) else \
                m.group(0)
        if (verb, particle) in (("turn", "off"), ("switch", "off")):
            return "remove"
        if particle == "out" or not re.match(rf"\s*(?:on )?(?:the |its |my |all the |some )?"
                                             rf"(?:[a-z]+ )?(?:{_AMOUNT_WORDS})\b",
                                             m.string[m.end():]):
            return m.group(0)      # "take off the hat", "cut off the left side": not amounts
        if verb in _EASING or verb in _LESSENING:
            return "decrease"
        return _PARTICLE[particle]

    def apart(m: re.Match[str]) -> str:
        verb, middle, particle = m.group(1), m.group(2), m.group(4)
        tail = f" {m.group(3).strip()}" if m.group(3) else ""
        if not in_verb_slot(m):
            return m.group(0)
        if re.fullmatch(_PRONOUN, middle):
            return f"{verb} {middle}{tail}" if _owns(verb) else m.group(0)
        if not re.search(rf"\b(?:{_AMOUNT_WORDS})\b", middle):
            return m.group(0)
        if _owns(verb) and verb not in _LESSENING:
            return f"{verb} {middle}{tail}"
        return ("decrease" if verb in _EASING or verb in _LESSENING
                else _PARTICLE[particle]) + f" {middle}{tail}"

    text = re.sub(r"\b([a-z]+) (up|down|back|off|out)\b(?: on\b)?(?! (?:to|from)\b)",
                  together, text)
    text = re.sub(r"\bfill in (?=(?:the )?shadows?\b)", "lift ", text)
    text = re.sub(rf"\b([a-z]+) ((?:the |its |my |all the )?(?:[a-z]+ )?(?:{_AMOUNT_WORDS})|"
                  rf"{_PRONOUN}) ((?:way |all the way |a bit |a little |a lot )?)"
                  rf"(up|down|back)\b", apart, text)
    text = re.sub(rf"\b(?:{'|'.join(_LESSENING - {'soften'})})(?: out)? (?=(?:the |its |all "
                  rf"the )?(?:{_AMOUNT_WORDS})\b)", "decrease ", text)
    # "more/less of the colours" is saturation ("pump up the colours", "calm down the colors")
    return re.sub(r"\b(increase|decrease) (?:the |its |all the )?colou?rs\b", r"\1 the saturation",
                  text)


def _base_verb(match: re.Match[str]) -> str:
    """"would you mind removing …" → "remove …" (WordNet's base form when installed)."""
    word = match.group(1)
    lex = lexicon()
    if lex is not None and lex.base(word, "v") != word:
        return lex.base(word, "v")
    return word[:-3]


#: everyday question and complaint forms, read before the shared rewrites (issue 34)
#: hues a request may ask more of ("more blue")
_HUES = r"blue|green|red|yellow|orange|pink|purple|magenta|cyan|teal|turquoise|gold|golden"
EVERYDAY: list[tuple[str, Any]] = [
    (r"\b(?:would|do) you mind\s+([a-z]+ing)\b", _base_verb),
    (r"\b(?:any chance|is there (?:a|any) way|is it possible)(?: (?:that )?you could| for "
     r"you to| to| i could| we could)?\s+", ""),
    (r"\b(could|can|would|will) you possibly\b", r"\1 you"),
    (r"^(?:can|could|may) (?:we|i) (?:get|have|see)\s+", ""),
    (r"\blet me (?:see|get|have)\s+(it|this|the (?:photo|image|picture))\b", r"make \1"),
    (r"\bwhy (?:is|does) (?:it|this|the (?:photo|image|picture)) (?:look )?so\b", "too"),
    (r"\bblurr?ier\b", "more blurred"),
    # "give the sky more blue", "add more blue to the sky": the sky more blue, not a look
    (r"\b(?:give|add) (the (?:[a-z]+ ){0,2}?[a-z]+|it|this) (a bit |a little |slightly )?"
     r"(?:some )?more (" + _HUES + r")\b", r"make \1 \2more \3"),
    (r"(?:^\s*|\badd )(a bit |a little |slightly )?(?:some )?more (" + _HUES + r") (?:to|in|"
     r"into|on) (the (?:[a-z]+ ){0,2}?[a-z]+|it|this)\b", r"make \3 \1more \2"),
    # "add some drama to the sky", "more drama in the sky": the sky more dramatic
    (r"\b(?:give|add) (the (?:[a-z]+ ){0,2}?[a-z]+|it|this) (?:some )?(?:more )?drama\b",
     r"make \1 more dramatic"),
    (r"\b(?:add |give )?(?:some )?(?:more )?drama (?:to|in|into) (the (?:[a-z]+ ){0,2}?[a-z]+)"
     r"\b", r"make \1 more dramatic"),
    # "the sky less grey": more of its colour, not a grey paint
    (r"\bless (?:grey|gray|greyish|grayish|dull)\b", "more colourful"),
    # "kinda dark, brighten it": a bare complaint beside a request asks for the remedy
    (r"(^|[,.;!?] )(?:a bit |a lot |so |very |really |quite |pretty |super )?(dark|bright|"
     r"blurry|noisy|grainy|dull|flat)(?=[,.;!?] +(?:please )?[a-z]+(?: (?:it|this|that|the|"
     r"up|please)\b|$))", r"\1too \2"),
]


#: Vague tails that add nothing when another clause says what to do.
_VAGUE = re.compile(r"^(?:and )?(?:fix (?:it|this|that)|make it (?:look )?(?:normal|right|"
                    r"good|nice|better)|fix)$")
_NEGATED = re.compile(r"^(?:but )?(?:not|don't|do not|never|no)\b(?!\s+(?:too|so) much\b)")


def _drop_negated(text: str) -> str:
    """Drop negated alternatives and vague tails when another part says what to do:
    "don't make it darker, make it brighter" → "make it brighter"."""
    parts = [p.strip() for p in re.split(r"\s*(?:[,;]|\bbut\b|\binstead\b)\s*", text)]
    parts = [p for p in parts if p]
    keep = [p for p in parts if not _NEGATED.match(p) and not _VAGUE.match(p)]
    if keep and len(keep) < len(parts):
        return ", ".join(keep)
    return text


_QUOTED = re.compile(r"([\"“”'‘’])([^\"“”‘’]{1,200}?)\1(?=\s|$|[,.;!?])|“([^”]{1,200})”")


def _names(text: str) -> set[str]:
    """Words typed with a capital inside a sentence ("the Leyland script", "the LAS VEGAS
    sign"): names, lower-cased, that spelling must leave alone (it read "Leyland" as
    "eland"). The first word of a sentence is capitalised anyway and is not one."""
    return {m.group(2).lower() for m in re.finditer(r"(^|[.!?]\s+)?\b([A-Za-z]*[A-Z][A-Za-z]*)\b",
                                                    text) if m.group(1) is None}


def normalise(text: str) -> Normalised:
    """Turn a request as typed into a plain request (see the module doc).

    Args:
        text: the user's words.

    Returns:
        The ``Normalised`` request; ``text`` is never longer than about the input.
    """
    if not isinstance(text, str):
        return Normalised(str(text), str(text))
    held: list[str] = []

    def _hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return f" \x01{len(held) - 1}\x01 "

    work = _QUOTED.sub(_hold, text.replace("’", "'").replace("‘", "'"))
    names = _names(work)
    work = work.lower()
    work = re.sub(r"([!?.])\1+", r"\1", work)
    work = re.sub(r"[()\[\]{}*~^]+|:\)|:\(|:d\b", " ", work)
    corrections: list[tuple[str, str]] = []
    words = []
    for token in re.split(r"(\s+|[,;.!?](?=\s|$))", work):
        if token in SHORTHAND:
            words.append(SHORTHAND[token])
            continue
        fixed = correct_word(token) if re.fullmatch(r"[a-z]+", token or "") and \
            token not in names else token
        if fixed != token:
            corrections.append((token, fixed))
        words.append(fixed)
    work = _phrasal("".join(words))
    for pattern, repl in EVERYDAY + REWRITES:
        work = re.sub(pattern, repl, work)
    work = re.sub(r"\s+", " ", work).strip(" ,")
    work = wishes(work)         # "the sky would look better darker", "turn down the sky"
    work = exclusions(work)     # "X, not Y" naming a thing: X except Y, before the drop
    work = _drop_negated(work)
    work = re.sub(r"\s+([,.;!?])", r"\1", work)
    work = re.sub(r"\s+", " ", work).strip(" ,")
    work = re.sub(r"\x01(\d+)\x01", lambda m: held[int(m.group(1))], work)
    if corrections:
        log.debug("spelling: %s", corrections)
    return Normalised(text, work, corrections)
