"""The one plugin mechanism: every registry is a ``pipelines.plugins.Registry``, which
registers by decorator or by name, names the known entries when one is unknown, and
imports plugin modules on a miss."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent.brain.critic import CRITICS
from agent.brain.planner import PLANNERS
from eval.systems import SYSTEMS
from pipelines.editors.base import EDITORS
from pipelines.localizers import LOCALIZERS
from pipelines.plugins import Registry


def test_every_registry_uses_the_one_mechanism() -> None:
    for registry, kind in ((EDITORS, "editor"), (LOCALIZERS, "localiser"),
                           (PLANNERS, "planner"), (CRITICS, "critic"), (SYSTEMS, "agent")):
        assert isinstance(registry, Registry) and registry.kind == kind
    assert {"embedded", "perception", "grounded-sam"} <= set(LOCALIZERS)
    assert {"rules", "llm"} <= set(PLANNERS) and {"measured", "panel"} <= set(CRITICS)


def test_register_by_decorator_or_name_and_refuse_nameless() -> None:
    things = Registry("thing")

    @things.register
    class Named:
        name = "named"

    assert things.register("made", lambda: 3) is things["made"]
    assert things.lookup("named") is Named and things.lookup("made")() == 3
    with pytest.raises(TypeError, match="needs a name"):
        things.register(type("Nameless", (), {"name": ""}))
    with pytest.raises(TypeError, match="not callable"):
        things.register("value", 3)


def test_unknown_names_list_the_known_ones_in_the_registrys_error() -> None:
    class Refused(LookupError):
        pass

    things = Registry("gadget", {"b": len, "a": len}, error=Refused)
    with pytest.raises(Refused, match=r"^unknown gadget 'z'; known: a, b$"):
        things.lookup("z")


def test_plugins_are_imported_on_a_miss_once(tmp_path: Path, monkeypatch, caplog) -> None:
    (tmp_path / "loupe_test_host.py").write_text(
        "from pipelines.plugins import Registry\n"
        "WIDGETS = Registry('widget', plugins=lambda: ['loupe_test_plugin',"
        " 'loupe_missing_plugin'])\n")
    (tmp_path / "loupe_test_plugin.py").write_text(
        "from loupe_test_host import WIDGETS\nWIDGETS.register('late', len)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("loupe_test_host", "loupe_test_plugin"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    from loupe_test_host import WIDGETS  # noqa: PLC0415 — written by this test

    assert "late" not in WIDGETS
    assert WIDGETS.lookup("late") is len
    assert "loupe_missing_plugin" in caplog.text      # logged, not raised
    with pytest.raises(ValueError, match="unknown widget 'other'; known: late"):
        WIDGETS.lookup("other")
