"""The registry of operations: every family imported once, ``{name: operation}``.

Families register their classes as they are defined (``Family``); this module imports
them in reading order so the registry is complete wherever it is read.
"""

from __future__ import annotations

from pipelines.operations import (  # noqa: F401 — importing a family registers it
    colour,
    corrections,
    detail,
    fill,
    geometry,
    looks,
    reference,
    text,
    tone,
)
from pipelines.operations.base import FLAGS, REGISTRY, Operation
from pipelines.operations.errors import OperationError


def get(name: str) -> Operation:
    """The operation called ``name``, with a readable error listing the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise OperationError(f"unknown operation {name!r}; known: "
                             f"{', '.join(sorted(REGISTRY))}") from None


def operations() -> list[Operation]:
    """Every operation, in registry (reading) order."""
    return list(REGISTRY.values())


def with_flag(flag: str) -> frozenset[str]:
    """Names of the operations that declare ``flag`` (a key of ``FLAGS``)."""
    if flag not in FLAGS:
        raise OperationError(f"unknown flag {flag!r}; known: {', '.join(FLAGS)}")
    return frozenset(name for name, op in REGISTRY.items() if flag in op.flags)


def by_grammar(grammar: str) -> list[Operation]:
    """The operations the rule planner reads with ``grammar``, in reading order."""
    return sorted((op for op in REGISTRY.values() if op.grammar == grammar),
                  key=lambda op: op.reading_order)


def for_role(role: str) -> Operation:
    """The operation that plays ``role`` in the planner's grammar ("remove", "recolour"…)."""
    for op in REGISTRY.values():
        if op.role == role:
            return op
    raise OperationError(f"no operation plays the role {role!r}")


def word_owner() -> dict[str, str]:
    """Every word that names an operation → that operation's name."""
    return {word: op.name for op in REGISTRY.values() for word in op.words}
