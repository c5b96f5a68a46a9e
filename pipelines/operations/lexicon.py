"""The words every operation shares: intensities, negations, numbers.

Operations own the words that name them (``Operation.words``/``pattern``) and the words
that set their own direction (``positive``/``negative``); what any request may say about
any operation lives here once: "a bit", "way", "extremely" (``DEGREES``), "less",
"tone down", "dial back" (``NEGATIONS``), percentages and bare numbers.
"""

from __future__ import annotations

import re

SLIGHT = (r"very slightly|a tiny bit|a little bit|a little|a bit|a touch|a tad|slightly|"
          r"somewhat|subtly|gently|mildly|marginally|a hint|barely|just a bit|subtle|gentle|"
          r"mild|slight|small")
STRONG = (r"a lot|a great deal|lots|loads|tons|heaps|much|very|way|really|strongly|significantly|"
          r"considerably|dramatically|heavily|greatly|substantially|far|strong|heavy|"
          r"intense|big")
EXTREME = r"extremely|massively|hugely|super|enormously|drastically"
#: (words, factor) in the order they are tried: the first that matches sets the degree
DEGREES: list[tuple[str, float]] = [(EXTREME, 3.0), (SLIGHT, 0.5), (STRONG, 2.0)]
#: words that turn any adjustment down ("less", "tone down", "dial back", "soften the
#: contrast"); a filter whose word this is ("soften": blur) yields to the adjustment named
NEGATIONS = (r"less|decrease|reduce|lower|down|tone down|dial back|knock back|tame|drop|"
             r"pull|minus|soften|\-\d")
#: idioms that turn any adjustment up ("crank up", "bump up", "pump up")
INCREASE = r"crank up|crank|bump up|bump|pump up|turn up|push up|more|increase|boost|raise"
#: "too dark" asks for the opposite of the word after it
TOO = r"\btoo\s+(?:much\s+)?"
#: a clause that complains about the photo as it is: "it is blurry", "looks too soft"
COMPLAINT = (rf"\b(?:is|are|looks?|seems?|feels?|too|so)\s+(?:(?:{SLIGHT}|{STRONG}|{EXTREME}|"
             r"quite|pretty|kinda|too|so)\s+)*")


def degree(text: str) -> float:
    """The size factor the request's degree words ask for (1 when none)."""
    for pattern, factor in DEGREES:
        if re.search(rf"\b(?:{pattern})\b", text):
            return factor
    return 1.0


def strip_degrees(text: str) -> str:
    """``text`` without its degree words."""
    for pattern, _ in DEGREES:
        text = re.sub(rf"\b(?:{pattern})\b", " ", text)
    return text


def number(text: str, unit: str) -> float | None:
    """The number written before ``unit`` (a pattern), or None."""
    match = re.search(rf"([+-]?\d+(?:\.\d+)?)\s*(?:{unit})", text)
    return float(match.group(1)) if match else None


def percent(text: str) -> float | None:
    """A percentage written in ``text`` as a fraction, or None."""
    value = number(text, r"%|percent\b|per cent\b")
    return None if value is None else value / 100.0
