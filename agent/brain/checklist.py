"""Checklists for multi-instruction requests: split, parse, and check yes/no items.

``build_checklist(instruction)`` splits a long request into sub-instructions and turns each
into an ``Item`` with a yes/no question. Two kinds are measurable without a model:

* object items on rendered scenes — "make the red ball blue", "remove the green box":
  the object is found in the *original* image (root recall) by ``eval.hdd.perceive``; the
  item holds when, at the same place in the candidate, the perceived object has the asked
  colour (same shape), or no object remains;
* global items — "make it brighter/darker/warmer/cooler/more colourful/less colourful/
  more contrast/black and white": the item holds when the measured statistic moved far
  enough from the original in the asked direction.

``MeasuredChecker`` answers both; ``VLMChecker`` asks a configured VLM the questions (with
the original and the candidate) through ``pipelines.llm`` and validates its JSON answer.
Items nothing can check are reported as such (never silently "yes").
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import cv2
import numpy as np

from eval import hdd
from pipelines.images import downscale
from pipelines.llm import get_model_llm
from pipelines.operations import for_role, operations

log = logging.getLogger(__name__)

_SPLIT = re.compile(r"\s*(?:;|\.|,\s*(?:and\s+|then\s+|also\s+)*|\band then\b|\bthen\b|"
                    r"\band also\b|\bafter that\b|\band\b)\s*", re.I)
_COLOURS = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "magenta", "pink",
            "brown", "white", "black", "gray", "grey", "teal", "violet", "gold", "navy")
_NOUNS = {"ball": "circle", "circle": "circle", "box": "square", "square": "square",
          "pyramid": "triangle", "triangle": "triangle", "star": "star"}
_RECOLOUR = re.compile(r"\b(?:make|turn|paint|colou?r|recolou?r|change)\s+the\s+(\w+)\s+"
                       r"(\w+)\s+(?:to\s+|into\s+|in\s+)?(?:be\s+)?(\w+)", re.I)
_REMOVE = re.compile(r"\b(?:remove|delete|erase|get rid of|take out)\s+the\s+(\w+)\s+(\w+)",
                     re.I)
#: global items: phrase pattern → (statistic, sign, operation, params), from the operations
_GLOBAL: list[tuple[re.Pattern[str], str, int, str, dict[str, Any]]] = [
    (re.compile(w.pattern, re.I), w.statistic, w.sign, name, dict(w.params))
    for _, name, w in sorted(((w.order, n, i), op.name, w) for n, op in enumerate(operations())
                             for i, w in enumerate(op.checklist))]
#: how far a statistic must move for a global item to hold
_MIN_DELTA = {"lightness": 5.0, "warmth": 3.0, "chroma": 4.0, "contrast": 0.025, "grey": 0.0}


@dataclass
class Item:
    """One yes/no requirement of the request."""

    index: int
    text: str                      # the sub-instruction as written
    question: str                  # the yes/no question asked of a state
    kind: str                      # recolor | remove | global | unknown
    target: dict[str, str] = field(default_factory=dict)   # colour/shape of the object
    value: str = ""                # new colour (recolor) or statistic (global)
    sign: int = 0                  # direction of a global item
    operation: str = ""            # the catalogue operation that serves it
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"index": self.index, "text": self.text, "question": self.question,
                "kind": self.kind, "target": self.target, "value": self.value,
                "operation": self.operation, "params": self.params}


def split_instruction(instruction: str) -> list[str]:
    """Split a long request into its sub-instructions (order kept, empties dropped)."""
    text = (instruction or "").strip()
    if not text:
        return []
    if len(text) > 4000:
        raise ValueError(f"instruction is too long ({len(text)} characters, max 4000)")
    return [p.strip(" ,") for p in _SPLIT.split(text) if p and p.strip(" ,")]


def _parse(index: int, text: str) -> Item:
    m = _RECOLOUR.search(text)
    if m and m.group(1).lower() in _COLOURS and m.group(2).lower() in _NOUNS \
            and m.group(3).lower() in _COLOURS:
        colour, noun, new = (g.lower() for g in m.groups())
        return Item(index, text, f"Is the {colour} {noun} now {new}?", "recolor",
                    {"color": colour, "shape": _NOUNS[noun], "noun": noun}, new,
                    operation=for_role("recolour").name, params={"color": new})
    m = _REMOVE.search(text)
    if m and m.group(1).lower() in _COLOURS and m.group(2).lower() in _NOUNS:
        colour, noun = m.group(1).lower(), m.group(2).lower()
        return Item(index, text, f"Is the {colour} {noun} gone?", "remove",
                    {"color": colour, "shape": _NOUNS[noun], "noun": noun},
                    operation=for_role("remove").name, params={"method": "auto"})
    for pattern, stat, sign, op, params in _GLOBAL:
        if pattern.search(text):
            return Item(index, text, f"Is the image {pattern.search(text).group(1).lower()} "
                        f"than the original?", "global", {}, stat, sign, op, dict(params))
    return Item(index, text, f"Was this done: {text}?", "unknown")


def build_checklist(instruction: str) -> list[Item]:
    """The checklist of a request: one item per sub-instruction.

    Args:
        instruction: the user's (long) request.

    Returns:
        Items in the order written; ``kind == "unknown"`` for fragments no rule understood
        (only a VLM checker can answer those).

    Raises:
        ValueError: an empty or over-long instruction.
    """
    parts = split_instruction(instruction)
    if not parts:
        raise ValueError("the instruction is empty")
    return [_parse(i, p) for i, p in enumerate(parts)]


# ----------------------------------------------------------------------------- checkers

class Checker(Protocol):
    """Answers every checklist item for a candidate, given the original (root recall)."""

    def check(self, items: list[Item], original: np.ndarray,
              image: np.ndarray) -> list[bool]: ...


def image_stats(image: np.ndarray) -> dict[str, float]:
    """Mean lightness, warmth (b*), chroma, RMS contrast and greyness of an image."""
    small = downscale(image[..., :3], 256)
    lab = cv2.cvtColor(np.ascontiguousarray(small), cv2.COLOR_RGB2LAB).astype(np.float32)
    light = lab[..., 0] * 100 / 255
    a, b = lab[..., 1] - 128, lab[..., 2] - 128
    chroma = np.hypot(a, b)
    return {"lightness": float(light.mean()), "warmth": float(b.mean()),
            "chroma": float(chroma.mean()), "contrast": float(light.std() / 100),
            "grey": float(np.mean(chroma < 4))}


@dataclass
class SceneObjects:
    """Objects perceived in one image (cached per image by ``MeasuredChecker``)."""

    objects: list[Any]
    aspect: float


def perceive_objects(image: np.ndarray) -> SceneObjects:
    """Objects of a rendered scene via ``eval.hdd.perceive`` (colour, shape, position)."""
    state = hdd.perceive(image)
    return SceneObjects(list(state.objects), image.shape[1] / image.shape[0])


def find_target(scene: SceneObjects, target: dict[str, str]) -> Any | None:
    """The perceived object matching an item's colour and shape (first in reading order)."""
    for obj in scene.objects:
        if obj.color == target.get("color") and obj.shape == target.get("shape"):
            return obj
    return None


def _near(scene: SceneObjects, position: tuple[float, float], radius: float = 0.09) -> Any:
    best, dist = None, radius
    for obj in scene.objects:
        d = float(np.hypot((obj.position[0] - position[0]) * scene.aspect,
                           obj.position[1] - position[1]))
        if d < dist:
            best, dist = obj, d
    return best


class MeasuredChecker:
    """Checks object items with scene perception and global items with image statistics."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, str], tuple[np.ndarray, Any]] = {}

    def _memo(self, image: np.ndarray, fn: Any) -> Any:
        """``fn(image)``, computed once per image object (states are never mutated)."""
        key = (id(image), fn.__name__)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is image:
            return hit[1]
        value = fn(image)
        self._cache[key] = (image, value)
        return value

    def check(self, items: list[Item], original: np.ndarray, image: np.ndarray) -> list[bool]:
        """One bool per item (``unknown`` items are False).

        Args:
            items: the checklist.
            original: the root image (where objects are looked up).
            image: the candidate state.

        Returns:
            Whether each item holds in ``image``.
        """
        out = []
        for item in items:
            if item.kind in ("recolor", "remove"):
                out.append(self._object_item(item, original, image))
            elif item.kind == "global":
                before = self._memo(original, image_stats)
                after = self._memo(image, image_stats)
                delta = (after[item.value] - before[item.value]) * item.sign
                out.append(bool(delta > _MIN_DELTA[item.value] or
                                (item.value == "grey" and after["grey"] > 0.95)))
            else:
                out.append(False)
        return out

    def _object_item(self, item: Item, original: np.ndarray, image: np.ndarray) -> bool:
        start = find_target(self._memo(original, perceive_objects), item.target)
        if start is None:
            return False
        found = _near(self._memo(image, perceive_objects), start.position)
        if item.kind == "remove":
            return found is None
        return found is not None and found.color == item.value and found.shape == start.shape


_VLM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answers": {"type": "array", "items": {"type": "string",
                                                          "enum": ["yes", "no"]}}},
    "required": ["answers"],
}


class VLMChecker:
    """Asks a vision-language model (``pipelines.llm`` backend) the checklist questions."""

    def __init__(self, llm: Any, repeats: int = 1) -> None:
        self.llm = llm
        self.repeats = max(1, int(repeats))

    def check(self, items: list[Item], original: np.ndarray, image: np.ndarray) -> list[bool]:
        """Majority of ``repeats`` yes/no answers per item (a malformed answer counts "no")."""
        questions = "\n".join(f"{i + 1}. {it.question}" for i, it in enumerate(items))
        system = ("You compare an original image with an edited one. Answer each numbered "
                  "question about the edited image with yes or no, in order, as JSON.")
        votes = np.zeros(len(items))
        for _ in range(self.repeats):
            try:
                answer = self.llm.complete_json(
                    system, [{"role": "user", "content": questions}], [original, image],
                    _VLM_SCHEMA)
                got = [a == "yes" for a in answer.get("answers", [])][:len(items)]
            except Exception as err:  # noqa: BLE001 - a failed backend answers "no"
                log.warning("VLM checker failed: %s", err)
                got = []
            votes[:len(got)] += np.array(got, float)
        return [bool(v * 2 > self.repeats) for v in votes]


def default_checker() -> Checker:
    """A VLM checker when a VLM/endpoint is configured, else the measured checker."""
    try:
        llm = get_model_llm()
    except Exception as err:  # noqa: BLE001 - a broken backend: measured checks
        log.info("no VLM checker (%s); using measured checks", err)
        llm = None
    return VLMChecker(llm) if llm is not None else MeasuredChecker()
