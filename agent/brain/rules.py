"""The rule planner: turn an instruction into atomic, ordered, validated Actions, no model.

``RulePlanner`` (the embedded default) splits the instruction into clauses
("and", "then", commas, sentences), reads each clause against the operations
(``pipelines.operations``) with the readers of ``agent.brain.readers``, resolves pronouns
and "the same colour" through the session memory, and says plainly when a request is not
a visual edit. ``agent.brain.planner`` holds the model-backed planner, which falls back to
this one.

Decisions (documented here because users will meet them):

* Generative asks the classical editor cannot do ("add a dog", "replace the sky with a
  sunset", "make it snowy") become a ``generate`` action; the session then reports that a
  generative editor is needed. Where a classical operation fits, it is used instead:
  "add the text 'hi'" → ``text``, "remove the red ball" → ``inpaint``, "replace the car's
  colour with blue" → ``recolor``, "remove the noise" → ``denoise``.
* A few whole-frame "looks" are classical recipes of atomic global adjustments: "evening"
  / "dusk" / "golden hour" → darker exposure + warmer temperature; "vintage" / "old photo"
  → partial sepia + vignette; "moody" / "dramatic" → more contrast + darker exposure.
  Looks that need new content ("night", "winter", "snowy", "rainy") are ``generate``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from agent.actions import (
    Action,
    ActionValidationError,
    Region,
    RegionType,
    parse_actions,
)
from agent.brain.also import also_clauses
from agent.brain.frontend import normalise
from agent.brain.intents import capabilities
from agent.brain.readers import (
    _GENERATE,
    _WRITE,
    MemoryLike,
    _bare_verb,
    _Context,
    _generative_leftover,
    _is_constraint,
    _is_pronoun,
    _read_clause,
    _region_for,
    _Step,
)
from agent.brain.words import DEICTIC, INJECTION, QUESTION, VERBS, WHOLE, clean
from pipelines.operations import get as get_operation
from pipelines.operations.wordnet import lexicon

log = logging.getLogger(__name__)

MAX_CHARS = 1000  # Action.instruction's limit; longer requests are refused, not truncated


@dataclass
class Plan:
    """A planner's answer: the actions in execution order, or why there are none."""

    actions: list[Action] = field(default_factory=list)
    is_edit: bool = True
    message: str = ""
    #: when the request could mean two things: ``[{"label", "instruction"}, …]`` for buttons
    choices: list[dict[str, str]] = field(default_factory=list)
    #: how the words were read, for the chat ("Read 'squirel' as 'squirrel'.")
    notes: list[str] = field(default_factory=list)



# --- the planner ------------------------------------------------------------------------

_QUOTE = re.compile(r"[\"“”'‘’]([^\"“”‘’]{1,200}?)[\"“”'‘’](?=\s|$|[,.;!?])")


_WORD_NUMBERS = [(r"\bhalf an? (stop|degree)", r"0.5 \1s"),
                 (r"\ba third of an? stop", "0.33 stops"),
                 (r"\b(?:a|one|an) (stop|degree)\b", r"1 \1"),
                 (r"\btwo (stops|degrees)", r"2 \1"), (r"\bthree (stops|degrees)", r"3 \1"),
                 (r"\b(?:a|one) and a half (stops|degrees)", r"1.5 \1")]


def _split(text: str) -> list[str]:
    """Clauses, in order: sentences, ';', 'then', commas and 'and'."""
    for pattern, repl in _WORD_NUMBERS:
        text = re.sub(pattern, repl, text)
    text = re.sub(r"\b(?:black|white)\s+(?:and|&)\s+(?:white|black)\b", "grayscale", text)
    text = re.sub(r"\bshadows and highlights\b", "shadows and recover highlights", text)
    parts = re.split(r"(?<!\d)[.;!?](?!\d)\s*|\s*\bthen\b\s*|\s*\b(?:after that|afterwards|"
                     r"and also|as well as|also|plus|finally)\b\s*|,\s*|\s+\band\b\s+|\s+&\s+",
                     text)
    return [p.strip() for p in parts if p and p.strip()]


def guard(instruction: Any) -> str | None:
    """A plain-words refusal for input that is not an edit request, else None."""
    if not isinstance(instruction, str):
        return "The instruction must be text."
    text = instruction.strip()
    if not text:
        return "Tell me what to change, e.g. 'make the sky bluer' or 'remove the red ball'."
    if len(text) > MAX_CHARS:
        return (f"That instruction is {len(text)} characters long; please keep it under "
                f"{MAX_CHARS} characters and describe the edits plainly.")
    if INJECTION.search(text):
        return ("That reads like instructions to the assistant, not a picture edit; nothing "
                "was changed. Describe what to change in the image.")
    return None


def not_edit_message(text: str) -> str:
    """The reply when nothing in ``text`` is an edit: what the app can do instead."""
    if QUESTION.match(text) or text.rstrip().endswith("?"):
        return ("That is not a visual edit, so nothing was changed. " + capabilities())
    return (f"I could not find an edit in '{text[:80]}'. " + capabilities())


def ask_message(pairs: list[tuple[Any, ...]]) -> tuple[str, list[dict[str, str]]]:
    """The question and the buttons for the first close pair of intents."""
    first = pairs[0]
    labels = " or ".join(f"'{i.label.lower()}'" for i in first)
    return (f"Did you mean {labels}? Pick one, or say it another way.",
            [{"label": i.label, "instruction": i.instruction} for i in first])


def _merge_repeats(steps: list[_Step]) -> list[_Step]:
    """One step for the same change said twice ("washed out, needs more contrast")."""
    out: list[_Step] = []
    for step in steps:
        same = [s for s in out if s.kind == step.kind == "adjust" and s.operation ==
                step.operation and _same_target(s.target, step.target) and
                s.params.keys() ==
                step.params.keys() and all(
                    isinstance(v, (int, float)) and isinstance(step.params[k], (int, float))
                    and v * step.params[k] > 0 or v == step.params[k]
                    for k, v in s.params.items())]
        if not same:
            out.append(step)
    return out


#: "make the sky" before "and the trees darker": a verb and a target, nothing said of it;
#: or a target alone ("the sea" before "and the sky should be bluer")
_TARGET_ONLY = re.compile(r"^(?:(?P<verb>make|turn|get|render)\s+)?(?P<np>(?:the|my|this|"
                          r"that|these|those)\s+[a-z' -]+)$")
#: a pronoun standing for the targets said before it
_PRONOUN = re.compile(r"\b(?:them|they|it)\b")
#: words after "make the X" that say what to do, not which thing ("make the photo pop")
_COMPLEMENTS = frozenset({"pop", "glow", "shine", "sparkle", "stand", "look", "smile",
                          "brighter", "darker", "it", "photo", "image", "picture"})


def _target_only(clause: str) -> re.Match[str] | None:
    """``clause`` as a target said alone (``_TARGET_ONLY``) whose words are all nouns (the
    lexicon), else None."""
    head = _TARGET_ONLY.match(clause)
    words = head["np"].split()[1:] if head else []
    lex = lexicon()
    if not words or set(words) & _COMPLEMENTS or (lex is not None and not all(
            "n" in lex.pos(w) and "a" not in lex.pos(w) for w in words)):
        return None
    return head


def _shared_predicate(clauses: list[str], ctx: _Context, quotes: list[str]) -> list[str]:
    """``clauses`` with targets said alone before "and" given what is said of the last one:
    "make the sky and the trees darker" split into "make the sky" and "the trees darker",
    and the intent library read "make the sky" as a highlights edit of the whole photo,
    applied and said done; in "the sea and the sky should be bluer" the sea was dropped
    (wave 26). Each target alone (``_target_only``) in a run that ends in a clause naming
    its target first, read as an edit, takes what that clause says of its target; one
    that speaks of them by a pronoun ("the dog and the cat, make them brighter": the whole
    photo was brightened) is said of each of them."""
    out = list(clauses)
    i = 0
    while i < len(out) - 1:
        first = _target_only(out[i])
        if not first:
            i += 1
            continue
        run = [(i, first["np"])]      # the targets alone, each with its noun phrase
        while run[-1][0] + 1 < len(out) - 1:
            more = _target_only(out[run[-1][0] + 1])
            if not more or more["verb"]:
                break
            run.append((run[-1][0] + 1, more["np"]))
        last = run[-1][0] + 1
        after = out[last]
        verb = first["verb"] or ""
        read = _read_clause(f"{verb} {after}".strip(), _Context(ctx.memory, ctx.has_mask),
                            quotes)
        target = read[0].target if read else ""
        # the next target first, with or without its article ("and clouds more dramatic")
        at = re.match(rf"^(?:(?:the|my|this|that|these|those)\s+)?{re.escape(target)}\b",
                      after) if target else None
        tail = after[at.end():].strip() if at else ""
        if tail:
            for j, np_j in run:
                out[j] = f"{verb} {np_j} {tail}".strip()
        elif not verb and _PRONOUN.search(after):   # "the dog and the cat, make them …"
            for j, np_j in run:
                out[j] = _PRONOUN.sub(np_j, after, count=1)
            out[last] = ""
        i = last
    return [c for c in out if c]


def _target_of(clause: str, ctx: _Context, quotes: list[str]) -> str:
    """The thing ``clause`` names as its target ("" for none or the whole photo)."""
    read = _read_clause(clause, _Context(ctx.memory, ctx.has_mask), quotes)
    target = read[0].target if read else ""
    return "" if _whole_photo(target, ctx) else target


def _whole_photo(target: str, ctx: _Context) -> bool:
    """The words stand for the whole photo: none, the photo, or "it" with nothing named
    before it and no brush."""
    if _is_pronoun(target):
        return not ctx.has_mask and not ctx.memory_target()
    return not target or clean(target) in WHOLE


def _exception_to_target(clause: str, ctx: _Context, quotes: list[str]) -> str:
    """``clause`` with "except X" said after the edit moved to its target: "make the sky
    bluer except the clouds" was asked as 'warmer' or 'recover the highlights' (wave 26);
    read as "make the sky except the clouds bluer", the target is the sky less the
    clouds, and "bluer" is still more of the sky's own blue."""
    before, cut, left_out = clause.partition(" except ")
    if not cut or not left_out.strip() or " except " in left_out:
        return clause
    read = _read_clause(before, _Context(ctx.memory, ctx.has_mask), quotes)
    target = read[0].target if read and read[0].target else ""
    if read and _whole_photo(target, ctx):   # "make it warmer except the skin"
        whole = re.sub(r"\b(?:it|this|that|the (?:whole |entire )?(?:photo|image|picture))\b",
                       f"everything except {left_out.strip()}", before, count=1)
        return whole if whole != before else clause
    at = re.search(rf"\b{re.escape(target)}\b", before) if target else None
    if not at or at.end() == len(before.rstrip()):
        return clause        # "brighten the photo except the sky": already in place
    return f"{before[:at.end()]} except {left_out.strip()}{before[at.end():]}"


#: a clause that is only an adjective ("warmer", "more dramatic", "a bit blurrier")
_ADJECTIVE_CLAUSE = re.compile(r"^(?:(?:a bit|a little|slightly|much|a lot|way|far|even|"
                               r"also) )?(?:(?:more|less) )?([a-z]+)$")


def _is_adjective(word: str) -> bool:
    lex = lexicon()
    if lex is not None:
        pos = lex.pos(word)
        return "a" in pos or word.endswith(("er", "ier"))
    return word.endswith(("er", "ier")) and word not in ("over", "under", "after")


def _shares_scope(previous: str, clause: str, found: list[_Step]) -> bool:
    """Whether ``clause`` is another adjective on the noun of ``previous`` ("make the
    face brighter and warmer", "the sky darker and more dramatic"): the previous clause
    ends in an adjective said of its target, and this one is an adjective alone."""
    words = re.findall(r"[a-z]+", previous.lower())
    here = _ADJECTIVE_CLAUSE.match(clause.strip())
    return bool(words and here and all(not s.target for s in found) and
                _is_adjective(here.group(1)) and _is_adjective(words[-1]))


def _same_target(one: str, other: str) -> bool:
    """The same target, where "it" beside the whole photo is the photo ("too dark,
    brighten it")."""
    if one == other:
        return True
    return {clean(one), clean(other)} - {""} <= {"it", "this", "that"} and \
        "" in (clean(one), clean(other))


class RulePlanner:
    """The embedded planner: rules over the operation catalogue, no model."""

    name = "rules"

    def plan(self, instruction: str, *, memory: MemoryLike | None = None,
             has_mask: bool = False, image_size: tuple[int, int] | None = None) -> Plan:
        """Decompose ``instruction`` into atomic Actions.

        Args:
            instruction: the user's words.
            memory: session memory for pronouns, "the same colour" and "before the … change".
            has_mask: the user sent a brush mask with this turn.
            image_size: (width, height), unused by the rules (kept for the protocol).

        Returns:
            A ``Plan``; ``is_edit`` False with a plain message when nothing can be done.
        """
        refusal = guard(instruction)
        if refusal:
            return Plan([], False, refusal)
        text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", instruction).strip()
        text = follow_up(text, memory)
        read = normalise(text)
        text = read.text or text
        notes = [f"Read '{typed}' as '{fixed}'." for typed, fixed in read.corrections]
        quotes: list[str] = []

        def _hold(match: re.Match[str]) -> str:
            quotes.append(match.group(1))
            return f" \x00{len(quotes) - 1}\x00 "

        low = _QUOTE.sub(_hold, text)
        low = re.sub(r"\s+", " ", low.lower()).strip()
        low = re.sub(r"\b(it|that|this|what|there)'s\b", r"\1 is", low)
        low = re.sub(r"\s*,?\s*(?:but )?not (?:too much|too strong(?:ly)?|overdone|too far)\b",
                     " slightly", low)
        low = re.sub(r"\bbut\b", ",", low)
        ctx = _Context(memory, has_mask)
        split = also_clauses(_split(low), lambda c: _target_of(c, ctx, quotes))
        clauses = [_exception_to_target(c, ctx, quotes)
                   for c in _shared_predicate(split, ctx, quotes)]
        steps = _merge_repeats(self._read_all(clauses, ctx, quotes))
        if ctx.problems:
            return Plan([], False, " ".join(dict.fromkeys(ctx.problems)))
        if not steps and ctx.asks:
            question, choices = ask_message(ctx.asks)
            return Plan([], False, question, choices)
        if not steps:
            return Plan([], False, not_edit_message(instruction.strip()))
        try:
            actions = _to_actions(steps, ctx)
        except _Unresolved as err:
            return Plan([], False, str(err))
        return Plan(actions, True, "; ".join(a.describe() for a in actions), notes=notes)

    def _read_all(self, clauses: list[str], ctx: _Context, quotes: list[str]) -> list[_Step]:
        steps: list[_Step] = []
        pending: list[tuple[str, str]] = []  # (target, clause) waiting for an operation
        verb = ""
        for clause in clauses:
            if _is_constraint(clause):
                continue
            found = _read_clause(clause, ctx, quotes)
            head = re.match(rf"^(?:{VERBS})\b(?:\s+(?:rid of|out|away|up))?", clause)
            if not found and not head and verb:
                found = _read_clause(f"{verb} {clause}", ctx, quotes)
            if head:
                verb = head.group(0)
            if not found:
                leftover = clean(re.sub(rf"^(?:{VERBS})\b", "", clause))
                if leftover and head and clause not in ctx.asked:
                    pending.append((leftover, clause))
                continue
            if pending and len(found) == 1 and found[0].operation not in ("", _GENERATE):
                for target, _ in pending:
                    steps.append(_Step(found[0].kind, found[0].operation,
                                       dict(found[0].params), target=target, clause=clause))
                pending = []
            if steps and found[0].kind == "adjust" and found[0].target and \
                    _bare_verb(steps[-1]):  # "brighten and sharpen the face"
                steps[-1].target = found[0].target
            if steps and steps[-1].target and _shares_scope(steps[-1].clause, clause, found):
                # "the sky darker and more dramatic": the adjective is said of the sky too
                again = _read_clause(f"make {steps[-1].target} {clause}", ctx, quotes)
                found = again if again and all(s.target for s in again) else found
            steps.extend(found)
        for _, clause in pending:  # nothing classical fits these
            step = _generative_leftover(clause)
            if step is not None:
                steps.append(step)
        return steps


#: a follow-up asking for the last request again, or for less of what it just did
_MORE = re.compile(r"^(?:please )?(?:(?:do it|do that|same|that) again|again|more|even more|"
                   r"(?:a )?(?:little |tiny )?(?:bit|touch|tad|little) more|a little bit more|"
                   r"(?:a bit |a little )?stronger|keep going|one more time)(?: please)?[.!]*$")
_LESS = re.compile(r"^(?:(?:that'?s|it'?s|that is|it is|this is) )?(?:(?:way|a bit|a little|"
                   r"slightly) )?too (?:much|strong|far|heavy|intense)[.!]*$|^(?:tone|dial|"
                   r"turn|take) it (?:down|back)(?: a bit)?[.!]*$|^(?:less|not so much|"
                   r"overdone|back it off)(?: please)?[.!]*$")


def follow_up(text: str, memory: MemoryLike | None) -> str:
    """"more", "a bit more", "again" → the last request again (gentler for "a bit");
    "too much", "tone it down" → the last request undone and made again, gentler. The text
    as it is without a session, or when the last turn did not finish (nothing to scale)."""
    low = text.strip().lower()
    more, less = _MORE.match(low), _LESS.match(low)
    actions = list(getattr(memory, "actions", None) or [])
    if not (more or less) or not actions:
        return text
    done = [a for a in actions if a.outcome == "done" and any(a.operations) and not
            (_MORE.match(a.intent.lower()) or _LESS.match(a.intent.lower()))]
    if not done:
        return text
    intent = done[-1].intent.strip().rstrip(".!?")
    if less:
        last = actions[-1]      # the turn to take back ("more" of the request, or itself)
        if last.outcome != "done" or not any(last.operations) or \
                not (last is done[-1] or _MORE.match(last.intent.lower())):
            return text     # something else came after it: undoing would take that back
        return f"undo {len(last.states)} steps, then {intent} slightly"
    return f"{intent} slightly" if re.search(r"\b(?:bit|touch|tad|little)\b", low) else intent


#: "light" named as a thing that is switched or dimmed (a lamp); said of tone, the lighting
_LAMPS = frozenset({"light", "lights", "lamp", "lamps"})
_LAMP_VERBS = re.compile(r"\b(?:dim|dims|dimmed|dimmer|dimmest|turn (?:on|off)|switch(?:ed)? "
                         r"(?:on|off)|(?:turn|switch) (?:it|them) (?:on|off))\b")


class _Unresolved(ValueError):
    """A reference the planner cannot resolve; the message tells the user what to say."""


def _resolve_target(step: _Step, ctx: _Context) -> tuple[str, Region]:
    """The target words and region of a step, with pronouns and mask words resolved."""
    raw = step.target.strip()
    spec = get_operation(step.operation) if step.operation else None
    if _is_pronoun(raw):
        # a thing named earlier in this request, then the selection sent with it, then
        # the session's last target ("make it warmer" with a selection: the selection)
        target = ctx.last_target or ("" if ctx.has_mask else ctx.memory_target() or "")
        if target:
            return target, Region(type=RegionType.phrase, phrase=target)
        if ctx.has_mask:
            return "", Region(type=RegionType.mask)
        if spec is not None and spec.needs_target:
            raise _Unresolved(f"I don't know what '{raw}' refers to yet; name the object "
                              "(e.g. 'the car') or mark it with the brush.")
        return "", Region(type=RegionType.image)
    target, is_mask = _region_for(raw, ctx)
    if is_mask:
        return "", Region(type=RegionType.mask)
    if target in _LAMPS and _LAMP_VERBS.search(step.clause):
        # "dim the light", "make the lights dimmer": lamps, not the photo's lighting (a
        # lit lamp in the frame is found or asked about; none found is said, not guessed)
        return target, Region(type=RegionType.phrase, phrase=target)
    if target in WHOLE:
        if step.kind == "remove" and clean(raw) in DEICTIC:
            raise _Unresolved("Nothing is selected, so I don't know what 'this' is: click it "
                              "(or paint it with the brush), then ask again.")
        if step.kind == "remove":
            raise _Unresolved("Removing the whole image is not an edit; name what to remove "
                              "(e.g. 'remove the cup') or paint it with the brush.")
        return "", Region(type=RegionType.image)
    return target, Region(type=RegionType.phrase, phrase=target[:200])


def _location(step: _Step, ctx: _Context) -> Region:
    """Where an added thing goes: its location phrase, the brush mask, or the frame."""
    phrase = step.region_phrase.strip()
    if phrase:
        if _is_pronoun(phrase) and (ctx.last_target or ctx.memory_target()):
            phrase = ctx.last_target or ctx.memory_target() or phrase
        where, is_mask = _region_for(phrase, ctx)
        if is_mask:
            return Region(type=RegionType.mask)
        if where and where not in WHOLE:
            return Region(type=RegionType.phrase, phrase=where[:200])
    return Region(type=RegionType.mask) if ctx.has_mask else Region(type=RegionType.image)


def _to_actions(steps: list[_Step], ctx: _Context) -> list[Action]:
    """Resolve targets, order dependencies first, validate into Actions."""
    items: list[dict[str, Any]] = []
    for step in steps:
        if step.kind == "undo":
            item: dict[str, Any] = {"kind": "undo", "steps": step.steps,
                                    "instruction": step.clause[:1000]}
            if step.node:
                item["target"] = step.node
            items.append(item)
            continue
        if step.operation == _WRITE or (step.operation == _GENERATE and step.kind == "add"):
            target = clean(step.target) if step.target else ""
            region = _location(step, ctx)
        else:
            target, region = _resolve_target(step, ctx)
        params = dict(step.params)
        if step.operation == _GENERATE and not params.get("prompt"):
            params["prompt"] = step.clause
        items.append({"kind": step.kind, "operation": step.operation, "target": target,
                      "region": region.model_dump(mode="json", exclude_none=True),
                      "params": params, "instruction": step.clause[:1000]})
        if target and step.kind != "remove":   # "it" never binds to a removed object
            ctx.last_target = target
    items = _order(items)
    try:
        return parse_actions(items)
    except ActionValidationError as err:
        raise _Unresolved(f"I could not turn that into a valid edit ({err}).") from None


def _head_noun(target: str) -> str:
    words = re.findall(r"[a-z]+", target.lower())
    return words[-1] if words else ""


def _order(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Creators before users: an edit of something a later action adds moves after it;
    ids a1…; ``depends_on`` names earlier actions on the same target."""
    ordered = list(items)
    for item in list(ordered):
        if item["kind"] != "add" or not item.get("target"):
            continue
        noun = _head_noun(item["target"])
        idx = ordered.index(item)
        users = [j for j, other in enumerate(ordered[:idx])
                 if other.get("target") and _head_noun(other["target"]) == noun]
        if users:
            ordered.remove(item)
            ordered.insert(users[0], item)
    for n, item in enumerate(ordered, start=1):
        item["id"] = f"a{n}"
        nouns = set()
        if item["kind"] != "undo":
            nouns = {_head_noun(item.get("target", "")),
                     _head_noun((item.get("region") or {}).get("phrase") or "")} - {""}
        item["depends_on"] = [prev["id"] for prev in ordered[:n - 1]
                              if prev["kind"] != "undo"
                              and _head_noun(prev.get("target", "")) in nouns][-1:]
    return ordered


# --- the LLM planner --------------------------------------------------------------------
