"""The Batch tab in a real browser: two photos in, progress, the results zip and the
report to download."""

from __future__ import annotations

import io
import urllib.request
import zipfile
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.browser
#: Playwright's timeout (the browser fixtures skip, saying why, where it is not installed)
PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError
ASSETS = Path(__file__).resolve().parents[2] / "assets"
TIMEOUT = 180_000  # the machine may be shared: uploads and the first status can be slow


@pytest.fixture()
def page(browser, app_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(app_server.url)
    # loaded: the page's load event has restored (or created) its session
    pg.wait_for_selector("#graph .loupe-graph-empty, #graph svg")
    yield pg
    context.close()


def test_batch_tab_edits_the_photos_and_offers_the_results(page, app_server, shots: Path):
    pg = page
    pg.get_by_role("tab", name="Batch").click()
    pg.wait_for_selector("#batch-instruction textarea", state="visible")  # the tab mounted
    pg.wait_for_selector("#batch-files input[type=file]", state="attached")
    # textContent: the list lays a name's stem and extension out as separate items, so its
    # innerText reads "chelsea\n.jpg" once styled
    listed = ("document.querySelector('#batch-files').textContent.replace(/\\s+/g, '')"
              ".includes('chelsea.jpg')")
    # a tab that is still mounting can drop the first file set; setting the files again
    # restarts an upload in progress, so each try waits longer than the one before, and a
    # set that landed while the last try timed out is not set again
    for attempt, wait_ms in enumerate((30_000, 60_000, TIMEOUT)):
        if attempt and pg.evaluate(listed):
            break
        pg.set_input_files("#batch-files input[type=file]",
                           [str(ASSETS / "coffee.jpg"), str(ASSETS / "chelsea.jpg")])
        try:
            pg.wait_for_function(listed, timeout=wait_ms)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                pg.screenshot(path=str(shots / "batch-upload-failed.png"), full_page=True)
                raise
    pg.locator("#batch-instruction textarea").fill("make it warmer")
    pg.click("#batch-start")
    pg.wait_for_selector("#batch-status :text('photos finished')")
    pg.wait_for_selector("#batch-status :text('Done')", timeout=300_000)  # Ray starts first
    pg.screenshot(path=str(shots / "batch-done.png"), full_page=True)
    assert "2 of 2 photos finished: 2 edited, 0 failed" in pg.inner_text("#batch-status")
    links = pg.locator("#batch-results a[href]")
    assert links.count() == 2
    hrefs = [links.nth(i).get_attribute("href") for i in range(2)]
    zipped = next(h for h in hrefs if h.endswith(".zip"))
    url = zipped if zipped.startswith("http") else app_server.url + zipped
    with urllib.request.urlopen(url, timeout=60) as resp, \
            zipfile.ZipFile(io.BytesIO(resp.read())) as zf:
        assert {"coffee.jpg", "chelsea.jpg", "batch-report.html"} <= set(zf.namelist())
        warm = Image.open(io.BytesIO(zf.read("coffee.jpg"))).convert("RGB")
        before = Image.open(ASSETS / "coffee.jpg").convert("RGB")
        assert warm.size == before.size
        r, _, b = (sum(c.getdata()) for c in warm.split())
        r0, _, b0 = (sum(c.getdata()) for c in before.split())
        assert r - b > r0 - b0  # warmer: more red against blue
