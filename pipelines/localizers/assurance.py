"""Whether a resolved answer may be acted on without asking (issue 32: never a silent
failure).

A localiser answer is *resolved* when one candidate wins. On real photographs several
ways of winning cannot tell the named thing from something else, and an edit made on
them is wrong while it looks done:

* **a stand-in for an unknown noun** — the photo's salient subject taken as "the moon",
  "the snake", "the lamp": no model here recognises those words, so the subject is only
  a guess (it is right for the butterfly, wrong for "the snake" on the same kind of
  photo), unless the detector names its kind or, for a round noun, its round part was
  kept (``shapes``: the shape the word names is a second cue);
* **a colour region for a named thing** — "the red hill", "the white tubes" answered by
  the largest region of that colour (unless a detection of the named class, however
  weak, lies on it, or the noun is a round thing and the region is round: "the red
  ball"); a round shape word ("the grey disc") asks for a round region too; and a phrase
  that relates the thing to another ("the man in the red shirt") may give the colour of
  that other: its region is the shirt (brightened, IoU 0.45 said found), not the man;
* **a weak detection** — "the cow" at detector 0.37 where there is none: a unique box is
  taken even at a low score;
* **one of twins** — "the dog" where the detector sees two dogs about as surely: which
  one is meant is the user's call;
* **lifted by a closer look** — "the tv" where the whole photo showed three boxes of the
  class about as weakly (0.18–0.26) and a crop around one of them (a framed page) read it
  at 0.60: the crop took away what told them apart, so which one is meant is asked;
* **a part cut out for the whole** — the outline fills a sixth of the detector's box;
* **an outline that stops inside the photo where the detector's box runs out of it** —
  a black dog on a black backdrop, its body left out;
* **a part named through its whole** — "the dog's tongue", "the clock hands": the
  detector finds the dog or the clock, never the part;
* **a face with no one around it** — "the face" on Mount Rushmore: the face detector
  finds one of the four carved faces, and the detector no person (``face_of.no_person``).
* **a face seen from the side** — its ellipse is drawn in the middle of its box, and a
  profile's face fills one side of it: the rest is the neck and hair behind the jaw
  (``face_of.side_view``).

A class the detector knows by that very name ("the cat", "the boat") that no candidate
holds at ``DETECTOR_ABSENT`` or more is not in the photo: a refusal (the user may still
click it), not a question that offers the salient subject as a cat. Words that choose
among several ("the cup on the left", "all the cups") say there are some: those stay a
question.

``assure`` turns such an answer into ``ambiguous``: the candidates stay (shown to click,
the first one is the guess) and the reason says what is unsure and how to confirm
("click it"). Answers the user pointed at, skies, people's faces, text, the figure/ground split
and confident detections pass unchanged.
"""

from __future__ import annotations

import numpy as np

from pipelines.localizers.base import Candidate, Localization
from pipelines.operations.wordnet import lexicon
from pipelines.perception.words import WordMatch, match_noun

#: a detection of the named class below this is not acted on alone (tune: the absent
#: cow 0.37, cat 0.17, dog 0.21 and a train at 0.41 whose box held a fifth of it were
#: taken; every right detection scored 0.45 or more)
DETECTOR_SURE = 0.44
#: ... and when every candidate of a class named exactly stays below this, there is none
#: (tune: absent cats, dogs, boats and cups 0.11-0.25; a boat that is there 0.18)
DETECTOR_ABSENT = 0.26
#: a detected thing's outline fills at least this share of the detector's box (tune:
#: every right answer 0.61-0.69; the right-hand man's outline 0.17 of his box, a brush
#: 0.26: only a part was cut out); so does a salient subject taken for an animal the
#: detector saw under another class (right: a bison, a panda, a piglet, a gorilla, a
#: rabbit 0.48-0.70; a Komodo dragon without its tail 0.30, IoU 0.74)
FILLS_BOX = 0.35
#: a detector box this close to the frame's side (share of the frame: the box was cut by
#: the frame, one pixel of the detector's copy) says the thing runs out of the photo there
#: (a cup's box that ends 0.5 % above the bottom holds the saucer under it) ...
AT_EDGE = 0.002
#: ... and an outline that stops this far short of that side (share of the box) was cut
#: inside the thing (tune: a black dog on a near-black backdrop, its box at the photo's
#: right side, its outline 18 % of the box short of it: the dark body left out, IoU 0.75)
SHORT_OF_EDGE = 0.1
#: a person whose box the detector also reads as an animal this surely (share of its
#: person score) may be an animal (a proboscis monkey, person 0.56 and dog 0.43 on one box,
#: was brightened as "the person"; on the tune photos, a person detected at 0.44 or more
#: has animal classes at 0.31 of it at most, a dog and a cow read as persons 1.2-1.3)
ANIMAL_RIVAL = 0.65
#: a second instance this close to the best one (share of its detector score) is a twin
TWIN_SHARE = 0.6
#: ... with at least this much of the detector's own evidence
TWIN_FLOOR = 0.2
#: ... or, whatever the salient map says, the detector alone this sure of it and as close
#: (mirrored, a crouching man at the photo's side scored person 0.36 beside the other's
#: 0.50, but his salience was 0.03: "the man" was the other one, said found)
TWIN_DETECTOR = 0.3
#: pixels a chosen outline shares with a look-alike's (another detection of its class, a
#: distinct one) belong to neither for sure, and leave the chosen outline when there are
#: at least this share of it (tune: two white dogs side by side, the right one's box took
#: a 20 px strip of the left one's rump, 7 % of its outline; at 16 MP the edit of either
#: dog changed the other)
SHARED = 0.01
#: words a colour phrase may carry that do not name a thing ("the red part", "the blue
#: square")
GENERIC = frozenset({"region", "regions", "area", "areas", "part", "parts", "bit", "bits",
                     "thing", "things", "one", "ones", "colour", "color", "tone", "tones",
                     "patch", "patches", "spot", "spots", "stuff",
                     # shapes describe a region, they are not things to recognise
                     "square", "squares", "rectangle", "rectangles", "circle", "circles",
                     "disc", "discs", "disk", "disks", "dot", "dots", "blob", "blobs",
                     "shape", "shapes", "stripe", "stripes", "band", "bands", "box",
                     "boxes", "triangle", "triangles", "ring", "rings", "block", "blocks",
                     "pyramid", "pyramids", "cube", "cubes", "sphere", "spheres", "cone",
                     "cones", "cylinder", "cylinders", "star", "stars", "heart", "hearts",
                     "oval", "ovals", "ellipse", "ellipses", "hexagon", "polygon", "arrow",
                     "arrows", "cross", "crosses"})

#: words that end the head noun phrase and relate it to another thing ("the bottle held
#: by the man", "the label on the bottle")
RELATION = frozenset({"of", "in", "on", "at", "by", "with", "held", "holding", "near",
                      "behind", "under", "beside", "next", "above", "below", "wearing",
                      "inside", "against", "between", "from", "carrying", "sitting",
                      "standing", "lying", "over"})
#: place words a relation may end on ("on the far right") that are not things
PLACE = frozenset({"far", "left", "right", "top", "bottom", "middle", "centre", "center",
                   "side", "corner", "front", "back", "foreground", "background", "edge"})


def box_fill(mask: np.ndarray, box: tuple[float, ...], scale: float = 1.0) -> float:
    """The share of ``box`` (x0, y0, x1, y1, times ``scale`` to reach ``mask``'s pixels)
    that ``mask`` fills."""
    x0, y0, x1, y1 = (int(v * scale) for v in box)
    inside = np.count_nonzero(mask[max(0, y0):max(0, y1), max(0, x0):max(0, x1)])
    return float(inside) / max(1, (x1 - x0) * (y1 - y0))


def head_nouns(words: list[str], nouns: list[str]) -> tuple[list[str], bool]:
    """The nouns that name the target and whether the phrase relates it to another
    thing: "the bottle held by the man on the right" → (["bottle"], True); "the dog on
    the left" → (["dog"], False); "the cola bottle" → (["cola", "bottle"], False)."""
    named = set(nouns)
    head: list[str] = []
    for i, word in enumerate(words):
        if word in RELATION and head:
            rest = [w for w in words[i + 1:] if w in named and w not in RELATION
                    and w not in PLACE]
            return head, bool(rest)
        if word in named and word not in RELATION:
            head.append(word)
    return (head or nouns), False


def part_of(nouns: list[str], match: WordMatch) -> str:
    """The class a multi-word noun matched through a word that is not its head ("dog"
    for "the dog's tongue", "clock" for "the clock hands"); empty when the head itself
    names the class ("the coffee mug", "the tennis ball") or the lexicon knows the words
    as one name of it ("the tv set"; "the car door" is a door, not a car)."""
    if len(nouns) < 2 or not match.is_class:
        return ""
    lex = lexicon()
    whole = lex.sense(" ".join(nouns[-2:])) if lex is not None else None
    if whole is not None and whole.label == match.label:   # "tv set": one name of a tv
        return ""
    head = match_noun(nouns[-1])
    return "" if head.label == match.label else match.label


def head_last(words: list[str], nouns: list[str]) -> bool:
    """Whether the last noun is the phrase's head: nothing stands between it and the noun
    before it ("the ploughed field"; in "the boat on the lake" the boat is meant)."""
    if len(nouns) < 2 or nouns[-2] not in words or nouns[-1] not in words:
        return True
    return words.index(nouns[-1]) - words.index(nouns[-2]) == 1


#: words that make the sky named a mirror image of it ("the sky reflected in the lake")
MIRRORED = frozenset({"reflection", "reflections", "reflected", "reflecting", "mirrored",
                      "mirror", "mirroring"})


def sky_named(words: list[str], nouns: list[str]) -> bool:
    """Whether the phrase names the sky, not a thing in it: "the sky", "the sky above
    the hills"; in "the writing in the sky" or "the bird in the sky" the sky says where.
    Nor is "the sky's reflection" or "the sky reflected in the water" the sky: the mirror
    image lies in the water (wave 26: both were the sky above, edited and said done), and
    in "the sky's edge" what follows the possessive is the thing named."""
    if "sky" not in words or MIRRORED & set(words):
        return False
    at = words.index("sky")
    if words[at + 1:at + 2] == ["s"] and any(n in words[at + 2:] for n in nouns):
        return False
    return all(words.index(n) > at for n in nouns if n in words)


#: nouns whose shape is a round blob: a colour region that is round may stand for them
ROUND = frozenset({"ball", "balls", "sphere", "spheres", "globe", "globes", "orb", "orbs",
                   "marble", "marbles", "bead", "beads", "coin", "coins", "balloon",
                   "balloons", "bubble", "bubbles", "drop", "drops", "droplet", "droplets",
                   "dewdrop", "dewdrops", "raindrop", "raindrops", "pearl", "pearls"})


def is_round(noun: str) -> bool:
    """Whether a noun's words name a round blob ("the water drop", "the blue marble")."""
    return bool(set(noun.lower().split()) & ROUND)


#: shape words that say the region is round ("the grey disc"): a colour region that is
#: not round is not what they describe
ROUND_SHAPES = frozenset({"circle", "circles", "disc", "discs", "disk", "disks", "dot",
                          "dots"})


def _round(cand: Candidate) -> bool:
    """Whether a region is a round blob: it fills about pi/4 of a square-ish box."""
    box = cand.bbox
    if box is None:
        return False
    x0, y0, x1, y1 = box
    w, h = max(1, x1 - x0), max(1, y1 - y0)
    fill = float(cand.mask[y0:y1, x0:x1].sum()) / (w * h)
    return 0.8 <= w / h <= 1.25 and 0.7 <= fill <= 0.86


def class_support(by_colour: Localization, detected: list[Candidate]) -> None:
    """Mark ``by_colour``'s best region with the named class's detector evidence when a
    detection of that class (however weak) lies on it: "the red ball" is a red region the
    detector also reads as a ball, two cues agreeing (``assure`` then lets it stand)."""
    best = max(by_colour.masks, key=lambda m: m.score, default=None)
    if best is None:
        return
    support = [c.evidence.get("detector", 0.0) for c in detected
               if c.evidence.get("detector", 0.0) > 0.0 and _overlap(best.mask, c.mask) >= 0.5]
    if support:
        best.evidence["class_support"] = max(support)


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    inter = int(np.logical_and(a, b).sum())
    return inter / max(1, min(int(a.sum()), int(b.sum())))


def _apart(best: Candidate, twins: list[Candidate]) -> None:
    """``best`` without the pixels its outline shares with its look-alikes' (``SHARED``)."""
    if not twins:
        return
    shared = best.mask & np.logical_or.reduce([c.mask for c in twins])
    count, area = int(shared.sum()), int(best.mask.sum())
    if count and count >= SHARED * area:
        best.mask = best.mask & ~shared
        best.evidence["shared_cut"] = round(count / area, 3)     # of the outline, as SHARED


def stops_short(mask: np.ndarray, box: tuple[int, int, int, int]) -> str:
    """The side of the frame ("left", "top", "right", "bottom") that the detector's box
    reaches but the outline stops short of (module constants), or "" when none."""
    h, w = mask.shape
    x0, y0, x1, y1 = box
    reach = (x0 <= AT_EDGE * w, y0 <= AT_EDGE * h, x1 >= (1 - AT_EDGE) * w,
             y1 >= (1 - AT_EDGE) * h)
    if not any(reach):      # the common case: no projection of a large mask is needed
        return ""
    cols, rows = np.flatnonzero(mask.any(axis=0)), np.flatnonzero(mask.any(axis=1))
    if cols.size == 0:
        return ""
    bw, bh = max(1, x1 - x0), max(1, y1 - y0)
    sides = (("left", reach[0], cols[0], bw), ("top", reach[1], rows[0], bh),
             ("right", reach[2], w - 1 - cols[-1], bw),
             ("bottom", reach[3], h - 1 - rows[-1], bh))
    return next((side for side, reaches, gap, size in sides
                 if reaches and gap > SHORT_OF_EDGE * size), "")


def _twin(best: Candidate, others: list[Candidate]) -> Candidate | None:
    """Another detected instance about as sure as ``best`` (its fused score, detector
    and salient map together, or else its detector score) that is not the same thing."""
    key = "fused" if "fused" in best.evidence else "detector"
    score, detector = best.evidence.get(key, 0.0), best.evidence.get("detector", 0.0)
    for cand in others:
        det = cand.evidence.get("detector", 0.0)
        if cand is best or det < TWIN_FLOOR or _overlap(best.mask, cand.mask) >= 0.3:
            continue
        if cand.evidence.get(key, 0.0) >= TWIN_SHARE * score or \
                (det >= TWIN_DETECTOR and det >= TWIN_SHARE * detector):
            return cand
    return None


#: what every answer turned into a question by ``assure`` says: the guess is first
CONFIRM = "click it to confirm"


def unsure(found: Localization, why: str, noun: str) -> Localization:
    """``found`` turned into a question: ``why``, then its candidates to click."""
    mine = {id(m) for m in found.masks}
    shown = list(found.masks) + [c for c in found.candidates if id(c) not in mine]
    return Localization(shown, "ambiguous",
                        f"{why}; is the first one '{noun}'? {CONFIRM}, or click "
                        f"the right one (it was: {found.reason})",
                        plural=found.plural, candidates=found.candidates,
                        guess=len(found.masks))


def _absent(found: Localization, best: Candidate) -> float | None:
    """The surest detector score when every candidate is a weak detection of a class the
    words name exactly (module doc): none was pointed at, none carries other evidence
    that it is the thing (a kind); None otherwise."""
    pool = found.candidates or found.masks
    if any(c.evidence.get("user") or c.evidence.get("kind") for c in pool):
        return None
    if best.evidence.get("words", 0.0) < 1.0 or "detector" not in best.evidence:
        return None
    surest = max(c.evidence.get("detector", 1.0) for c in pool)
    return surest if surest < DETECTOR_ABSENT else None


def assure(found: Localization, *, noun: str, names_thing: bool, selectors: bool,
           part_of: str = "", related: bool = False) -> Localization:
    """``found`` as it is, or ``ambiguous`` when nothing here can tell the named thing
    from something else (module doc).

    Args:
        found: the localiser's answer.
        noun: the words that name the target ("snake", "red hill"), for the message.
        names_thing: the phrase names a thing beyond colour and place words.
        selectors: plural, ordinal, size or place words chose among instances.
        part_of: the whole the detector matched when the head noun is a part of it
            ("dog" for "the dog's tongue"); empty otherwise.
        related: the phrase relates the target to another thing ("held by the man"),
            which nothing here checks: it may only pick among one plausible candidate.
    """
    if found.status == "unresolved" or not found.masks:
        return found
    best = max(found.masks, key=lambda m: m.score)
    absent = None if selectors else _absent(found, best)    # "the left cup": there are cups
    if absent is not None:
        return Localization([], "unresolved", f"no {noun} found: the detector is at most "
                            f"{absent:.0%} sure of any candidate", candidates=found.candidates)
    if found.status != "resolved":
        return found
    ev = best.evidence
    if ev.get("user"):
        return found
    if ev.get("kind_guess"):
        return unsure(found, f"only a weak detection of that kind of thing stands for the "
                       f"{noun}", noun)
    if best.source == "u2netp" and "salient" in ev and not ev.get("words") \
            and not ev.get("kind") and not ev.get("shape") and names_thing:
        ev["subject_guess"] = 1.0       # second_look.vet may know the kind it is not
        return unsure(found, f"nothing here recognises '{noun}': the photo's main subject "
                       "is only a guess", noun)
    if best.source == "u2netp" and ev.get("support_runs_on"):
        ev["end_unsure"] = 1.0      # which thing it is stands; where it ends does not
        return unsure(found, f"what the {noun} stands on runs on into the outline I cut "
                      f"(a piece of its colour, {ev['support_runs_on']:.0%} of what I kept, "
                      "joins what I left out): where it ends is not known", noun)
    if best.source == "u2netp" and ev.get("kind_fill", 1.0) < FILLS_BOX:
        return unsure(found, f"the outline I cut fills only {ev['kind_fill']:.0%} of the box "
                       f"the detector drew around that {noun}: a part of it may be left out",
                       noun)
    chosen = {id(m) for m in found.masks}
    others = [c for c in found.candidates if id(c) not in chosen
              and _overlap(best.mask, c.mask) < 0.3]
    if related and best.source == "colour" and names_thing:
        return unsure(found, f"the region of that colour may be something the {noun} "
                       "has or wears, not the whole of it", noun)
    if related and others:
        return unsure(found, f"I cannot check how the {noun} relates to the rest of the "
                       "phrase, and there is more than one", noun)
    round_thing = is_round(noun) and _round(best)
    if best.source == "colour" and names_thing and not ev.get("class_support") \
            and not round_thing:
        return unsure(found, f"only the colour was matched, not the {noun} itself", noun)
    if best.source == "colour" and set(noun.split()) & ROUND_SHAPES and not _round(best):
        return unsure(found, f"the region of that colour is not round, as a {noun} is",
                       noun)
    if "detector" in ev:
        _apart(best, [c for c in others if c.label == best.label])
        if part_of:
            return unsure(found, f"I can find the {part_of} but not the {noun} on it", noun)
        if ev.get("no_person"):
            return unsure(found, f"no person is seen around that {noun}: it may be a "
                           "statue's, a carving's or a picture's", noun)
        if any(m.evidence.get("side_view") for m in found.masks):
            return unsure(found, "a face is seen from the side: where it ends (the jaw, the "
                           "neck and hair behind it) is only a guess", noun)
        if best.label == "person" and ev.get("animal", 0.0) >= ANIMAL_RIVAL * ev["detector"]:
            return unsure(found, f"the detector reads it as an animal almost as surely "
                           f"({ev['animal']:.2f}, and person {ev['detector']:.2f}): it may "
                           f"not be a {noun}", noun)
        if ev.get("larger"):
            ev["extent_doubt"] = ev["larger"]   # as sure as the larger reading (steady)
            return unsure(found, f"the detector also draws a larger {noun} around it "
                           f"({ev['larger']:.2f}): where it ends is not known", noun)
        if best.box is not None:
            fill = box_fill(best.mask, best.box)
            if fill < FILLS_BOX:
                if ev["detector"] < DETECTOR_SURE:      # weak too: second_look.vet may
                    ev["weak_part"] = round(float(ev["detector"]), 3)   # refuse it
                return unsure(found, f"the outline I cut fills only {fill:.0%} of the box "
                               f"the detector drew around the {noun}", noun)
            short = stops_short(best.mask, best.box)
            if short:       # which thing it is stands; where it ends does not
                best.evidence["end_unsure"] = 1.0
                return unsure(found, f"the detector's box runs out of the photo at the "
                               f"{short}, but the outline I cut stops short of it", noun)
        # chosen by place among look-alikes: the class must be sure somewhere in the photo
        pool = found.candidates if selectors else []
        surest = max([ev["detector"]] + [c.evidence.get("detector", 0.0) for c in pool])
        if surest < DETECTOR_SURE:
            # the only doubt left when no twin would be asked about below:
            # second_look.vet may settle it with the classifier
            if selectors or len(found.masks) != 1 or _twin(best, found.candidates) is None:
                ev["weak"] = round(float(surest), 3)
            return unsure(found, f"the detector is only {surest:.0%} sure this is "
                           f"'{noun}'", noun)
        lifted = ev.get("frame", ev["detector"])
        if not selectors and lifted < DETECTOR_SURE <= ev["detector"]:
            rivals = [c for c in others if c.evidence.get("detector", 0.0) >= TWIN_FLOOR
                      and c.evidence.get("frame", 0.0) >= TWIN_SHARE * lifted]
            if rivals:
                return unsure(found, f"only a closer look made the detector sure of this "
                               f"{noun} ({lifted:.2f} on the whole photo, then "
                               f"{ev['detector']:.2f}), and {len(rivals)} other(s) there "
                               "looked about as much like one", noun)
        if not selectors and len(found.masks) == 1:
            twin = _twin(best, found.candidates)
            if twin is not None:
                return Localization([best, twin], "ambiguous",
                                    f"two {noun}s look about as sure "
                                    f"(detector {ev['detector']:.2f} and "
                                    f"{twin.evidence['detector']:.2f}): click the one you "
                                    "mean, or say which (left/right, biggest…)",
                                    candidates=found.candidates)
    return found
