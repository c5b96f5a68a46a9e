"""Safe reading of ``.zip`` archives that come from outside (session archives, datasets).

One place decides whether an archive may be unpacked, and unpacks it:

1. ``open_zip`` refuses what is not a zip (or is damaged past its central directory);
2. ``check_members`` refuses, before a byte is inflated: names that would escape the
   folder (absolute, ``..``, drive letters, control characters), links and device
   entries, encrypted or exotic compression, two entries with the same name (also up
   to case), too many entries, and declared sizes over the limit;
3. ``extract`` streams each member, counting the bytes *actually inflated* (declared
   sizes are not trusted) against a per-member and a total cap, into a hidden staging
   folder that becomes the target by one rename, or is removed on any failure; an
   ``inspect`` hook sees each member's first bytes (an image header, say) before the
   rest is inflated.

Every refusal is an ``ArchiveError`` whose message names the archive as the user called
it, never a server path.
"""

from __future__ import annotations

import lzma
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from pipelines.files import staging

CHUNK = 1 << 20
#: bytes of each member shown to ``extract``'s ``inspect`` hook before the rest inflates
PEEK = 64 * 1024
MAX_MEMBERS = 10_000
MAX_NAME_CHARS = 512
_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_DAMAGE = (zipfile.BadZipFile, EOFError, OSError, zlib.error, lzma.LZMAError,
           NotImplementedError, RuntimeError, ValueError)

MemberCap = int | Callable[[zipfile.ZipInfo], int] | None
Inspect = Callable[[zipfile.ZipInfo, bytes], None] | None


class ArchiveError(ValueError):
    """An archive that is refused; the message is meant for the person who sent it."""


def safe_member(name: str) -> PurePosixPath:
    """The entry's relative path, or an ``ArchiveError`` if it would escape its folder.

    Args:
        name: the member name as stored in the archive.

    Returns:
        The name as a normalised relative POSIX path.
    """
    path = PurePosixPath(name.replace("\\", "/"))
    if (not name or path.is_absolute() or ".." in path.parts or ":" in name
            or name.startswith(("/", "\\")) or not path.parts
            or any(ord(c) < 32 or ord(c) == 127 for c in name)):
        raise ArchiveError(f"Unsafe path in the archive: the entry {name[:80]!r} would escape "
                           "its folder; the archive is rejected")
    if len(name) > MAX_NAME_CHARS:
        raise ArchiveError(f"the archive entry {name[:40]!r}… has a name longer than "
                           f"{MAX_NAME_CHARS} characters")
    return path


def open_zip(path: str | os.PathLike, label: str | None = None) -> zipfile.ZipFile:
    """Open a zip archive, refusing anything that is not one.

    Args:
        path: the file on disk.
        label: the name to use in messages (the user's file name); default the file name.
    """
    label = label or Path(path).name
    if not Path(path).is_file():
        raise ArchiveError(f"{label} is not a file")
    try:
        return zipfile.ZipFile(path)
    except (*_DAMAGE, RecursionError) as err:
        raise ArchiveError(f"{label} is not a valid zip archive ({type(err).__name__})") \
            from None


def check_members(infos: Iterable[zipfile.ZipInfo], limit: int, *,
                  max_members: int = MAX_MEMBERS,
                  label: str = "the archive") -> list[zipfile.ZipInfo]:
    """Refuse unsafe entries before anything is inflated (see the module doc).

    Args:
        infos: the archive's members.
        limit: the most bytes the members may declare, in total.
        max_members: the most entries accepted.
        label: the archive's name for messages.

    Returns:
        The members, in archive order.
    """
    infos = list(infos)
    if len(infos) > max_members:
        raise ArchiveError(f"{label} has {len(infos)} entries, more than the {max_members} "
                           "accepted")
    seen: set[str] = set()
    for info in infos:
        path = safe_member(info.filename)
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            raise ArchiveError(f"{label}: the entry {info.filename!r} is a link; "
                               "the archive is rejected")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveError(f"{label}: the entry {info.filename!r} is not a plain file")
        if info.flag_bits & 0x1:
            raise ArchiveError(f"{label}: the entry {info.filename!r} is encrypted")
        if info.compress_type not in _METHODS:
            raise ArchiveError(f"{label}: the entry {info.filename!r} uses an unsupported "
                               f"compression (method {info.compress_type})")
        key = path.as_posix().casefold()
        if key in seen:
            raise ArchiveError(f"{label} holds two entries named {info.filename!r}; "
                               "the archive is rejected")
        seen.add(key)
    if sum(i.file_size for i in infos) > limit:
        raise ArchiveError(f"{label} unpacks to more than the {limit / 1e6:.3g} MB limit")
    return infos


def _cap_for(info: zipfile.ZipInfo, member_cap: MemberCap, left: int) -> int:
    cap = member_cap(info) if callable(member_cap) else member_cap
    return left if cap is None else min(int(cap), left)


def _too_big(info: zipfile.ZipInfo) -> ArchiveError:
    return ArchiveError(f"the archive entry {info.filename!r} unpacks past the size limit")


def _damaged(info: zipfile.ZipInfo, err: BaseException) -> ArchiveError:
    return ArchiveError(f"the archive entry {info.filename!r} is damaged "
                        f"({type(err).__name__})")


def read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """Read one (small) member, stopping with an ``ArchiveError`` past ``cap`` bytes."""
    if info.file_size > cap:
        raise _too_big(info)
    chunks, total = [], 0
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(min(CHUNK, cap + 1 - total)):
                total += len(chunk)
                if total > cap:
                    raise _too_big(info)
                chunks.append(chunk)
    except ArchiveError:
        raise
    except _DAMAGE as err:
        raise _damaged(info, err) from None
    return b"".join(chunks)


def stream_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, cap: int,
                  inspect: Inspect = None) -> int:
    """Inflate one member into the new file ``dest`` (never overwriting), ``cap`` bytes
    at most; ``inspect`` sees the first ``PEEK`` bytes before the rest is inflated.

    Returns:
        The bytes written.
    """
    if info.file_size > cap:
        raise _too_big(info)
    total, head = 0, b""
    try:
        with zf.open(info) as src, open(dest, "xb") as out:
            while chunk := src.read(min(CHUNK, cap + 1 - total)):
                total += len(chunk)
                if total > cap:
                    raise _too_big(info)
                if inspect is not None and len(head) < PEEK:
                    head += chunk[:PEEK - len(head)]
                    if len(head) >= PEEK:
                        inspect(info, head)
                out.write(chunk)
        if inspect is not None and len(head) < PEEK:
            inspect(info, head)
    except ArchiveError:
        raise
    except FileExistsError:
        raise ArchiveError(f"the archive entry {info.filename!r} clashes with another "
                           "entry") from None
    except _DAMAGE as err:
        raise _damaged(info, err) from None
    return total


def extract(zf: zipfile.ZipFile, infos: Iterable[zipfile.ZipInfo], target: Path,
            limit: int, *, member_cap: MemberCap = None, inspect: Inspect = None,
            finish: Callable[[Path], None] | None = None) -> int:
    """Unpack the given members into ``target`` through a staging folder.

    ``target`` must not exist or be empty; it appears, complete, only when every member
    has been written within the caps. On any failure nothing is left behind.

    Args:
        zf: the open archive.
        infos: the members to write (directories are created, not written).
        target: the folder to create.
        limit: total bytes that may be inflated.
        member_cap: bytes one member may inflate to (an int, or a function of the
            member); default only the total.
        inspect: called with each member and its first bytes (≤ ``PEEK``) before the
            rest inflates; raise an ``ArchiveError`` to refuse the archive.
        finish: called with the staging folder once every member is written, before it
            becomes ``target``; raise to refuse (the folder is then removed).

    Returns:
        The number of bytes written.
    """
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ArchiveError(f"the folder {target.name} is not empty")
    total = 0
    with staging(target) as stage:
        root = stage.resolve()
        for info in infos:
            dest = (stage / safe_member(info.filename)).resolve()
            if root not in dest.parents:
                raise ArchiveError(f"the archive entry {info.filename!r} would escape its "
                                   "folder")
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                if info.is_dir():
                    dest.mkdir(exist_ok=True)
                    continue
            except OSError:
                raise ArchiveError(f"the archive entry {info.filename!r} clashes with "
                                   "another entry") from None
            total += stream_member(zf, info, dest, _cap_for(info, member_cap, limit - total),
                                   inspect)
        if finish is not None:
            finish(stage)
    return total
