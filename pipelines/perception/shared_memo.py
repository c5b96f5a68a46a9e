"""The nets' answers kept in a folder that several processes share (off unless set).

``detectors._Net`` remembers its last few answers in memory, by the exact bytes of the
input tensor. With ``FOLDER`` set, a net also looks there before it runs and leaves each
new answer there: processes that ask about the same view (the two workers of a test run,
a bench's processes) run the net once between them. An entry is the net's own output
bytes, under a name made of the model file's identity (path, size, modification time)
and the input's key, written to a temporary name and renamed, so a reader sees a whole
entry or none. Nothing in the app sets it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

#: the shared folder, or None (the default: each process keeps its own answers only)
FOLDER: Path | None = None


def entry(model: str, key: tuple) -> Path | None:
    """Where the answer of ``model`` (its identity) to the input ``key`` is kept."""
    if FOLDER is None:
        return None
    name = hashlib.blake2b(repr((model, key)).encode(), digest_size=20).hexdigest()
    return FOLDER / f"{name}.npz"


def read(path: Path | None) -> list[np.ndarray] | None:
    """The answer kept at ``path``, or None."""
    if path is None:
        return None
    try:
        with np.load(path, allow_pickle=False) as kept:
            return [kept[f"arr_{i}"] for i in range(len(kept.files))]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None      # a damaged or half-gone entry: the net runs again


def write(path: Path | None, outs: list[np.ndarray]) -> None:
    """Keep ``outs`` at ``path`` (atomically; a failure only logs)."""
    if path is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, *outs)
        os.replace(tmp, path)
    except OSError as err:
        log.debug("shared memo: could not keep %s: %s", path.name, err)
