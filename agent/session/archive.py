"""The session folder's format and its one-file ``.zip`` archive.

A session folder holds ``session.json`` (format, version, graph, memory), the original
image as uploaded (``root.<ext>``) and ``layers/*.png``. Importing an archive rejects
entries that would escape the folder (absolute paths, ``..``, drive letters, links),
archives over the size limit (compressed or unpacked, counted while reading), missing
files and unknown versions, each with a clear ``SessionError``; nothing is written
until the archive has passed every check.
"""

from __future__ import annotations

import json
import os
import uuid
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from agent.session.state import LAYER_DIR, SessionError
from pipelines.archives import (
    ArchiveError,
    check_members,
    extract,
    open_zip,
    read_capped,
    safe_member,
)
from pipelines.config import get_settings

SESSION_FILE = "session.json"
SESSION_FORMAT = "loupe-session"
SESSION_VERSION = 1
#: Largest archive ``import_archive`` accepts (compressed and uncompressed), in bytes;
#: ``LOUPE_MAX_ARCHIVE_MB`` overrides it.
DEFAULT_MAX_ARCHIVE_BYTES = 2 * 1024 ** 3


def write_archive(folder: Path, names: list[str], dest: Path) -> Path:
    """Zip ``names`` (relative to ``folder``) into ``dest`` atomically.

    Returns:
        ``dest``.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            for name in names:
                kind = zipfile.ZIP_DEFLATED if name.endswith(".json") else zipfile.ZIP_STORED
                zf.write(folder / name, name, compress_type=kind)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def check_version(data: dict[str, Any]) -> None:
    """Raise a ``SessionError`` unless ``data`` is a session file this version reads."""
    if data.get("format") != SESSION_FORMAT:
        raise SessionError("this is not a Loupe session file")
    version = data.get("version")
    if version != SESSION_VERSION:
        raise SessionError(f"unknown session version {version!r}: this Loupe reads version "
                           f"{SESSION_VERSION}")


def archive_limit(max_bytes: int | None) -> int:
    """The size limit in bytes: the argument, else ``LOUPE_MAX_ARCHIVE_MB`` (2 GiB)."""
    if max_bytes is not None:
        return int(max_bytes)
    return int(get_settings().max_archive_mb * 1024 * 1024)


def unpack(zip_path: Path, target: Path, limit: int) -> None:
    """Check an exported archive and extract its session files into ``target``."""
    try:
        _unpack(zip_path, target, limit)
    except ArchiveError as err:
        raise SessionError(str(err)) from None


def _unpack(zip_path: Path, target: Path, limit: int) -> None:
    if not zip_path.is_file():
        raise SessionError(f"no archive at {zip_path.name}")
    if zip_path.stat().st_size > limit:
        raise SessionError(f"the archive is {zip_path.stat().st_size / 1e6:.1f} MB, over the "
                           f"{limit / 1e6:.1f} MB limit")
    with open_zip(zip_path) as zf:
        names = {i.filename: i for i in check_members(zf.infolist(), limit)}
        if SESSION_FILE not in names:
            raise SessionError("the archive holds no session.json: not a Loupe session")
        data = _read_json_member(zf, names[SESSION_FILE], limit)
        check_version(data)
        wanted = _wanted_members(data)
        missing = sorted(w for w in wanted if w not in names)
        if missing:
            raise SessionError(f"the archive lacks {len(missing)} file(s), e.g. {missing[0]}")
        if target.exists() and any(target.iterdir()):
            raise SessionError(f"the folder {target.name} is not empty")
        extract(zf, [names[w] for w in sorted(wanted)], target, limit)


def _read_json_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> dict:
    try:
        raw = read_capped(zf, info, min(limit, 256 * 1024 * 1024))
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        if isinstance(err, ArchiveError):
            raise
        raise SessionError(f"the archive's session.json is damaged ({err})") from None
    if not isinstance(data, dict):
        raise SessionError("the archive's session.json is not a Loupe session")
    return data


def _wanted_members(data: dict[str, Any]) -> set[str]:
    root = str(data.get("root_file", ""))
    if not root or PurePosixPath(root).name != root:
        raise SessionError(f"the archive names a bad original image {root!r}")
    wanted = {SESSION_FILE, root}
    try:
        for node in data["graph"]["nodes"]:
            for layer in node.get("layers", []):
                for key in ("patch", "mask"):
                    name = str(layer[key])
                    path = safe_member(name)
                    if path.parts[0] != LAYER_DIR:
                        raise SessionError(f"the archive's layer {name!r} is outside "
                                           f"{LAYER_DIR}/")
                    wanted.add(name)
        for item in data.get("regions") or []:
            name = str(item["mask"])
            if safe_member(name).parts[0] != LAYER_DIR:
                raise SessionError(f"the archive's region mask {name!r} is outside "
                                   f"{LAYER_DIR}/")
            wanted.add(name)
    except (KeyError, TypeError) as err:
        raise SessionError(f"the archive's session graph is damaged ({err})") from None
    return wanted
