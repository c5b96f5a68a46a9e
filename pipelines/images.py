"""Image I/O: load any photo a person brings into the working array, save it back faithfully.

``load_image`` turns a path, bytes, a binary file object, a PIL image or a numpy array
into a ``LoadedImage``: ``uint8`` RGB or RGBA pixels, upright (EXIF orientation applied),
plus what is needed to write the result back the way it came (format, ICC profile,
EXIF). The pixel limit (``LOUPE_MAX_PIXELS``, 100 MP by default) is checked from the
file's header before any pixel is decoded. Every way a file can be unusable (empty,
truncated, not an image, an unsupported format, too large) raises one ``ImageLoadError``
whose message a person understands.

Animated files (GIF, WebP, APNG) and multi-page TIFFs load their first frame; a warning
is logged saying so. 16-bit sources are scaled to 8 bits (``round(v * 255 / 65535)``);
``source_bits`` remembers the original depth.

``save_image`` writes JPEG (at a JPEG source's own quality, else 95; no chroma
subsampling), PNG, WebP (lossless when the source was lossless), TIFF or BMP, carrying
the ICC profile and EXIF of ``like``; the EXIF orientation is written as 1 because the
pixels are already upright.
"""

from __future__ import annotations

import io
import logging
import os
import re
import struct
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from PIL import Image, UnidentifiedImageError

from pipelines.config import get_settings
from pipelines.files import atomic_write
from pipelines.image_pixels import (
    ORIENTATION_TAG,
    ImageLoadError,
    apply_orientation,
    array_to_working,
    cmyk_to_rgb,
    decode_16bit,
    exif_for_size,
    gray_to_rgb,
    reset_orientation,
    scale_to_uint8,
)
from pipelines.resample import downscale  # noqa: F401  (its callers import it from here)

log = logging.getLogger(__name__)

#: formats ``load_image`` accepts (as PIL names them)
READ_FORMATS = frozenset({"JPEG", "MPO", "PNG", "WEBP", "TIFF", "BMP", "GIF"})
#: formats ``save_image`` writes
SAVE_FORMATS = frozenset({"JPEG", "PNG", "WEBP", "TIFF", "BMP"})
#: zlib level of a written PNG: zlib's fast mode at its most thorough; on a 50-MP photo
#: 3.1 s and 29 MB against PIL's default 6: 9.1 s and 26 MB (the same pixels)
PNG_COMPRESS_LEVEL = 3
#: formats whose encoding loses nothing (a WebP written for them is lossless)
LOSSLESS_FORMATS = frozenset({"PNG", "TIFF", "BMP", "GIF"})
SUFFIX_FORMATS = {".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG", ".png": "PNG",
                  ".webp": "WEBP", ".tif": "TIFF", ".tiff": "TIFF", ".bmp": "BMP"}
_FORMAT_ALIASES = {"JPG": "JPEG", "MPO": "JPEG", "TIF": "TIFF", "GIF": "PNG"}
_DECODE_ERRORS = (OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError,
                  TypeError, ZeroDivisionError, MemoryError)
_PIL_LIMIT_LOCK = threading.Lock()
#: TIFF tags that describe the file's own layout (never carried into another file's EXIF)
_TIFF_STRUCTURE_TAGS = frozenset({256, 257, 258, 259, 262, 273, 277, 278, 279, 282, 283, 284,
                                  296, 317, 320, 322, 323, 324, 325, 338, 339, 340, 341,
                                  34665, 34853, 34675, 700, 33723, 34377, 37724})

ImageSource = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO | Image.Image \
    | np.ndarray


@dataclass
class LoadedImage:
    """A decoded image and what is needed to save it back the way it came.

    Attributes:
        pixels: ``uint8`` HWC RGB or RGBA array, upright.
        format: source format as PIL names it (``"JPEG"``, ``"PNG"``…), ``None`` for arrays.
        mode: the source's mode (``"RGB"``, ``"CMYK"``, ``"I;16"``, ``"P"``…).
        icc_profile: the source's ICC profile (``None`` when absent or no longer valid for
            the RGB pixels, e.g. a CMYK or grey profile).
        exif: the source's EXIF block with the orientation reset to 1, or ``None``.
        source_bits: bits per channel of the source (8 or 16).
        filename: the file's name when loaded from a path or named file object.
        lossless: whether the source encoding was lossless (PNG, TIFF, lossless WebP…).
        frames: number of frames or pages in the source (only the first is loaded).
        quality: a JPEG source's quality (1-100, estimated from its quantisation tables);
            ``save_image`` writes a JPEG like it at the same quality.
    """

    pixels: np.ndarray
    format: str | None = None
    mode: str = "RGB"
    icc_profile: bytes | None = None
    exif: bytes | None = None
    source_bits: int = 8
    filename: str | None = None
    lossless: bool = True
    frames: int = 1
    quality: int | None = None

    @property
    def width(self) -> int:
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self.pixels.shape[0])

    @property
    def has_alpha(self) -> bool:
        return self.pixels.shape[2] == 4


# ---------------------------------------------------------------------------- loading


def load_image(src: ImageSource | LoadedImage, *, max_pixels: int | None = None) -> LoadedImage:
    """Load ``src`` as an upright ``uint8`` RGB/RGBA working image.

    Args:
        src: a path, encoded bytes, a binary file object, a PIL image, a numpy array
            (``uint8``/``uint16``/``bool``/float in ``[0, 1]``; grey, grey+alpha, RGB or
            RGBA) or an already loaded image (returned as is).
        max_pixels: refuse images with more pixels; ``None`` uses the configured limit
            (``LOUPE_MAX_PIXELS``, 100 MP by default).

    Returns:
        The ``LoadedImage``.

    Raises:
        ImageLoadError: the source is missing, empty, damaged, not an image, in an
            unsupported format, or larger than the pixel limit.
    """
    if isinstance(src, LoadedImage):
        return src
    limit = get_settings().max_pixels if max_pixels is None else int(max_pixels)
    if isinstance(src, np.ndarray):
        _check_size(src.shape[1] if src.ndim > 1 else 0, src.shape[0], limit, "the array")
        pixels, mode, bits = array_to_working(src)
        return LoadedImage(pixels=pixels, mode=mode, source_bits=bits)
    if isinstance(src, Image.Image):
        _check_size(*src.size, limit, "the image")
        return _from_pil(src, b"", None)
    data, name = _read_source(src)
    return _from_bytes(data, name, limit)


def _read_source(src: Any) -> tuple[bytes, str | None]:
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src), None
    if isinstance(src, (str, os.PathLike)):
        path = Path(src)
        if not path.exists():
            raise ImageLoadError(f"{path.name or path}: no such file")
        if not path.is_file():
            raise ImageLoadError(f"{path.name or path} is not a file")
        try:
            return path.read_bytes(), path.name
        except OSError as exc:
            raise ImageLoadError(f"{path.name}: cannot be read ({exc.strerror or exc})") from exc
    if hasattr(src, "read"):
        name = getattr(src, "name", None)
        data = src.read()
        if not isinstance(data, (bytes, bytearray)):
            raise ImageLoadError("the file object must be opened in binary mode")
        return bytes(data), Path(name).name if isinstance(name, str) else None
    raise ImageLoadError(f"cannot load an image from a {type(src).__name__}")


def _from_bytes(data: bytes, name: str | None, limit: int) -> LoadedImage:
    label = name or "the image"
    if not data:
        raise ImageLoadError(f"{label} is empty (0 bytes)")
    img = _open(data, label, limit)
    if img.format not in READ_FORMATS:
        raise ImageLoadError(f"{label} is in {img.format} format; Loupe reads JPEG, PNG, "
                             "WebP, TIFF, BMP and GIF")
    _check_size(*img.size, limit, label)
    frames = int(getattr(img, "n_frames", 1) or 1)
    if frames > 1 and img.format != "MPO":  # an MPO's extra frames are previews/depth
        log.warning("%s has %d frames; only the first is loaded and edited", label, frames)
    rawmode = _rawmode(img)
    try:
        img.load()
    except _DECODE_ERRORS as exc:
        raise ImageLoadError(f"{label} is damaged or incomplete and cannot be decoded "
                             f"({_short(exc)})") from exc
    loaded = _from_pil(img, data, name, rawmode)
    loaded.frames = frames
    return loaded


def _open(data: bytes, label: str, limit: int) -> Image.Image:
    """Open the header only (no pixel is decoded), with PIL's own bomb check as backup."""
    try:
        with _pil_bomb_limit(limit), warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        found = re.search(r"\((\d+) pixels\)", str(exc))
        size = f" ({int(found.group(1)) / 1e6:.1f} MP)" if found else ""
        raise ImageLoadError(f"{label} is too large{size}: more than the "
                             f"{limit / 1e6:g}-MP limit (LOUPE_MAX_PIXELS)") from exc
    except UnidentifiedImageError as exc:
        raise ImageLoadError(f"{label} is not an image file Loupe can read (JPEG, PNG, WebP, "
                             "TIFF, BMP or GIF)") from exc
    except _DECODE_ERRORS as exc:
        raise ImageLoadError(f"{label} is damaged and cannot be read ({_short(exc)})") from exc


def image_header(data: bytes) -> tuple[str, int, int] | None:
    """``(format, width, height)`` read from an image's first bytes, without decoding
    pixels (a prefix of the file is enough for PNG, and usually for the others).

    Args:
        data: the file's bytes, or its first few kilobytes.

    Returns:
        The header facts, or None when they cannot be read from ``data``.
    """
    try:
        with _pil_bomb_limit(1 << 62), warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                return str(img.format), int(img.width), int(img.height)
    except (*_DECODE_ERRORS, UnidentifiedImageError, Image.DecompressionBombError):
        return None


@contextmanager
def _pil_bomb_limit(limit: int):
    """Let PIL open images up to ``limit`` when it is configured above PIL's own guard
    (PIL refuses more than twice ``Image.MAX_IMAGE_PIXELS``; below that it only warns)."""
    pil_error_at = None if Image.MAX_IMAGE_PIXELS is None else 2 * Image.MAX_IMAGE_PIXELS
    if pil_error_at is None or limit <= pil_error_at:
        yield
        return
    with _PIL_LIMIT_LOCK:
        saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, limit // 2 + 1
        try:
            yield
        finally:
            Image.MAX_IMAGE_PIXELS = saved


def _check_size(width: int, height: int, limit: int, label: str) -> None:
    if width <= 0 or height <= 0:
        raise ImageLoadError(f"{label} has no pixels ({width}x{height})")
    if width * height > limit:
        raise ImageLoadError(f"{label} is {width}x{height} ({width * height / 1e6:.1f} MP), "
                             f"more than the {limit / 1e6:g}-MP limit (LOUPE_MAX_PIXELS)")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]


def _rawmode(img: Image.Image) -> str:
    """How the file stores its pixels (``"RGB;16B"``…); known only before ``load()``."""
    return str(img.tile[0][3]) if getattr(img, "tile", None) else ""


def _from_pil(img: Image.Image, data: bytes, name: str | None,
              rawmode: str = "") -> LoadedImage:
    pixels, bits, keep_icc = _pil_to_working(img, data, rawmode)
    exif_obj = img.getexif()
    orientation = int(exif_obj.get(ORIENTATION_TAG, 1) or 1)
    pixels = apply_orientation(pixels, orientation)
    exif = img.info.get("exif")
    if not exif and len(exif_obj):
        exif = _portable_exif(exif_obj)
    if isinstance(exif, bytes) and exif:
        exif = reset_orientation(exif)
    icc = img.info.get("icc_profile") if keep_icc else None
    return LoadedImage(pixels=pixels, format=img.format, mode=img.mode,
                       icc_profile=icc or None, exif=exif or None, source_bits=bits,
                       filename=name, lossless=_is_lossless(img, data),
                       quality=jpeg_quality(img))


#: the IJG reference luminance quantisation table (ITU T.81 K.1), in natural order as
#: PIL reports tables; every libjpeg ``quality`` scales it
_IJG_LUMA = np.array([16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
                      14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
                      18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
                      49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99],
                     float)


def _ijg_table(quality: int) -> np.ndarray:
    scale = 5000 / quality if quality < 50 else 200 - 2 * quality
    return np.clip(np.floor((_IJG_LUMA * scale + 50) / 100), 1, 255)


_IJG_TABLES = np.stack([_ijg_table(q) for q in range(1, 101)])


def jpeg_quality(img: Image.Image) -> int | None:
    """The libjpeg quality (1-100) whose luminance table is nearest a JPEG's own, or
    None for other formats (or a JPEG without readable tables)."""
    tables = getattr(img, "quantization", None) if img.format in ("JPEG", "MPO") else None
    if not tables or 0 not in tables or len(tables[0]) != 64:
        return None
    luma = np.asarray(tables[0], float)
    return int(np.argmin(np.abs(_IJG_TABLES - luma).sum(axis=1))) + 1


def _portable_exif(exif: Image.Exif) -> bytes | None:
    """EXIF rebuilt from a TIFF's own tags, without the tags that describe its strips."""
    portable = Image.Exif()
    for tag, value in exif.items():
        if tag not in _TIFF_STRUCTURE_TAGS:
            portable[tag] = value
    for pointer in (0x8769, 0x8825):  # Exif and GPS sub-IFDs
        sub = exif.get_ifd(pointer)
        if sub:
            portable.get_ifd(pointer).update(sub)
    return portable.tobytes() if len(portable) else None


def _is_lossless(img: Image.Image, data: bytes) -> bool:
    if img.format == "WEBP":
        return b"VP8L" in data[:4096] and b"VP8 " not in data[:4096]
    if img.format == "TIFF":
        return img.info.get("compression") not in ("jpeg", "tiff_jpeg")
    return img.format is None or img.format in LOSSLESS_FORMATS  # None: built in memory


def _pil_to_working(img: Image.Image, data: bytes,
                    rawmode: str) -> tuple[np.ndarray, int, bool]:
    """Pixels (uint8 RGB/RGBA), source bits, and whether the ICC profile still applies."""
    mode = img.mode
    if mode in ("RGB", "RGBA") and ";16" in rawmode and data:
        deep = decode_16bit(data)
        if deep is not None:
            return deep, 16, True
    if mode.startswith("I;16") or mode == "I":
        arr = np.asarray(img)
        return gray_to_rgb(scale_to_uint8(arr)), 16, False
    if mode == "F":
        return gray_to_rgb(scale_to_uint8(np.asarray(img))), 32, False
    if mode == "CMYK":
        return cmyk_to_rgb(img), 8, False
    has_alpha = "A" in img.getbands() or "transparency" in img.info or mode in ("PA", "RGBa")
    if mode == "P" and img.palette is not None and img.palette.mode == "RGBA":
        has_alpha = True
    target = "RGBA" if has_alpha else "RGB"
    gray = mode in ("1", "L", "LA", "La")
    converted = img if mode == target else img.convert(target)
    return np.ascontiguousarray(np.asarray(converted, dtype=np.uint8)), 8, not gray


# ----------------------------------------------------------------------------- saving


def save_image(pixels: np.ndarray | LoadedImage, dest: str | os.PathLike | None, *,
               like: LoadedImage | None = None, format: str | None = None,
               quality: int | None = None) -> Path | bytes:
    """Encode ``pixels`` as ``format`` and write them to ``dest`` (or return the bytes).

    Args:
        pixels: ``uint8`` HWC RGB/RGBA (or grey HxW) array, or a ``LoadedImage`` (its
            pixels, and its metadata when ``like`` is not given).
        dest: output path (written atomically), or ``None`` to get the encoded bytes.
        like: the loaded source; its ICC profile and EXIF (orientation 1) are written,
            its format is used when neither ``format`` nor ``dest``'s suffix says one, and
            a WebP is lossless when it was lossless.
        format: ``"JPEG"``, ``"PNG"``, ``"WEBP"``, ``"TIFF"`` or ``"BMP"``.
        quality: JPEG/WebP quality 1–100; default: a JPEG source's own quality
            (``like.quality``), else 95.

    Returns:
        The written path, or the bytes when ``dest`` is None.

    Raises:
        ValueError: bad pixels or a format Loupe cannot write.
    """
    if isinstance(pixels, LoadedImage):
        like = like or pixels
        pixels = pixels.pixels
    fmt = _save_format(dest, like, format)
    if quality is None:
        quality = like.quality if like is not None and like.quality else 95
    image = _to_pil(pixels)
    kwargs: dict[str, Any] = {}
    icc = like.icc_profile if like else None
    exif = like.exif if like else None
    if fmt == "JPEG":
        if image.mode == "RGBA":
            log.warning("JPEG has no transparency: the image is flattened onto white")
            flat = Image.new("RGB", image.size, (255, 255, 255))
            flat.paste(image, mask=image.getchannel("A"))
            image = flat
        kwargs.update(quality=int(quality), subsampling=0)
        if exif and len(exif) > 65000:
            log.warning("EXIF block of %d bytes is too long for JPEG; it is left out", len(exif))
            exif = None
    elif fmt == "WEBP":
        lossless = bool(like.lossless) if like else False
        kwargs.update(lossless=lossless, quality=100 if lossless else int(quality))
    elif fmt == "PNG":
        kwargs.update(compress_level=PNG_COMPRESS_LEVEL)
    elif fmt == "TIFF":
        kwargs.update(compression="tiff_lzw")
    if icc and fmt != "BMP":
        kwargs["icc_profile"] = icc
    if exif and fmt != "BMP":
        kwargs["exif"] = exif_for_size(exif, image.width, image.height)
    data = _encode(image, fmt, kwargs)
    if dest is None:
        return data
    atomic_write(dest, data)
    return Path(dest)


def _encode(image: Image.Image, fmt: str, kwargs: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    try:
        image.save(buffer, format=fmt, **kwargs)
    except (RuntimeError, OSError) as exc:
        if fmt != "TIFF" or "compression" not in kwargs:
            raise
        # libtiff (LZW) cannot write EXIF sub-IFDs; PIL's own writer can, uncompressed.
        log.info("TIFF written uncompressed to keep its EXIF (%s)", exc)
        kwargs = {k: v for k, v in kwargs.items() if k != "compression"}
        buffer = io.BytesIO()
        image.save(buffer, format=fmt, **kwargs)
    data = buffer.getvalue()
    return _zero_tiff_padding(data) if fmt == "TIFF" else data


def _zero_tiff_padding(data: bytes) -> bytes:
    """The TIFF with the word-alignment byte between its last strip and its IFD zeroed:
    libtiff leaves it uninitialised, so the same pixels would not always give the same
    file (a batch's output must equal the single-photo edit, byte for byte)."""
    try:
        end = "<" if data[:2] == b"II" else ">"
        ifd = struct.unpack(end + "I", data[4:8])[0]
        with Image.open(io.BytesIO(data)) as img:
            offsets, counts = img.tag_v2.get(273), img.tag_v2.get(279)
        if offsets and counts and ifd % 2 == 0 and ifd <= len(data):
            last = max(int(o) + int(c) for o, c in zip(offsets, counts))
            if last == ifd - 1:
                return data[:last] + b"\x00" + data[ifd:]
    except (*_DECODE_ERRORS, UnidentifiedImageError):
        pass
    return data


def _save_format(dest: str | os.PathLike | None, like: LoadedImage | None,
                 format: str | None) -> str:
    if format:
        fmt = format.upper()
    elif dest is not None and Path(dest).suffix.lower() in SUFFIX_FORMATS:
        fmt = SUFFIX_FORMATS[Path(dest).suffix.lower()]
    elif dest is not None and Path(dest).suffix:
        raise ValueError(f"cannot tell the format from {Path(dest).name!r}; Loupe writes "
                         ".jpg, .png, .webp, .tif and .bmp")
    elif like is not None and like.format:
        fmt = like.format
    else:
        fmt = "PNG"
    fmt = _FORMAT_ALIASES.get(fmt, fmt)
    if fmt not in SAVE_FORMATS:
        raise ValueError(f"Loupe cannot write {fmt}; it writes JPEG, PNG, WEBP, TIFF and BMP")
    return fmt


def _to_pil(pixels: np.ndarray) -> Image.Image:
    if not isinstance(pixels, np.ndarray):
        raise ValueError(f"pixels must be a numpy array, got {type(pixels).__name__}")
    if pixels.dtype != np.uint8 or pixels.ndim == 3 and pixels.shape[2] not in (3, 4):
        pixels, _, _ = array_to_working(pixels)
    if pixels.ndim == 2:
        return Image.fromarray(np.ascontiguousarray(pixels), mode="L").convert("RGB")
    if pixels.ndim != 3:
        raise ValueError(f"pixels of shape {pixels.shape} are not an image")
    return Image.fromarray(np.ascontiguousarray(pixels))


# ------------------------------------------------------------------------------- info


def image_info(src: ImageSource | LoadedImage, *, max_pixels: int | None = None) -> dict:
    """Describe an image from its header, without decoding its pixels.

    Args:
        src: anything ``load_image`` accepts.
        max_pixels: the limit to report against (``None``: the configured one).

    Returns:
        ``{"filename", "format", "width", "height", "megapixels", "mode", "bits",
        "frames", "has_alpha", "has_icc", "has_exif", "orientation", "within_limit"}``;
        ``width``/``height`` are as stored (before EXIF orientation).

    Raises:
        ImageLoadError: the source is not a readable image.
    """
    limit = get_settings().max_pixels if max_pixels is None else int(max_pixels)
    if isinstance(src, (np.ndarray, LoadedImage)):
        loaded = load_image(src, max_pixels=max(limit, _array_pixels(src)))
        return _info_dict(loaded.filename, loaded.format, loaded.width, loaded.height,
                          loaded.mode, loaded.source_bits, loaded.frames, loaded.has_alpha,
                          loaded.icc_profile, loaded.exif, 1, limit)
    if isinstance(src, Image.Image):
        img, name = src, None
    else:
        data, name = _read_source(src)
        if not data:
            raise ImageLoadError(f"{name or 'the image'} is empty (0 bytes)")
        img = _open(data, name or "the image", max(limit, 1 << 40))
    exif = _header_exif(img)
    bands = img.getbands()
    rawmode = _rawmode(img)
    bits = 16 if img.mode.startswith("I;16") or ";16" in rawmode or img.mode == "I" else 8
    alpha = "A" in bands or "transparency" in img.info
    return _info_dict(name, img.format, img.width, img.height, img.mode, bits,
                      int(getattr(img, "n_frames", 1) or 1), alpha,
                      img.info.get("icc_profile"), img.info.get("exif") or len(exif) > 0,
                      int(exif.get(ORIENTATION_TAG, 1) or 1), limit)


def _header_exif(img: Image.Image) -> Image.Exif:
    """EXIF known from the header; never decodes pixels (PIL's PNG ``getexif`` would)."""
    if img.format in ("JPEG", "MPO", "WEBP", "TIFF"):
        return img.getexif()
    exif = Image.Exif()
    raw = img.info.get("exif")
    if isinstance(raw, bytes) and raw:
        try:
            exif.load(raw)
        except _DECODE_ERRORS:
            log.debug("unreadable EXIF block in the header")
    return exif


def _array_pixels(src: np.ndarray | LoadedImage) -> int:
    arr = src.pixels if isinstance(src, LoadedImage) else src
    return int(arr.shape[0] * arr.shape[1]) if arr.ndim >= 2 else 0


def _info_dict(name: str | None, fmt: str | None, width: int, height: int, mode: str,
               bits: int, frames: int, alpha: bool, icc: Any, exif: Any, orientation: int,
               limit: int) -> dict:
    return {"filename": name, "format": fmt, "width": int(width), "height": int(height),
            "megapixels": round(width * height / 1e6, 2), "mode": mode, "bits": int(bits),
            "frames": int(frames), "has_alpha": bool(alpha), "has_icc": bool(icc),
            "has_exif": bool(exif), "orientation": int(orientation),
            "within_limit": width * height <= limit}
