"""Candidates to click and click-to-select in a real browser (issue 24).

The photo is the held-out two-cup composite of ``tests/critic_pairs.py`` (two copies of
the scikit-image cup pasted at known places on the cat photo). Assertions are on what the
page shows: the photo view's pixels (fetched from the page), the line under the photo,
the history graph."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from tests.browser.test_ui import TIMEOUT, _loaded, _nodes, _open, _send, _wait_head
from tests.critic_pairs import _two_cups

pytestmark = pytest.mark.browser
#: the selection outline's colour (web.selection.SELECTION_RGB)
OUTLINE = np.array([255, 214, 10])


@pytest.fixture()
def page(browser, app_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(app_server.url)
    _loaded(pg)
    yield pg
    context.close()


@pytest.fixture(scope="module")
def cups(tmp_path_factory: pytest.TempPathFactory):
    image, left, right = _two_cups("chelsea")
    path = tmp_path_factory.mktemp("cups") / "two-cups.png"
    Image.fromarray(image).save(path)
    return path, image, left, right


def _shown(pg) -> np.ndarray:
    """The photo view's pixels, as the browser got them."""
    src = pg.get_attribute("#photo img", "src")
    data = pg.request.get(src).body()
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


def _core(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """``mask`` at the preview's size, well inside its edge (outline and feather left out)."""
    small = cv2.resize(mask.astype(np.uint8), (shape[1], shape[0]),
                       interpolation=cv2.INTER_NEAREST)
    return cv2.erode(small, np.ones((15, 15), np.uint8)) > 0


def _click(pg, mask: np.ndarray, full: tuple[int, int], **kw) -> None:
    """Click the photo view at the centre of ``mask`` (full-resolution pixels)."""
    ys, xs = np.nonzero(mask)
    fx, fy = xs.mean() / full[1], ys.mean() / full[0]
    box = pg.locator("#photo img").bounding_box()
    pg.locator("#photo img").click(position={"x": fx * box["width"], "y": fy * box["height"]},
                                   **kw)


def _outlined(pixels: np.ndarray) -> int:
    return int((np.abs(pixels.astype(int) - OUTLINE).max(axis=2) < 30).sum())


def _changed(a: np.ndarray, b: np.ndarray, where: np.ndarray) -> float:
    return float((np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 12)[where].mean())


def test_an_unsure_request_shows_numbered_candidates_and_a_click_edits_that_one(
        page, cups, shots: Path):
    pg = page
    path, image, left, right = cups
    _open(pg, path)
    plain = _shown(pg)
    box = pg.locator("#instruction textarea")
    box.fill("make the cup blue")
    box.press("Enter")
    pg.wait_for_function("document.querySelector('#selection-info').innerText"
                         ".includes('numbered')")
    assert _nodes(pg) == ["n0"]                            # nothing changed yet
    numbered = _shown(pg)
    assert numbered.shape == plain.shape and _changed(plain, numbered,
                                                      np.ones(plain.shape[:2], bool)) > 0
    pg.screenshot(path=str(shots / "24-candidates.png"), full_page=True)
    _click(pg, left, image.shape[:2])
    _wait_head(pg, "n1")
    pg.wait_for_function("!document.querySelector('#selection-info').innerText"
                         ".includes('numbered')")
    after = _shown(pg)
    assert _changed(plain, after, _core(left, plain.shape[:2])) > 0.8
    assert _changed(plain, after, _core(right, plain.shape[:2])) < 0.01


def test_a_click_then_this_changes_that_object_only(page, cups, shots: Path):
    pg = page
    path, image, left, right = cups
    _open(pg, path)
    plain = _shown(pg)
    _click(pg, right, image.shape[:2])
    pg.wait_for_function("document.querySelector('#selection-info').innerText"
                         ".includes('Selected')")
    assert _outlined(_shown(pg)) > 50 and _outlined(plain) < 5
    assert "you clicked" in pg.inner_text("#selection-note")  # what "this" will change
    pg.screenshot(path=str(shots / "25-selected.png"), full_page=True)
    _send(pg, "make this red", 2)
    _wait_head(pg, "n1")
    after = _shown(pg)
    assert _changed(plain, after, _core(right, plain.shape[:2])) > 0.8
    assert _changed(plain, after, _core(left, plain.shape[:2])) < 0.01


def test_add_to_selection_and_clear_selection(page, cups, shots: Path):
    pg = page
    path, image, left, right = cups
    _open(pg, path)
    plain = _shown(pg)
    _click(pg, left, image.shape[:2])
    pg.wait_for_function("document.querySelector('#selection-info').innerText"
                         ".includes('Selected')")
    one = _outlined(_shown(pg))
    pg.locator("#add-selection input").check()
    src = pg.get_attribute("#photo img", "src")
    _click(pg, right, image.shape[:2])
    pg.wait_for_function(f"document.querySelector('#photo img').src !== {src!r}")
    both = _outlined(_shown(pg))
    assert both > 1.5 * one                               # two outlines now
    pg.screenshot(path=str(shots / "26-added.png"), full_page=True)
    _send(pg, "make it darker", 2)
    _wait_head(pg, "n1")
    after = _shown(pg)
    corner = np.zeros(plain.shape[:2], bool)
    corner[:40, :40] = True
    assert _changed(plain, after, _core(left, plain.shape[:2])) > 0.8
    assert _changed(plain, after, _core(right, plain.shape[:2])) > 0.8
    assert _changed(plain, after, corner) < 0.01
    src = pg.get_attribute("#photo img", "src")
    pg.click("#clear-selection")
    pg.wait_for_function(f"document.querySelector('#photo img').src !== {src!r}")
    assert _outlined(_shown(pg)) < 5
    assert "Click an object" in pg.inner_text("#selection-info")
    assert not pg.locator("#selection-note").is_visible()  # nothing selected: no note
    # shift-click adds too, without the toggle
    pg.locator("#add-selection input").uncheck()
    src = pg.get_attribute("#photo img", "src")
    _click(pg, left, image.shape[:2])
    pg.wait_for_function(f"document.querySelector('#photo img').src !== {src!r}")
    single = _outlined(_shown(pg))
    src = pg.get_attribute("#photo img", "src")
    _click(pg, right, image.shape[:2], modifiers=["Shift"])
    pg.wait_for_function(f"document.querySelector('#photo img').src !== {src!r}")
    assert _outlined(_shown(pg)) > 1.5 * single
