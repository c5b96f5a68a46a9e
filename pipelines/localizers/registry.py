"""The localiser registry: every localiser by name, and the best available one.

The built-in localisers are imported here and registered in order of preference among
equals (``embedded``, ``grounded-sam``, ``perception``); a plugin registers its own class
with ``register_localizer``. ``get_localizer()`` picks the available model-based one of
highest ``priority`` (GroundingDINO+SAM, then the embedded perception stack), else
``embedded``.
"""

from __future__ import annotations

import logging

from pipelines.localizers.base import LocalizationError, Localizer
from pipelines.localizers.embedded import EmbeddedLocalizer
from pipelines.localizers.grounded_sam import GroundedSAMLocalizer
from pipelines.localizers.perception import PerceptionLocalizer

log = logging.getLogger(__name__)

LOCALIZERS: dict[str, type[Localizer]] = {}
_INSTANCES: dict[str, Localizer] = {}


def register_localizer(cls: type[Localizer]) -> type[Localizer]:
    """Class decorator: add a localiser to ``LOCALIZERS`` under its ``name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a name")
    LOCALIZERS[cls.name] = cls
    return cls


for _builtin in (EmbeddedLocalizer, GroundedSAMLocalizer, PerceptionLocalizer):
    register_localizer(_builtin)


def get_localizer(name: str | None = None) -> Localizer:
    """A localiser by name, or the best available one.

    Args:
        name: registry key, or None for the best available.

    Returns:
        A cached localiser instance.

    Raises:
        LocalizationError: unknown name, or the named localiser is unavailable.
    """
    if name is None:
        name = "embedded"
        ranked = sorted(LOCALIZERS.items(), key=lambda kv: -kv[1].priority)
        for key, cls in ranked:
            if key != "embedded" and cls.requires_weights and _available(cls)[0]:
                name = key
                break
    cls = LOCALIZERS.get(name)
    if cls is None:
        raise LocalizationError(f"unknown localiser {name!r}; known: "
                                f"{', '.join(sorted(LOCALIZERS))}")
    ok, reason = _available(cls)
    if not ok:
        raise LocalizationError(f"the {name} localiser is unavailable: {reason}")
    if not isinstance(_INSTANCES.get(name), cls):
        _INSTANCES[name] = cls()
    return _INSTANCES[name]


def _available(cls: type[Localizer]) -> tuple[bool, str]:
    try:
        ok, reason = cls.is_available()
    except Exception as exc:  # a broken plugin must not break localisation
        log.warning("availability check of %s failed: %s", cls.name, exc)
        return False, str(exc)
    return bool(ok), reason
