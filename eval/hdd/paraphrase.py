"""The template paraphraser: one turn's commands → one natural instruction."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from eval.hdd.scene import NOUNS, SIZES, Command, SceneObject, SceneState

# --- paraphrase ------------------------------------------------------------------------


@dataclass
class Dialogue:
    """What the paraphraser knows of the session so far.

    Attributes:
        state: the scene the instruction is said about (before this turn).
        mentioned: object ids targeted in earlier turns, oldest first.
    """

    state: SceneState
    mentioned: list[str] = field(default_factory=list)


_ADJUST = {
    "color": ("make {t} {v}", "turn {t} {v}", "change the colour of {t} to {v}",
              "recolour {t} {v}", "paint {t} {v}"),
    "size": ("make {t} {v}", "resize {t} so it is {v}"),
    "material": ("give {t} a {v} finish", "make {t} look {v}"),
}
_REMOVE = ("remove {t}", "get rid of {t}", "delete {t}", "erase {t}", "take out {t}")
_REPLACE = ("replace {t} with {v}", "swap {t} for {v}", "turn {t} into {v}")
_ADD = ("add {v} {w}", "put {v} {w}", "place {v} {w}")
_UNDO = ("undo the last change", "go back to how it was before the last edit",
         "revert the previous step", "undo that")
_JOIN = (", and ", ", then ", " and also ", "; after that, ")


def _a(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def _where(position: tuple[float, float]) -> str:
    x, y = position
    col = "on the left" if x < 0.38 else "on the right" if x > 0.62 else "in the middle"
    row = "near the top" if y < 0.36 else "near the bottom" if y > 0.64 else ""
    return f"{col} {row}".strip() if col != "in the middle" or not row else row


def _refer(obj: SceneObject, dialogue: Dialogue, rng: random.Random, used_it: list[bool]) -> str:
    """A noun phrase for ``obj``; a back-reference when it was the last turn's target."""
    if dialogue.mentioned and dialogue.mentioned[-1] == obj.id and not used_it[0]:
        used_it[0] = True
        return rng.choice((f"that {obj.color} {obj.name}", f"the same {obj.color} {obj.name}",
                           f"the {obj.color} {obj.name} from before"))
    return "the " + obj.describe()


def paraphrase(commands: Sequence[Command], rng: random.Random, history: Dialogue) -> str:
    """Turn one turn's canonical commands into one natural instruction.

    Args:
        commands: the turn's commands (targets must be in ``history.state``).
        rng: the random source (templates are picked from it; deterministic per seed).
        history: the scene before this turn and the targets of earlier turns; an object
            that was the last turn's target is referred back to ("that …", "the same …").

    Returns:
        One sentence mixing every intent of the turn.
    """
    used_it = [False]
    parts = []
    for command in commands:
        if command.kind == "undo":
            parts.append(rng.choice(_UNDO))
            continue
        if command.kind == "add":
            a = command.attrs
            what = f"{a['size']} {a['color']} {a['material']} {NOUNS[a['shape']]}"
            parts.append(rng.choice(_ADD).format(v=_a(what), w=_where(a["position"])))
            continue
        obj = history.state.get(command.target or "")
        ref = _refer(obj, history, rng, used_it)
        if command.kind == "remove":
            parts.append(rng.choice(_REMOVE).format(t=ref))
        elif command.kind == "replace":
            a = {**{"color": obj.color}, **command.attrs}
            new = _a(f"{a['color']} {NOUNS[a['shape']]}")
            parts.append(rng.choice(_REPLACE).format(t=ref, v=new))
        else:
            (attr, value), = command.attrs.items()
            shown = value
            if attr == "size":
                shown = "bigger" if SIZES.index(value) > SIZES.index(obj.size) else "smaller"
            parts.append(rng.choice(_ADJUST[attr]).format(t=ref, v=shown))
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(_JOIN) + part
    text = text[0].upper() + text[1:]
    return text + rng.choice((".", ", please.", ".", " if you can."))
