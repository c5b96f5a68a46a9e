"""Real-browser fixtures: the app in a subprocess on a free port, Debian's chromium.

Playwright never downloads a browser: it drives ``chromium`` from the system (installed by
``scripts/install-browser.sh``); without it these tests are skipped, saying why.
"""

from __future__ import annotations

import os
import shutil
import signal
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
        self.paused = False

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

    def pause(self) -> None:
        """Stop the process where it is (SIGSTOP) until ``resume``: an idle Gradio server
        still wakes its queue's loop every millisecond, ~5 % of a core (wave 31: 2 s of
        CPU in 30 s idle, ~90 s over a run for the two workers' servers)."""
        if self.proc is not None and self.proc.poll() is None and not self.paused:
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        """Let a paused server run again (SIGCONT): the same process, port and sessions."""
        if self.proc is not None and self.paused:
            self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        self.resume()                   # a stopped process would not act on SIGTERM
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


#: the worker's shared app (``_shared_app``), paused between browser files
_SHARED: list[AppServer] = []


@pytest.fixture(scope="session")
def _shared_app(tmp_path_factory: pytest.TempPathFactory, chromium_path: str
                ) -> Iterator[AppServer]:
    folder = tmp_path_factory.mktemp("app-server")
    server = AppServer(folder / "data", folder / "server.log")
    server.start()
    _SHARED.append(server)
    yield server
    _SHARED.remove(server)
    server.stop()


@pytest.fixture()
def app_server(_shared_app: AppServer) -> AppServer:
    """One app for every browser file (a start costs ~4.5 s of CPU): each page is its own
    browser context, so its visitor sees only its own sessions, as on a shared server.
    Between browser files (a worker runs other files between them, and after the last)
    the process is paused, not left to spin (``AppServer.pause``), and goes on, the same
    process and sessions, when a browser test needs it again."""
    _shared_app.resume()
    return _shared_app


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a test's teardown, when the next test is not a browser test (or there is
    none), pause the shared app."""
    if nextitem is None or Path(str(nextitem.path)).parent != Path(str(item.path)).parent:
        for server in _SHARED:
            server.pause()


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
