"""Safe reading of ``.zip`` archives that come from outside (session archives, datasets).

One place decides whether an archive entry may be written: no absolute paths, no ``..``,
no drive letters, no links, and size limits counted on the bytes actually inflated
(a member's declared size is not trusted). Every refusal is an ``ArchiveError`` whose
message names the archive as the user called it, never a server path.
"""

from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pipelines.files import atomic_write

CHUNK = 1 << 20


class ArchiveError(ValueError):
    """An archive that is refused; the message is meant for the person who sent it."""


def safe_member(name: str) -> PurePosixPath:
    """The entry's relative path, or an ``ArchiveError`` if it would escape its folder.

    Args:
        name: the member name as stored in the archive.

    Returns:
        The name as a relative POSIX path.
    """
    path = PurePosixPath(name.replace("\\", "/"))
    if (not name or path.is_absolute() or ".." in path.parts or ":" in name
            or name.startswith(("/", "\\"))):
        raise ArchiveError(f"Unsafe path in the archive: the entry {name!r} would escape "
                           "its folder; the archive is rejected")
    return path


def open_zip(path: str | os.PathLike, label: str | None = None) -> zipfile.ZipFile:
    """Open a zip archive, refusing anything that is not one.

    Args:
        path: the file on disk.
        label: the name to use in messages (the user's file name); default the file name.
    """
    label = label or Path(path).name
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise ArchiveError(f"{label} is not a valid zip archive ({type(err).__name__})") \
            from None


def check_members(infos: Iterable[zipfile.ZipInfo], limit: int) -> list[zipfile.ZipInfo]:
    """Refuse links, escaping names and declared sizes over ``limit`` (bytes, in total).

    Returns:
        The members, in archive order.
    """
    infos = list(infos)
    for info in infos:
        safe_member(info.filename)
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ArchiveError(f"the archive entry {info.filename!r} is a link; "
                               "the archive is rejected")
    if sum(i.file_size for i in infos) > limit:
        raise ArchiveError(f"the archive unpacks to more than the {limit / 1e6:.1f} MB limit")
    return infos


def read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """Read one member, stopping with an ``ArchiveError`` once ``cap`` bytes are inflated."""
    chunks, total = [], 0
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(CHUNK):
                total += len(chunk)
                if total > cap:
                    raise ArchiveError(f"the archive entry {info.filename!r} unpacks past "
                                       "the size limit")
                chunks.append(chunk)
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError) as err:
        raise ArchiveError(f"the archive entry {info.filename!r} is damaged "
                           f"({type(err).__name__})") from None
    return b"".join(chunks)


def extract(zf: zipfile.ZipFile, infos: Iterable[zipfile.ZipInfo], target: Path,
            limit: int) -> int:
    """Write the given members under ``target``, each through a temporary file.

    Args:
        zf: the open archive.
        infos: the members to write (directories are created, not written).
        target: the folder (created).
        limit: total bytes that may be inflated.

    Returns:
        The number of bytes written.
    """
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    total = 0
    for info in infos:
        dest = (target / safe_member(info.filename)).resolve()
        if root not in dest.parents:
            raise ArchiveError(f"the archive entry {info.filename!r} would escape its folder")
        if info.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        data = read_capped(zf, info, limit - total)
        total += len(data)
        atomic_write(dest, data)
    return total
