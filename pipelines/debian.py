"""Debian packages by name: ``apt-get download`` + ``dpkg-deb -x``, no root needed.

The one way the project reads files that ship inside Debian packages: the perception
fetch step (WordNet, ``pipelines.perception.store``) and the real photographs of the
benches and tests (``eval.realphotos``). Callers check every file they take by its SHA-256.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)


def unpack_debian(name: str, tmp: Path) -> Path:
    """``apt-get download NAME`` into ``tmp`` (no root needed), extracted with
    ``dpkg-deb -x`` into ``tmp/root``; returns that folder. A missing package list is
    refreshed once with ``apt-get update`` (which needs root; without it, the error says
    so). A system where the package is installed (a Space's ``packages.txt``) is read
    directly: its files are checked like any download."""
    def run(cmd: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout)

    try:
        if run(["dpkg-query", "-W", "-f=${Status}", name]).stdout.endswith(" installed"):
            log.info("%s is installed on this system: reading its files", name)
            return Path("/")
    except (FileNotFoundError, subprocess.SubprocessError):
        pass
    log.info("downloading Debian package %s", name)
    try:
        got = run(["apt-get", "download", "-q", name])
        if got.returncode != 0:
            log.info("apt-get download %s failed; refreshing the package lists once", name)
            run(["apt-get", "update", "-q"])
            got = run(["apt-get", "download", "-q", name])
        if got.returncode != 0:
            raise RuntimeError(f"apt-get download {name} failed: "
                               f"{(got.stderr or got.stdout).strip()[-300:]}")
        debs = sorted(tmp.glob("*.deb"))
        if not debs:
            raise RuntimeError(f"apt-get download {name} produced no .deb")
        root = tmp / "root"
        unpacked = run(["dpkg-deb", "-x", str(debs[0]), str(root)])
        if unpacked.returncode != 0:
            raise RuntimeError(f"dpkg-deb -x {debs[0].name} failed: {unpacked.stderr[-300:]}")
    except (FileNotFoundError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"cannot fetch the Debian package {name}: {exc}") from exc
    return root
