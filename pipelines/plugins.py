"""The one plugin mechanism: a named registry of classes or factories.

Editors, localisers, planners, critics and edit systems each keep one ``Registry``. It is
a ``dict`` (name → entry), so reading it stays plain; on top it registers by decorator
(the entry's ``name`` attribute, or a name given), looks names up with one message for
unknown ones, and imports plugin modules — named by a setting — the first time an unknown
name is asked for::

    EDITORS = Registry("editor")

    @EDITORS.register
    class MyEditor(Editor):
        name = "mine"

    PLANNERS = Registry("planner", {"rules": make_rules})
    planner = PLANNERS.lookup("rules")(settings)
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, overload

log = logging.getLogger(__name__)

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(dict[str, T]):
    """Name → plugin entry (a class with a ``name``, or a factory)."""

    def __init__(self, kind: str, entries: Mapping[str, T] | None = None, *,
                 error: type[Exception] = ValueError,
                 plugins: Callable[[], Iterable[str]] | None = None) -> None:
        """Args:
            kind: what an entry is, for messages ("localiser", "planner").
            entries: initial entries.
            error: raised by ``lookup`` for an unknown name.
            plugins: the modules to import on a miss (read when needed, e.g. a setting).
        """
        super().__init__(entries or {})
        self.kind = kind
        self.error = error
        self._plugins = plugins
        self._loaded: set[str] = set()

    @overload
    def register(self, entry: T) -> T: ...

    @overload
    def register(self, entry: str, factory: T) -> T: ...

    def register(self, entry: Any, factory: Any = None) -> Any:
        """Add an entry; usable as a class decorator (``@REG.register``).

        Args:
            entry: a class or object with a ``name``, or a name when ``factory`` is given.
            factory: the entry registered under the name ``entry``.

        Returns:
            The registered entry, unchanged.

        Raises:
            TypeError: no name, or a factory that is not callable.
        """
        if factory is None:
            name, factory = getattr(entry, "name", ""), entry
        else:
            name = entry
        if not isinstance(name, str) or not name:
            raise TypeError(f"{getattr(factory, '__name__', factory)!r} needs a name to be "
                            f"registered as a {self.kind}")
        if not callable(factory):
            raise TypeError(f"the {self.kind} {name!r} is not callable")
        self[name] = factory
        return factory

    def load_plugins(self, modules: Iterable[str] | None = None) -> None:
        """Import plugin modules (once each); one that fails to import is logged."""
        if modules is None:
            modules = self._plugins() if self._plugins else ()
        for module in modules:
            if module in self._loaded:
                continue
            self._loaded.add(module)
            try:
                importlib.import_module(module)
            except ImportError as exc:
                log.warning("%s plugin %s is not available here: %s", self.kind, module, exc)

    def lookup(self, name: str) -> T:
        """The entry under ``name`` (plugins imported first when it is unknown).

        Raises:
            self.error: unknown name, with the known ones.
        """
        if name not in self:
            self.load_plugins()
        if name not in self:
            raise self.error(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self))}")
        return self[name]
