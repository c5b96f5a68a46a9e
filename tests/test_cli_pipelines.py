"""``python -m pipelines`` run as a user runs it: a subprocess on real files."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms

ROOT = Path(__file__).resolve().parents[1]
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LOUPE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "pipelines", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def exif(orientation: int) -> bytes:
    block = Image.Exif()
    block[0x010F] = "LoupeCam"
    block[0x0112] = orientation
    return block.tobytes()


@pytest.fixture()
def photo_png(tmp_path, coffee) -> Path:
    path = tmp_path / "coffee.png"
    Image.fromarray(coffee).save(path, icc_profile=SRGB)
    return path


def test_info_reports_the_header(tmp_path, chelsea):
    path = tmp_path / "cat.jpg"
    Image.fromarray(chelsea).save(path, quality=90, icc_profile=SRGB, exif=exif(6))
    proc = run("info", path)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert (info["width"], info["height"], info["format"], info["mode"]) == (451, 300, "JPEG",
                                                                               "RGB")
    assert info["has_icc"] and info["has_exif"] and info["orientation"] == 6


def test_edit_a_box_changes_only_near_the_box(tmp_path, photo_png, coffee):
    out = tmp_path / "out.png"
    proc = run("edit", photo_png, out, "--op", "exposure", "--param", "stops=1",
               "--box", "100,120,260,220", "--feather", "4")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["params"] == {"stops": 1.0} and summary["targets"] == 1
    result = np.asarray(Image.open(out).convert("RGB"))
    assert result.shape == coffee.shape
    assert Image.open(out).info.get("icc_profile") == SRGB
    inside = result[120:220, 100:260].astype(int)
    assert inside.mean() > coffee[120:220, 100:260].mean() + 20
    far = np.ones(coffee.shape[:2], bool)
    far[120 - 4:220 + 4, 100 - 4:260 + 4] = False
    assert np.array_equal(result[far], coffee[far])
    ring = result[120 - 2, 100:260].astype(int).mean() - coffee[120 - 2, 100:260].mean()
    assert 0 < ring < inside.mean() - coffee[120:220, 100:260].mean()  # a soft edge


def test_edit_with_a_mask_of_another_size(tmp_path, photo_png, coffee):
    mask = np.zeros((200, 300), np.uint8)  # half the photo's size
    cv2.circle(mask, (150, 100), 40, 255, -1)
    mask_path = tmp_path / "mask.png"
    Image.fromarray(mask).save(mask_path)
    out = tmp_path / "out.png"
    proc = run("edit", photo_png, out, "--op", "grayscale", "--mask", mask_path,
               "--feather", "0")
    assert proc.returncode == 0, proc.stderr
    result = np.asarray(Image.open(out).convert("RGB")).astype(int)
    full = cv2.resize(mask, (600, 400), interpolation=cv2.INTER_NEAREST) > 127
    assert (np.ptp(result[full], axis=1) <= 1).all()  # grey inside the circle
    assert np.array_equal(result[~full], coffee[~full])


def test_whole_image_jpeg_keeps_format_icc_and_exif(tmp_path, chelsea):
    src = tmp_path / "cat.jpg"
    Image.fromarray(chelsea).save(src, quality=95, icc_profile=SRGB, exif=exif(6))
    out = tmp_path / "result"  # no suffix: the source's format is used
    proc = run("edit", src, out, "--op", "grayscale")
    assert proc.returncode == 0, proc.stderr
    back = Image.open(out)
    assert back.format == "JPEG" and back.size == (300, 451)  # upright
    assert back.info.get("icc_profile") == SRGB
    assert back.getexif()[0x0112] == 1 and back.getexif()[0x010F] == "LoupeCam"
    pixels = np.asarray(back).astype(int)
    assert np.ptp(pixels, axis=2).mean() < 2


def test_models_delegates(tmp_path):
    proc = run("models", "--role", "editor")
    assert proc.returncode == 0, proc.stderr
    assert set(json.loads(proc.stdout)) == {"editor"}


@pytest.mark.parametrize(("args", "message", "code"), [
    (["--op", "sparkle"], "unknown operation 'sparkle'", 1),
    (["--op", "exposure", "--param", "stops=9"], "out of range", 1),
    (["--op", "exposure", "--param", "volume=2"], "exposure has no parameter 'volume'", 2),
    (["--op", "exposure", "--box", "1,2,3"], "--box must be x0,y0,x1,y1", 2),
    (["--op", "exposure", "--box", "900,900,1000,1000"], "lies outside", 1),
])
def test_edit_errors_are_one_line(tmp_path, photo_png, args, message, code):
    proc = run("edit", photo_png, tmp_path / "out.png", *args)
    assert message in one_line_error(proc)
    assert proc.returncode == code
    assert not (tmp_path / "out.png").exists()


def test_bad_input_files(tmp_path):
    truncated = tmp_path / "cut.jpg"
    buffer = io.BytesIO()
    Image.fromarray(np.full((64, 64, 3), 90, np.uint8)).save(buffer, format="JPEG")
    truncated.write_bytes(buffer.getvalue()[:300])
    assert "cut.jpg is damaged" in one_line_error(
        run("edit", truncated, tmp_path / "o.png", "--op", "grayscale"))
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    assert "empty.png is empty (0 bytes)" in one_line_error(run("info", empty))
    assert "missing.png: no such file" in one_line_error(run("info", tmp_path / "missing.png"))
    text = tmp_path / "notes.png"
    text.write_text("not a picture")
    assert "not an image file" in one_line_error(
        run("edit", text, tmp_path / "o.png", "--op", "grayscale"))
    usage = run("edit", text)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr


def test_phrase_that_cannot_be_localised_fails_with_its_reason(tmp_path, photo_png):
    proc = run("edit", photo_png, tmp_path / "out.png", "--op", "exposure",
               "--phrase", "the quantum zebra's left sock")
    line = one_line_error(proc)
    assert "the quantum zebra" in line or "grounding" in line
    assert not (tmp_path / "out.png").exists()


def test_phrase_names_the_region_to_edit(tmp_path, coffee):
    gray = cv2.cvtColor(cv2.cvtColor(coffee, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    cv2.circle(gray, (420, 150), 50, (220, 30, 30), -1)
    src = tmp_path / "red.png"
    Image.fromarray(gray).save(src)
    out = tmp_path / "blue.png"
    proc = run("edit", src, out, "--op", "recolor", "--param", "color=blue",
               "--phrase", "the red circle", "--feather", "3")
    assert proc.returncode == 0, proc.stderr
    result = np.asarray(Image.open(out).convert("RGB")).astype(int)
    disc = np.zeros(coffee.shape[:2], np.uint8)
    cv2.circle(disc, (420, 150), 45, 1, -1)
    inside = result[disc.astype(bool)].mean(axis=0)
    assert inside[2] > inside[0] + 60  # blue now, not red
    far = np.ones(coffee.shape[:2], np.uint8)
    cv2.circle(far, (420, 150), 60, 0, -1)
    assert np.array_equal(result[far.astype(bool)], gray[far.astype(bool)])
