"""Baselines for the runner: the single-shot "direct" editor, identity and oracle.

``direct`` edits the way single-shot editors do: every turn the whole frame is resampled
to about 1 MP, the same embedded planner and editor edit that small image (a fresh
session per turn, no layers at native size, no history), and the whole result is
resampled back to the native size. Comparing it with ``embedded`` measures what layer
decomposition at native resolution buys, instead of claiming it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from eval.agents import Agent, AgentRun, TurnContext, TurnOutput

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


class _DirectRun(AgentRun):
    def __init__(self, image: np.ndarray, folder: Path, pixels: int, backends: dict) -> None:
        self.image = image
        self.folder = folder
        self.pixels = pixels
        self.backends = backends
        self.turns = 0

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        from agent.session import EditSession

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


class DirectAgent(Agent):
    """Single-shot baseline: whole frame at ~1 MP through the embedded planner+editor."""

    name = "direct"

    def __init__(self, pixels: int = DIRECT_PIXELS, **backends: Any) -> None:
        self.pixels = int(pixels)
        self.backends = backends

    def start(self, image: np.ndarray, folder: Path) -> AgentRun:
        return _DirectRun(image, folder, self.pixels, self.backends)


class _IdentityRun(AgentRun):
    def __init__(self, image: np.ndarray) -> None:
        self.image = image

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        return TurnOutput(self.image, True, "unchanged")


class IdentityAgent(Agent):
    """Does nothing: the floor of instruction following, the ceiling of preservation."""

    name = "identity"

    def start(self, image: np.ndarray, folder: Path) -> AgentRun:
        return _IdentityRun(image)


class _OracleRun(AgentRun):
    def __init__(self, image: np.ndarray) -> None:
        self.image = image

    def turn(self, instruction: str, mask: np.ndarray | None,
             context: TurnContext) -> TurnOutput:
        if context.target is not None:
            self.image = context.target
        elif context.state is not None:
            from eval.hdd import SceneState, render

            self.image = render(SceneState.from_json(context.state), context.size)
        else:
            return TurnOutput(self.image, False, "no ground truth for this turn")
        return TurnOutput(self.image, True, "ground truth")


class OracleAgent(Agent):
    """Returns the ground truth: checks that the benchmark's measures score it perfectly."""

    name = "oracle"

    def start(self, image: np.ndarray, folder: Path) -> AgentRun:
        return _OracleRun(image)
