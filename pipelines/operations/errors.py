"""The error every operation raises for an unknown name or a parameter out of bounds."""


class OperationError(ValueError):
    """An unknown operation or a parameter out of its bounds."""


class EditError(RuntimeError):
    """An editor could not carry out a request (the message says why, for a person)."""
