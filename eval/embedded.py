"""Photos embedded in another file a Debian package ships: pure, bounded parsers.

``eval.realphotos`` lists some photos by the file they are embedded in (``embedded``):

* ``"jigzo-atlas"`` — a jigzo puzzle (``.pzl``): ``jigzo_photo`` crops the photo out of
  its texture atlas;
* ``"qt-rcc"`` — a Qt resource bundle (``.rcc``, e.g. gcompris-qt-data's activities):
  ``rcc_file`` finds one file by its path inside the bundle's tree, ``rcc_photo`` decodes
  it as an image.

Each is a pure function of the bytes: it reads at most ``MAX_BYTES[kind]`` bytes, decodes
at most ``MAX_PIXELS`` pixels, and refuses malformed input with ``PhotoUnavailable`` naming
the photo (never a path on the machine).
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from PIL import Image


class PhotoUnavailable(RuntimeError):
    """A photo could not be fetched or failed its checksum; the message says which and why."""


#: the kinds of file a photo may be embedded in (``RealPhoto.embedded``)
EMBEDDINGS = ("jigzo-atlas", "qt-rcc")
#: the most bytes read from a file a photo is embedded in, per kind (jigzo's puzzles are
#: < 1 MB; gcompris-qt-data's bundles of photos are 3.7 MB)
MAX_BYTES = {"jigzo-atlas": 1 << 20, "qt-rcc": 8 << 20}
#: the most pixels of an embedded image decoded (jigzo's atlases are 1024x1024,
#: gcompris-qt-data's photos 1920x1080 at most)
MAX_PIXELS = 4096 * 4096
#: a jigzo box's edge line is the game's dark frame when its mean brightest channel is
#: under this (the eleven puzzles' frames: 2-32, JPEG ringing; their photos' edge lines
#: 31-215, never all four dark)
FRAME_DARK = 40.0


def _decoded(blob: bytes, what: str, bad) -> Image.Image:
    """An image's bytes opened and loaded, its size checked before any pixel is decoded."""
    try:
        img = Image.open(io.BytesIO(blob))
        if img.width * img.height > MAX_PIXELS:
            raise bad(f"{what} of {img.width}x{img.height} is too large")
        img.load()
    except (OSError, Image.DecompressionBombError, ValueError) as exc:
        raise bad(f"{what} does not decode ({exc})") from exc
    return img


# ----------------------------------------------------------------------- jigzo


def jigzo_photo(data: bytes, label: str = "the puzzle") -> np.ndarray:
    """The photo inside a jigzo puzzle's bytes, as RGB uint8 (a pure function).

    A ``.pzl`` is text lines (``PzlF``, the name, ``crop...`` lines for the pieces, then
    ``image X Y W H ...``) followed by records ``NAME\\nLENGTH\\nBYTES``: a thumbnail JPEG, a
    PNG alpha map and the texture atlas JPEG. The atlas is the largest JPEG record; the photo
    is its ``W x H`` box at ``(X, Y)``, less the game's 1-px dark frame round it when all
    four of the box's edge lines are dark (``FRAME_DARK``; jigzo's boxes are the photo's
    size plus 2: 482 x 642 round 480 x 640): a black line round the frame is no part of the
    photo, and it kept the sky off the frame's edge, where the localisers look for it.

    Raises:
        PhotoUnavailable: the bytes are too many, the header or a record is malformed, no
            JPEG record holds the box; the message names ``label``.
    """
    def bad(why: str) -> PhotoUnavailable:
        return PhotoUnavailable(f"{label}: not a jigzo puzzle we can read: {why}")

    limit = MAX_BYTES["jigzo-atlas"]
    if len(data) > limit:
        raise bad(f"{len(data)} bytes, more than {limit}")
    if not data.startswith(b"PzlF\n"):
        raise bad("no 'PzlF' header")
    start = data.find(b"\nimage ")
    end = data.find(b"\n", start + 1)
    if start < 0 or end < 0:
        raise bad("no 'image X Y W H' line")
    fields = data[start + 1:end].split()
    try:
        x, y, w, h = (int(v) for v in fields[1:5])
    except ValueError:
        raise bad(f"the image line {data[start + 1:end][:60]!r} has no four integers") from None
    if min(x, y) < 0 or min(w, h) < 16:
        raise bad(f"the photo's box {x},{y} {w}x{h} is not a photo")
    best: Image.Image | None = None
    at = end + 1
    while at < len(data):
        name_end = data.find(b"\n", at)
        size_end = data.find(b"\n", name_end + 1)
        size = data[name_end + 1:size_end]
        if name_end < 0 or size_end < 0 or not size.isdigit() or name_end - at > 255:
            raise bad(f"a malformed record at byte {at}")
        blob = data[size_end + 1:size_end + 1 + int(size)]
        if len(blob) != int(size):
            raise bad(f"the record {data[at:name_end][:60]!r} is cut short")
        at = size_end + 1 + int(size)
        if not blob.startswith(b"\xff\xd8\xff"):
            continue                                   # the alpha map (PNG) and the like
        img = _decoded(blob, "a JPEG record", bad)
        if best is None or img.width * img.height > best.width * best.height:
            best = img
    if best is None:
        raise bad("no JPEG record (the texture atlas)")
    if x + w > best.width or y + h > best.height:
        raise bad(f"the photo's box {x},{y} {w}x{h} lies outside the "
                  f"{best.width}x{best.height} atlas")
    photo = np.asarray(best.convert("RGB").crop((x, y, x + w, y + h)), dtype=np.uint8)
    brightest = photo.max(axis=2).astype(np.float32)
    edges = (brightest[0], brightest[-1], brightest[:, 0], brightest[:, -1])
    if max(float(line.mean()) for line in edges) < FRAME_DARK:
        photo = photo[1:-1, 1:-1]
    return photo.copy()


# ----------------------------------------------------------------------- Qt resources

#: a tree entry's flags (Qt's qresource.cpp)
RCC_ZLIB, RCC_DIRECTORY, RCC_ZSTD = 0x01, 0x02, 0x04
#: the most entries of a bundle's tree walked, and the deepest path followed
_RCC_MAX_ENTRIES = 100_000
_RCC_MAX_DEPTH = 32


def rcc_file(data: bytes, path: str, label: str = "the bundle") -> bytes:
    """The bytes of the file at ``path`` (``a/b/c.webp``) inside a Qt resource bundle.

    A ``.rcc`` starts ``qres``, a big-endian version (1-3) and the offsets of the tree, the
    data and the names (version 3 adds the bundle's flags). The tree is an array of entries
    of 14 bytes (22 from version 2, with a modification time): the name's offset, the
    flags, then for a directory its child count and first child's index, for a file its
    locale and its data's offset. Entry 0 is the root. A name is a 2-byte length, a 4-byte
    hash and UTF-16BE text; a file's data is a 4-byte big-endian length and the bytes,
    zlib-compressed behind a 4-byte size when flag 1 is set (``qCompress``), zstd when 4.

    Raises:
        PhotoUnavailable: too many bytes, no ``qres`` magic, an offset or length outside
            the bytes, no such path, a directory at the path, data that does not
            decompress (or zstd without a zstd module); the message names ``label``.
    """
    def bad(why: str) -> PhotoUnavailable:
        return PhotoUnavailable(f"{label}: not a Qt resource bundle we can read: {why}")

    limit = MAX_BYTES["qt-rcc"]
    if len(data) > limit:
        raise bad(f"{len(data)} bytes, more than {limit}")
    if len(data) < 20 or data[:4] != b"qres":
        raise bad("no 'qres' header")
    version, tree, payload, names = struct.unpack_from(">4I", data, 4)
    if not 1 <= version <= 3:
        raise bad(f"version {version} (known: 1-3)")
    width = 14 if version == 1 else 22

    def u(fmt: str, at: int) -> tuple:
        if at < 0 or at + struct.calcsize(fmt) > len(data):
            raise bad(f"an offset ({at}) outside its {len(data)} bytes")
        return struct.unpack_from(fmt, data, at)

    def entry(index: int) -> tuple[str, int, int, int]:
        if not 0 <= index < _RCC_MAX_ENTRIES:
            raise bad(f"a tree entry index {index} out of range")
        at = tree + index * width
        name_at, flags = u(">IH", at)
        (length,) = u(">H", names + name_at)
        raw = data[names + name_at + 6:names + name_at + 6 + 2 * length]
        if len(raw) != 2 * length:
            raise bad("a name is cut short")
        a, b = u(">II", at + 6) if flags & RCC_DIRECTORY else (0, u(">I", at + 10)[0])
        return raw.decode("utf-16-be", errors="replace"), flags, a, b

    parts = [p for p in path.strip("/").split("/") if p]
    if not parts or len(parts) > _RCC_MAX_DEPTH:
        raise bad(f"a path of {len(parts)} parts")
    _, flags, count, first = entry(0)
    for depth, part in enumerate(parts):
        if not flags & RCC_DIRECTORY:
            raise bad(f"no file {path!r} in it ({'/'.join(parts[:depth])!r} is a file)")
        if count > _RCC_MAX_ENTRIES:
            raise bad(f"a directory of {count} entries")
        for index in range(first, first + count):
            name, child_flags, a, b = entry(index)
            if name == part:
                flags, count, first = child_flags, a, b
                break
        else:
            raise bad(f"no file {path!r} in it")
    if flags & RCC_DIRECTORY:
        raise bad(f"{path!r} is a directory, not a file")
    (size,) = u(">I", payload + first)
    blob = data[payload + first + 4:payload + first + 4 + size]
    if len(blob) != size:
        raise bad(f"the data of {path!r} is cut short ({len(blob)} of {size} bytes)")
    if flags & RCC_ZSTD:
        return _unzstd(blob, limit, bad)
    if flags & RCC_ZLIB:
        if len(blob) < 4:
            raise bad(f"the compressed data of {path!r} has no size")
        (want,) = struct.unpack_from(">I", blob)
        if want > limit:
            raise bad(f"{path!r} would inflate to {want} bytes, more than {limit}")
        inflater = zlib.decompressobj()
        try:
            out = inflater.decompress(blob[4:], limit + 1)
        except zlib.error as exc:
            raise bad(f"the compressed data of {path!r} does not inflate ({exc})") from exc
        if len(out) != want:
            raise bad(f"{path!r} inflates to {len(out)} bytes, its header says {want}")
        return out
    return blob


def _unzstd(blob: bytes, limit: int, bad) -> bytes:
    """A zstd frame decompressed (at most ``limit`` bytes), where a zstd module exists."""
    try:
        import zstandard
    except ImportError:
        raise bad("zstd-compressed data, and no zstd module to read it") from None
    try:
        return zstandard.ZstdDecompressor().decompress(blob, max_output_size=limit)
    except zstandard.ZstdError as exc:
        raise bad(f"zstd data that does not decompress ({exc})") from exc


def rcc_photo(data: bytes, path: str, label: str = "the bundle") -> np.ndarray:
    """The image at ``path`` inside a Qt resource bundle's bytes, as RGB uint8 (a pure
    function; ``rcc_file`` finds it, PIL decodes it, at most ``MAX_PIXELS`` pixels).

    Raises:
        PhotoUnavailable: as ``rcc_file``, or the file is no image we can decode.
    """
    def bad(why: str) -> PhotoUnavailable:
        return PhotoUnavailable(f"{label}: {path!r} in the bundle: {why}")

    img = _decoded(rcc_file(data, path, label), "the image", bad)
    return np.asarray(img.convert("RGB"), dtype=np.uint8).copy()


def embedded_photo(kind: str, data: bytes, resource: str | None, label: str) -> np.ndarray:
    """The photo of one kind of embedding (``EMBEDDINGS``), as RGB uint8."""
    if kind == "jigzo-atlas":
        return jigzo_photo(data, label)
    if kind == "qt-rcc":
        if not resource:
            raise PhotoUnavailable(f"{label}: a photo in a Qt resource bundle needs its "
                                   "'resource' path")
        return rcc_photo(data, resource, label)
    raise PhotoUnavailable(f"{label}: unknown embedding {kind!r}; known: {EMBEDDINGS}")
