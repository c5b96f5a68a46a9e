"""Operations, the unit of the code: one class per edit in one module per family.

Each operation declares its name, kind and flags, bounded parameters and main one, the
words that ask for it, its chat wording, ``apply()`` (the classical pixels) and
``check()`` (the critic's measured check). See ``base.Operation`` and docs/ARCHITECTURE.md
("The operation as the unit").

``REGISTRY`` maps names to operations; ``get``, ``operations``, ``with_flag``,
``by_grammar`` and ``for_role`` read it. ``pipelines.editors.operations`` is a view of it
under the older names (``OPERATIONS``, ``get_operation``, ``OperationSpec``).
"""

# the editors package imports this registry back: load it first so either import order works
import pipelines.editors.operations  # noqa: F401, I001
from pipelines.operations.base import (
    FLAGS,
    KINDS,
    REGISTRY,
    Ask,
    Operation,
    ParamSpec,
    Proposal,
    register,
)
from pipelines.operations.errors import EditError, OperationError
from pipelines.operations.measures import Measured, Verdict
from pipelines.operations.registry import (
    by_grammar,
    for_role,
    get,
    operations,
    with_flag,
    word_owner,
)

__all__ = ["FLAGS", "KINDS", "REGISTRY", "Ask", "EditError", "Measured", "Operation",
           "OperationError", "ParamSpec", "Proposal", "Verdict", "by_grammar", "for_role",
           "get", "operations", "register", "with_flag", "word_owner"]
