"""Image I/O on real photos and on a corpus of bad files generated here."""

from __future__ import annotations

import io
import logging
import struct
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms, ImageOps

from pipelines.images import (
    ImageLoadError,
    LoadedImage,
    image_info,
    load_image,
    reset_orientation,
    save_image,
)

SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


def encode(pixels: np.ndarray | Image.Image, fmt: str, **kwargs) -> bytes:
    img = pixels if isinstance(pixels, Image.Image) else Image.fromarray(pixels)
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kwargs)
    return buf.getvalue()


def exif_block(orientation: int | None = None) -> Image.Exif:
    exif = Image.Exif()
    exif[0x010F] = "LoupeCam"  # Make
    exif[0x0110] = "Model 7"  # Model
    if orientation is not None:
        exif[0x0112] = orientation
    exif.get_ifd(0x8769)[0x9003] = "2024:05:06 07:08:09"  # DateTimeOriginal
    return exif


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_with_header(width: int, height: int, *, bit_depth: int = 8, color: int = 2,
                    idat: bytes | None = None) -> bytes:
    """A PNG whose IHDR claims ``width``×``height``; its data is whatever ``idat`` is."""
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color, 0, 0, 0)
    body = zlib.compress(b"\x00" * 64) if idat is None else idat
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", body)
            + png_chunk(b"IEND", b""))


# ------------------------------------------------------------------- the bad-file corpus


def test_zero_byte_file(tmp_path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    with pytest.raises(ImageLoadError, match=r"empty\.jpg is empty \(0 bytes\)"):
        load_image(path)


def test_missing_file(tmp_path):
    with pytest.raises(ImageLoadError, match="nope.png: no such file"):
        load_image(tmp_path / "nope.png")


def test_text_file_named_png(tmp_path):
    path = tmp_path / "notes.png"
    path.write_text("these are my holiday notes, not a picture\n" * 20)
    with pytest.raises(ImageLoadError, match="notes.png is not an image file"):
        load_image(path)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_truncated_file(tmp_path, coffee, fmt):
    data = encode(coffee, fmt)
    path = tmp_path / f"cut.{fmt.lower()}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImageLoadError, match=r"cut\.\w+ is damaged"):
        load_image(path)


def test_unsupported_format(tmp_path, chelsea):
    path = tmp_path / "cat.pcx"
    path.write_bytes(encode(chelsea, "PCX"))
    with pytest.raises(ImageLoadError, match="cat.pcx is in PCX format; Loupe reads JPEG"):
        load_image(path)


def test_header_claiming_200_megapixels_is_refused_before_decoding(tmp_path):
    path = tmp_path / "huge.png"
    path.write_bytes(png_with_header(20_000, 10_000))
    with pytest.raises(ImageLoadError, match=r"huge\.png is too large \(200\.0 MP\)"):
        load_image(path)
    info = image_info(path)  # the header alone is readable and reported
    assert (info["width"], info["height"], info["within_limit"]) == (20_000, 10_000, False)


def test_header_over_our_limit_but_under_pils(tmp_path):
    """120 MP is below PIL's own bomb error, so our header check is what refuses it."""
    with pytest.raises(ImageLoadError, match=r"12000x10000 \(120\.0 MP\), more than the 100-MP"):
        load_image(png_with_header(12_000, 10_000))


def test_decompression_bomb(tmp_path):
    """A 1-bit PNG of 110 MP that is a few kilobytes on disk."""
    width, height = 11_000, 10_000
    row = b"\x00" + b"\x00" * (width // 8 + 1)
    comp = zlib.compressobj(9)
    idat = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()
    data = png_with_header(width, height, bit_depth=1, color=0, idat=idat)
    assert len(data) < 200_000
    with pytest.raises(ImageLoadError, match="110.0 MP"):
        load_image(data)


def test_configured_limit_from_environment(monkeypatch, astronaut):
    data = encode(astronaut, "PNG")
    monkeypatch.setenv("LOUPE_MAX_PIXELS", "100000")
    with pytest.raises(ImageLoadError, match="512x512 .* more than the 0.1-MP limit"):
        load_image(data)
    assert load_image(data, max_pixels=512 * 512).width == 512


def test_animated_gif_loads_its_first_frame_with_a_warning(caplog, chelsea):
    frames = [Image.fromarray(chelsea), Image.fromarray(255 - chelsea)]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=100)
    first = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))
    with caplog.at_level(logging.WARNING, logger="pipelines.images"):
        loaded = load_image(buf.getvalue())
    assert loaded.frames == 2
    assert np.array_equal(loaded.pixels, first)
    assert "only the first is loaded" in caplog.text


# --------------------------------------------------------------------------- odd modes


@pytest.mark.parametrize("suffix", [".png", ".tiff"])
def test_16bit_rgb_is_scaled_not_truncated(suffix):
    rng = np.random.default_rng(0)
    deep = rng.integers(0, 65536, size=(40, 50, 3), dtype=np.uint16)
    ok, buf = cv2.imencode(suffix, deep[..., ::-1])  # OpenCV writes BGR
    assert ok
    loaded = load_image(buf.tobytes())
    expected = np.rint(deep.astype(np.float64) * 255 / 65535).astype(np.uint8)
    assert loaded.source_bits == 16
    assert np.array_equal(loaded.pixels, expected)


def test_16bit_gray_png_i16():
    ramp = np.linspace(0, 65535, 64 * 32).astype(np.uint16).reshape(32, 64)
    ok, buf = cv2.imencode(".png", ramp)
    assert ok
    loaded = load_image(buf.tobytes())
    assert loaded.mode.startswith("I")
    expected = np.rint(ramp.astype(np.float64) * 255 / 65535).astype(np.uint8)
    assert loaded.pixels.shape == (32, 64, 3)
    assert np.array_equal(loaded.pixels[..., 1], expected)
    assert loaded.pixels[0, 0, 0] == 0 and loaded.pixels[-1, -1, 2] == 255


def test_cmyk_jpeg_becomes_rgb(coffee):
    data = encode(Image.fromarray(coffee).convert("CMYK"), "JPEG", quality=95)
    loaded = load_image(data)
    assert loaded.mode == "CMYK" and loaded.pixels.shape == coffee.shape
    assert np.abs(loaded.pixels.astype(int) - coffee).mean() < 6


def test_palette_with_transparency_keeps_alpha(chelsea):
    pal = Image.fromarray(chelsea).quantize(16)
    index = np.asarray(pal)
    hole = int(index[0, 0])
    data = encode(pal, "PNG", transparency=hole)
    loaded = load_image(data)
    assert loaded.has_alpha and loaded.mode == "P"
    assert np.array_equal(loaded.pixels[..., 3] == 0, index == hole)


def test_gray_alpha_becomes_rgba(astronaut):
    gray = cv2.cvtColor(astronaut, cv2.COLOR_RGB2GRAY)
    alpha = np.tile(np.arange(512, dtype=np.uint8)[None, :] // 2, (512, 1))
    loaded = load_image(encode(Image.fromarray(np.dstack([gray, alpha]), mode="LA"), "PNG"))
    assert loaded.pixels.shape == (512, 512, 4)
    assert np.array_equal(loaded.pixels[..., 0], gray)
    assert np.array_equal(loaded.pixels[..., 2], gray)
    assert np.array_equal(loaded.pixels[..., 3], alpha)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_makes_pixels_upright(orientation, chelsea):
    data = encode(chelsea, "PNG", exif=exif_block(orientation).tobytes())
    expected = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB"))
    loaded = load_image(data)
    assert np.array_equal(loaded.pixels, expected)
    assert Image.open(io.BytesIO(save_image(loaded.pixels, None, like=loaded))).getexif()[
        0x0112] == 1


def test_exif_rotated_jpeg_is_upright(coffee):
    data = encode(coffee, "JPEG", quality=95, exif=exif_block(6).tobytes())
    loaded = load_image(data)
    assert loaded.pixels.shape == (600, 400, 3)  # rotated 90° clockwise
    upright = np.rot90(coffee, -1)
    assert np.abs(loaded.pixels.astype(int) - upright).mean() < 3


def test_numpy_sources():
    rng = np.random.default_rng(1)
    floats = rng.random((10, 12, 3)).astype(np.float32)
    assert np.array_equal(load_image(floats).pixels, np.rint(floats * 255).astype(np.uint8))
    deep = (rng.random((10, 12)) * 65535).astype(np.uint16)
    loaded = load_image(deep)
    assert loaded.pixels.shape == (10, 12, 3) and loaded.source_bits == 16
    assert loaded.pixels[..., 0].max() == np.rint(int(deep.max()) * 255 / 65535)
    rgba = rng.integers(0, 256, (10, 12, 4), dtype=np.uint8)
    assert np.array_equal(load_image(rgba).pixels, rgba)
    two = rng.integers(0, 256, (10, 12, 2), dtype=np.uint8)
    assert np.array_equal(load_image(two).pixels[..., 3], two[..., 1])
    with pytest.raises(ImageLoadError, match="not an image"):
        load_image(np.zeros((4, 5, 7), np.uint8))
    with pytest.raises(ImageLoadError, match="limit"):
        load_image(np.zeros((20, 20, 3), np.uint8), max_pixels=100)


def test_pil_and_file_object_sources(tmp_path, astronaut):
    assert np.array_equal(load_image(Image.fromarray(astronaut)).pixels, astronaut)
    path = tmp_path / "a.png"
    path.write_bytes(encode(astronaut, "PNG"))
    with open(path, "rb") as handle:
        loaded = load_image(handle)
    assert loaded.filename == "a.png" and loaded.format == "PNG"
    assert np.array_equal(loaded.pixels, astronaut)


# ---------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("suffix", [".jpg", ".png", ".webp", ".tif"])
def test_icc_and_exif_round_trip(tmp_path, coffee, suffix):
    fmt = {".jpg": "JPEG", ".png": "PNG", ".webp": "WEBP", ".tif": "TIFF"}[suffix]
    src = tmp_path / f"src{suffix}"
    src.write_bytes(encode(coffee, fmt, icc_profile=SRGB, exif=exif_block(1).tobytes()))
    loaded = load_image(src)
    assert loaded.icc_profile == SRGB
    out = save_image(loaded.pixels, tmp_path / f"out{suffix}", like=loaded)
    back = Image.open(out)
    assert back.format == fmt
    assert back.info.get("icc_profile") == SRGB
    exif = back.getexif()
    assert exif[0x010F] == "LoupeCam" and exif[0x0110] == "Model 7"
    assert exif.get_ifd(0x8769)[0x9003] == "2024:05:06 07:08:09"
    assert np.abs(load_image(out).pixels.astype(int) - loaded.pixels).mean() < 1.5


def test_lossless_formats_keep_pixels_exactly(astronaut):
    rgba = np.dstack([astronaut, np.full(astronaut.shape[:2], 200, np.uint8)])
    for fmt in ("PNG", "TIFF", "BMP"):
        assert np.array_equal(load_image(save_image(astronaut, None, format=fmt)).pixels,
                              astronaut), fmt
    png = load_image(save_image(rgba, None, format="PNG"))
    assert png.has_alpha and np.array_equal(png.pixels, rgba)
    webp = load_image(save_image(rgba, None, like=png, format="WEBP"))
    assert webp.lossless and np.array_equal(webp.pixels, rgba)


def test_jpeg_is_saved_at_high_quality_without_subsampling(astronaut):
    data = save_image(astronaut, None, format="JPEG")
    img = Image.open(io.BytesIO(data))
    assert img.layer[0][1:3] == img.layer[1][1:3] == (1, 1)  # 4:4:4
    diff = np.abs(np.asarray(img).astype(int) - astronaut).mean()
    default = Image.open(io.BytesIO(encode(astronaut, "JPEG")))  # PIL: quality 75, 4:2:0
    assert diff < 2.0 and diff < 0.5 * np.abs(np.asarray(default).astype(int) - astronaut).mean()
    webp = load_image(save_image(astronaut, None, like=load_image(data), format="WEBP"))
    assert not webp.lossless  # a JPEG source gets a lossy WebP


def test_rgba_to_jpeg_is_flattened_on_white(chelsea):
    rgba = np.dstack([chelsea, np.zeros(chelsea.shape[:2], np.uint8)])
    back = load_image(save_image(rgba, None, format="JPEG"))
    assert not back.has_alpha and back.pixels.min() >= 250


def test_save_picks_the_format_and_writes_atomically(tmp_path, chelsea):
    loaded = load_image(encode(chelsea, "JPEG"))
    out = save_image(loaded.pixels, tmp_path / "sub" / "result", like=loaded)
    assert Image.open(out).format == "JPEG"
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["result"]
    with pytest.raises(ValueError, match="cannot tell the format"):
        save_image(chelsea, tmp_path / "x.xyz")
    with pytest.raises(ValueError, match="cannot write"):
        save_image(chelsea, None, format="PCX")


def test_reset_orientation_touches_only_that_tag():
    raw = exif_block(8).tobytes()
    fixed = reset_orientation(raw)
    assert len(fixed) == len(raw)
    assert sum(a != b for a, b in zip(raw, fixed, strict=True)) == 1
    parsed = Image.Exif()
    parsed.load(fixed)
    assert parsed[0x0112] == 1 and parsed[0x010F] == "LoupeCam"
    assert reset_orientation(b"garbage") == b"garbage"


def test_image_info_reads_the_header(tmp_path, coffee):
    path = tmp_path / "c.jpg"
    path.write_bytes(encode(coffee, "JPEG", icc_profile=SRGB, exif=exif_block(6).tobytes()))
    info = image_info(path)
    assert info == {"filename": "c.jpg", "format": "JPEG", "width": 600, "height": 400,
                    "megapixels": 0.24, "mode": "RGB", "bits": 8, "frames": 1,
                    "has_alpha": False, "has_icc": True, "has_exif": True, "orientation": 6,
                    "within_limit": True}
    assert isinstance(load_image(path), LoadedImage)


def test_downscale_fits_the_long_side_and_never_enlarges(coffee):
    from pipelines.images import downscale

    small = downscale(coffee, 300)
    assert small.shape == (200, 300, 3)
    assert abs(float(small.mean()) - float(coffee.mean())) < 1.0
    assert downscale(coffee, 600) is coffee
    assert downscale(coffee[:, :, 0], 60).shape == (40, 60)
    assert downscale(np.zeros((1, 900), np.uint8), 90).shape == (1, 90)
