"""Batch editing's files: which photos a folder holds, the manifest in ``OUT`` that makes
a batch resumable, the thumbnails' names, and what the driver and its tasks share
(``agent.batch`` runs the batch, ``agent.batch_task`` is one photo's task)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: photo suffixes a batch reads (RAW files are left alone)
BATCH_SUFFIXES = frozenset({".jpg", ".jpeg", ".jpe", ".png", ".webp", ".tif", ".tiff"})
#: the batch's own folder inside OUT (never read as input)
STATE_DIR = ".loupe-batch"
MANIFEST = "manifest.jsonl"
#: the thread-count variables every worker pins (read when a library starts)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: the driver's settings that travel to every worker (on a cluster too), so that models,
#: limits and the planner's endpoint are the same for every photo
FORWARDED_ENV = ("LOUPE_", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
TASK_VERSION = 1  # bump when the task's output for the same inputs changes


class BatchError(ValueError):
    """A batch that cannot start (bad folders, instruction, point or limits)."""


# --------------------------------------------------------------------------- folders


@dataclass
class Photo:
    """One input photo: its path relative to IN (posix) and on disk."""

    rel: str
    path: Path
    size: int
    sha256: str = ""


def scan(src: str | os.PathLike, dest: str | os.PathLike | None = None) -> list[Photo]:
    """The photos under ``src`` (recursively, sorted), skipping links, ``dest`` when it
    lies inside ``src``, and every batch's own ``.loupe-batch`` folder."""
    root = Path(src)
    skip = Path(dest).resolve() if dest is not None else None
    photos: list[Photo] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d != STATE_DIR
                         and not (here / d).is_symlink()
                         and (skip is None or (here / d).resolve() != skip))
        for name in sorted(files):
            path = here / name
            if path.suffix.lower() not in BATCH_SUFFIXES or path.is_symlink():
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            photos.append(Photo(path.relative_to(root).as_posix(), path, size))
    return photos


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def remove_torn_writes(dest: Path) -> None:
    """Delete the hidden temporary files of writes a kill interrupted (``atomic_write``
    names them ``.NAME.*.tmp``; the file ``NAME`` itself is whole or absent)."""
    for folder, _dirs, files in os.walk(dest, followlinks=False):
        for name in files:
            if name.startswith(".") and name.endswith(".tmp"):
                Path(folder, name).unlink(missing_ok=True)


def mask_for(photo: Photo, masks: Path | None) -> Path | None:
    """The mask named like ``photo`` in the mask folder: the same relative path with any
    image suffix (``a/b.jpg`` → ``a/b.png``…), else the same stem at the top level."""
    if masks is None:
        return None
    rel = Path(photo.rel)
    for folder in (masks / rel.parent, masks):
        for suffix in (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".bmp"):
            for stem in (rel.stem, rel.name):
                path = folder / (stem + suffix)
                if path.is_file() and not path.is_symlink():
                    return path
    return None


# --------------------------------------------------------------------------- manifest


def read_manifest(dest: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The latest manifest entry per photo (a torn last line, from a kill, is skipped)."""
    path = Path(dest) / STATE_DIR / MANIFEST
    entries: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return entries
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            entries[entry["path"]] = entry
    return entries


def append_entry(dest: Path, entry: dict[str, Any]) -> None:
    path = dest / STATE_DIR / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = False
    if path.is_file() and path.stat().st_size:
        with open(path, "rb") as tail:
            tail.seek(-1, os.SEEK_END)
            torn = tail.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(("\n" if torn else "") + json.dumps(entry, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def thumb_names(rel: str) -> tuple[str, str]:
    """The before/after thumbnail files (under ``OUT/.loupe-batch/thumbs``) of a photo."""
    key = hashlib.sha1(rel.encode("utf-8")).hexdigest()[:20]
    return f"{key}-before.jpg", f"{key}-after.jpg"
