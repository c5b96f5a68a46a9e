"""Editors: the Editor base and registry, the operation catalogue, and the editors.

``ClassicalEditor`` (OpenCV/PIL, no weights) is the embedded default; diffusers editors
register themselves from ``pipelines.editors.diffusion`` when imported.
"""

from pipelines.editors.base import EDITORS, EditError, Editor, EditRequest, register_editor
from pipelines.editors.operations import (
    NAMED_COLORS,
    OPERATIONS,
    OperationError,
    OperationSpec,
    ParamSpec,
    get_operation,
    parse_color,
)

__all__ = [
    "EDITORS", "EditError", "EditRequest", "Editor", "NAMED_COLORS", "OPERATIONS",
    "OperationError", "OperationSpec", "ParamSpec", "get_operation", "parse_color",
    "register_editor",
]
