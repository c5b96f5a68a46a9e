"""The Editor base: checks before work, and nothing outside the mask ever changes."""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.editors.base import EDITORS, EditError, Editor, EditRequest, register_editor
from pipelines.editors.operations import OperationError


class _Invert(Editor):
    name = "test-invert"
    operations = frozenset({"brightness", "recolor"})

    def _edit(self, patch, mask, request, params):
        return 255 - patch


def test_edit_changes_only_masked_pixels(astronaut):
    patch = astronaut[100:200, 100:260]
    mask = np.zeros(patch.shape[:2], bool)
    mask[20:60, 30:90] = True
    out = _Invert().edit(patch, mask, EditRequest("adjust", "brightness", {"amount": 0.5}))
    assert out.dtype == np.uint8 and out.shape == patch.shape
    assert np.array_equal(out[~mask], patch[~mask])
    assert np.array_equal(out[mask], 255 - patch[mask])


def test_requests_are_checked_before_work(astronaut):
    patch, mask = astronaut[:8, :8], np.ones((8, 8), bool)
    editor = _Invert()
    with pytest.raises(EditError, match="cannot do 'contrast'"):
        editor.edit(patch, mask, EditRequest("adjust", "contrast"))
    with pytest.raises(OperationError, match="out of range"):
        editor.edit(patch, mask, EditRequest("adjust", "brightness", {"amount": 4}))
    with pytest.raises(OperationError, match="not a remove operation"):
        editor.edit(patch, mask, EditRequest("remove", "brightness"))
    with pytest.raises(EditError, match="does not match"):
        editor.edit(patch, np.ones((4, 4), bool), EditRequest("adjust", "brightness"))
    with pytest.raises(EditError, match="uint8"):
        editor.edit(patch.astype(np.float32), mask, EditRequest("adjust", "brightness"))


def test_registry_rejects_unknown_operations():
    class Bad(_Invert):
        name = "test-bad"
        operations = frozenset({"levitate"})

    with pytest.raises(TypeError, match="unknown operations"):
        register_editor(Bad)
    assert "test-bad" not in EDITORS


def test_margin_keeps_the_edit_in_the_feather_band_only(astronaut):
    from pipelines.layers import feather_alpha

    patch = astronaut[100:200, 100:260]
    mask = np.zeros(patch.shape[:2], bool)
    mask[40:60, 60:100] = True
    out = _Invert().edit(patch, mask, EditRequest("adjust", "brightness"), margin=6)
    band = feather_alpha(mask, 6) > 0
    assert band.sum() > mask.sum()
    assert np.array_equal(out[band], 255 - patch[band])
    assert np.array_equal(out[~band], patch[~band])
