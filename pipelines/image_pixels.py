"""Pixel conversions for image I/O (``pipelines.images``): any array or decoded file to
the working ``uint8`` RGB/RGBA array (16-bit, CMYK, grey), and EXIF orientation and
dimensions kept true to the pixels."""

from __future__ import annotations

import io
import logging
import struct

import cv2
import numpy as np
from PIL import Image, ImageCms

log = logging.getLogger(__name__)

#: the EXIF orientation tag
ORIENTATION_TAG = 0x0112


class ImageLoadError(ValueError):
    """A file or array could not be loaded as an image (the message says why, for a person)."""


def decode_16bit(data: bytes) -> np.ndarray | None:
    """Decode a 16-bit RGB(A) file at full depth (PIL keeps only the high byte)."""
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if arr is None or arr.dtype != np.uint16 or arr.ndim != 3:
        return None
    code = cv2.COLOR_BGRA2RGBA if arr.shape[2] == 4 else cv2.COLOR_BGR2RGB
    return scale_to_uint8(cv2.cvtColor(arr, code))


def cmyk_to_rgb(img: Image.Image) -> np.ndarray:
    icc = img.info.get("icc_profile")
    if icc:
        try:
            src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            rgb = ImageCms.profileToProfile(img, src, ImageCms.createProfile("sRGB"),
                                            outputMode="RGB")
            if rgb is not None:
                return np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8))
        except (ImageCms.PyCMSError, OSError, ValueError) as exc:
            log.warning("CMYK profile could not be applied (%s); converting naively", exc)
    return np.ascontiguousarray(np.asarray(img.convert("RGB"), dtype=np.uint8))


def gray_to_rgb(gray: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.repeat(gray[..., None], 3, axis=2))


def scale_to_uint8(arr: np.ndarray) -> np.ndarray:
    """Scale any numeric array to ``uint8``: 16-bit by ``round(v·255/65535)``, floats from
    ``[0, 1]`` (or ``[0, 255]`` when larger values occur), booleans to 0/255.

    Args:
        arr: the array (any shape).

    Returns:
        A ``uint8`` array of the same shape.
    """
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype == bool:
        return arr.astype(np.uint8) * 255
    if np.issubdtype(arr.dtype, np.floating):
        arr = np.nan_to_num(arr.astype(np.float32), nan=0.0, posinf=1.0, neginf=0.0)
        scale = 255.0 if arr.size and float(arr.max()) <= 1.0 else 1.0
        return np.clip(np.rint(arr * scale), 0, 255).astype(np.uint8)
    if arr.dtype == np.uint16 or (arr.size and int(arr.max()) > 255):
        wide = np.clip(arr.astype(np.uint32), 0, 65535)
        return ((wide * 255 + 32767) // 65535).astype(np.uint8)
    return np.clip(arr, 0, 255).astype(np.uint8)


def array_to_working(arr: np.ndarray) -> tuple[np.ndarray, str, int]:
    """Turn a numpy image array into the working ``uint8`` RGB/RGBA array.

    Args:
        arr: ``(H, W)``, ``(H, W, 1)``, ``(H, W, 2)``, ``(H, W, 3)`` or ``(H, W, 4)``.

    Returns:
        ``(pixels, source mode, source bits)``.

    Raises:
        ImageLoadError: the shape is not an image's.
    """
    if arr.ndim == 2:
        arr = arr[..., None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 2, 3, 4) or 0 in arr.shape:
        raise ImageLoadError(f"an array of shape {arr.shape} is not an image "
                             "(expected HxW, HxWx3 or HxWx4)")
    bits = 16 if arr.dtype == np.uint16 else (32 if arr.dtype.itemsize >= 4 else 8)
    pixels = scale_to_uint8(arr)
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[arr.shape[2]]
    if arr.shape[2] == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    elif arr.shape[2] == 2:
        pixels = np.concatenate([np.repeat(pixels[..., :1], 3, axis=2), pixels[..., 1:]], 2)
    return np.ascontiguousarray(pixels), mode, bits


def apply_orientation(pixels: np.ndarray, orientation: int) -> np.ndarray:
    """Turn ``pixels`` upright for an EXIF orientation value (1–8; others leave it as is).

    Args:
        pixels: HWC array as stored in the file.
        orientation: the EXIF orientation tag.

    Returns:
        The upright, C-contiguous array.
    """
    ops = {
        2: lambda a: a[:, ::-1],
        3: lambda a: a[::-1, ::-1],
        4: lambda a: a[::-1],
        5: lambda a: a.transpose(1, 0, 2),
        6: lambda a: np.rot90(a, -1),
        7: lambda a: a.transpose(1, 0, 2)[::-1, ::-1],
        8: lambda a: np.rot90(a, 1),
    }
    op = ops.get(orientation)
    return pixels if op is None else np.ascontiguousarray(op(pixels))


def reset_orientation(exif: bytes) -> bytes:
    """Return the EXIF block with its IFD0 orientation set to 1 (everything else untouched).

    Args:
        exif: raw EXIF bytes, with or without the ``Exif\\0\\0`` prefix.

    Returns:
        The patched bytes (unchanged when there is no orientation tag or the block is
        not valid TIFF).
    """
    start = 6 if exif.startswith(b"Exif\x00\x00") else 0
    tiff = exif[start:]
    if len(tiff) < 8 or tiff[:2] not in (b"II", b"MM"):
        return exif
    end = "<" if tiff[:2] == b"II" else ">"
    try:
        (ifd,) = struct.unpack(end + "I", tiff[4:8])
        (count,) = struct.unpack(end + "H", tiff[ifd:ifd + 2])
        for i in range(count):
            at = ifd + 2 + 12 * i
            tag, kind = struct.unpack(end + "HH", tiff[at:at + 4])
            if tag == ORIENTATION_TAG and kind == 3:
                patched = bytearray(exif)
                patched[start + at + 8:start + at + 10] = struct.pack(end + "H", 1)
                return bytes(patched)
    except struct.error:
        return exif
    return exif


_PIXEL_X, _PIXEL_Y, _EXIF_IFD = 0xA002, 0xA003, 0x8769


def exif_for_size(exif: bytes, width: int, height: int) -> bytes:
    """The EXIF block with its pixel dimensions matching a (cropped, rotated…) frame.

    The block is rewritten only when it states other dimensions; the rewrite leaves out
    the embedded thumbnail, which shows the old frame. Orientation stays as it was (1).
    """
    try:
        parsed = Image.Exif()
        parsed.load(exif)
        sub = parsed.get_ifd(_EXIF_IFD)
        stated = (sub.get(_PIXEL_X), sub.get(_PIXEL_Y))
        if stated == (None, None) or stated == (width, height):
            return exif
        sub[_PIXEL_X], sub[_PIXEL_Y] = int(width), int(height)
        return parsed.tobytes()
    except Exception as err:  # noqa: BLE001 - odd EXIF: keep it as it came
        log.info("EXIF dimensions left as they were (%s)", err)
        return exif


def convert_profile(pixels: np.ndarray, source_icc: bytes | None,
                    target_icc: bytes | None) -> np.ndarray:
    """RGB(A) ``pixels`` encoded in ``source_icc`` re-encoded in ``target_icc`` (None means
    sRGB on either side); unchanged when both are the same or a profile is unreadable.

    Used where two photos' pixels are compared (a reference matched to a photo): a
    reference tagged Display P3 or Adobe RGB is read in the photo's own colour space."""
    if source_icc == target_icc or pixels.ndim != 3 or pixels.shape[2] not in (3, 4):
        return pixels
    try:
        srgb = ImageCms.createProfile("sRGB")
        src = ImageCms.ImageCmsProfile(io.BytesIO(source_icc)) if source_icc else srgb
        dst = ImageCms.ImageCmsProfile(io.BytesIO(target_icc)) if target_icc else srgb
        rgb = Image.fromarray(np.ascontiguousarray(pixels[..., :3]), "RGB")
        out = np.asarray(ImageCms.profileToProfile(rgb, src, dst, outputMode="RGB"))
    except (OSError, ValueError, ImageCms.PyCMSError) as err:
        log.warning("colour profile not applied (%s); pixels used as they are", err)
        return pixels
    if pixels.shape[2] == 4:
        out = np.dstack([out, pixels[..., 3]])
    return np.ascontiguousarray(out)
