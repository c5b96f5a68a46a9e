"""Issue 35 in a real browser: the Edit tab's "Reference photo" beside the instruction
box matches the photo to it; a hostile reference is refused in a toast and nothing changes;
the Batch tab takes a reference too. Real photos (``eval.photos``) at ≤ 320 px."""

from __future__ import annotations

import io
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eval.look import look_distance
from eval.photos import load_photo

pytestmark = pytest.mark.browser
TIMEOUT = 180_000


@pytest.fixture()
def page(browser, app_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(app_server.url)
    pg.wait_for_selector("#graph .loupe-graph-empty, #graph svg")
    yield pg
    context.close()


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ref-photos")
    out = {}
    for name in ("china", "rocket", "coffee"):
        out[name] = folder / f"{name}.png"
        Image.fromarray(load_photo(name, 320)).save(out[name])
    out["evil"] = folder / "evil.png"
    out["evil"].write_bytes(b"GIF89a" + b"\x00" * 30)
    return out


def _nodes(pg) -> int:
    return pg.evaluate("document.querySelectorAll('#graph [data-node]').length")


def _set_reference(pg, path: Path, where: str = "#reference") -> None:
    pg.set_input_files(f"{where} input[type=file]", str(path))
    pg.wait_for_function(f"document.querySelector('{where}').textContent"
                         f".replace(/\\s+/g, '').includes('{path.name}')")


def _open(pg, path: Path) -> None:
    pg.set_input_files("#upload input[type=file]", str(path))
    pg.wait_for_selector("#graph g.node.head[data-node='n0']")


def test_a_hostile_reference_is_refused_in_a_toast(page, photos, shots: Path):
    pg = page
    _open(pg, photos["china"])
    _set_reference(pg, photos["evil"])
    box = pg.locator("#instruction textarea")
    box.fill("make it look like the reference")
    box.press("Enter")
    pg.wait_for_function("Array.from(document.querySelectorAll('.toast-body'))"
                         ".some(t => t.innerText.includes('evil.png'))")
    pg.screenshot(path=str(shots / "reference-refused.png"), full_page=True)
    assert _nodes(pg) == 1   # nothing changed
    assert box.input_value() == "make it look like the reference"   # kept to send again


def test_the_edit_tab_matches_the_reference_photo(page, photos, shots: Path):
    pg = page
    _open(pg, photos["china"])
    _set_reference(pg, photos["rocket"])
    box = pg.locator("#instruction textarea")
    box.fill("make it look like the reference")
    box.press("Enter")
    pg.wait_for_selector("#graph g.node.head[data-node='n1']")
    pg.wait_for_function("document.querySelector('#chat').innerText.includes('reference 1')")
    pg.wait_for_selector("#chat img")   # the reference itself, shown in the chat
    pg.screenshot(path=str(shots / "reference-matched.png"), full_page=True)
    with pg.expect_download() as info:
        pg.click("#download-btn")
        pg.wait_for_selector("#file-out a[href]")
        pg.locator("#file-out a[href]").first.click()
    with Image.open(info.value.path()) as im:
        after = np.asarray(im.convert("RGB"))
    rocket = load_photo("rocket", 320)
    assert look_distance(after, rocket).total <= \
        0.5 * look_distance(load_photo("china", 320), rocket).total


def test_the_batch_tab_takes_a_reference(page, app_server, photos, shots: Path):
    pg = page
    pg.get_by_role("tab", name="Batch").click()
    pg.wait_for_selector("#batch-instruction textarea", state="visible")
    pg.wait_for_selector("#batch-files input[type=file]", state="attached")
    pg.set_input_files("#batch-files input[type=file]", [str(photos["china"]),
                                                          str(photos["coffee"])])
    pg.wait_for_function("document.querySelector('#batch-files').textContent"
                         ".replace(/\\s+/g, '').includes('coffee.png')")
    _set_reference(pg, photos["rocket"], "#batch-reference")
    pg.locator("#batch-instruction textarea").fill("match the look of the reference")
    pg.click("#batch-start")
    pg.wait_for_selector("#batch-status :text('Done')", timeout=300_000)
    pg.screenshot(path=str(shots / "reference-batch.png"), full_page=True)
    links = pg.locator("#batch-results a[href]")
    zipped = next(h for h in (links.nth(i).get_attribute("href") for i in range(links.count()))
                  if h.endswith(".zip"))
    url = zipped if zipped.startswith("http") else app_server.url + zipped
    rocket = load_photo("rocket", 320)
    with urllib.request.urlopen(url, timeout=60) as resp, \
            zipfile.ZipFile(io.BytesIO(resp.read())) as zf:
        for name in ("china", "coffee"):
            after = np.asarray(Image.open(io.BytesIO(zf.read(f"{name}.png"))).convert("RGB"))
            assert look_distance(after, rocket).total < \
                look_distance(load_photo(name, 320), rocket).total
