"""Reading frame edits and object moves from a (normalised, lower-case) clause.

``read_frame`` understands crop (aspect ratios, "to a square", trims, "tighter", "on the
dog"), rotate (quarter turns; a few degrees is a straighten), flip, straighten and resize.
``read_transform`` understands "make the dog bigger", "shrink the cup", "move the cat to
the left" (the ``transform`` operation). Each returns ``Reading``s (operation, params,
target) or None; the rule planner turns them into Actions. ``degree`` is the clause's
intensity factor (0.5 "slightly", 2 "a lot").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pipelines.editors.frame import ASPECTS
from pipelines.operations import for_role, word_owner

#: the frame edits and the object move this grammar reads, by role
_CROP, _ROTATE, _FLIP = (for_role(r).name for r in ("trim", "quarter_turn", "mirror"))
_LEVEL, _RESIZE, _MOVE = (for_role(r).name for r in ("level", "downsize", "move"))
#: words that carry an operation: never an object to move
_OPERATION_WORDS = frozenset(word_owner())


@dataclass
class Reading:
    """One operation read from a clause."""

    operation: str
    params: dict[str, Any] = field(default_factory=dict)
    target: str = ""


_WHOLE = r"(?:it|this|that|the (?:photo|image|picture|pic|frame|shot)|everything)"
_NUMBER = r"([+-]?\d+(?:\.\d+)?)"
_NAMED_ASPECTS = [(r"\bsquare\b", "1:1"), (r"\bwide ?screen\b|\bcinematic wide\b|\bbanner\b",
                                           "16:9"),
                  (r"\b(?:story|stories|reel|tiktok|vertical video|phone wallpaper)\b", "9:16"),
                  (r"\binstagram portrait\b|\bportrait crop\b", "4:5")]
_CROP_VERB = re.compile(r"\b(?:crop|cropped|cropping|trim|cut off|reframe|recrop)\b")


def _aspect(clause: str) -> str | None:
    match = re.search(r"\b(\d{1,2})\s*(?::|x|×|by|/)\s*(\d{1,2})\b", clause)
    if match:
        ratio = f"{int(match.group(1))}:{int(match.group(2))}"
        return ratio if ratio in ASPECTS else None
    for pattern, ratio in _NAMED_ASPECTS:
        if re.search(pattern, clause):
            return ratio
    return None


def _read_crop(clause: str, degree: float) -> Reading | None:
    aspect = _aspect(clause)
    # without a crop verb, the aspect must be what the whole photo becomes: "make it
    # square", "make the photo 16:9", not "make the blue square orange"
    whole = aspect and re.search(rf"^(?:make|turn|change|set|convert|reshape)\s+(?:{_WHOLE}\s+)?"
                                 r"(?:(?:in)?to\s+)?(?:a\s+|the\s+)?(?:\d{1,2}\s*(?::|x|×|by|/)"
                                 r"\s*\d{1,2}|square|wide ?screen|portrait|story|banner)"
                                 r"(?:\s+(?:format|crop|aspect|ratio|shape|for\b.*))?$", clause)
    if not (_CROP_VERB.search(clause) or whole or (aspect and re.search(
            r"\b(?:aspect|ratio|format|for instagram|for a story)\b|\bframe$", clause))):
        return None
    params: dict[str, Any] = {}
    if aspect:
        params["aspect"] = aspect
    sides = re.findall(r"\b(left|right|top|bottom)\b", clause)
    pct = re.search(rf"{_NUMBER}\s*(?:%|percent)", clause)
    amount = float(pct.group(1)) / 100 if pct else min(0.4, 0.1 * degree)
    if sides and re.search(r"\b(?:off|crop|trim|cut)\b", clause):
        for side in dict.fromkeys(sides):
            params[side] = round(min(0.9, abs(amount)), 3)
        return Reading(_CROP, params)
    subject = re.search(r"\b(?:on|around|to|in on)\s+(?:the\s+)?(?!(?:a\s+)?(?:square|"
                        r"\d|edges?|sides?|borders?|frame|photo|image|picture|left|right|"
                        r"top|bottom|center|centre|middle)\b)([a-z][a-z '-]{1,60})$", clause)
    if subject and not aspect:
        return Reading(_CROP, {"margin": -0.15}, target=subject.group(1).strip())
    if re.search(r"\b(?:tighter|closer|zoom(?:ed)? in|edges?|sides?|borders?|a bit off|"
                 r"a little off|in)\b", clause) or not aspect:
        margin = float(pct.group(1)) / 100 if pct else 0.08 * degree
        if not aspect or re.search(r"\b(?:tighter|closer|zoom)\b", clause):
            params["margin"] = round(min(0.4, abs(margin)), 3)
    return Reading(_CROP, params)


def _read_rotate(clause: str) -> Reading | None:
    if re.search(r"\bhues?\b|\bcolou?rs?\b", clause):
        return None
    verb = re.search(r"\b(?:rotate|rotated|rotation|spin)\b", clause) or re.search(
        rf"\bturn\s+(?:{_WHOLE}\s+)?(?:by\s+)?(?=\d|left|right|clockwise|counterclockwise|"
        r"upside down|sideways|around|on its side|to the (?:left|right))", clause)
    upside = re.search(r"\bupside[- ]down\b", clause)
    if not verb and not (upside and re.search(rf"^(?:{_WHOLE}\s+)?(?:is\s+)?upside", clause)):
        return None
    left = re.search(r"\b(?:left|counterclockwise|ccw)\b", clause)
    number = re.search(rf"{_NUMBER}\s*(?:degrees?|deg|°)?", clause)
    if number:
        value = float(number.group(1))
        if value % 90 == 0:
            degrees = int(value) % 360
            if left and degrees in (90, 270):
                degrees = 360 - degrees
            return Reading(_ROTATE, {"degrees": degrees if degrees <= 180 else degrees - 360})
        if abs(value) <= 45:
            clockwise = re.search(r"\b(?:right|clockwise|cw)\b", clause) and not left
            return Reading(_LEVEL, {"angle": -abs(value) if clockwise else abs(value)})
        return None
    if upside or re.search(r"\baround\b", clause):
        return Reading(_ROTATE, {"degrees": 180})
    return Reading(_ROTATE, {"degrees": -90 if left else 90})


def _read_flip(clause: str) -> Reading | None:
    if not re.search(r"\b(?:flip|flipped|mirror|mirrored)\b", clause):
        return None
    vertical = re.search(r"\b(?:vertical|vertically|upside[- ]down|top to bottom|"
                         r"up and down|top-bottom)\b", clause)
    return Reading(_FLIP, {"axis": "vertical" if vertical else "horizontal"})


_FRAME_SUBJECT = (r"(?:it|this|that|everything|the (?:photo|image|picture|pic|shot|frame|"
                  r"horizon|buildings?|walls?|verticals|lines|sea|ocean)|horizon|photo|image)")
_STRAIGHT = re.compile(
    r"\bstraighten\w*\b(?! (?:the |her |his |my )?(?:hair|teeth|tie|collar))|"
    r"\blevel (?:out )?(?:the )?(?:horizon|photo|image|picture|it|this)\b|"
    r"\b(?:fix|correct) the (?:tilt|horizon|angle|rotation)\b|"
    rf"(?:^|\b{_FRAME_SUBJECT}\s+(?:is|are|looks?|seems?)\s+)(?:a bit |slightly |very |so |"
    r"kinda |really |too )?(?:tilted|crooked|leaning|wonky|skewed|slanted|askew|not "
    r"(?:straight|level)|off[- ]level)\b|"
    r"\b(?:tilted|crooked|wonky|slanted|skewed) (?:horizon|photo|image|picture|shot)\b|"
    r"^(?:tilted|crooked|wonky|askew)$")


def _read_straighten(clause: str) -> Reading | None:
    if not _STRAIGHT.search(clause) or re.search(r"\btilt[- ]shift\b", clause):
        return None
    number = re.search(rf"{_NUMBER}\s*(?:degrees?|deg|°)", clause)
    if number:
        value = float(number.group(1))
        clockwise = re.search(r"\b(?:clockwise|right|cw)\b", clause) and \
            not re.search(r"\bcounter", clause)
        return Reading(_LEVEL, {"angle": -abs(value) if clockwise else value})
    return Reading(_LEVEL, {"auto": True})


def _read_resize(clause: str) -> Reading | None:
    verbs = re.search(r"\b(?:resize|resized|downscale|downsize|scale (?:it |the \w+ )?down|"
                      r"reduce the (?:size|resolution|file size)|smaller file|(?:for|to send "
                      r"by|by) e-?mail|for the web|for web|lower resolution|half (?:the )?"
                      r"size)\b", clause)
    px = re.search(r"\b(\d{2,5})\s*(?:px|pixels?)\b(?:\s+(wide|across|tall|high|long side))?",
                   clause) or re.search(r"\b(\d{3,5})\s+(wide|across|tall|high)\b", clause) or \
        re.search(r"\b(?:resize|scale|downscale|downsize)\b.*?\bto (\d{3,5})()"
                  r"(?!\s*(?:%|percent))\b", clause)
    whole = re.search(rf"^(?:make|set|resize|scale|export)\s+{_WHOLE}", clause) or \
        re.search(r"\b(?:wide|tall|long side)\b", clause)
    if not verbs and not (px and whole):
        return None
    params: dict[str, Any] = {}
    if px:
        value = int(px.group(1))
        side = px.group(2) or ""
        if side in ("wide", "across") or re.search(r"\bwidth\b", clause):
            params["width"] = value
        elif side in ("tall", "high") or re.search(r"\bheight\b", clause):
            params["height"] = value
        else:
            params["long_side"] = value
    elif re.search(r"\bhalf\b", clause):
        params["scale"] = 0.5
    elif re.search(r"\bquarter\b", clause):
        params["scale"] = 0.25
    elif re.search(rf"{_NUMBER}\s*(?:%|percent)", clause):
        pct = float(re.search(rf"{_NUMBER}\s*(?:%|percent)", clause).group(1))
        params["scale"] = round(min(1.0, max(0.01, pct / 100)), 3)
    elif re.search(r"\be-?mail|web\b", clause):
        params["long_side"] = 1600
    return Reading(_RESIZE, params)


def read_frame(clause: str, degree: float = 1.0) -> Reading | None:
    """A frame edit asked for in ``clause``, or None.

    Args:
        clause: one normalised clause.
        degree: its intensity factor.
    """
    for reader in (_read_flip, _read_resize, _read_rotate, _read_straighten):
        found = reader(clause)
        if found is not None:
            return found
    return _read_crop(clause, degree)


# --------------------------------------------------------------------------- transform

_BIGGER = r"bigger|larger|huge|larger|enlarged|greater"
_SMALLER = r"smaller|tinier|tiny|little smaller|shrunk"


def read_transform(clause: str, degree: float = 1.0) -> Reading | None:
    """"make the dog bigger", "shrink the cup", "move the cat left" → ``transform``."""
    times = re.search(r"\b(\d+(?:\.\d+)?)\s*(?:x|times)\b|\b(twice|double|triple|half)\b",
                      clause)
    factor = 1 + 0.3 * degree
    if times:
        word = times.group(2)
        factor = {"twice": 2.0, "double": 2.0, "triple": 3.0, "half": 0.5}.get(
            word or "", float(times.group(1) or 1.0))
    grow = re.match(rf"^(?:make|scale|resize)\s+(?P<t>.+?)\s+(?:look\s+)?(?:a\s+(?:bit|lot)\s+|"
                    rf"much\s+|slightly\s+|way\s+|\d+x\s+)?(?P<w>{_BIGGER}|{_SMALLER})\b",
                    clause) or re.match(r"^(?P<w>enlarge|shrink|grow|scale up|scale down|"
                                        r"make bigger|make smaller)\s+(?P<t>.+?)"
                                        r"(?:\s+(?:a bit|a lot|slightly|much|by .+))?$", clause)
    if grow:
        target = grow.group("t").strip()
        if re.fullmatch(r"(?:the )?(?:photo|image|picture|pic|frame|file|everything)", target):
            return None
        smaller = re.match(rf"(?:{_SMALLER}|shrink|scale down|make smaller)", grow.group("w"))
        if times and times.group(2) == "half":
            scale = 0.5
        elif smaller:
            scale = 1 / factor if factor > 1 else factor
        else:
            scale = factor if factor > 1 else 1 / factor
        return Reading(_MOVE, {"scale": round(min(5.0, max(0.2, scale)), 3)}, target)
    move = re.match(r"^(?:move|shift|push|nudge|slide)\s+(?P<t>.+?)\s+(?:over\s+)?(?:a\s+(?:bit|"
                    r"little|lot)\s+|slightly\s+|much\s+)?(?:to(?:wards)?\s+(?:the\s+)?)?"
                    r"(?P<d>left|right|up|down|higher|lower|upwards|downwards)\b", clause)
    if move:
        step = round(min(1.0, 0.15 * degree), 3)
        d = move.group("d")
        params = {"dx": -step} if d == "left" else {"dx": step} if d == "right" else \
            {"dy": -step} if d in ("up", "higher", "upwards") else {"dy": step}
        target = move.group("t").strip()
        if re.sub(r"^(?:the|my)\s+", "", target) in _OPERATION_WORDS:
            return None   # "push the exposure up": an adjustment, not an object to move
        return Reading(_MOVE, params, target)
    return None
