"""What a person sees: time until the photo view shows a new state, in Chromium.

Used by ``bench/app_latency.py`` (run that). The photo view's pixels are read from the
screen through the DevTools protocol (a JPEG screenshot of the element every ~40 ms), so
the figures include the server, the transfer, decoding and painting. Each state is told
apart by its chroma: the edit turns the photo black and white, undo brings the colour
back. The moment an edit "finishes" is when its new state appears in the history graph
(recorded in the page by a MutationObserver, on the same clock as the screenshots).
"""

from __future__ import annotations

import base64
import io
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
from PIL import Image

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
EDIT = "convert it to black and white"
WATCH_HEAD = """
() => {
  window.__heads = [];
  const seen = () => {
    const h = document.querySelector('#graph g.node.head');
    const id = h && h.getAttribute('data-node');
    if (id && (window.__heads.length === 0 || window.__heads.at(-1)[0] !== id)) {
      window.__heads.push([id, Date.now()]);
    }
  };
  new MutationObserver(seen).observe(document.body, {subtree: true, childList: true});
  seen();
}
"""


class Screen:
    """Chroma of one element as painted, read through the DevTools protocol."""

    def __init__(self, page, selector: str):
        self.page, self.selector = page, selector
        self.cdp = page.context.new_cdp_session(page)

    def chroma(self) -> float | None:
        """Mean chroma of the element on screen; None while it is hidden."""
        box = self.page.evaluate(
            "(sel) => { const r = document.querySelector(sel).getBoundingClientRect();"
            " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}; }",
            self.selector)  # the protocol's clip is in page coordinates, not the viewport's
        if not box or box["width"] < 2:
            return None
        shot = self.cdp.send("Page.captureScreenshot", {
            "format": "jpeg", "quality": 70, "clip": {**box, "scale": 0.5}})
        rgb = np.asarray(Image.open(io.BytesIO(base64.b64decode(shot["data"])))
                         .convert("RGB")).astype(np.int16)
        return float((np.abs(rgb[..., 0] - rgb[..., 1])
                      + np.abs(rgb[..., 1] - rgb[..., 2])).mean())

    def wait(self, colour: bool, threshold: float, limit: float = 120.0) -> float:
        """Wall time (``time.time()``) when the element turns colour / grey."""
        start = time.time()
        while time.time() - start < limit:
            value = self.chroma()
            if value is not None and (value > threshold) == colour:
                return time.time()
            time.sleep(0.03)
        raise TimeoutError(f"{self.selector} did not turn {'colour' if colour else 'grey'}")


def _head_time(page, node: str, limit: float = 300.0) -> float:
    page.wait_for_function(
        f"window.__heads.some(h => h[0] === '{node}')", timeout=limit * 1000)
    return page.evaluate(f"window.__heads.filter(h => h[0] === '{node}').at(-1)[1]") / 1000


def _brush(page) -> None:
    page.get_by_role("tab", name="Brush an area").click()
    page.wait_for_selector("#canvas canvas")
    time.sleep(1.0)
    page.wait_for_function("Array.from(document.querySelectorAll('#canvas canvas'))"
                           ".some(c => c.getBoundingClientRect().width > 100)")
    boxes = [b for b in (c.bounding_box() for c in page.locator("#canvas canvas").all()) if b]
    box = max(boxes, key=lambda b: b["width"] * b["height"])
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx - 300, cy - 150)
    page.mouse.down()
    for dy in range(-150, 151, 30):  # a wide scribble: most of the photo goes grey
        page.mouse.move(cx + (300 if dy % 60 else -300), cy + dy, steps=2)
    page.mouse.up()


def _spinner_gone(page, limit: float = 60.0) -> float:
    page.wait_for_function("!Array.from(document.querySelectorAll('#chat .wrap'))"
                           ".some(w => !w.classList.contains('hide'))", timeout=limit * 1000)
    return time.time()


def browser_latency(url: str, photo: Path, repeats: int = 3, *, view: str = "#photo",
                    brushed: bool = True) -> dict:
    """Measure undo and edit display latency on ``photo`` (a large colour photo).

    Args:
        url: the app.
        photo: a colourful photo (the edit turns it black and white).
        repeats: rounds (medians are reported).
        view: the element that shows the current state (``#canvas`` on older builds).
        brushed: also time brushed edits.

    Returns:
        ``{"rounds": [...], "summary": {...}}``; the summary holds medians in seconds.
    """
    from playwright.sync_api import sync_playwright  # heavy, optional: only this bench

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("Debian's chromium is needed (scripts/install-browser.sh)")
    rounds = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(300_000)
        page.goto(url)
        page.wait_for_selector("#upload")
        page.evaluate(WATCH_HEAD)
        screen = Screen(page, view)
        page.set_input_files("#upload input[type=file]", str(photo))
        _head_time(page, "n0")
        page.wait_for_selector(f"{view} img, {view} canvas")
        time.sleep(2.0)
        colour = screen.chroma()
        box = page.locator("#instruction textarea")
        for i in range(repeats):
            head = f"n{1 + i}"
            box.fill(EDIT)
            t0 = time.time()
            box.press("Enter")
            done = _head_time(page, head)
            grey = screen.wait(False, colour / 2)
            if i == 0:
                time.sleep(1.0)
                grey_level = screen.chroma()
                threshold = (colour + grey_level) / 2
            t1 = time.time()
            page.click("#undo-btn")
            back = screen.wait(True, threshold)
            _head_time(page, "n0")
            rounds.append({"edit_click_to_canvas_s": grey - t0,
                           "edit_canvas_after_done_s": max(0.0, grey - done),
                           "edit_done_s": done - t0, "undo_canvas_s": back - t1})
            time.sleep(0.5)
        for i in range(repeats if brushed else 0):  # brushed edits, each undone
            head = f"n{1 + repeats + i}"
            _brush(page)
            box.fill(EDIT)
            t0 = time.time()
            box.press("Enter")
            done = _head_time(page, head)
            grey = screen.wait(False, colour - (colour - grey_level) / 4)
            calm = _spinner_gone(page)
            rounds[i].update({"brushed_edit_canvas_after_done_s": max(0.0, grey - done),
                              "spinner_gone_after_brushed_s": max(0.0, calm - done)})
            page.click("#undo-btn")
            screen.wait(True, threshold)
            time.sleep(0.5)
        browser.close()
    keys = rounds[0].keys()
    summary = {k: round(statistics.median(r[k] for r in rounds), 3) for k in keys}
    summary["undo_canvas_max_s"] = round(max(r["undo_canvas_s"] for r in rounds), 3)
    summary["edit_canvas_after_done_max_s"] = round(
        max(r["edit_canvas_after_done_s"] for r in rounds), 3)
    summary["photo"] = f"{Image.open(photo).width}x{Image.open(photo).height}"
    return {"rounds": [{k: round(v, 3) for k, v in r.items()} for r in rounds],
            "summary": summary}
