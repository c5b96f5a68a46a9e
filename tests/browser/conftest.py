"""Real-browser fixtures: the app in a subprocess on a free port, Debian's chromium.

Playwright never downloads a browser: it drives ``chromium`` from the system (installed by
``scripts/install-browser.sh``); without it these tests are skipped, saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serving import free_port

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--disable-dev-shm-usage"]
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")


class AppServer:
    """``python app.py`` in a subprocess with its own data folder; restartable."""

    def __init__(self, data_dir: Path, log_path: Path, env: dict[str, str] | None = None):
        self.data_dir, self.log_path = data_dir, log_path
        self.env = dict(env or {})  # settings for this server (LOUPE_* …)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> None:
        env = {**os.environ, "LOUPE_DATA_DIR": str(self.data_dir), "LOUPE_PORT": str(self.port),
               "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1",
               "LOUPE_LOG_LEVEL": "INFO"}
        env["PYTHONUNBUFFERED"] = "1"
        env.setdefault("LOUPE_PREVIEW_SIDE", "512")  # software-rendered canvas: keep it light
        env.update(self.env)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env,
                                     stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"app exited early; see {self.log_path}")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"app did not start within {timeout:.0f}s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (run scripts/install-browser.sh)")
    return path


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory, chromium_path: str
               ) -> Iterator[AppServer]:
    """One app for every browser file (a start costs ~4.5 s of CPU): each page is its own
    browser context, so its visitor sees only its own sessions, as on a shared server."""
    folder = tmp_path_factory.mktemp("app-server")
    server = AppServer(folder / "data", folder / "server.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(chromium_path: str):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, headless=True,
                               args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
