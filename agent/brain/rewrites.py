"""Photographers' and everyday words rewritten to the words the rules know (step 5 of
``agent.brain.frontend.normalise``): "blown out" → recover the highlights, "darken the
corners" → vignette, "too yellow" → cooler, "greener please" → a green tint, "less punchy"
→ less contrast, "remove the vintage look" → back to before it.

``REWRITES`` is a list of (pattern, replacement), applied in order to the lower-cased text
after the everyday question and complaint forms.
"""

from __future__ import annotations

_ADJ = (r"dark|darker|bright|brighter|light|warm|warmer|cold|colder|cool|cooler|blue|"
        r"yellow|green|orange|saturated|blurry|noisy|grainy|flat|dull|contrasty|much|"
        r"washed out|red|pink|magenta")
_INTENSIFY = r"(?:(?:way|much|far|really|very|a bit|a little|slightly|kinda|bit|pretty|quite) )?"

#: "get rid of the (ugly) …" and "… tint/cast": the two ends of a cast's removal
_RID_OF = (r"\b(?:get rid of|remove|kill|lose|eliminate|fix|take out|neutrali[sz]e|correct)"
           r"\s+(?:the |that |this |a |an )?(?:ugly |weird |strong |slight )?")
_CAST = r"\s+(?:tint|cast|tone|colou?r cast|hue)s?\b"

#: a comparative hue said of the whole photo: at the start (or after please), with the
#: photo or a bare pronoun as its object, an amount, and nothing named after it
_WHOLE_HUE_START = (r"(^\s*|[,.;!?] *|\b(?:please|pls|plz|could you|can you|would you|just) )"
                    r"(?:(?:make|get|turn) (?:it|this|that|everything|the colou?rs|(?:the |this )"
                    r"(?:whole )?(?:photo|image|picture|pic|shot)) )?((?:a (?:bit|little|lot|"
                    r"touch) |a little bit |slightly |much |way |even )?)")
_WHOLE_HUE_END = r"(?=\s*(?:$|[,.;!?]|please\b|pls\b|plz\b|overall\b|for me\b|and\b|but\b))"

#: Phrase rewrites, in order: (pattern, replacement). Applied to the lower-cased text.
REWRITES: list[tuple[str, str]] = [
    # shorthand that spans tokens
    (r"\bblack (?:n|&|and|\+) white\b|\bb ?& ?w\b", "black and white"),
    (r"\ba (?:smidge|smidgen|hair|notch|wee bit|lil bit|tiny bit|teeny bit|little tiny bit)"
     r"(?: more)?\b", "slightly"),
    (r"\b(?:just )?(?:a )?(?:touch|tad)\b", "slightly"),
    (r"\b(?:but )?(?:keep it )?subtle\b", "slightly"),
    # "its tilted", "to dark"
    (r"\b(?:its|it'?s|it\u2019s) (?=(?:too|so|really|very|way|kinda|pretty|quite|a bit|bit|all|"
     + _ADJ +
     r"|\w+(?:y|ed))\b)", "it is "),
    (r"(^|[,.;!?] *|\b(?:is|looks|seems|way|bit|little|far|much|kinda) )to (?=(?:" + _ADJ +
     r")\b)", r"\1too "),
    (r"\bcounter[- ]clockwise\b|\banti[- ]?clockwise\b|\bcounter clock wise\b",
     "counterclockwise"),
    (r"\bclock wise\b", "clockwise"),
    (r"\b(?:light|bright) and airy\b", "high key"),
    (r"\bteal (?:and|&|n) orange\b|\borange (?:and|&|n) teal\b", "teal-orange"),
    (r"\bdark (?:and|&|n) moody\b", "moody"),
    (r"\b(black and white|grayscale),?\s+(?:with\s+|through\s+)?(?:an? )?(red|orange|"
     r"yellow|green|blue) filter\b", r"\1 with a \2 filter"),
    (r"\bdrop\b(?= (?:the )?(?:exposure|brightness|contrast|saturation|vibrance|"
     r"temperature|warmth|highlights|shadows|sharpness|tint)\b)", "lower"),
    (r"\bbring (?:up|out)\b", "lift"),
    (r"\bbring down\b", "lower"),
    (r"\bbring (the \w+) (up|down)\b", lambda m: ("lift " if m.group(2) == "up" else
                                                     "lower ") + m.group(1)),
    (r"\b(?:i )?can'?t see (?:anything|much|a thing|any detail|the details?)(?: in)?\b",
     "lift"),
    # complaints: "this is super dark" asks for the opposite
    (r"\b((?:it|this|that|the (?:photo|image|picture|shot)|everything)\s+(?:is|looks|"
     r"seems|feels))\s+(so|super|very|really|quite|pretty|extremely|way|kinda|a bit)\s+"
     r"(dark|dim|bright|saturated|blurry|noisy|grainy|contrasty|warm|cold)\b",
     r"\2 too \3"),
    # questions and requests → commands
    (r"\b(?:would|do) you mind\s+(\w+?)(?:ing)\b", r"\1"),
    (r"\b(?:how about|what about)\s+(\w+?)(?:ing)\b", r"\1"),
    (r"^(?:hey|hi|hello|ok|okay|so|um+|uh+|hmm+|hm+|lol|ugh|well|yo)\b[,!.]* *", ""),
    (r"\b(?:could|can|would|will) you(?: please)?(?: maybe)?(?: just)?(?: try(?: and| to)?)?\s+",
     ""),
    (r"\b(?:is it possible|are you able|would it be possible)(?: for you)? to\s+", ""),
    (r"\b(?:how (?:do|can|would) i|how to|help me)\s+", ""),
    (r"\b(?:i(?:'d| would) like|i want|i need|i wanna)(?: you)? to\s+", ""),
    (r"\b(?:i(?:'d| would) like|i want|i need)\s+(it|this|the (?:photo|image|picture))\s+",
     r"make \1 "),
    (r"\b(?:i(?:'d| would) like|i want|i need|give me)\s+(?!.*\bto (?:be|look)\b)", ""),
    (r"\b(?:go ahead and|try to|let's|lets|kindly)\s+", ""),
    (r"\b(?:please|thanks|thank you|thankyou|cheers|lol|lmao|haha+|hehe+|if you can|if "
     r"possible|for me|real quick|quickly)\b", " "),
    # negation: "don't make it too X, just a little" → "make it slightly X"
    (r"\bdon't (?:make it|go) too (\w+)[, ]+(?:just )?(?:a little|a bit|slightly)(?: \w+)?",
     r"make it slightly \1"),
    (r"\b(?:less|not so|not as|not that|no longer)\s+(dark|dim)\b", "brighter"),
    (r"\b(?:less|not so|not as|not that)\s+(bright|light)\b", "darker"),
    (r"\b(?:less|not so|not as)\s+(blurry|blurred|soft)\b", "sharper"),
    (r"\b(?:less|not so|not as)\s+(noisy|grainy)\b", "reduce noise"),
    (r"\b(?:less|not so|not as)\s+(yellow|orange|yellowish)\b", "cooler"),
    (r"\b(?:less|not so|not as)\s+(blue|bluish|cold|cool|cooler)\b", "warmer"),
    (r"\b(?:less|not so|not as)\s+(warm|warmer)\b", "cooler"),
    (r"\b(?:less|not so|not as)\s+(flat|dull|washed out)\b", "more contrast"),
    # photographers' words
    (r"\b(?:the )?(?:highlights?|whites|sky|clouds)\s+(?:are|is|look|looks)?\s*" + _INTENSIFY +
     r"(?:all |totally |completely )?(?:blown(?: out)?|clipped|burn(?:ed|t) out|overblown)\b",
     "recover the highlights"),
    (r"\b(?:bring back|fix|recover|rescue|save)\s+(?:the\s+)?(?:blown|clipped|burnt)"
     r"(?: out)?\s+(?:highlights|areas|parts|sky|whites)\b", "recover the highlights"),
    (r"\b(?:it is |its |everything is )?(?:blown out|overblown)\b", "recover the highlights"),
    (r"\b(?:glare|hot ?spots)\b", "highlights"),
    (r"\b(?:dark|darker|shadowy) (?:areas?|parts?|bits?|spots?|regions?|tones)\b", "shadows"),
    (r"\b(?:bright|brighter|light) (?:areas?|parts?|bits?|spots?|regions?|tones)\b",
     "highlights"),
    (r"\bthe blacks\b", "the shadows"),
    (r"\b(?:the )?(?:white balance|wb|colou?r balance|colou?rs?) (?:is|are|looks?|seems?|"
     r"feels?) " + _INTENSIFY + r"(?:all |totally )?(?:off|wrong|weird|strange|funny|odd)\b",
     "fix the white balance"),
    (r"\b(?:the )?shadows (?:are|look|seem) (?:all |totally |a bit |" + _INTENSIFY +
     r"too |so )?(?:crushed|blocked(?: up)?|"
     r"too dark|black)\b", "lift the shadows"),
    (r"\b(?:the )?(?:corners|edges) (?:a bit |slightly |much )?(?:darker|dark)\b",
     "add vignette"),
    (r"\b(?:the )?(?:corners|edges) (?:a bit |slightly |much )?(?:lighter|brighter)\b",
     "lighten vignette"),
    (r"\bno (?:more )?vignette\b|\bwithout (?:the |a )?vignette\b", "remove the vignette"),
    (r"\bmoody (?:and|&|n) dark\b", "moody"),
    (r"\b(?:darken|darker|burn)\s+(?:the\s+|all\s+the\s+|the\s+four\s+)?(?:corners|edges)\b",
     "add vignette"),
    (r"\b(?:lighten|brighten|lighter|brighter)\s+(?:the\s+)?(?:corners|edges)\b",
     "lighten vignette"),
    (r"\b(?:the )?(?:corners|edges) (?:are )?too dark\b", "lighten vignette"),
    # "boost the greens": the green areas after a verb that boosts or mutes a colour range
    # (alone, "the greens" may be a golf course or vegetables)
    (r"\b(boost|pump up|enhance|intensify|punch up|bring out|deepen|enrich|richen|"
     r"strengthen|amp up|juice up|tone down|mute|desaturate|saturate) the greens\b",
     r"\1 the green areas"),
    # "softer shadows", "more detail in the shadows": lighter shadows, not a blur or a sharpen
    (r"\b(?:make )?(?:the )?shadows (?:a bit |slightly |much )?softer\b|\bsoften (?:the )?"
     r"shadows\b|\bsofter shadows\b|\bmore detail in (?:the )?shadows\b", "lift the shadows"),
    # "the reds", "boost the blues": a colour range, never a noun to find (WordNet's
    # "Reds" are people)
    (r"\b(?:the )?(red|blue|yellow|orange|purple|pink|magenta|cyan|teal)s\b",
     r"the \1 areas"),
    (r"\b(?:boost|pump up|enhance|intensify|punch up|bring out|deepen|enrich|richen|"
     r"strengthen|amp up|juice up)\s+the (\w+) areas\b", r"saturate the \1 areas"),
    (r"\b(?:tone down|turn down|mute|calm(?: down)?|reduce|soften|dial (?:back|down)|"
     r"knock (?:back|down)|tame|lessen|weaken)\s+the (\w+) areas\b",
     r"desaturate the \1 areas"),
    # "get rid of the yellow tint": a colour cast is the whole photo's, never a thing
    *((_RID_OF + hue + _CAST, remedy) for hue, remedy in (
        (r"(?:yellow|yellowish|orange|orangey|warm)", "cooler"),
        (r"(?:blue|bluish|cold|cool)", "warmer"),
        (r"(?:green|greenish)", "more magenta tint"),
        (r"(?:magenta|pink|pinkish|purple)", "more green tint"))),
    (r"\b(?:it is |this is |it looks |looks |is )?" + _INTENSIFY +
     r"(?:too|so) (?:yellow|yellowish|orange|orangey)\b", "cooler"),
    (r"\b(?:it is |this is |it looks |looks |is )?" + _INTENSIFY +
     r"(?:too|so) (?:blue|bluish)\b", "warmer"),
    (r"\b(?:it is |this is |it looks |looks |is )?" + _INTENSIFY +
     r"(?:too|so) (?:green|greenish)\b", "more magenta tint"),
    (r"\b(?:it is |this is |it looks |looks |is )?" + _INTENSIFY +
     r"(?:too|so) (?:magenta|pink|pinkish|purple)\b", "more green tint"),
    (r"\b(?:it )?(?:has|have|got) (?:a |an |some )?(?:slight |strong |weird |heavy )?"
     r"(?:green|greenish) (?:tint|cast)\b|\b(?:remove|fix) the green (?:tint|cast)\b",
     "more magenta tint"),
    (r"\b(?:it )?(?:has|have|got) (?:a |an |some )?(?:slight |strong |weird |heavy )?"
     r"(?:magenta|pink|purple) (?:tint|cast)\b|\b(?:remove|fix) the (?:magenta|pink) "
     r"(?:tint|cast)\b", "more green tint"),
    (r"\b(?:it )?(?:has|have|got) (?:a |an |some )?(?:slight |strong |weird |heavy )?"
     r"(?:yellow|orange|yellowish) (?:tint|cast)\b|\b(?:remove|fix|correct) the (?:yellow|"
     r"orange|yellowish) (?:tint|cast)\b", "cooler"),
    (r"\b(?:it )?(?:has|have|got) (?:a |an |some )?(?:slight |strong |weird |heavy )?"
     r"(?:blue|bluish) (?:tint|cast)\b|\b(?:remove|fix|correct) the (?:blue|bluish) "
     r"(?:tint|cast)\b", "warmer"),
    (r"\b(?:give it|make it|add)\s+(?:a |more |some )?(?:bluish|blue)\s+(?:tones?|tint|"
     r"cast|look|feel)\b|\b(?:give it|make it|add)\s+(?:a |more |some )?bluish\b",
     "make it cooler"),
    (r"\b(?:give it|make it|add)\s+(?:a |more |some )?(?:yellowish|orangey|warm)\s+"
     r"(?:tones?|tint|cast|glow)\b|\b(?:give it|make it|add)\s+(?:a |more |some )?"
     r"(?:yellowish|orangey)\b", "make it warmer"),
    # "make the car less red", "the skin looks too red": less of that colour on the thing
    # (it became a whole-photo generation), never a recolour
    (r"\bmake (the (?:[a-z]+ ){0,3}?[a-z]+) (?:a bit |a little |slightly |much )?less (?:red|"
     r"pink|purple|magenta|orange)\b", r"make \1 less saturated"),
    (r"^(the (?:[a-z]+ ){0,2}?[a-z]+) (?:looks|is|seems) (?:a bit |way |much )?too (?:red|"
     r"pink|purple|magenta)\b", r"make \1 less saturated"),
    # "remove the bottom 10%", "remove the left edge": a side of the frame is cropped off,
    # never filled in
    (r"^(?:remove|delete|erase|lose|get rid of) the (top|bottom|left|right)( \d{1,2} ?%| "
     r"(?:side|edge|strip|part|bit))(?!\w)", r"cut off the \1\2"),
    # "blur everything but the dog": one region, everything except the dog (the "but" split
    # it into "blur everything" and "blur the dog"); "keep the dog sharp and blur the rest"
    (r"\b(everything|the whole (?:photo|image|picture)) but (?=(?:the|that|this|those|these|"
     r"my|our|his|her|their) )", r"\1 except "),
    (r"^keep (the (?:[a-z]+ ){0,3}?[a-z]+) (?:sharp|in colou?r|as (?:it is|is)|untouched|the "
     r"same)(?: and|,) (.+?) (?:the rest|everything else)(?: of (?:the )?(?:photo|image|"
     r"picture))?(.*)$", r"\2 everything except \1\3"),
    # "brighten the lower half of the sky": 'lower' said of a place is the bottom, never the
    # verb (it darkened the whole sky, wave 27); "the lower left corner" likewise
    (r"\b(the|its|his|her|their|my|our|your|this|that) lower(?:-| )(?=[a-z])", r"\1 bottom "),
    # "the dog on the right, make it brighter": "it" is the thing named first
    (r"^(the (?:[a-z']+ ){0,5}?[a-z]+)\s*[,:;-]+\s*(?:please |can you |could you |just )?"
     r"(make|turn|get|brighten|darken|blur|sharpen|remove|erase|recolou?r|paint|colou?r) "
     r"(?:it|that|this one|this)\b", r"\2 \1"),
    # "swap the car colour to green": the car green (it asked 'more magenta?')
    (r"\b(?:swap|switch|change|turn) (the (?:[a-z]+ ){0,3}?[a-z]+?)(?:'s)? colou?r (?:to|into|"
     r"for) ", r"change the colour of \1 to "),
    # "remove the glare" (read as the highlights above): the highlights brought back, never
    # every bright part found and filled in
    (r"\b(?:remove|get rid of|kill|lose|erase) (?:the |that |this |some |all the )?"
     r"highlights\b", "recover the highlights"),
    # "start over", "revert to the original": back to the photo as it was loaded
    (r"^(?:let'?s |can we |could we |please )?(?:start (?:over|again|from scratch)|reset"
     r"(?: (?:it|everything|all|the (?:photo|image|picture|edits)))?|(?:revert|go back|get "
     r"back|return) to (?:the )?(?:original|unedited|beginning|start)(?: (?:photo|image|"
     r"picture|version))?|restore the original(?: (?:photo|image|picture))?|undo "
     r"(?:everything|all(?: the)? (?:edits|changes)?))\s*$", "go back to the original"),
    # "ditch the bin", "get the power lines out": everyday removal verbs
    (r"^(?:ditch|nuke|bin|lose|zap|axe|scrap|clone out|clone away|heal out|heal away|edit "
     r"out|photoshop out|airbrush out|airbrush away) (?=(?:the|that|those|these|all the) )",
     "remove "),
    (r"^get (the (?:[a-z]+ ){0,3}?[a-z]+) out(?: of (?:the |this |my )?(?:photo|picture|image|"
     r"shot|frame))?$", r"remove \1"),
    # "make it greener", "bluer please": a hue said of the whole photo is a cast (the
    # intent library read "greener" as "less green" and "bluer" as "less blue")
    *((_WHOLE_HUE_START + comparative + _WHOLE_HUE_END, r"\1\2" + cast)
      for comparative, cast in ((r"(?:greener|more green)", "more green tint"),
                                (r"(?:bluer|more blue)", "cooler"),
                                (r"(?:yellower|more yellow|more orange|oranger)", "warmer"),
                                (r"(?:pinker|more pink|more magenta)", "more magenta tint"))),
    # "less punchy", "softer colours": the opposite of the word's own edit (they made the
    # photo punchier, blurred it, or put the look on at full strength)
    (r"\b(?:less|not so|not as|not that) (?:punchy|dramatic|contrasty|harsh)\b",
     "less contrast"),
    (r"\b(?:less|not so|not as|not that) (?:muted|dull)\b", "more saturation"),
    (r"\b(?:less|not so|not as|not that) faded\b", "more contrast"),
    (r"\b(?:less|not so|not as|not that) (?:moody|gloomy|brooding)\b", "brighter"),
    (r"\b(?:softer|soft|gentler|subtler) colou?rs\b", "less saturation"),
    (r"\b(?:softer|soft|gentler) contrast\b", "less contrast"),
    # "remove the vintage look", "tone down the sepia": back to before it, never a thing to
    # find and fill, nor the look again at full strength
    (r"\b(?:remove|undo|take (?:off|away|out)|get rid of|strip|lose|drop|less of|weaken|"
     r"tone down|reduce|soften) (?:the |that |this )?(vintage|retro|sepia|matte|cinematic|"
     r"moody|teal and orange|golden hour|high key|low key)(?: look| effect| filter| style| "
     r"grade| tone)?\b", r"go back to before the \1 look"),
    (r"\b(?:more |a )?(?:bluish|blue tones)\b", "cooler"),
    (r"\b(?:more |a )?(?:yellowish|orangey)\b", "warmer"),
    (r"\b(?:it is |it looks |looks |is )?(?:way |a bit |kinda )?(?:washed[- ]out|flat)\b"
     r"(?! (?:tint|filter|look))", "more contrast"),
    (r"\bkill (?:the |all )?(saturation|colou?rs?)\b", "remove the colors"),
    (r"\b(?:way|much|a lot) more\b", "much more"),
    (r"\bsunset (?:light|glow|vibes?|tones?)\b", "golden hour"),
    (r"\b(?:vibes?|feel)\b", "look"),
]
