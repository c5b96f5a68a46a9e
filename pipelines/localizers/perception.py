"""``PerceptionLocalizer``: the embedded localiser with eyes.

It keeps everything ``EmbeddedLocalizer`` does (brush, box, point, colours, places, sky,
whole image) and adds what people actually name:

1. words → class (``words.match_noun``): a COCO class, faces, text, or the salient
   subject when no class fits but the words name one thing;
2. class → boxes (NanoDet on the frame; a zoom search over native-resolution tiles when
   the frame finds nothing confident or only small boxes);
3. box → pixel mask: U²-Net-p saliency on the box's crop seeds GrabCut, both at a small
   working size, the result brought back to full resolution inside the box (a person's
   box: MediaPipe Selfie's map of the crop instead, ``pipelines.perception.people``);
4. plural words take every instance, "left/biggest/second…" pick one, a low score is
   ``ambiguous`` with what was seen (the turn loop then asks for a brush).

"the background" is everything but the salient subject and the people in it ("the subject").
Registered as ``perception``, preferred over ``embedded`` when its files are installed;
GroundingDINO+SAM (``grounded-sam``) stays first when both weights are here. Per role
otherwise: GroundingDINO's weights alone replace NanoDet's boxes with its open-vocabulary
ones; SAM's alone turn the boxes into masks instead of U²-Net-p + GrabCut."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

import cv2
import numpy as np

from pipelines.localizers import (
    assurance,
    face_of,
    focus,
    fusion,
    main_subject,
    phrases,
    portion,
    relations,
    row,
    scene,
    second_look,
    stand_in,
    support_named,
    worn,
)
from pipelines.localizers import parts as colour_parts
from pipelines.localizers import text as text_regions
from pipelines.localizers.answers import (
    CONFIDENT,
    WEAK,
    calibrated,
    decide,
    distinct_masks,
    int_box,
    seen_line,
    what_for,
)
from pipelines.localizers.base import Candidate, Hint, Localization, as_rgb
from pipelines.localizers.embedded import EmbeddedLocalizer
from pipelines.localizers.grounded_sam import GroundedSAMLocalizer, detector_prompt
from pipelines.localizers.kin import UNSURE_END, reached_into_kin
from pipelines.localizers.phrases import WHOLE, Phrase, noun_words, parse_phrase, select_candidates
from pipelines.localizers.refine import upsample_edge, upsample_region
from pipelines.localizers.segment import largest_parts, refine_box
from pipelines.localizers.sky import ends_unsure
from pipelines.localizers.sky_backdrop import backdrop_behind
from pipelines.localizers.sky_grey import grey_settled
from pipelines.localizers.support import cut_evidence, cut_support
from pipelines.models import ModelUnavailable, get_manager
from pipelines.perception import people as person_outline
from pipelines.perception import store, zoom
from pipelines.perception import words as kinds
from pipelines.perception.detectors import (
    Detection,
    FaceDetector,
    ObjectDetector,
    SalientSegmenter,
    TextDetector,
    TextReader,
    shrink,
    shrunk_size,
)
from pipelines.perception.words import FACE, SALIENT, TEXT, WordMatch, match_noun

log = logging.getLogger(__name__)

#: a detector box needs this score to be a candidate at all
CANDIDATE = 0.2
FACE_MIN = 0.6
#: a box smaller than this fraction of the frame triggers the zoom search
SMALL = 0.02
#: long side of the frame copy the detectors and the salient map see
FRAME_SIDE = 1024
#: working side of a box crop during mask refinement (GrabCut)
CROP_SIDE = 256
#: side U²-Net-p sees a box crop at (320 is its trained size; the cost is quadratic)
SALIENT_CROP_SIDE = 224
#: most candidates refined to pixel masks for one phrase
MAX_REFINED = 8
#: weak candidates looked at again on a crop where they fill the detector's view
LOOK_CLOSER = 3
#: long side of the copy the salient map is computed on for a whole frame
SALIENT_SIDE = 512
#: a detection this sure explains the salient subject as its own class
EXPLAINED = 0.6
#: most people added to the subject when "the background" is asked for
MAX_PEOPLE = 4
#: words that are not objects ("the background", places, sizes are handled elsewhere)
NOT_NOUNS = {"subject", "background", "foreground", "sky", "one", "ones", "thing", "things"}
#: plural nouns without an -s
COLLECTIVE = {"people", "men", "women", "children", "kids", "faces", "persons", "crowd"}


class _Models:
    """The nets, loaded once per process on first use (the text reader if installed)."""

    _lock = threading.Lock()
    objects: ObjectDetector | None = None
    faces: FaceDetector | None = None
    salient: SalientSegmenter | None = None
    text: TextDetector | None = None
    reader: TextReader | None = None

    @classmethod
    def get(cls) -> type[_Models]:
        with cls._lock:
            if cls.objects is None:
                cls.objects, cls.faces, cls.salient, cls.text = (
                    ObjectDetector(), FaceDetector(), SalientSegmenter(), TextDetector())
                cls.reader = text_regions.shared_reader()
        return cls


class PerceptionLocalizer(EmbeddedLocalizer):
    """Objects, people, faces and the salient subject, on the CPU, from registry weights."""

    name = "perception"
    requires_weights = True
    unnamed = "names no thing, colour or place I know how to look for"
    priority = -1        # the CPU fallback: any heavier model localiser goes first

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        """Available when the install step has put every model file in place."""
        missing = [k for k, v in store.role_status().items() if not v.available
                   and k not in ("words", "reader", "kinds", "people")]
        if missing:
            return False, f"perception models missing ({', '.join(missing)}); run `make install`"
        return True, ""

    def locate(self, image: np.ndarray, phrase: str, hint: Hint | None = None) -> Localization:
        """Find what ``phrase`` names (see the module doc); hints and colour/place/sky
        phrases behave as in ``EmbeddedLocalizer``.

        Args:
            image: uint8 HWC RGB/RGBA at full resolution.
            phrase: e.g. "the cup", "all the people", "the left cat", "the background".
            hint: a brush mask, box or point, used first when given.

        Returns:
            Candidates at the image's size with scores; ``ambiguous`` when unsure.
        """
        parsed = parse_phrase(phrase)
        nouns = noun_words(parsed, NOT_NOUNS)
        words = set(parsed.words)
        has_hint = hint is not None and hint.given
        if parsed.exclude is not None and not has_hint and not WHOLE.search(parsed.text) \
                and phrases.other_thing(nouns, noun_words(parsed.exclude, NOT_NOUNS)):
            return portion.less(self.locate, as_rgb(image), parsed.text, parsed.exclude.text)
        pair = None if has_hint else portion.two(parsed.text)
        if pair:        # "the sky and the sea": each, then both
            return portion.both(self.locate, as_rgb(image), *pair)
        part = None if has_hint else portion.split(parsed.text)
        if part:        # "the top of the sky": the sky, then its top half, asked
            return portion.of(self.locate, as_rgb(image), *part)
        if assurance.sky_named(parsed.words, nouns) and not has_hint and \
                not WHOLE.search(parsed.text):
            side = portion.side_of(parsed.words)     # "the sky on the left": a part of it
            return portion.of(self.locate, as_rgb(image), side, "", "the sky") if side \
                else self._sky(as_rgb(image))
        if has_hint or WHOLE.search(parsed.text):
            return super().locate(image, phrase, hint)
        rgb = as_rgb(image)
        if not nouns and words & {"background", "foreground", "subject"}:
            return self._figure_ground(rgb, "background" in words)
        if not nouns:
            return super().locate(image, phrase, hint)
        if whose := face_of.owner(parsed.text):  # "the face of the man in red": the man's
            return face_of.find(self.locate, rgb, whose)
        if dressed := worn.split(parsed.text):  # "the man in the white sweater": who wears it
            return worn.choose(self.locate, rgb, *dressed)
        if related := relations.split(parsed.text):  # "the white flower under the butterfly"
            return relations.choose(self.locate, rgb, self.locate(rgb, related[0]),
                                    *related[1:])
        if owned := colour_parts.possessed(parsed.text):  # "the dog's tongue": the dog's pink
            return colour_parts.find_part(self.locate, rgb, *owned)
        nouns, tied = assurance.head_nouns(parsed.words, nouns)  # "the bottle held by …"
        noun = " ".join(nouns[-2:]) if len(nouns) > 1 else nouns[0]
        # "the red disc": a colour and a word no detector knows → the colour regions
        # "the lake", "the green hills": a region of the scene, not a thing (the table's
        # words before the embedding's guess, which loads MiniLM: "snow" is no snowboard)
        named = scene.kind_of(noun, "") if assurance.head_last(parsed.words, nouns) else ""
        match = match_noun(noun, use_embedding=not parsed.colors and not named)
        kind = named or (scene.kind_of(noun, match.category) if match.label == SALIENT
                         and assurance.head_last(parsed.words, nouns) else "")
        if kind:
            return scene.find_region(rgb, kind, parsed, match.noun, kinds.understood(match))
        found = stand_in.narrow(self._named(image, rgb, phrase, hint, parsed, match, nouns,
                                            words), rgb, match, _Models, self._refine)
        selectors = bool(parsed.plural or parsed.ordinal or parsed.last or parsed.size
                         or parsed.spatial)
        thing = any(w not in assurance.GENERIC for w in nouns)
        return second_look.vet(assurance.assure(
            found, noun=noun, names_thing=thing, selectors=selectors,
            part_of=assurance.part_of(nouns, match), related=tied), rgb, noun, match.label, parsed)

    def _named(self, image: np.ndarray, rgb: np.ndarray, phrase: str, hint: Hint | None,
               parsed: Phrase, match: WordMatch, nouns: list[str], words: set[str]
               ) -> Localization:
        """The answer for words that name something: a class, a face, text or a stand-in."""
        if parsed.colors and match.label == SALIENT:
            found = super().locate(image, phrase, hint)
            if found.status == "resolved" and not set(parsed.colors) & words:
                # "the wooden cabinet": wood's colour is a guess, not the user's word
                for cand in found.masks:
                    cand.score = min(cand.score, WEAK)
                found = Localization(found.masks, "ambiguous", f"{match.noun}: by the "
                                     "colour of what it is made of "
                                     f"({' or '.join(parsed.colors)}), {found.reason}; "
                                     "click it if it is what you mean",
                                     candidates=found.candidates)
            return found
        if nouns[-1] in COLLECTIVE:
            parsed = replace(parsed, plural=True)
        found = self._open_vocabulary(rgb, parsed) if _role_ready("detector") else None
        if found is not None and found.status != "unresolved":  # GroundingDINO, no SAM
            return found
        if match.label == SALIENT:      # "the Eristoff poster": read, then its ground
            return support_named.find(rgb, nouns[-1], _Models.get()) or \
                text_regions.read_sign(rgb, parsed, _Models.get()) or \
                self._salient(rgb, match, parsed)
        elif match.label == FACE:
            return self._faces(rgb, parsed, match)
        elif match.label == TEXT:
            return self._text(rgb, parsed)
        found = self._objects(rgb, parsed, match)
        if parsed.colors and found.status != "resolved" and \
                not found.reason.startswith(UNSURE_END):  # the thing, its end unsure
            by_colour = super().locate(image, phrase, hint)
            if by_colour.status == "resolved":
                assurance.class_support(by_colour, found.candidates)
                return by_colour
        return found

    def _sky(self, rgb: np.ndarray) -> Localization:
        """``scene.any_sky``, then a portrait's backdrop is told from a sky (``backdrop_behind``):
        the people are looked for only when a sky was found."""
        found = ends_unsure(grey_settled(rgb, scene.any_sky(rgb)))   # blue, pale, dusk, grey
        if found.status != "resolved":
            return found
        frame = shrink(rgb, FRAME_SIDE)
        scale = rgb.shape[1] / frame.shape[1]
        people = [tuple(v * scale for v in d.box)
                  for d in _Models.get().objects.detect(frame, CONFIDENT) if d.label == "person"]
        return backdrop_behind(found, people, rgb)

    # --- objects --------------------------------------------------------------------

    def _objects(self, rgb: np.ndarray, parsed: Phrase, match: WordMatch) -> Localization:
        """Every object the detector or the salient map sees, scored against the words
        (``fusion``): a unique plausible one is taken even at a low score, close ones are a
        question, none is "not found"."""
        models = _Models.get()
        h, w = rgb.shape[:2]
        frame = shrink(rgb, FRAME_SIDE)
        scale = w / frame.shape[1]
        seen = models.objects.detect(frame, fusion.FLOOR)
        for d in seen:
            d.box = tuple(v * scale for v in d.box)
        objects = fusion.group(seen, match.label)
        selectors = bool(parsed.plural or parsed.ordinal or parsed.last or parsed.size
                         or parsed.spatial)
        evident = fusion.evidenced(objects, match.label)
        # one sure object, the rest far weaker, no choosing words: the salient map would not
        # change the answer (a third of the frame pass); nor is its copy made, only sized
        prob = np.zeros(shrunk_size(rgb.shape, SALIENT_SIDE), np.float32)
        pscale, small = w / prob.shape[1], None     # small: there whenever selectors are
        evidence = sorted((o.evidence for o in evident), reverse=True) + [0.0, 0.0]
        if selectors or evidence[0] < fusion.SURE_OTHER or evidence[1] >= 0.5 * evidence[0]:
            prob = models.salient.saliency(small := shrink(rgb, SALIENT_SIDE))
            fusion.salient_agreement(objects, prob, pscale)
        weak = [o for o in fusion.distinct(fusion.evidenced(objects, match.label))
                if o.evidence < fusion.SURE_OTHER]
        sure = [o for o in objects if o.scores.get(match.label, 0.0) >= fusion.SURE_OTHER]
        # look closer at the weak ones, once; not at one that overlaps a sure one of the
        # class (a crop of a motorcycle's rear half is seen as "a motorcycle" on its own)
        weak = [o for o in weak if all(fusion.inside_share(o.box, s.box) < 0.3
                                       for s in sure)]
        for obj in weak[:LOOK_CLOSER]:
            fusion.look_closer(models.objects, rgb, obj)
        cands = fusion.distinct(fusion.plausible(objects, match.label))
        named = [o for o in cands if o.scores.get(match.label, 0.0) >= CANDIDATE]
        tiny = all((o.box[2] - o.box[0]) * (o.box[3] - o.box[1]) < SMALL * h * w
                   for o in named)
        if (not named or tiny or parsed.plural) and max(h, w) > 1.2 * 832:
            # one thing asked for: the most salient tiles first, done at a sure one
            zoomed = zoom.search(
                models.objects, rgb, {match.label}, CANDIDATE,
                priority=prob if prob.any() else None,
                enough=None if selectors else fusion.SURE_OTHER)
            if zoomed:          # small ones the frame could not see: regroup with them
                seen += zoomed
                objects = fusion.group(seen, match.label)
                fusion.salient_agreement(objects, prob, pscale)
                cands = fusion.distinct(fusion.plausible(objects, match.label))
        if selectors and cands:       # instances the detector names otherwise
            pool = [o for o in objects if o not in cands]
            for box, _ in fusion.split_instances(fusion.salient_components(prob, pscale),
                                                 small, pscale):
                if all(fusion.box_iou(box, o.box) < 0.3 for o in objects):
                    pool.append(fusion.ObjectEvidence(box, {}, 0.0, "salient"))
            fusion.salient_agreement(pool, prob, pscale)
            pool = [o for o in pool if o.salient >= fusion.SALIENT_AGREE]
            cands = fusion.distinct(cands + fusion.look_alikes(frame, scale, cands[0], pool))
            floor = max(fusion.TAKE_UNIQUE, fusion.COMPARABLE * cands[0].fused)
            cands = [c for c in cands if c.fused >= floor] or cands[:1]
        verdict = fusion.verdict(cands, selectors)
        twins = fusion.twins(frame, scale, cands) if verdict == "take" else []
        if twins:                   # which of twins is meant is the user's call
            verdict, cands = "ask", [cands[0], *twins]
        what = what_for(match)
        strong = [d for d in seen if d.score >= CANDIDATE]
        if verdict == "none":
            return Localization([], "unresolved", f"no {what} found{seen_line(strong)}; paint "
                                "it with the brush")
        if verdict == "ask" and not twins:  # shown to click: not what looks more like
            cands = fusion.to_offer(cands, match.label)      # another class than the named one
        masks, unsure = [], ""
        sure = [o.box for o in objects if o.best_class[1] >= fusion.SURE_OTHER]
        for obj in cands[:MAX_REFINED]:
            det = Detection(obj.box, obj.fused, match.label)
            others = [o.box for o in cands[:MAX_REFINED] if o is not obj] + sure
            for cand in self._masks(rgb, [det], "nanodet"):
                cand.mask, caught = fusion.check_extent(cand.mask, obj.box, others)
                if verdict == "take" and obj is cands[0] and not unsure:   # the one taken
                    unsure = reached_into_kin(cand.mask, obj.box, match.label, seen) or \
                        caught.replace(fusion.CAUGHT, "the outline I cut ran past its box")
                if caught:          # compared with its own evidence before any edit
                    obj.why = f"{obj.why}; {caught}"
                cand.score = obj.fused
                cand.evidence = {"detector": obj.scores.get(match.label, 0.0),
                                 "frame": (obj.frame or obj.scores).get(match.label, 0.0),
                                 "outline": cand.evidence.get("outline", 1.0),
                                 "caught": float(bool(caught)),  # cut back (worn)
                                 "words": float(match.similarity), "salient": obj.salient,
                                 "fused": obj.fused, "larger": 0.0 if parsed.plural
                                 else fusion.larger_reading(obj, objects, match.label),
                                 "rival": max((v for k, v in obj.scores.items()
                                               if k != match.label), default=0.0),
                                 "animal": kinds.category_score(obj.scores, "animal")}
                masks.append(cand)
        masks = distinct_masks(masks)
        if not masks:
            return Localization([], "unresolved", f"no {what} found{seen_line(strong)}")
        why = cands[0].why
        if verdict == "take" and not unsure and not masks[0].evidence.get("outline", 1.0):
            unsure = "nothing inside its box stands out from what is around it"
        if verdict == "take" and unsure:           # where it ends is not known: ask
            masks[0].evidence["extent_doubt"] = 1.0     # held from a copy (steady)
            return Localization(masks, "ambiguous", f"{UNSURE_END} {what} ends: {unsure}; "
                                "click it, or paint it with the brush", candidates=masks)
        if verdict == "take":
            found = Localization([masks[0]], "resolved", f"found the {what}, confidence "
                                 f"{masks[0].score:.2f} ({why})", candidates=masks)
        elif verdict == "choose":
            found = row.choose(masks, cands, parsed, what, objects, match.label,
                               row.Looks(models.objects, rgb))
            found.candidates = masks if not found.candidates else found.candidates
            if found.status == "resolved":
                scores = ", ".join(f"{m.score:.2f}" for m in found.masks)
                found.reason = f"{found.reason} (confidence {scores}; best: {why})"
        else:
            listed = "; ".join(f"{m.score:.2f}" for m in masks[:4])
            alike = " that look alike" if twins else ""
            found = Localization(masks, "ambiguous", f"unsure which is the {what}: "
                                 f"{len(masks)} candidate(s){alike} scored {listed} (best: {why}); "
                                 "click one, say which (left/right, biggest…) or paint it")
        return found

    def _open_vocabulary(self, rgb: np.ndarray, parsed: Phrase) -> Localization:
        """Boxes from GroundingDINO (the phrase itself, no class list), masks as below."""
        try:
            dets = GroundedSAMLocalizer().detect(rgb, detector_prompt(parsed.text))
        except ModelUnavailable as exc:
            return Localization([], "unresolved", str(exc))
        what = parsed.text or "target"
        if not dets:
            return Localization([], "unresolved", f"GroundingDINO found no {what!r}")
        dets = sorted(dets, key=lambda d: -d.score)[:MAX_REFINED]
        return decide(self._masks(rgb, dets, "grounding-dino"), parsed, what, [])

    def _masks(self, rgb: np.ndarray, dets: list[Detection], boxes_from: str) -> list[Candidate]:
        """One pixel mask per box: SAM when its weights are here, else U²-Net-p + GrabCut."""
        if _role_ready("segmenter"):
            try:
                masks = GroundedSAMLocalizer().segment(rgb, dets)
                for m in masks:
                    m.source = f"{boxes_from}+sam"
                return [m for m in masks if m.mask.any()]
            except ModelUnavailable as exc:
                log.warning("SAM unavailable, refining boxes on the CPU: %s", exc)
        cands = []
        for d in dets:      # no outline in the box: the box itself, marked as a guess
            mask = self._refine(rgb, d.box, or_box=False, label=d.label)
            outline = float(mask.any())
            if not outline:
                x0, y0, x1, y1 = int_box(d.box)
                mask[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = True
            cands.append(Candidate(mask, calibrated(d.score), d.label,
                                   f"{boxes_from}+{person_outline.cut_name(d.label)}",
                                   {"detector": calibrated(d.score), "outline": outline},
                                   int_box(d.box)))
        return [c for c in cands if c.mask.any()]

    def _faces(self, rgb: np.ndarray, parsed: Phrase, match: WordMatch) -> Localization:
        models = _Models.get()
        dets, people = face_of.detect(rgb, models.faces, models.objects, FRAME_SIDE, FACE_MIN)
        if not dets:
            return Localization([], "unresolved", "no face found; paint it with the brush")
        cands = [Candidate(face_of.face_ellipse(rgb.shape[:2], d.box), calibrated(d.score), FACE,
                           "blazeface", {"detector": calibrated(d.score),
                                         "no_person": face_of.no_person(d.box, people),
                                         "side_view": face_of.side_view(d)},
                           int_box(d.box))
                 for d in sorted(dets, key=lambda d: -d.score)[:MAX_REFINED]]
        return decide(cands, parsed, "face", [])

    def _text(self, rgb: np.ndarray, parsed: Phrase) -> Localization:
        """Text regions (``text``): "the text" is all of it, unless a word picks one."""
        models = _Models.get()
        dets = models.text.detect(rgb)
        if not dets:
            return Localization([], "unresolved", "no text found; paint it with the brush")
        marks = bool(text_regions.MARK_WORDS & set(parsed.words))
        cands, lines = [], {}
        for d in dets[:MAX_REFINED * 2]:
            box = text_regions.tighten(rgb, int_box(d.box))
            if marks:       # a watermark or logo: the text and the mark beside it
                mask = text_regions.with_marks(rgb, box)
            else:
                mask = np.zeros(rgb.shape[:2], bool)
                mask[box[1]:box[3], box[0]:box[2]] = True
            cands.append(Candidate(mask, calibrated(d.score), TEXT, "ppocr-det+ink",
                                   {"detector": calibrated(d.score)}))
            lines[id(cands[-1])] = int_box(d.box)   # read with the detector's margin
        picks = parsed.ordinal or parsed.last or parsed.size or parsed.spatial
        found = decide(cands, parsed if picks else replace(parsed, plural=True), "text", [])
        return text_regions.unread(
            text_regions.lines_only(found), [w for w in parsed.words if w not in parsed.colors],
            picks, text_regions.reading(models.reader, rgb, lines), parsed.plural,
            lambda: text_regions.vehicles(models.objects, shrink(rgb, FRAME_SIDE), rgb.shape))

    # --- subject / background ----------------------------------------------------------

    def _subject_mask(self, rgb: np.ndarray) -> np.ndarray | None:
        models = _Models.get()
        frame = shrink(rgb, 512)
        prob = models.salient.saliency(frame)
        mask = largest_parts(prob >= 0.5, keep=0.25)
        if mask.mean() < 0.002:
            return None
        # its kept parts, their edges decided at native resolution (``refine``)
        near = cv2.dilate(mask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        return upsample_edge(rgb, np.where(near, prob, 0.0).astype(np.float32))

    def _salient(self, rgb: np.ndarray, match: WordMatch, parsed: Phrase) -> Localization:
        """Words no class fits ("the hedgehog"): the photo's main subject, when the words
        name one thing, a subject stands out and no detected class explains it better (a
        person is not "the unicorn"). Plural, size, place and ordinal words choose among
        the salient objects."""
        text = parsed.text
        models = _Models.get()
        small = shrink(rgb, SALIENT_SIDE)
        prob = models.salient.saliency(small)
        scale = rgb.shape[1] / small.shape[1]
        parts = fusion.salient_components(prob, scale)
        selectors = parsed.plural or parsed.ordinal or parsed.last or parsed.size or \
            parsed.spatial
        if selectors:           # touching look-alikes: one part per instance to pick from
            parts = fusion.split_instances(parts, small, scale)
        if not parts or prob.max() < 0.5:     # in a shallow focus, what is sharp is asked
            return focus.sharp_things(rgb, text)
        frame = shrink(rgb, FRAME_SIDE)
        fscale = rgb.shape[1] / frame.shape[1]
        dets = models.objects.detect(frame, CANDIDATE)
        cands, first_kind = [], None    # the detection of the main subject's kind
        for box, whole in parts[:MAX_REFINED]:
            part, cut = cut_support(small, whole)   # not the branch it sits on
            if cut:
                x, y, bw, bh = cv2.boundingRect(part.astype(np.uint8))
                box = (x * scale, y * scale, (x + bw) * scale, (y + bh) * scale)
            # its edge decided at native resolution, as the sky's and the subject's are
            mask = upsample_region(rgb, part)
            held = [d for d in dets if main_subject.covers(d, mask, fscale)]
            owner = fusion.explainer(held, EXPLAINED)
            kind, fill = 0.0, 1.0     # "the squirrel" seen as a cat: an animal, as it says
            if owner is not None and owner.label in kinds.CATEGORY_CLASSES.get(match.category, ()):
                kind, fill = owner.score, assurance.box_fill(mask, owner.box, fscale)
                first_kind = owner if not cands else first_kind
                owner = None
            if owner is not None:
                if len(parts) == 1 or not cands:      # seen, but not offered as one
                    return Localization([], "unresolved", f"{text!r}: the main subject is a "
                                        f"{owner.label} (detector {owner.score:.2f}), not a "
                                        f"{match.noun}; not found (paint it with the brush)",
                                        candidates=[Candidate(mask, 0.2, owner.label, "u2netp")])
                continue
            strength = float(prob[part].mean())
            evidence = {"salient": strength, "words": 0.0} | \
                cut_evidence(small, whole, part, cut) | \
                ({"kind": kind, "kind_fill": fill} if kind else {})
            cands.append(Candidate(mask, round(0.3 + 0.4 * strength, 3), match.noun,
                                   "u2netp", evidence, int_box(box)))
        if not cands:
            return Localization([], "unresolved", f"{text!r}: not found")
        if selectors:
            found = select_candidates(cands, parsed, match.noun)
        else:
            main = cands[0]
            keep = [c for c in cands if c.area >= 0.25 * main.area]
            apart = [c for c in keep[1:] if not fusion.near(c.box, main.box)]
            if apart:               # separate objects stand out: which one is unknown
                return Localization(keep, "ambiguous", f"unsure which is the {match.noun}: "
                                    f"{len(keep)} separate objects stand out and no detector "
                                    "class fits the word; click one or paint it with the "
                                    "brush", candidates=cands)
            twins = main_subject.lookalikes(first_kind, dets, main.mask, fscale) \
                if first_kind is not None else []
            if twins:               # "the bison" beside another bison (vetted as one)
                main.evidence["lookalikes"] = float(len(twins))
                others = [Candidate(self._refine(rgb, tuple(v * fscale for v in d.box), False),
                                    0.3, match.noun, "u2netp") for d in twins[:MAX_REFINED]]
                return Localization([main] + others, "ambiguous", f"unsure which is the "
                                    f"{match.noun}: the detector sees {len(twins) + 1} of its "
                                    f"kind ({first_kind.label}); click the one you mean, or say "
                                    "which (left/right, biggest…)", candidates=cands + others)
            if len(keep) > 1:       # one thing named, one subject: its parts together
                main = Candidate(np.logical_or.reduce([c.mask for c in keep]), main.score,
                                 match.noun, "u2netp", main.evidence)
            found = Localization([main], "resolved", "", candidates=cands)
        return main_subject.described(found, rgb, match, parsed)

    def _figure_ground(self, rgb: np.ndarray, background: bool) -> Localization:
        """The salient subject together with every confident person (a group photo's
        saliency map may single out one of them) and every instance of the subject's own
        class (two horses, not the one that stands out); the background is the rest."""
        subject = self._subject_mask(rgb)
        frame = shrink(rgb, FRAME_SIDE)
        scale = rgb.shape[1] / frame.shape[1]
        seen = _Models.get().objects.detect(frame, CONFIDENT)
        for d in seen:
            d.box = tuple(v * scale for v in d.box)
        classes = {"person"} | ({d.label for d in seen if main_subject.in_subject(d, subject)}
                                if subject is not None else set())
        people = [d for d in seen if d.label in classes][:MAX_PEOPLE]
        for person in people:
            mask = self._refine(rgb, person.box, label=person.label)
            subject = mask if subject is None else subject | mask
        if subject is None:
            return super().locate(rgb, "background" if background else "subject")
        label = "background" if background else "subject"
        mask = ~subject if background else subject
        if not mask.any():
            return Localization([], "unresolved", f"the {label} is empty")
        return Localization([Candidate(mask, 0.8, label, "u2netp")], "resolved",
                            f"resolved to the {label} (salient-object mask)")

    # --- box → mask --------------------------------------------------------------------

    def _refine(self, rgb: np.ndarray, box: tuple[float, ...], or_box: bool = True,
                label: str = "") -> np.ndarray:
        """A pixel mask of the object in ``box`` (``masks.refine_box`` with U²-Net-p; a
        person's outline from Selfie first, ``pipelines.perception.people``)."""
        salient = _Models.get().salient
        return refine_box(rgb, box, lambda crop: salient.saliency(crop, SALIENT_CROP_SIDE),
                          CROP_SIDE, or_box, person_outline.cut_for(label))


def _role_ready(role: str) -> bool:
    """Whether a heavy model role (``detector``/``segmenter``) has its weights here."""
    try:
        return get_manager().role_status(role).available
    except Exception as exc:  # noqa: BLE001 - a broken model config must not stop localising
        log.warning("status of the %s role failed: %s", role, exc)
        return False
