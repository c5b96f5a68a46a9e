"""The Editor protocol: edit a layer patch inside its mask, nothing else.

An editor declares what it can do on the class (``name``, ``operations``,
``requires_weights``); the base checks the request before any work and keeps every
pixel outside the mask as it was, so each editor file only holds its own pixel logic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pipelines.editors.objects import moved_mask
from pipelines.editors.operations import OPERATIONS, OperationError, get_operation
from pipelines.layers import feather_alpha
from pipelines.operations.errors import EditError
from pipelines.plugins import Registry


@dataclass
class EditRequest:
    """What an editor is asked to do on one patch.

    ``pipelines`` does not know the agent's ``Action``; the agent turns an Action (plus
    the critic's fixes on a retry) into this request.
    """

    kind: str
    operation: str
    params: dict[str, Any] = field(default_factory=dict)
    instruction: str = ""
    target: str = ""
    seed: int = 0
    steps: int | None = None
    guidance: float | None = None
    negative_prompt: str = ""
    #: ``(x0, y0, frame_width, frame_height)``: where the patch sits in the full frame, for
    #: operations whose parameters are fractions of the frame (``transform``)
    frame: tuple[int, int, int, int] | None = None

    def shift_px(self, params: dict[str, Any]) -> tuple[float, float]:
        """``transform``'s ``dx``/``dy`` (fractions of the frame) in pixels.

        Args:
            params: validated parameters.

        Returns:
            ``(dx, dy)`` in pixels; a request without ``frame`` may only resize in place.
        """
        dx, dy = float(params.get("dx", 0.0)), float(params.get("dy", 0.0))
        if dx == 0.0 and dy == 0.0:
            return 0.0, 0.0
        if self.frame is None:
            raise EditError(f"{self.operation} needs the frame geometry (EditRequest.frame) "
                            "to move the target")
        return dx * self.frame[2], dy * self.frame[3]


class Editor(ABC):
    """Base class of every editor.

    Subclasses set the class attributes and implement ``_edit``.
    """

    #: registry key
    name: ClassVar[str] = ""
    #: operation names this editor implements (see ``operations.OPERATIONS``)
    operations: ClassVar[frozenset[str]] = frozenset()
    #: True when the editor needs downloaded weights (never the embedded default)
    requires_weights: ClassVar[bool] = False
    #: long side the model works at, or None to work at the patch's own size
    working_size: ClassVar[int | None] = None

    def supports(self, request: EditRequest) -> bool:
        """Whether this editor implements the request's operation."""
        return request.operation in self.operations

    def edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest, *,
             margin: int = 0) -> np.ndarray:
        """Edit ``patch`` inside ``mask`` as ``request`` says.

        Args:
            patch: ``uint8`` HWC patch (RGB or RGBA) from ``layers.decompose``.
            mask: ``bool`` mask of the patch's size (``True`` = edit area).
            request: the operation and its parameters (validated here).
            margin: pixels within this distance of the mask keep the edit too, so that
                ``layers.compose`` with ``feather=margin`` can fade it out instead of
                cutting it at the mask's edge; farther pixels are always restored.

        Returns:
            A ``uint8`` patch with the input's channels. Generative editors may return it
            at their working size; ``layers.compose`` resizes it back into the box.

        Raises:
            OperationError: unknown operation or parameter out of bounds.
            EditError: this editor cannot do it (the message says why).
        """
        if patch.dtype != np.uint8 or patch.ndim != 3 or patch.shape[2] not in (3, 4):
            raise EditError(f"patch must be uint8 RGB/RGBA, got {patch.dtype} {patch.shape}")
        if mask.shape != patch.shape[:2]:
            raise EditError(f"mask {mask.shape} does not match patch {patch.shape[:2]}")
        spec = get_operation(request.operation)
        if request.operation not in self.operations:
            raise EditError(f"the {self.name} editor cannot do {request.operation!r}")
        if request.kind not in spec.kinds:
            raise OperationError(f"{request.operation} is not a {request.kind} operation "
                                 f"(it serves {', '.join(spec.kinds)})")
        params = spec.validate(request.params)
        mask = mask if mask.dtype == bool else mask > 0
        result = self._edit(patch, mask, request, params)
        if result.shape[:2] == patch.shape[:2] and mask.all():
            result = result[..., :patch.shape[2]]   # everything is kept: nothing to restore
        elif result.shape[:2] == patch.shape[:2]:
            keep = feather_alpha(mask, margin) > 0 if margin > 0 else mask
            if spec.has("moves_target"):   # where it lands changes too
                keep = keep | moved_mask(mask, params["scale"], request.shift_px(params))
            result = np.where(keep[..., None], result[..., :patch.shape[2]], patch)
        return np.ascontiguousarray(result, dtype=np.uint8)

    @abstractmethod
    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        """Do the pixel work with validated ``params``."""


EDITORS: Registry[type[Editor]] = Registry("editor")


def register_editor(cls: type[Editor]) -> type[Editor]:
    """Class decorator: add an editor to ``EDITORS`` under its ``name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a name")
    unknown = [op for op in cls.operations if op not in _known_operations()]
    if unknown:
        raise TypeError(f"{cls.__name__} declares unknown operations: {unknown}")
    EDITORS[cls.name] = cls
    return cls


def _known_operations() -> set[str]:
    return set(OPERATIONS)
