"""Pick an editor per request: the embedded classical editor, or a generative one.

Editors register into ``EDITORS`` (``pipelines.editors.base``) when their module is
imported; this module imports the classical and the diffusers editors (whose models load
only on first use).
An editor with ``requires_weights = True`` counts as available only when its
``is_available()`` classmethod says so.
"""

from __future__ import annotations

import logging
from typing import Any

from pipelines.editors import classical, diffusion  # noqa: F401  (they register)
from pipelines.editors.base import EDITORS, EditError, Editor, EditRequest
from pipelines.editors.operations import get_operation

log = logging.getLogger(__name__)

#: the embedded default, tried first for every non-generative operation
DEFAULT_EDITOR = "classical"

_INSTANCES: dict[str, Editor] = {}


def editor_status(cls: type[Editor]) -> tuple[bool, str]:
    """Whether an editor class can run here, and why not.

    Args:
        cls: a registered editor class.

    Returns:
        ``(available, reason)``; ``reason`` is empty when available.
    """
    if not cls.requires_weights:
        return True, ""
    check = getattr(cls, "is_available", None)
    if not callable(check):
        return False, "needs model weights and cannot tell whether they are present"
    try:
        ok, reason = check()
    except Exception as exc:  # a broken plugin must not break the registry
        log.warning("availability check of %s failed: %s", cls.name, exc)
        return False, f"availability check failed: {exc}"
    return bool(ok), "" if ok else (reason or "weights not available")


def get_editor(name: str) -> Editor:
    """The editor registered under ``name`` (one cached instance per name).

    Args:
        name: registry key, e.g. ``"classical"``.

    Returns:
        The editor instance.

    Raises:
        EditError: no editor has that name (the message lists the known ones).
    """
    cls = EDITORS.get(name)
    if cls is None:
        raise EditError(f"unknown editor {name!r}; known: {', '.join(sorted(EDITORS))}")
    instance = _INSTANCES.get(name)
    if instance is None or type(instance) is not cls:
        instance = _INSTANCES[name] = cls()
    return instance


def _candidates(generative: bool) -> list[str]:
    names = list(EDITORS)
    if DEFAULT_EDITOR in names:
        names.remove(DEFAULT_EDITOR)
        if not generative:
            names.insert(0, DEFAULT_EDITOR)
    return names


def pick_editor(request: EditRequest, prefer: str | None = None) -> Editor:
    """Choose the editor for ``request``.

    ``prefer`` wins when it implements the operation and is available; otherwise the first
    available editor that implements it (the classical editor first for non-generative
    operations).

    Args:
        request: the edit to carry out.
        prefer: name of the editor the user or config asked for, if any.

    Returns:
        The chosen editor instance.

    Raises:
        OperationError: the operation is unknown.
        EditError: ``prefer`` is not a known editor, or no available editor can do it.
    """
    spec = get_operation(request.operation)
    if prefer:
        if prefer not in EDITORS:
            raise EditError(f"unknown editor {prefer!r}; known: {', '.join(sorted(EDITORS))}")
        cls = EDITORS[prefer]
        ok, reason = editor_status(cls)
        if ok and request.operation in cls.operations:
            return get_editor(prefer)
        log.info("preferred editor %s not used for %s: %s", prefer, request.operation,
                 reason or "it does not implement the operation")
    refused = []
    for name in _candidates(spec.generative):
        cls = EDITORS[name]
        if request.operation not in cls.operations:
            continue
        ok, reason = editor_status(cls)
        if ok:
            return get_editor(name)
        refused.append(f"{name}: {reason}")
    why = "; ".join(refused) or "no registered editor implements it"
    if spec.generative:
        raise EditError(f"{request.operation!r} needs a generative editor "
                        f"(none is configured: {why})")
    raise EditError(f"no available editor can do {request.operation!r} ({why})")


def available_editors() -> dict[str, dict[str, Any]]:
    """Every registered editor and whether it can run here.

    Returns:
        ``{name: {"available": bool, "operations": [...], "reason": str,
        "requires_weights": bool}}``, the classical editor first.
    """
    report: dict[str, dict[str, Any]] = {}
    for name in _candidates(generative=False):
        cls = EDITORS[name]
        ok, reason = editor_status(cls)
        report[name] = {"available": ok, "operations": sorted(cls.operations),
                        "reason": reason, "requires_weights": bool(cls.requires_weights)}
    return report
