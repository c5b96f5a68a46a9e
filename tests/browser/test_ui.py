"""The app in a real browser (Debian's chromium via Playwright), served on localhost.

Screenshots land in artifacts/screenshots/ for a person to look at.
"""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.browser
TIMEOUT = 180_000  # ms: edits on a shared 2-core machine can be slow


@pytest.fixture()
def page(browser, app_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(app_server.url)
    pg.wait_for_selector("#upload")
    yield pg
    context.close()


@pytest.fixture(scope="module")
def big_photo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2000×1334 JPEG: larger than the canvas preview, so the brush works downscaled."""
    from skimage import data

    img = cv2.resize(data.coffee(), (2000, 1334), interpolation=cv2.INTER_CUBIC)
    path = tmp_path_factory.mktemp("photos") / "coffee-big.jpg"
    Image.fromarray(img).save(path, quality=95)
    return path


def _nodes(pg) -> list[str]:
    return pg.eval_on_selector_all("#graph [data-node]", "els => els.map(e => e.dataset.node)")


def _wait_head(pg, node: str) -> None:
    pg.wait_for_selector(f"#graph g.node.head[data-node='{node}']")


def _wait_nodes(pg, n: int) -> None:
    pg.wait_for_function(f"document.querySelectorAll('#graph [data-node]').length >= {n}")


def _open(pg, path: Path) -> None:
    pg.set_input_files("#upload input[type=file]", str(path))
    _wait_head(pg, "n0")
    pg.wait_for_selector("#canvas canvas")


def _send(pg, text: str, nodes_after: int) -> None:
    box = pg.locator("#instruction textarea")
    box.fill(text)
    box.press("Enter")
    _wait_nodes(pg, nodes_after)


def _brush(pg) -> None:
    """Paint a blob in the middle of the canvas with the default brush."""
    canvas = pg.locator("#canvas canvas").last
    box = canvas.bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for dy in (-8, 8):  # few events: every one redraws a software-rendered canvas
        pg.mouse.move(cx - 50, cy + dy)
        pg.mouse.down()
        pg.mouse.move(cx + 50, cy + dy, steps=3)
        pg.mouse.up()


def _download(pg) -> np.ndarray:
    with pg.expect_download() as info:
        pg.click("#download-btn")
        pg.wait_for_selector("#file-out a[href]")
        pg.locator("#file-out a[href]").first.click()
    data = Path(info.value.path()).read_bytes()
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "JPEG"
        return np.asarray(im.convert("RGB"))


def test_edit_flow(page, big_photo: Path, shots: Path):
    pg = page
    _open(pg, big_photo)
    pg.screenshot(path=str(shots / "01-opened.png"), full_page=True)

    _brush(pg)
    _send(pg, "make it brighter", 2)
    pg.wait_for_selector("#chat :text('Step 1')")
    assert "make it brighter" in pg.inner_text("#chat")
    _wait_head(pg, "n1")
    pg.screenshot(path=str(shots / "02-edited.png"), full_page=True)

    pg.click("#undo-btn")
    _wait_head(pg, "n0")
    pg.locator("#graph g.node[data-node='n1']").click()  # go to a state by its node
    _wait_head(pg, "n1")
    pg.screenshot(path=str(shots / "03-checked-out.png"), full_page=True)

    brightened = _download(pg)
    original = np.asarray(Image.open(big_photo).convert("RGB"))
    assert brightened.shape == original.shape  # full resolution, like the upload
    diff = np.abs(brightened.astype(int) - original.astype(int)).mean(axis=2)
    h, w = diff.shape
    brushed = diff[h // 2 - 10:h // 2 + 10, w // 2 - 60:w // 2 + 60]
    corners = np.concatenate([diff[:300, :300].ravel(), diff[-300:, -300:].ravel()])
    assert (brushed > 3).mean() > 0.3  # the brushed area changed…
    assert (corners > 3).mean() < 0.02 and corners.mean() < 1.5  # …the rest did not (JPEG)


def test_refresh_and_restart_restore(page, browser, app_server, shots: Path):
    pg = page
    pg.get_by_text("make it warmer").first.click()  # an example: its photo and instruction
    _wait_head(pg, "n0")
    assert pg.locator("#instruction textarea").input_value() == "make it warmer"
    pg.locator("#instruction textarea").press("Enter")
    _wait_nodes(pg, 2)
    pg.reload()
    _wait_nodes(pg, 2)
    assert "make it warmer" in pg.inner_text("#chat")
    app_server.restart()
    pg.reload()
    pg.wait_for_selector("#upload")
    _wait_nodes(pg, 2)
    _wait_head(pg, "n1")
    assert "make it warmer" in pg.inner_text("#chat")
    pg.screenshot(path=str(shots / "06-restored-after-restart.png"), full_page=True)

    other = browser.new_context().new_page()  # another browser: its own, empty session
    other.goto(app_server.url)
    other.wait_for_selector("#graph .loupe-graph-empty")
    assert _nodes(other) == [] and "make it warmer" not in other.inner_text("#chat")
    other.context.close()


def test_autopilot_runs_and_sends_to_edit(page, shots: Path):
    pg = page
    src = Path(__file__).resolve().parents[2] / "assets" / "chelsea.jpg"
    pg.get_by_role("tab", name="Autopilot").click()
    pg.set_input_files("#ap-upload input[type=file]", str(src))
    for elem, value in (("#ap-simulations", "4"),):
        field = pg.locator(f"{elem} input[type=number]")
        field.fill(value)
        field.press("Enter")
    pg.click("#ap-run")
    pg.wait_for_selector("#ap-summary :text('score_after')")
    pg.wait_for_selector("#ap-tree svg [data-node]")
    pg.screenshot(path=str(shots / "07-autopilot.png"), full_page=True)
    rows = pg.locator("#ap-steps tbody tr").count()
    pg.click("#ap-send")
    pg.get_by_role("tab", name="Edit").click()
    if rows:
        _wait_nodes(pg, 2)
    pg.screenshot(path=str(shots / "08-autopilot-sent.png"), full_page=True)


def test_mini_benchmark_shows_a_table(page, shots: Path):
    pg = page
    pg.get_by_role("tab", name="Benchmark").click()
    pg.click("#bm-run")
    pg.wait_for_selector("#bm-summary :text('overall')")
    pg.wait_for_function("document.querySelector('#bm-table').innerText.includes('s0002')")
    pg.screenshot(path=str(shots / "09-benchmark.png"), full_page=True)
    table = pg.inner_text("#bm-table")
    assert all(f"s000{i}" in table for i in range(3))  # the three mini-set samples
    assert "psnr_om" in pg.inner_text("#bm-per-turn")
    assert pg.locator("#bm-files a[href]").count() == 2  # CSV and JSON downloads


def test_multi_instruction_mode_shows_its_topology(page, shots: Path):
    pg = page
    _open(pg, Path(__file__).resolve().parents[2] / "assets" / "coffee.jpg")
    pg.locator("#tree-mode input[type=checkbox]").check()
    _send(pg, "make it warmer, then increase the contrast", 2)
    pg.wait_for_selector("#topology svg g.node.head")
    assert pg.locator("#topology svg [data-node]").count() >= 2
    pg.screenshot(path=str(shots / "10-tree-search.png"), full_page=True)
