"""The intent library: what Loupe can do to a whole photo, each said several ways.

Each ``Intent`` is one operation with a direction (``brightness`` up, ``contrast`` down,
the ``vintage`` look, a quarter turn clockwise…), a short label for buttons and help, the
canonical instruction a button sends back, and a handful of phrasings in our own words.
``IntentMatcher`` embeds every phrasing once with the offline MiniLM sentence model
(``pipelines.embeddings.sentence_encoder``) and scores a request by its closest phrasing
per intent (cosine). ``decide`` turns the scores into one of three answers:

* ``plan``: one intent clearly fits;
* ``ask``: two intents of different operations are close (within ``ASK_MARGIN``, or
  within ``UNSURE_MARGIN`` when even the best is below ``UNSURE_SCORE``): the user picks
  with a button;
* ``none``: nothing reaches ``MIN_SCORE`` (the reply says what Loupe can do).

The same library feeds the LLM planner's prompt (``library_text``), so both planners
read requests against one vocabulary.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from pipelines.embeddings import sentence_encoder

log = logging.getLogger(__name__)

#: Cosine below which no intent fits.
MIN_SCORE = 0.55
#: Below this the best intent is a guess: ask when another operation is within
#: ``UNSURE_MARGIN``.
UNSURE_SCORE = 0.70
UNSURE_MARGIN = 0.12
#: Above ``UNSURE_SCORE``, two different operations this close still make the planner ask.
ASK_MARGIN = 0.03
#: A confident match: no question even if another operation is close.
SURE_SCORE = 0.86


@dataclass(frozen=True)
class Intent:
    """One thing the app can do to the whole photo, and ways people ask for it.

    Attributes:
        name: unique key (``brightness_up``).
        operation: the catalogue operation.
        params: its parameters at the default strength (signs included).
        label: a short button label ("Brighter").
        instruction: what a button sends back as the next request.
        phrasings: ways to ask, in our own words.
        group: for the help text (light, colour, detail, looks, frame).
    """

    name: str
    operation: str
    params: dict[str, Any]
    label: str
    instruction: str
    phrasings: tuple[str, ...]
    group: str = "light"
    scalable: tuple[str, ...] = field(default=())


def _i(name: str, op: str, params: dict[str, Any], label: str, phrasings: str,
       group: str, instruction: str = "") -> Intent:
    scalable = tuple(k for k, v in params.items() if isinstance(v, float))
    return Intent(name, op, params, label, instruction or label.lower(),
                  tuple(p.strip() for p in phrasings.split("|") if p.strip()), group,
                  scalable)


LIBRARY: tuple[Intent, ...] = (
    # --- light ---------------------------------------------------------------------
    _i("brightness_up", "brightness", {"amount": 0.2}, "Brighter",
       "make it brighter|brighten the photo|lighten the image|more light|it is too dark|"
       "the photo is dark|lift the brightness|increase brightness|light it up|"
       "not so dark|it looks dim|less dark", "light"),
    _i("brightness_down", "brightness", {"amount": -0.2}, "Darker",
       "make it darker|darken the photo|less bright|it is too bright|tone down the "
       "brightness|dim the image|reduce brightness|the picture is too light", "light"),
    _i("exposure_up", "exposure", {"stops": 0.5}, "More exposure",
       "increase the exposure|the photo is underexposed|expose it brighter|raise the "
       "exposure|push the exposure up|add a stop of light", "light"),
    _i("exposure_down", "exposure", {"stops": -0.5}, "Less exposure",
       "reduce the exposure|the photo is overexposed|lower the exposure|pull the "
       "exposure down|expose it darker", "light"),
    _i("contrast_up", "contrast", {"amount": 0.2}, "More contrast",
       "more contrast|increase the contrast|add punch|it looks flat|it is washed out|"
       "make it punchier|boost contrast|the photo looks dull and flat|crisper tones",
       "light"),
    _i("contrast_down", "contrast", {"amount": -0.2}, "Less contrast",
       "less contrast|reduce the contrast|too much contrast|soften the contrast|flatter "
       "tones|it is too harsh|make it less contrasty", "light"),
    _i("shadows_up", "shadows", {"amount": 0.3}, "Lift the shadows",
       "lift the shadows|brighten the dark areas|open up the shadows|the shadows are too "
       "dark|show detail in the dark parts|recover the shadows|lighten the shadows",
       "light"),
    _i("shadows_down", "shadows", {"amount": -0.3}, "Deeper shadows",
       "deeper shadows|darken the shadows|crush the blacks|richer blacks|make the dark "
       "areas darker", "light"),
    _i("highlights_down", "highlights", {"amount": -0.3}, "Recover the highlights",
       "recover the highlights|the highlights are blown out|tone down the highlights|"
       "the bright areas are too bright|reduce the glare|bring back the blown sky|"
       "tame the highlights|the whites are clipped", "light"),
    _i("highlights_up", "highlights", {"amount": 0.3}, "Brighter highlights",
       "brighter highlights|boost the highlights|make the bright areas brighter|lift the "
       "whites", "light"),
    _i("vignette_add", "vignette", {"amount": 0.3}, "Darken the corners",
       "add a vignette|darken the corners|darker edges|darken the edges of the photo|"
       "vignette", "light"),
    _i("vignette_remove", "vignette", {"amount": -0.3}, "Lighten the corners",
       "remove the vignette|lighten the corners|brighten the edges|the corners are too "
       "dark|less vignette", "light"),
    _i("auto_levels", "auto_levels", {"clip": 0.5}, "Auto levels",
       "auto levels|auto fix|auto enhance|fix the levels|stretch the levels|auto correct "
       "the tones", "light"),
    # --- colour --------------------------------------------------------------------
    _i("saturation_up", "saturation", {"amount": 0.25}, "More saturation",
       "more saturation|more colourful|make the colours pop|richer colours|more vivid|"
       "increase saturation|boost the colours|the colours are dull", "colour"),
    _i("saturation_down", "saturation", {"amount": -0.25}, "Less saturation",
       "less saturation|desaturate|mute the colours|tone down the colours|the colours "
       "are too strong|too saturated|less colourful|more muted", "colour"),
    _i("vibrance_up", "vibrance", {"amount": 0.3}, "More vibrance",
       "more vibrance|increase vibrance|make it more vibrant|subtle colour boost", "colour"),
    _i("warmer", "temperature", {"amount": 0.2}, "Warmer",
       "make it warmer|warm it up|warmer tones|add warmth|more orange light|it is too "
       "cold|it is too blue|remove the blue cast|less blue|cozier colours", "colour"),
    _i("cooler", "temperature", {"amount": -0.2}, "Cooler",
       "make it cooler|cool it down|cooler tones|bluish|colder|it is too warm|it is too "
       "yellow|less yellow|too orange|icy blue tones", "colour"),
    _i("tint_magenta", "tint", {"amount": 0.1}, "More magenta",
       "more magenta|it is too green|remove the green tint|less green|pinker tint",
       "colour"),
    _i("tint_green", "tint", {"amount": -0.1}, "More green",
       "more green tint|it is too magenta|remove the magenta cast|too pink|less magenta",
       "colour"),
    _i("white_balance", "auto_white_balance", {"amount": 1.0}, "Fix the white balance",
       "fix the white balance|neutral colours|remove the colour cast|correct the colours|"
       "make the whites white|fix the colors", "colour"),
    _i("grayscale", "grayscale", {"amount": 1.0}, "Black and white",
       "black and white|make it monochrome|grayscale|remove all colour|no colour|"
       "greyscale photo|b&w", "colour"),
    _i("hue_shift", "hue", {"degrees": 15.0}, "Shift the hues",
       "shift the hue|rotate the hues|change the hue", "colour"),
    # --- detail ----------------------------------------------------------------------
    _i("sharpen", "sharpen", {"amount": 0.6}, "Sharpen",
       "sharpen it|make it sharper|crisper details|it is blurry|less blurry|bring out the "
       "details|more detail|it looks soft|unblur", "detail"),
    _i("denoise", "denoise", {"strength": 0.5}, "Reduce noise",
       "reduce noise|denoise|it is grainy|remove the grain|too noisy|less noise|clean up "
       "the noise|smooth out the grain", "detail"),
    _i("blur", "blur", {"radius": 4.0}, "Blur",
       "blur it|soften the image|make it blurry|dreamy soft focus|gaussian blur", "detail"),
    _i("clarity", "clahe", {"clip_limit": 2.0}, "More clarity",
       "more clarity|local contrast|bring out texture|hdr look|micro contrast", "detail"),
    # --- looks -------------------------------------------------------------------------
    _i("look_sepia", "look", {"style": "sepia", "strength": 1.0}, "Sepia",
       "sepia|sepia tone|old brown photo|antique brown print", "looks", "sepia look"),
    _i("look_vintage", "look", {"style": "vintage", "strength": 1.0}, "Vintage",
       "vintage look|retro|old faded film|faded film look|analog film|nostalgic|old "
       "photo look|seventies look|aged photo|film look", "looks", "vintage look"),
    _i("look_matte", "look", {"style": "matte", "strength": 1.0}, "Matte",
       "matte look|matte finish|faded blacks|lifted blacks|soft matte film|flat faded "
       "look", "looks", "matte look"),
    _i("look_golden_hour", "look", {"style": "golden_hour", "strength": 1.0},
       "Golden hour", "golden hour|sunset light|warm evening sun|sunset glow|golden "
       "light|magic hour|late afternoon sun", "looks", "golden hour look"),
    _i("look_evening", "look", {"style": "evening", "strength": 1.0}, "Evening",
       "evening|dusk|make it look like evening|twilight mood|end of the day",
       "looks", "evening look"),
    _i("look_moody", "look", {"style": "moody", "strength": 1.0}, "Moody",
       "moody|dark and moody|brooding atmosphere|dramatic mood|gloomy cinematic",
       "looks", "moody look"),
    _i("look_high_key", "look", {"style": "high_key", "strength": 1.0}, "High key",
       "high key|bright and airy|light and airy|airy pastel look|ethereal bright look",
       "looks", "high key look"),
    _i("look_low_key", "look", {"style": "low_key", "strength": 1.0}, "Low key",
       "low key|dark dramatic lighting|chiaroscuro|deep black background look",
       "looks", "low key look"),
    _i("look_teal_orange", "look", {"style": "teal_orange", "strength": 1.0},
       "Teal and orange", "teal and orange|orange and teal|cinematic colour grade|"
       "hollywood blockbuster grade|movie look", "looks", "teal and orange look"),
    *(_i(f"look_bw_{c}", "look", {"style": f"bw_{c}", "strength": 1.0},
         f"B&W, {c} filter", f"black and white with a {c} filter|monochrome {c} filter|"
         f"b&w through a {c} filter", "looks", f"black and white with a {c} filter")
      for c in ("red", "orange", "yellow", "green", "blue")),
    # --- frame -------------------------------------------------------------------------
    _i("crop_square", "crop", {"aspect": "1:1"}, "Crop to a square",
       "crop to a square|square crop|make it square|square for instagram", "frame"),
    _i("crop_tighter", "crop", {"margin": 0.1}, "Crop tighter",
       "crop in tighter|crop closer|zoom in a bit|trim the edges|crop a little off the "
       "sides|tighter framing", "frame"),
    _i("crop_wide", "crop", {"aspect": "16:9"}, "Crop to 16:9",
       "widescreen crop|crop to 16:9|cinematic wide frame|banner crop", "frame"),
    _i("rotate_cw", "rotate", {"degrees": 90}, "Rotate right",
       "rotate clockwise|rotate right|turn it to the right|rotate 90 degrees|it is "
       "sideways", "frame"),
    _i("rotate_ccw", "rotate", {"degrees": -90}, "Rotate left",
       "rotate counterclockwise|rotate left|turn it to the left|rotate anticlockwise",
       "frame"),
    _i("rotate_180", "rotate", {"degrees": 180}, "Turn upside down",
       "turn it upside down|rotate 180 degrees|it is upside down", "frame"),
    _i("flip_h", "flip", {"axis": "horizontal"}, "Mirror",
       "flip horizontally|mirror the image|mirror it|flip left to right", "frame"),
    _i("flip_v", "flip", {"axis": "vertical"}, "Flip vertically",
       "flip vertically|flip it upside down|flip top to bottom", "frame"),
    _i("straighten", "straighten", {"auto": True}, "Straighten",
       "straighten the horizon|level the horizon|the horizon is crooked|it is tilted|"
       "fix the tilt|straighten the photo|the buildings are leaning", "frame"),
    _i("resize", "resize", {"scale": 0.5}, "Make the file smaller",
       "resize the image|make the file smaller|smaller for email|downscale it|reduce the "
       "resolution", "frame"),
)
INTENTS: dict[str, Intent] = {intent.name: intent for intent in LIBRARY}

_GROUPS = {"light": "light", "colour": "colour", "detail": "detail",
           "looks": "looks", "frame": "the frame"}


def capabilities() -> str:
    """What the app can do, in one paragraph (for 'help' replies)."""
    parts = []
    for group, words in _GROUPS.items():
        labels = [i.label.lower() for i in LIBRARY if i.group == group][:6]
        parts.append(f"{words} ({', '.join(labels)})")
    return ("I can change " + "; ".join(parts) + "; and edit things you name, e.g. "
            "'remove the cup', 'make the car red', 'make the dog bigger'.")


def library_text(limit: int = 3) -> str:
    """The library as compact lines for an LLM prompt: phrasings → operation(params)."""
    lines = []
    for intent in LIBRARY:
        args = ", ".join(f"{k}={v}" for k, v in intent.params.items())
        lines.append(f"- {' / '.join(intent.phrasings[:limit])} → {intent.operation}({args})")
    return "\n".join(lines)


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Decision:
    """What the matcher makes of one request.

    Attributes:
        kind: ``plan``, ``ask`` or ``none``.
        intents: the chosen intent (plan), the two to choose from (ask), or [] (none).
        scores: the matching cosines, best first.
    """

    kind: str
    intents: tuple[Intent, ...] = ()
    scores: tuple[float, ...] = ()


class IntentMatcher:
    """Scores requests against the library with a sentence encoder.

    Args:
        encode: texts → unit-length row vectors; default the offline MiniLM model.
        library: the intents.
    """

    def __init__(self, encode: Any = None, library: tuple[Intent, ...] = LIBRARY) -> None:
        self.library = library
        self._encode = encode
        self._vectors: np.ndarray | None = None
        self._owner: np.ndarray | None = None

    @property
    def encode(self) -> Any:
        if self._encode is None:
            self._encode = sentence_encoder()
        return self._encode

    def warm(self) -> None:
        """Load the model and embed the library (done once, on first use)."""
        if self._vectors is None:
            texts, owner = [], []
            for n, intent in enumerate(self.library):
                texts.extend(intent.phrasings)
                owner.extend([n] * len(intent.phrasings))
            self._vectors = np.asarray(self.encode(texts), np.float32)
            self._owner = np.asarray(owner)

    def scores(self, text: str) -> list[tuple[Intent, float]]:
        """Every intent with its best phrasing's cosine to ``text``, best first."""
        self.warm()
        query = np.asarray(self.encode([text[:300]]), np.float32)[0]
        sims = self._vectors @ query
        best = np.full(len(self.library), -1.0, np.float32)
        np.maximum.at(best, self._owner, sims)
        order = np.argsort(-best)
        return [(self.library[i], float(best[i])) for i in order]

    def decide(self, text: str) -> Decision:
        """``plan``, ``ask`` or ``none`` for one request (see the module doc)."""
        ranked = self.scores(text)
        top, score = ranked[0]
        if score < MIN_SCORE:
            return Decision("none", (), (score,))
        rival = next(((i, s) for i, s in ranked[1:] if i.operation != top.operation), None)
        margin = UNSURE_MARGIN if score < UNSURE_SCORE else ASK_MARGIN
        if rival is not None and score < SURE_SCORE and score - rival[1] < margin:
            return Decision("ask", (top, rival[0]), (score, rival[1]))
        return Decision("plan", (top,), (score,))


@lru_cache(maxsize=1)
def default_matcher() -> IntentMatcher:
    """The shared matcher over the offline MiniLM model (loaded lazily, once)."""
    return IntentMatcher()
