"""Serving the app inside a test process: a free loopback port and a launched demo."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served_app(data_dir: Path) -> Iterator[str]:
    """Launch ``app.make_demo()`` on a free port with its own data folder; yields its URL."""
    import app

    mp = pytest.MonkeyPatch()
    mp.setenv("LOUPE_DATA_DIR", str(data_dir))
    demo = app.make_demo()
    demo.launch(**{**app.launch_options(), "server_port": free_port(),
                   "prevent_thread_lock": True, "quiet": True})
    try:
        yield demo.local_url
    finally:
        demo.close()
        mp.undo()
