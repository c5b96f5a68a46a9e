"""Files and names that strangers can influence: atomic writes, ids, staging folders.

* ``atomic_write`` — a reader, or a restart after a crash, never sees half a file.
* ``check_id`` / ``is_id`` — every id read from outside (session, state, layer, region)
  must match ``ID_RE`` (letters, digits, ``_`` and ``-``, 1–64 characters, nothing else:
  no dot, no slash, no trailing newline) before it touches a path.
* ``slug`` — a file-name stem built from a user's text, reduced to the id alphabet.
* ``staging`` — a hidden sibling folder that becomes ``target`` by one rename, or is
  removed on any failure; ``remove_stale`` clears what a killed process left behind.
* ``tree_size`` — bytes under a folder (links not followed), for disk quotas.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The one pattern every id from outside must match (``fullmatch``; no newline allowed).
ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
STAGING_PREFIX = ".staging-"


class BadIdError(ValueError):
    """An id from outside that does not match ``ID_RE``."""


def is_id(value: object) -> bool:
    """Whether ``value`` is a string matching ``ID_RE`` exactly."""
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


def check_id(value: object, what: str = "id") -> str:
    """``value`` when it is a well-formed id, else a ``BadIdError`` naming ``what``.

    Args:
        value: the id as received.
        what: what it names, for the message ("state id", "session id"…).

    Returns:
        The id, unchanged.
    """
    if not is_id(value):
        shown = repr(value)[:40] if isinstance(value, str) else type(value).__name__
        raise BadIdError(f"malformed {what} {shown}: ids are 1-64 letters, digits, '_' or '-'")
    return value  # type: ignore[return-value]


def slug(text: object, default: str = "photo", max_len: int = 40) -> str:
    """A file-name stem from ``text`` (a user's file name…) in the id alphabet.

    Args:
        text: anything; its string form is reduced to ``[A-Za-z0-9_-]``.
        default: returned when nothing usable is left.
        max_len: longest result.

    Returns:
        A string matching ``ID_RE``.
    """
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", str(text or "")).strip("_-")[:max_len]
    return cleaned or default


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``.

    Args:
        path: the destination (its folder is created).
        data: bytes, or text written as UTF-8.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def staging(target: str | os.PathLike) -> Iterator[Path]:
    """A hidden folder beside ``target`` to fill; renamed to ``target`` on success.

    ``target`` must not exist, or be an empty folder. On any exception the staging
    folder is removed and nothing appears at ``target``; a process killed midway
    leaves only a hidden ``.staging-*`` folder, which ``remove_stale`` clears.

    Args:
        target: the folder to create.

    Yields:
        The staging folder (empty).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = target.parent / f"{STAGING_PREFIX}{secrets.token_hex(6)}"
    stage.mkdir()
    try:
        yield stage
        if target.is_dir() and not any(target.iterdir()):
            target.rmdir()
        os.rename(stage, target)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def remove_stale(folder: str | os.PathLike, max_age_s: float, *,
                 prefix: str = STAGING_PREFIX, now: float | None = None) -> list[str]:
    """Delete entries of ``folder`` named ``prefix*`` older than ``max_age_s`` seconds.

    Returns:
        The names removed.
    """
    folder, now = Path(folder), time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime <= max_age_s:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
            removed.append(entry.name)
        except OSError:
            continue
    return removed


def tree_size(folder: str | os.PathLike) -> int:
    """Bytes of the regular files under ``folder`` (links are not followed; 0 if absent)."""
    total, stack = 0, [Path(folder)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total
