"""What a retry of one step may change, and the choice of the change: the critique's
parameters, a rim left uncovered, another candidate region, another editor, a wider
feather (``TurnRunner._attempts``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agent import executor
from agent.actions import Action
from agent.session.results import name_of, plain_params
from pipelines.editors.operations import OperationError, get_operation
from pipelines.layers import Layer

#: Feather width of a retry after the critic saw a seam.
WIDE_FEATHER = 24


@dataclass
class Knobs:
    """What a retry may change: parameters, editor, layer (region) and feather."""

    params: dict[str, Any]
    editor: Any
    tried: set[str]
    layer: Layer
    feather: int | None = None
    change: str = ""


def reflect(backends: Any, seed: int, action: Action, knobs: Knobs, critique: Any, region: Any,
        image: np.ndarray) -> bool:
    """Change one knob for the next attempt, as the critique suggests: its parameters,
    else another candidate region, else another editor, else a wider feather.
    Returns False when nothing is left to change (a retry would repeat itself)."""
    if critique is not None and getattr(critique, "retry_params", None):
        merged = dict(knobs.params) | dict(critique.retry_params)
        try:
            clean = get_operation(action.operation).validate(
                {k: v for k, v in merged.items() if not hasattr(v, "shape")})
            clean.update({k: v for k, v in merged.items() if hasattr(v, "shape")})
        except OperationError:
            clean = None
        if clean is not None and plain_params(clean) != plain_params(knobs.params):
            knobs.params, knobs.change = clean, "new parameters"
            return True
    grow = int(getattr(critique, "grow", 0) or 0)
    located = None if region.drawn else region.mask
    wider = executor.rim_layer(image, knobs.layer, grow, action.to_request(
        seed=seed), knobs.editor, located, region.neighbours) \
        if grow > 0 and knobs.change != "a larger area" else None
    if wider is not None:   # a rim was left: cover it, as far as an edge may grow
        knobs.layer, knobs.change = wider, "a larger area"
        return True
    fix_text = " ".join(getattr(critique, "fix", []) or []).lower()
    if region.alternatives and any(w in fix_text for w in ("region", "mask", "target",
                                                           "locali", "outside")):
        mask = region.alternatives.pop(0)
        knobs.layer = executor.cut(image, mask, action.to_request(seed=seed),
                                   knobs.editor)
        knobs.change = "another candidate region"
        return True
    others = backends.other_editors(action.to_request(seed=seed), knobs.tried)
    if others:
        knobs.editor, knobs.change = others[0], f"the {name_of(others[0])} editor"
        knobs.tried.add(name_of(others[0]))
        return True
    if ("seam" in fix_text or "edge" in fix_text) and knobs.feather != WIDE_FEATHER:
        knobs.feather, knobs.change = WIDE_FEATHER, "a wider feather"
        return True
    return False
