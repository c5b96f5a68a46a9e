"""The session folder's format and its one-file ``.zip`` archive.

A session folder holds ``session.json`` (format, version, graph, memory), the original
image as uploaded (``root.<ext>``) and ``layers/*.png``. An archive is a stranger's file,
so importing one checks, in this order, before any pixel is decoded:

1. the zip itself and its entries (``pipelines.archives.check_members``: no escaping
   names, links, duplicates, encryption, too many entries or declared sizes over the
   limit);
2. ``session.json`` (read capped), its format and version, and its graph
   (``state.check_graph``: ids, a tree rooted at the first state, boxes inside the
   image, layer files named ``layers/<id>.png``, the image within ``LOUPE_MAX_PIXELS``);
3. each wanted file while it streams, with a cap on the bytes actually inflated that
   follows from the graph (a layer cannot be bigger than its box's raw pixels) and its
   image header checked from its first bytes (size, format);
4. the whole session, opened in the staging folder, which then becomes the target by
   one rename. Any refusal leaves nothing behind; a process killed midway leaves only a
   hidden staging folder.

Every refusal is a ``SessionError`` whose message names the user's file, never a
server path.
"""

from __future__ import annotations

import json
import os
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from agent.session.references import FILE_RE, MAX_REFERENCES
from agent.session.state import check_graph
from agent.session.store import SessionError, StateError, check_box, check_layer_path
from pipelines.archives import ArchiveError, check_members, extract, open_zip, read_capped
from pipelines.config import get_settings
from pipelines.images import image_header

SESSION_FILE = "session.json"
SESSION_FORMAT = "loupe-session"
#: Version 2 (reviewer feedback): an exported archive may also carry the session's review
#: comments (``loupe-feedback.json``, written and read by ``web.feedback``); version-1
#: archives and folders are read as having none.
#: Version 3 (reference photos): ``session.json`` may list ``references`` (id, file, …)
#: and the archive carries their files (``references/ref<n>.<ext>``, the bytes as
#: uploaded); versions 1 and 2 are read as having none.
SESSION_VERSION = 3
#: every version this Loupe reads
READ_VERSIONS = (1, 2, 3)
#: Largest archive ``import_archive`` accepts (compressed and uncompressed), in bytes;
#: ``LOUPE_MAX_ARCHIVE_MB`` overrides it.
DEFAULT_MAX_ARCHIVE_BYTES = 2 * 1024 ** 3
#: Largest ``session.json`` read (it is parsed in memory).
MAX_SESSION_FILE_BYTES = 32 * 1024 * 1024
#: Headroom over an image's raw pixels for its file's metadata (EXIF, ICC, chunks).
META_BYTES = 16 * 1024 * 1024
#: how the files this version writes as originals begin (PNG, JPEG, GIF, TIFF, BMP, WebP)
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8", b"GIF8", b"II*\x00", b"MM\x00*", b"BM", b"RIFF")
_ROOT_NAME = ("root.jpg", "root.png", "root.webp", "root.tif", "root.bmp", "root.gif",
              "root.img")


def write_archive(folder: Path, names: list[str], dest: Path) -> Path:
    """Zip ``names`` (relative to ``folder``) into ``dest`` atomically.

    Returns:
        ``dest``.
    """
    dest = Path(dest)
    if dest.is_dir():
        raise SessionError(f"{dest.name} is a folder: give the archive's file name")
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
    if isinstance(version, bool) or version not in READ_VERSIONS:
        raise SessionError(f"unknown session version {str(version)[:20]}: this Loupe reads "
                           f"versions {', '.join(map(str, READ_VERSIONS))}")


def archive_limit(max_bytes: int | None) -> int:
    """The size limit in bytes: the argument, else ``LOUPE_MAX_ARCHIVE_MB`` (2 GiB)."""
    if max_bytes is not None:
        return int(max_bytes)
    return int(get_settings().max_archive_mb * 1024 * 1024)


def unpack(zip_path: Path, target: Path, limit: int, *, label: str | None = None,
           finish: Callable[[Path], None] | None = None) -> None:
    """Check an exported archive and extract its session files into ``target``.

    Args:
        zip_path: the archive on disk.
        target: the session folder to create (absent or empty).
        limit: bytes the archive may hold and inflate to.
        label: the archive's name as the user gave it (default: the file's name).
        finish: called with the staging folder once every file is written, before it
            becomes ``target`` (e.g. to open the session there); raise to refuse.
    """
    label = label or Path(zip_path).name
    try:
        _unpack(Path(zip_path), Path(target), limit, label, finish)
    except (ArchiveError, StateError) as err:
        raise SessionError(str(err)) from None


def _unpack(zip_path: Path, target: Path, limit: int, label: str,
            finish: Callable[[Path], None] | None) -> None:
    if not zip_path.is_file():
        raise SessionError(f"no archive at {label}")
    if zip_path.stat().st_size > limit:
        raise SessionError(f"{label} is {zip_path.stat().st_size / 1e6:.1f} MB, over the "
                           f"{limit / 1e6:.1f} MB limit")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SessionError(f"the folder {target.name} is not empty")
    with open_zip(zip_path, label) as zf:
        names = {i.filename: i for i in check_members(zf.infolist(), limit, label=label)}
        if SESSION_FILE not in names:
            raise SessionError(f"{label} holds no session.json: not a Loupe session")
        data = _read_json_member(zf, names[SESSION_FILE])
        check_version(data)
        check_graph(data.get("graph"), max_pixels=get_settings().max_pixels)
        wanted = _wanted_members(data)
        missing = sorted(w for w in wanted if w not in names)
        if missing:
            raise SessionError(f"{label} lacks {len(missing)} file(s), e.g. {missing[0]}")
        caps = {name: cap for name, (cap, _) in wanted.items()}
        extract(zf, [names[w] for w in sorted(wanted)], target, limit,
                member_cap=lambda info: caps[info.filename],
                inspect=lambda info, head: _check_header(info.filename, head, wanted),
                finish=finish)


def _read_json_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> dict:
    try:
        raw = read_capped(zf, info, MAX_SESSION_FILE_BYTES)
        data = json.loads(raw.decode("utf-8"))
    except ArchiveError:
        raise
    except (ValueError, RecursionError) as err:
        raise SessionError(f"the archive's session.json is damaged ({type(err).__name__})") \
            from None
    if not isinstance(data, dict):
        raise SessionError("the archive's session.json is not a Loupe session")
    return data


#: what a wanted file must be: ``(format or None for any image, width, height)``
Expect = tuple[str | None, int, int]


def _wanted_members(data: dict[str, Any]) -> dict[str, tuple[int, Expect]]:
    """Every file the session needs, with its inflated-byte cap and expected header.

    Call after ``check_graph``: sizes and boxes are known to be sane.
    """
    graph = data["graph"]
    width, height = graph["width"], graph["height"]
    root = data.get("root_file")
    if not isinstance(root, str) or root not in _ROOT_NAME:
        raise SessionError(f"the archive names a bad original image {str(root)[:40]!r}")
    wanted: dict[str, tuple[int, Expect]] = {
        SESSION_FILE: (MAX_SESSION_FILE_BYTES, (None, 0, 0)),
        root: (width * height * 8 + META_BYTES, (None, width, height))}
    for node in graph["nodes"]:
        for layer in node.get("layers") or []:
            x0, y0, x1, y1 = layer["bbox"]
            area = (x1 - x0) * (y1 - y0)
            expect: Expect = ("PNG", x1 - x0, y1 - y0)
            wanted[layer["patch"]] = (area * 8 + 65536, expect)
            wanted[layer["mask"]] = (area * 2 + 65536, expect)
    _wanted_references(data.get("references"), wanted)
    regions = data.get("regions") or []
    if not isinstance(regions, list):
        raise SessionError("the archive's region list is damaged")
    for item in regions:
        if not isinstance(item, dict):
            raise SessionError("the archive's region list is damaged")
        x0, y0, x1, y1 = check_box(item.get("bbox"), width, height)
        name = check_layer_path(item.get("mask"))
        wanted[name] = ((x1 - x0) * (y1 - y0) * 2 + 65536, ("PNG", x1 - x0, y1 - y0))
    return wanted


def _wanted_references(items: Any, wanted: dict[str, tuple[int, Expect]]) -> None:
    """The reference photos' files (issue 35): each an image within the upload limit."""
    if items is None:
        return
    if not isinstance(items, list) or len(items) > MAX_REFERENCES:
        raise SessionError("the archive's reference list is damaged")
    cap = get_settings().max_upload_mb * 1024 * 1024
    for item in items:
        file = item.get("file") if isinstance(item, dict) else None
        if not isinstance(file, str) or not FILE_RE.fullmatch(file):
            raise SessionError("the archive's reference list is damaged")
        wanted[file] = (cap, (None, 0, 0))


def _check_header(name: str, head: bytes, wanted: dict[str, tuple[int, Expect]]) -> None:
    """Refuse a file whose header contradicts the graph, before the rest inflates."""
    fmt, width, height = wanted[name][1]
    if name == SESSION_FILE:
        return
    if name.startswith("references/"):   # any image; its pixels are checked on use
        if not head.startswith(_IMAGE_MAGIC):
            raise ArchiveError(f"the archive's {name} is not an image")
        return
    header = image_header(head)
    if header is None:
        if fmt is not None:  # a PNG's size is always in its first bytes
            raise ArchiveError(f"the archive's {name} is not a PNG image")
        if not head.startswith(_IMAGE_MAGIC):
            raise ArchiveError(f"the archive's {name} is not an image")
        return  # e.g. a JPEG with a long EXIF block: checked again before decoding
    kind, w, h = header
    if fmt is not None and kind != fmt:
        raise ArchiveError(f"the archive's {name} is a {kind} file, not a PNG")
    if (w, h) != (width, height) and not (fmt is None and (h, w) == (width, height)):
        raise ArchiveError(f"the archive's {name} is {w}x{h} but the session says "
                           f"{width}x{height}")


def safe_root_name(name: Any) -> str:
    """The original image's file name when it is one this version writes."""
    if not isinstance(name, str) or PurePosixPath(name).name != name or name not in _ROOT_NAME:
        raise SessionError(f"the session's original image {str(name)[:40]!r} is missing")
    return name
