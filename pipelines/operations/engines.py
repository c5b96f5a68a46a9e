"""How an operation's pixels are computed, in the cheapest form that stays exact at 20 MP.

* ``CurveOp``: a per-channel tone curve evaluated once on a 256-step ramp and applied as
  an 8-bit look-up table (``curve(ramp, mask, params)``);
* ``StatCurveOp``: the same, from the target's statistics (``curve(ramp, rgb8, mask, p)``);
* ``MatrixOp``: a 3×3 colour matrix through ``cv2.transform`` (``matrix(params)``);
* ``FloatOp``: float32 RGB in [0, 1] (``pixels(rgb, mask, params)``).

Operations that work on 8-bit pixels directly override ``apply``.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from pipelines.operations.base import Operation
from pipelines.operations.pixels import RAMP, to_u8


class CurveOp(Operation):
    """A per-channel tone curve (see the module doc)."""

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        """The curve on ``ramp`` (floats in [0, 1])."""
        raise NotImplementedError

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return cv2.LUT(rgb8, to_u8(self.curve(RAMP, mask, params)))


class StatCurveOp(Operation):
    """A tone curve measured on the target's pixels (see the module doc)."""

    def curve(self, ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
              p: dict[str, Any]) -> np.ndarray:
        """The curve on ``ramp`` from the statistics of ``rgb8`` over ``mask``."""
        raise NotImplementedError

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return cv2.LUT(rgb8, to_u8(self.curve(RAMP, rgb8, mask, params)))


class MatrixOp(Operation):
    """A 3×3 colour matrix (see the module doc)."""

    def matrix(self, p: dict[str, Any]) -> np.ndarray:
        """The float32 3×3 matrix for the parameters."""
        raise NotImplementedError

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return cv2.transform(rgb8, self.matrix(params))


class FloatOp(Operation):
    """Works on float32 RGB in [0, 1] (see the module doc)."""

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        """The edited float RGB."""
        raise NotImplementedError

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return to_u8(self.pixels(rgb8.astype(np.float32) / 255.0, mask, params))
