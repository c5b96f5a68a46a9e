"""The catalogue of edit operations: a view of ``pipelines.operations`` under its older names.

Every operation is a class in ``pipelines/operations/`` (one module per family); this
module keeps the names the editors, planners, action schema and UI have always used:
``OPERATIONS`` (name → operation), ``get_operation``, ``operations_with``,
``OperationSpec`` (the operation type), ``ParamSpec``, ``OperationError``, ``FLAGS``,
``NAMED_COLORS`` and ``parse_color``.
"""

from __future__ import annotations

from pipelines.operations.base import FLAGS, KINDS, REGISTRY, ParamSpec
from pipelines.operations.base import Operation as OperationSpec
from pipelines.operations.colours import NAMED_COLORS, more_colour_names, parse_color
from pipelines.operations.errors import OperationError
from pipelines.operations.registry import get as get_operation
from pipelines.operations.registry import with_flag as operations_with

#: name → operation (the registry itself: operations added later appear here too)
OPERATIONS = REGISTRY

__all__ = ["FLAGS", "KINDS", "NAMED_COLORS", "OPERATIONS", "OperationError", "OperationSpec",
           "ParamSpec", "get_operation", "more_colour_names", "operations_with", "parse_color"]
