"""Reviewers answer back, in a real browser: a comment with a pin and a verdict on the
review page, the owner's count, list, pin, resolve and "use as instruction", text shown
as text, a revoked link refusing a comment, and the review page on a phone."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.browser.test_ui import TIMEOUT, _nodes, _open, _send, _wait_head, _wait_nodes

pytestmark = pytest.mark.browser
COFFEE = Path(__file__).resolve().parents[2] / "assets" / "coffee.jpg"  # 600×400


@pytest.fixture()
def owner(browser, app_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(app_server.url)
    pg.wait_for_selector("#graph .loupe-graph-empty, #graph svg")
    yield pg
    context.close()


def _share(pg) -> str:
    pg.locator("#share-box").click()
    pg.click("#share-btn")
    pg.wait_for_function("document.querySelector('#share-url textarea, #share-url input')"
                         ".value.includes('/review/')")
    return pg.locator("#share-url textarea, #share-url input").first.input_value()


def _reviewer(browser, url: str, **context):
    context.setdefault("viewport", {"width": 1280, "height": 900})
    page = browser.new_context(**context).new_page()
    page.set_default_timeout(60_000)
    assert page.goto(url).status == 200
    # polled from here: the review page's script policy refuses a predicate string that
    # Playwright would evaluate in it while waiting (the page's own script is nonce-only)
    deadline = time.monotonic() + 60
    while not page.evaluate("Array.from(document.querySelectorAll('.compare img'))"
                            ".every(i => i.complete && i.naturalWidth > 0)"):
        assert time.monotonic() < deadline, "the review page's photos did not load"
        page.wait_for_timeout(100)
    return page


def _comment(page, text: str, name: str = "", verdict: str = "", status: int = 201,
             reload: bool = True) -> None:
    page.fill("#c-name", name)
    page.fill("#c-text", text)
    page.check(f"input[name=verdict][value='{verdict}']")
    with page.expect_response(lambda r: r.url.endswith("/comments")) as answer:
        if reload:
            with page.expect_navigation():
                page.click("#c-send")
        else:
            page.click("#c-send")
    assert answer.value.status == status


def _pixels(pg, src: str) -> np.ndarray:
    data = pg.context.request.get(src).body()
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB")).astype(int)


def test_a_reviewer_pins_a_comment_and_the_owner_uses_it(owner, browser, shots: Path):
    pg = owner
    _open(pg, COFFEE)
    _send(pg, "convert it to black and white", 2)
    url = _share(pg)

    rv = _reviewer(browser, url + "?state=n1")  # the second state
    box = rv.locator("#after").bounding_box()
    rv.mouse.click(box["x"] + 0.3 * box["width"] + 0.5, box["y"] + 0.5 * box["height"] + 0.5)
    assert rv.inner_text("#c-pin") == "Pinned point 180, 200"  # full-resolution pixels
    _comment(rv, "make it brighter", "Ana", "changes")
    assert "make it brighter" in rv.inner_text("#comments")
    assert "Changes requested" in rv.inner_text("#comments li.here")
    assert rv.locator("#pins [data-pin='1']").count() == 1
    _comment(rv, '<script>window.pwned=1</script><b id="injected">bold</b> & <i>x</i>',
             "<img src=x onerror=window.pwned=2>")
    shown = rv.inner_text("#comments")
    assert '<script>window.pwned=1</script><b id="injected">bold</b> & <i>x</i>' in shown
    assert "<img src=x onerror=window.pwned=2>" in shown
    assert rv.locator("#injected").count() == 0
    assert rv.evaluate("window.pwned === undefined")
    rv.screenshot(path=str(shots / "16-review-comment.png"), full_page=True)

    # the owner: the count, the list at the right state, markers on the graph
    pg.locator("#graph [data-node='n0']").click()
    _wait_head(pg, "n0")
    pg.locator("#feedback-box").click()
    pg.wait_for_selector("#feedback [data-comment]")
    assert "2 comments, 2 open" in pg.inner_text("#share-box")
    pinned = pg.locator("#feedback section[data-state='n1'] li", has_text="make it brighter")
    assert "Ana" in pinned.inner_text() and "180, 200" in pinned.inner_text()
    assert pg.locator("#graph [data-node='n1'] .loupe-note[data-notes='2']").count() == 1
    assert "<script>window.pwned=1</script>" in pg.inner_text("#feedback")
    assert pg.locator("#feedback #injected").count() == 0

    before = pg.get_attribute("#photo img", "src")
    pinned.get_by_role("button", name="Show").click()
    _wait_head(pg, "n1")
    pg.wait_for_function(f"document.querySelector('#photo img').src !== {before!r}"
                         " && document.querySelector('#photo img').src.includes('pin-')")
    photo = _pixels(pg, pg.get_attribute("#photo img", "src"))
    sy, sx = photo.shape[0] / 400, photo.shape[1] / 600
    r, g, b = photo[round(200 * sy), round(180 * sx)]
    assert r > 170 and g < 90 and b < 90  # the red pin, on a black-and-white photo

    pinned.get_by_role("button", name="Resolve").click()
    pg.wait_for_function("document.querySelector('#share-box').innerText"
                         ".includes('2 comments, 1 open')")
    assert "resolved" in pg.inner_text("#feedback section[data-state='n1'] li.resolved")

    pg.locator("#feedback li", has_text="make it brighter").get_by_role(
        "button", name="Use as instruction").click()
    pg.wait_for_function("document.querySelector('#instruction textarea').value === "
                         "'make it brighter'")
    assert "x 168–193, y 188–213" in pg.inner_text("#selection-note")  # 6% of 400 px
    assert len(_nodes(pg)) == 2  # nothing ran: the owner reads it and sends it
    pg.screenshot(path=str(shots / "17-feedback-owner.png"), full_page=True)
    plain_before = _state_pixels(pg, "n1")
    pg.locator("#instruction textarea").press("Enter")
    _wait_nodes(pg, 3)
    pg.wait_for_function("!document.querySelector('#photo img').src.includes('pin-')")
    after = _pixels(pg, pg.get_attribute("#photo img", "src"))
    sy, sx = after.shape[0] / 400, after.shape[1] / 600
    inside = (after - plain_before)[round(191 * sy):round(210 * sy),
                                    round(171 * sx):round(190 * sx)]
    outside = (after - plain_before)[:, round(260 * sx):]
    assert inside.mean() > 3 and abs(outside.mean()) < 1.5
    assert not pg.locator("#selection-note").is_visible()


def _state_pixels(pg, node: str) -> np.ndarray:
    """A state's preview as the reviewer page serves it (no pin drawn)."""
    url = pg.locator("#share-url textarea, #share-url input").first.input_value()
    return _pixels(pg, f"{url}/preview/{node}")


def test_a_revoked_link_refuses_a_comment_with_404(owner, browser):
    pg = owner
    _open(pg, COFFEE)
    url = _share(pg)
    rv = _reviewer(browser, url)
    pg.locator("#share-links input").click()
    pg.locator("ul[role=listbox] li").first.click()
    pg.click("#revoke-btn")
    pg.wait_for_selector(".toast-body:has-text('revoked')")
    _comment(rv, "too late", status=404, reload=False)
    # the page writes the refusal once it has read the answer's body, a moment after
    # the response itself arrives
    # (a locator's wait: the review page's script policy refuses a string evaluated in it)
    rv.locator("#c-status", has_text="does not exist or has been revoked").wait_for()
    assert "does not exist or has been revoked" in rv.inner_text("#c-status")
    rv.context.close()


def test_the_review_page_works_on_a_phone(owner, browser, shots: Path):
    pg = owner
    _open(pg, COFFEE)
    url = _share(pg)
    rv = _reviewer(browser, url, viewport={"width": 390, "height": 844}, is_mobile=True,
                   has_touch=True, device_scale_factor=2)
    assert rv.evaluate("document.documentElement.scrollWidth") <= 391  # no sideways scroll
    photo = rv.locator("#after").bounding_box()
    assert photo["x"] >= 0 and photo["x"] + photo["width"] <= 390
    rv.locator("#after").tap(position={"x": photo["width"] / 2 + 0.5,
                                       "y": photo["height"] / 2 + 0.5})
    assert rv.inner_text("#c-pin").startswith("Pinned point 300, 200")
    text = rv.locator("#c-text")
    text.scroll_into_view_if_needed()
    box = text.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 60
    _comment(rv, "from my phone", verdict="approve")
    assert "from my phone" in rv.inner_text("#comments")
    assert "Approved" in rv.inner_text("#comments")
    rv.screenshot(path=str(shots / "18-review-phone.png"), full_page=True)
    rv.context.close()
