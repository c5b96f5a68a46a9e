""""this", "this photo" in a real browser (issue 34): without a selection both edit the
photo; with a clicked selection "this" edits the selection and "this photo" still the
whole photo. Same page, photo and helpers as ``test_selection.py`` (two cups pasted on
the cat photo); assertions on the pixels the page shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.browser import test_selection
from tests.browser.test_selection import _changed, _click, _core, _shown
from tests.browser.test_ui import _open, _send, _wait_head

pytestmark = pytest.mark.browser
page, cups = test_selection.page, test_selection.cups   # the same fixtures


def test_this_is_the_photo_without_a_selection_and_the_selection_with_one(
        page, cups, shots: Path):
    pg = page
    path, image, left, right = cups
    _open(pg, path)
    plain = _shown(pg)
    everywhere = np.ones(plain.shape[:2], bool)
    _send(pg, "brighten this a lot", 2)             # nothing selected: the whole photo
    _wait_head(pg, "n1")
    first = _shown(pg)
    assert _changed(plain, first, everywhere) > 0.5
    _send(pg, "make this photo a lot warmer", 3)
    _wait_head(pg, "n2")
    second = _shown(pg)
    assert _changed(first, second, everywhere) > 0.3
    _click(pg, right, image.shape[:2])              # now a selection: "this" is that cup
    pg.wait_for_function("document.querySelector('#selection-info').innerText"
                         ".includes('Selected')")
    selected = _shown(pg)
    _send(pg, "make this a lot darker", 4)
    _wait_head(pg, "n3")
    third = _shown(pg)
    pg.screenshot(path=str(shots / "34-this-is-the-selection.png"), full_page=True)
    assert _changed(selected, third, _core(right, plain.shape[:2])) > 0.8
    assert _changed(selected, third, _core(left, plain.shape[:2])) < 0.01
    outside = ~np.logical_or(_core(right, plain.shape[:2]), _core(left, plain.shape[:2]))
    assert _changed(selected, third, outside) < 0.1
