"""Retry maths: what to try next after an attempt fell short (pushed harder, pulled back,
rescaled onto the values tried, kept inside the operation's bounds)."""

from __future__ import annotations

from typing import Any

from pipelines.operations import REGISTRY, OperationError


def stronger(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """Parameters that push an operation harder (for 'nothing changed')."""
    spec = REGISTRY.get(op)
    return spec.stronger(params) if spec is not None else {}


def softer(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """Parameters that pull an operation back (for clipping)."""
    spec = REGISTRY.get(op)
    return spec.softer(params) if spec is not None else {}


def from_tried(retry: dict[str, Any], asked: dict[str, Any], tried: dict[str, Any]
                ) -> dict[str, Any]:
    """Rescale numeric suggestions made relative to the asked values onto the tried ones."""
    out = dict(retry)
    for k, v in retry.items():
        a, t = asked.get(k), tried.get(k)
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (v, a, t)) \
                and a and t and (a > 0) == (t > 0):
            out[k] = t * (v / a)
    return out


def valid_retry(op: str, retry: dict[str, Any]) -> dict[str, Any]:
    """Only parameters the operation takes, inside their bounds."""
    spec = REGISTRY.get(op)
    if spec is None or not retry:
        return {}
    clean = {}
    for k, v in retry.items():
        p = next((s for s in spec.params if s.name == k and s.type != "image"), None)
        if p is None:
            continue
        if p.type in ("float", "int") and isinstance(v, (int, float)) and \
                not isinstance(v, bool) and p.minimum is not None and p.maximum is not None:
            v = round(min(p.maximum, max(p.minimum, float(v))), 3)
        try:
            clean[k] = p.check(v, op)
        except OperationError:
            continue
    return clean


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


