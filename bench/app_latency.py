"""App latency: cold start, a 12-MP edit round trip, concurrent clients, and what a person
sees in the browser at 4K.

Starts ``python app.py`` in a subprocess (fresh data folder, free port) and measures

* ``cold_start_s``: process start → first page served (HTTP 200 on ``/``);
* in Chromium (Playwright, Debian's ``chromium``), on a 3840×2160 photo, by watching the
  pixels of the photo view on screen (screenshots through the DevTools protocol every
  ~40 ms; a black-and-white state is told from the colour one by its chroma):
  ``undo_canvas_s`` — click on Undo → the photo view shows the previous state;
  ``edit_canvas_after_done_s`` — the edit has finished (its new state appears in the
  history graph) → the photo view shows its result; ``edit_click_to_canvas_s`` — Enter →
  result on screen; the same after a *brushed* edit (``brushed_*``), and whether the
  progress indicator is gone by then (``spinner_gone_after_brushed_s``). Medians of
  ``--repeats`` rounds;
* ``edit_roundtrip_12mp_s``: median wall time of ``/edit`` ("make it warmer") through
  ``gradio_client`` on a 4000×3000 photo (upload once via ``/new_session``, timed too);
* ``concurrent``: CLIENTS threads, each with its own session, doing EDITS edits in turn on a
  1-MP photo; every error is counted (must be zero); p50/p95 per-edit latency.

Usage::

    .venv/bin/python bench/app_latency.py [--clients 10] [--edits 5] [--repeats 3]
                                          [--only-browser] [--no-browser]

The last printed line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTIONS = ["make it warmer", "increase the contrast", "make it brighter",
                "make it cooler", "increase the saturation"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(data_dir: Path, log_path: Path) -> tuple[subprocess.Popen, str, float]:
    """Start the app; return the process, its URL and the seconds to the first page."""
    port = _free_port()
    env = {**os.environ, "LOUPE_DATA_DIR": str(data_dir), "LOUPE_PORT": str(port),
           "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1",
           "LOUPE_LOG_LEVEL": "WARNING"}
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env,
                            stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"app exited early; see {log_path}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200 and resp.read(64):
                    return proc, url, time.perf_counter() - t0
        except OSError:
            time.sleep(0.1)
        if time.perf_counter() - t0 > 300:
            proc.kill()
            raise SystemExit("app did not start within 300 s")


def photo(path: Path, size: tuple[int, int]) -> Path:
    """Write an upscaled real photo (scikit-image's coffee) of ``size`` as JPEG."""
    from skimage import data

    img = cv2.resize(data.coffee(), size, interpolation=cv2.INTER_CUBIC)
    Image.fromarray(img).save(path, quality=92)
    return path


def edit_roundtrip(url: str, path: Path, repeats: int) -> dict:
    from gradio_client import Client, handle_file

    client = Client(url, verbose=False)
    t0 = time.perf_counter()
    sid, info = client.predict(handle_file(str(path)), api_name="/new_session")
    upload = time.perf_counter() - t0
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        _, result = client.predict(sid, INSTRUCTIONS[i % len(INSTRUCTIONS)], None, False,
                                   api_name="/edit")
        times.append(time.perf_counter() - t0)
        if not result.get("ok"):
            raise SystemExit(f"edit failed: {result.get('message')}")
    return {"size": f"{info['width']}x{info['height']}", "open_s": round(upload, 3),
            "edit_s": [round(t, 3) for t in times], "median_s": round(statistics.median(times), 3)}


def concurrent(url: str, path: Path, clients: int, edits: int) -> dict:
    from gradio_client import Client, handle_file

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        try:
            client = Client(url, verbose=False)
            sid, _ = client.predict(handle_file(str(path)), api_name="/new_session")
        except Exception as exc:  # noqa: BLE001 - counted, reported
            with lock:
                errors.append(f"client {k} open: {exc}")
            return
        for i in range(edits):
            t0 = time.perf_counter()
            try:
                _, result = client.predict(sid, INSTRUCTIONS[(k + i) % len(INSTRUCTIONS)], None,
                                           False, api_name="/edit")
                ok = bool(result.get("ok"))
            except Exception as exc:  # noqa: BLE001
                ok, result = False, {"message": str(exc)}
            with lock:
                latencies.append(time.perf_counter() - t0)
                if not ok:
                    errors.append(f"client {k} edit {i}: {result.get('message')}")

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))] if lat else None
    return {"clients": clients, "edits_per_client": edits, "edits": len(lat),
            "errors": len(errors), "error_samples": errors[:3],
            "p50_s": round(statistics.median(lat), 3) if lat else None,
            "p95_s": round(p95, 3) if p95 is not None else None, "wall_s": round(wall, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-browser", action="store_true",
                        help="skip the API round trip and the concurrent clients")
    parser.add_argument("--no-browser", action="store_true", help="skip the browser figures")
    args = parser.parse_args()
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="loupe-bench-") as tmp:
        tmp_path = Path(tmp)
        proc, url, cold = start_app(tmp_path / "data", tmp_path / "app.log")
        out["cold_start_s"] = round(cold, 3)
        try:
            if not args.only_browser:
                big = edit_roundtrip(url, photo(tmp_path / "12mp.jpg", (4000, 3000)),
                                     args.repeats)
                print(f"12-MP edit round trip: {big}", flush=True)
                conc = concurrent(url, photo(tmp_path / "1mp.jpg", (1200, 800)),
                                  args.clients, args.edits)
                print(f"concurrent: {conc}", flush=True)
                out.update({"edit_roundtrip_12mp_s": big["median_s"],
                            "open_12mp_s": big["open_s"], "concurrent_clients": conc["clients"],
                            "edits_per_client": conc["edits_per_client"],
                            "errors": conc["errors"], "p50_s": conc["p50_s"],
                            "p95_s": conc["p95_s"], "concurrent_wall_s": conc["wall_s"]})
            if not args.no_browser:
                from browser_latency import browser_latency  # Playwright: only when asked

                seen = browser_latency(url, photo(tmp_path / "4k.jpg", (3840, 2160)),
                                       args.repeats)
                print(f"browser: {seen}", flush=True)
                out.update(seen["summary"])
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    out.update({"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)})
    print(json.dumps(out))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
