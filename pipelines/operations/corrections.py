"""Corrections: first-aid curves that follow the photo's own statistics
(``pipelines.editors.corrections`` holds their maths)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipelines.editors.corrections import (
    auto_exposure_curve,
    channel_levels_curve,
    white_patch_curve,
)
from pipelines.operations.base import Family, ParamSpec, Proposal
from pipelines.operations.engines import StatCurveOp

family = Family("corrections")

_BALANCE = frozenset({"pointwise", "curve", "colour_balance", "frame_filter", "tonal"})


@family
class ChannelLevels(StatCurveOp):
    name = "channel_levels"
    description = ("Auto levels per channel: each channel's darkest and brightest pixels "
                   "stretched to black and white (balances colour too).")
    params = (ParamSpec("low", "float", 0.5, "percent of each channel clipped to black",
                        0.0, 5.0),
              ParamSpec("high", "float", 0.5, "percent of each channel clipped to white",
                        0.0, 5.0),
              ParamSpec("linear", "bool", False, "stretch in linear light (white-point "
                        "gains, like a camera's exposure and white balance)"),
              ParamSpec("amount", "float", 1.0, "0 none … 1 full", 0.0, 1.0))
    flags = _BALANCE
    words = ("channel levels", "levels per channel")
    wording = "balance the levels of each colour in {where}"
    proposals = (
        Proposal("correction", {"low": 0.0, "high": 0.0, "linear": True},
                 "white point per channel in linear light (exposure and white balance, as "
                 "a camera sets them)", 1),
        Proposal("correction", {"low": 0.0, "high": 0.0}, "auto levels per channel", 2),
    )

    def curve(self, ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
              p: dict[str, Any]) -> np.ndarray:
        return channel_levels_curve(ramp, rgb8, mask, p)


@family
class WhitePatch(StatCurveOp):
    name = "white_patch"
    description = "White balance from the brightest pixels (white patch)."
    params = (ParamSpec("percentile", "float", 1.0, "percent of brightest pixels per "
                        "channel taken as white", 0.1, 10.0),
              ParamSpec("amount", "float", 1.0, "0 none … 1 full correction", 0.0, 1.0))
    flags = _BALANCE
    words = ("white patch",)
    wording = "balance the colours of {where} from its whites"
    proposals = (Proposal("correction", {"percentile": 0.1},
                          "white balance from the brightest pixels", 4),)

    def curve(self, ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
              p: dict[str, Any]) -> np.ndarray:
        return white_patch_curve(ramp, rgb8, mask, p)


@family
class AutoExposure(StatCurveOp):
    name = "auto_exposure"
    description = "Exposure set from the histogram's median."
    params = (ParamSpec("target", "float", 48.0, "median lightness to reach (L*)",
                        20.0, 80.0),
              ParamSpec("amount", "float", 1.0, "0 none … 1 full correction", 0.0, 1.0))
    flags = frozenset({"pointwise", "curve", "frame_filter", "tonal"})
    words = ("auto exposure",)
    wording = "set the exposure of {where} from its histogram"
    proposals = (
        Proposal("correction", {"target": 48.0}, "exposure from the histogram's median", 6),
        Proposal("correction", {"target": 48.0, "amount": 0.5},
                 "half the median's exposure change", 7),
    )

    def curve(self, ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
              p: dict[str, Any]) -> np.ndarray:
        return auto_exposure_curve(ramp, rgb8, mask, p)
