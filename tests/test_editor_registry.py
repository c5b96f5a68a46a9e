"""Editor registry: lookup, caching, choice per request and honest availability."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from pipelines.editors import registry
from pipelines.editors.base import EDITORS, EditError, Editor, EditRequest
from pipelines.editors.classical import ClassicalEditor
from pipelines.editors.operations import OPERATIONS, OperationError


class _Painter(Editor):
    """A weight-backed editor whose availability a test controls; fills the mask grey."""

    name = "test-painter"
    operations = frozenset({"generate", "recolor"})
    requires_weights = True
    ready: ClassVar[bool] = True

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        return (True, "") if cls.ready else (False, "test weights missing")

    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        return np.full_like(patch, 128)


class _Silent(Editor):
    """Needs weights but never says whether they are there."""

    name = "test-silent"
    operations = frozenset({"generate"})
    requires_weights = True

    def _edit(self, patch, mask, request, params):  # pragma: no cover - never picked
        return patch


class _Broken(_Silent):
    name = "test-broken"

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        raise RuntimeError("driver exploded")


@pytest.fixture
def painter(monkeypatch: pytest.MonkeyPatch) -> type[_Painter]:
    monkeypatch.setitem(EDITORS, _Painter.name, _Painter)
    monkeypatch.setattr(_Painter, "ready", True)
    return _Painter


@pytest.fixture
def no_generative(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the classical editor and editors without weights stay registered."""
    for name, cls in list(EDITORS.items()):
        if cls.requires_weights:
            monkeypatch.delitem(EDITORS, name)


def test_get_editor_returns_one_cached_classical_instance():
    first = registry.get_editor("classical")
    assert isinstance(first, ClassicalEditor)
    assert registry.get_editor("classical") is first


def test_unknown_editor_name_lists_the_known_ones():
    with pytest.raises(EditError, match=r"unknown editor 'photoshop'; known: .*classical"):
        registry.get_editor("photoshop")
    with pytest.raises(EditError, match="unknown editor"):
        registry.pick_editor(EditRequest("adjust", "blur"), prefer="photoshop")


#: frame edits (pipelines.editors.frame) are not patch edits
_NOT_PATCH = {"crop", "rotate", "flip", "resize"}


@pytest.mark.parametrize("op", sorted(o for o, s in OPERATIONS.items()
                                      if not s.generative and o not in _NOT_PATCH))
def test_non_generative_operations_go_to_the_classical_editor(op):
    editor = registry.pick_editor(EditRequest(OPERATIONS[op].kinds[0], op))
    assert editor.name == "classical"


@pytest.mark.parametrize("op", ["crop", "rotate", "flip", "resize"])
def test_frame_edits_are_no_editors_job(op):
    with pytest.raises(EditError, match="no available editor"):
        registry.pick_editor(EditRequest("adjust", op))


def test_generative_operation_without_a_generative_editor_says_so(no_generative):
    with pytest.raises(EditError, match="needs a generative editor \\(none is configured"):
        registry.pick_editor(EditRequest("add", "generate", {"prompt": "a hat"}))


def test_generative_operation_with_weights_missing_gives_the_reason(painter, monkeypatch):
    monkeypatch.setattr(painter, "ready", False)
    with pytest.raises(EditError, match="test-painter: test weights missing"):
        registry.pick_editor(EditRequest("add", "generate"))


def test_available_generative_editor_is_picked_and_edits(painter):
    editor = registry.pick_editor(EditRequest("add", "generate", {"prompt": "x"}))
    assert editor.name == "test-painter"
    patch = np.zeros((4, 4, 3), np.uint8)
    mask = np.zeros((4, 4), bool)
    mask[1:3, 1:3] = True
    out = editor.edit(patch, mask, EditRequest("add", "generate", {"prompt": "x"}))
    assert (out[mask] == 128).all() and (out[~mask] == 0).all()


def test_preferred_editor_wins_only_when_it_can_do_the_operation(painter, monkeypatch):
    recolor = EditRequest("adjust", "recolor", {"color": "red"})
    assert registry.pick_editor(recolor).name == "classical"
    assert registry.pick_editor(recolor, prefer="test-painter").name == "test-painter"
    assert registry.pick_editor(EditRequest("adjust", "blur"),
                                prefer="test-painter").name == "classical"
    monkeypatch.setattr(painter, "ready", False)
    assert registry.pick_editor(recolor, prefer="test-painter").name == "classical"


def test_unknown_operation_is_an_operation_error():
    with pytest.raises(OperationError, match="unknown operation 'teleport'"):
        registry.pick_editor(EditRequest("adjust", "teleport"))


def test_editors_that_cannot_vouch_for_their_weights_are_unavailable(monkeypatch):
    monkeypatch.setitem(EDITORS, _Silent.name, _Silent)
    monkeypatch.setitem(EDITORS, _Broken.name, _Broken)
    status = registry.available_editors()
    assert status["test-silent"]["available"] is False
    assert "cannot tell" in status["test-silent"]["reason"]
    assert status["test-broken"]["available"] is False
    assert "driver exploded" in status["test-broken"]["reason"]


def test_available_editors_reports_classical_and_every_registered_editor():
    status = registry.available_editors()
    assert next(iter(status)) == "classical"
    classical = status["classical"]
    assert classical["available"] is True and classical["reason"] == ""
    assert set(classical["operations"]) == \
        {o for o, s in OPERATIONS.items() if not s.generative} - _NOT_PATCH
    for name, info in status.items():
        assert set(info) == {"available", "operations", "reason", "requires_weights"}
        assert info["available"] or info["reason"], name
