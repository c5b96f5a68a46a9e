"""Instruction Following (IF) and Image Consistency (IC): perceived against target
states, attribute by attribute."""

from __future__ import annotations

import math
from collections.abc import Sequence

from eval.hdd.scene import ATTRIBUTES, MATCH_DISTANCE, SceneObject, SceneState

# --- scoring ---------------------------------------------------------------------------


def _distance(a: tuple[float, float], b: tuple[float, float], aspect: float) -> float:
    return math.hypot((a[0] - b[0]) * aspect, a[1] - b[1])


def match_objects(reference: Sequence[SceneObject], predicted: Sequence[SceneObject],
                  aspect: float = 16 / 9) -> dict[str, SceneObject]:
    """Pair reference objects with predicted ones by position, greedily, one to one.

    Args:
        reference: objects of the target state.
        predicted: objects of the perceived state.
        aspect: image width / height (positions are fractions of each side).

    Returns:
        ``{reference id: predicted object}`` for pairs closer than ``MATCH_DISTANCE``.
    """
    pairs = sorted((_distance(r.position, p.position, aspect), i, j)
                   for i, r in enumerate(reference) for j, p in enumerate(predicted))
    used_r: set[int] = set()
    used_p: set[int] = set()
    out: dict[str, SceneObject] = {}
    for dist, i, j in pairs:
        if dist > MATCH_DISTANCE:
            break
        if i in used_r or j in used_p:
            continue
        used_r.add(i)
        used_p.add(j)
        out[reference[i].id] = predicted[j]
    return out


def _attribute_score(target: SceneObject, found: SceneObject | None) -> float:
    if found is None:
        return 0.0
    return sum(getattr(target, a) == getattr(found, a) for a in ATTRIBUTES) / len(ATTRIBUTES)


def targeted_ids(previous: SceneState, target: SceneState) -> tuple[set[str], set[str]]:
    """Ids the turn changed: ``(present in target, removed from previous)``."""
    before = {o.id: o for o in previous.objects}
    changed = {o.id for o in target.objects if before.get(o.id) != o}
    removed = set(before) - target.ids()
    return changed, removed


def _removed_score(gone: SceneObject, target: SceneState, predicted: SceneState,
                   aspect: float) -> float:
    """1 when nothing is left where a removed object was (a new object there is fine)."""
    taken = match_objects(target.objects, predicted.objects, aspect)
    free = [p for p in predicted.objects if all(p is not q for q in taken.values())]
    leftover = match_objects([gone], free, aspect)
    return 0.0 if leftover else 1.0


def instruction_following(predicted: SceneState, target: SceneState, previous: SceneState,
                          aspect: float = 16 / 9) -> float | None:
    """IF: attribute-level correctness averaged over the objects the turn targeted.

    Args:
        predicted: the state perceived from the editor's output.
        target: the ground-truth state after the turn.
        previous: the ground-truth state before the turn.
        aspect: image width / height.

    Returns:
        A score in [0, 1]; a removed object scores 1 when it is gone; ``None`` when the
        turn targeted nothing.
    """
    changed, removed = targeted_ids(previous, target)
    if not changed and not removed:
        return None
    matches = match_objects(target.objects, predicted.objects, aspect)
    scores = [_attribute_score(target.get(i), matches.get(i)) for i in sorted(changed)]
    scores += [_removed_score(previous.get(i), target, predicted, aspect) for i in sorted(removed)]
    return float(sum(scores) / len(scores))


def image_consistency(predicted: SceneState, target: SceneState, previous: SceneState,
                      aspect: float = 16 / 9) -> float | None:
    """IC: attribute-level correctness averaged over the objects the turn left alone.

    Args: as for ``instruction_following``.

    Returns:
        A score in [0, 1] (a missing object scores 0); ``None`` when nothing was untouched.
    """
    changed, _ = targeted_ids(previous, target)
    kept = [o for o in target.objects if o.id not in changed]
    if not kept:
        return None
    matches = match_objects(target.objects, predicted.objects, aspect)
    return float(sum(_attribute_score(o, matches.get(o.id)) for o in kept) / len(kept))
