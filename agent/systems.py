"""Loupe's edit systems for the benchmark runner: the embedded agent and the direct baseline.

``embedded`` is Loupe's agent (``EditSession``: layers at native resolution, the state graph,
memory). ``direct`` edits the way single-shot editors do: every turn the whole frame is
resampled to about 1 MP, the same embedded planner and editor edit that small image (a
fresh session per turn, no layers at native size, no history), and the whole result is
resampled back to the native size. Comparing the two measures what layer decomposition at
native resolution buys, instead of claiming it.

Importing this module registers both in ``eval.systems`` (it is the default plugin).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from agent.brain.judge import critique_images
from agent.session import EditSession
from eval.systems import EditRun, TurnContext, TurnOutput, register_judge, register_system

#: the working size of the direct baseline, in pixels (about 1 MP like common editors)
DIRECT_PIXELS = 1024 * 1024


def working_size(width: int, height: int, pixels: int = DIRECT_PIXELS,
                 multiple: int = 8) -> tuple[int, int]:
    """The ~``pixels`` size with the frame's aspect, sides rounded to ``multiple``
    (never larger than the frame: small frames are only rounded)."""
    scale = min(1.0, math.sqrt(pixels / float(width * height)))
    w = max(multiple, int(round(width * scale / multiple)) * multiple)
    h = max(multiple, int(round(height * scale / multiple)) * multiple)
    return w, h


def resample(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Whole-frame resize to ``size`` = (w, h): area when shrinking, bicubic when growing."""
    if (image.shape[1], image.shape[0]) == size:
        return image.copy()
    shrink = size[0] * size[1] < image.shape[0] * image.shape[1]
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)


class _SessionRun:
    def __init__(self, session: EditSession) -> None:
        self.session = session

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        result = self.session.turn(instruction, mask)
        return TurnOutput(self.session.current_image(), bool(result.ok), str(result.message),
                          {"steps": len(result.steps), "changed": bool(result.changed)})


class EmbeddedSystem:
    """Loupe's agent: ``EditSession`` (layers at native resolution)."""

    name = "embedded"

    def __init__(self, **backends: Any) -> None:
        self.backends = backends

    def start(self, image: np.ndarray, folder: Path) -> EditRun:
        return _SessionRun(EditSession.create(image, folder / "session", **self.backends))


class _DirectRun:
    def __init__(self, image: np.ndarray, folder: Path, pixels: int, backends: dict) -> None:
        self.image = image
        self.folder = folder
        self.pixels = pixels
        self.backends = backends
        self.turns = 0

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        self.turns += 1
        native = (self.image.shape[1], self.image.shape[0])
        small_size = working_size(*native, pixels=self.pixels)
        small = resample(self.image, small_size)
        small_mask = None
        if mask is not None:
            small_mask = cv2.resize(mask.astype(np.uint8), small_size,
                                    interpolation=cv2.INTER_NEAREST).astype(bool)
        session = EditSession.create(small, self.folder / f"turn_{self.turns}", **self.backends)
        result = session.turn(instruction, small_mask)
        self.image = resample(session.current_image(), native)
        return TurnOutput(self.image, bool(result.ok), str(result.message),
                          {"working_size": list(small_size)})


class DirectSystem:
    """Single-shot baseline: whole frame at ~1 MP through the embedded planner+editor."""

    name = "direct"

    def __init__(self, pixels: int = DIRECT_PIXELS, **backends: Any) -> None:
        self.pixels = int(pixels)
        self.backends = backends

    def start(self, image: np.ndarray, folder: Path) -> EditRun:
        return _DirectRun(image, folder, self.pixels, self.backends)


register_system(EmbeddedSystem.name, EmbeddedSystem)
register_system(DirectSystem.name, DirectSystem)


def _critic_judge(before: np.ndarray, after: np.ndarray, instruction: str,
                  mask: np.ndarray | None = None) -> dict:
    return critique_images(before, after, instruction, mask)


register_judge("critic", _critic_judge)
