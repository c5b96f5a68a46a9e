"""Looks: moved to ``pipelines.operations.looks`` (the ``look`` operation); kept as a view."""

from pipelines.operations.looks import LOOKS, Look, RunOp, apply_look

__all__ = ["LOOKS", "Look", "RunOp", "apply_look"]
