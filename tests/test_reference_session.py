"""Issue 35: reference photos travel with the session: kept, named, resolved into a
turn's parameters (records stay JSON), refused like any hostile upload, exported in
version-3 archives (versions 1-2 still open), EXIF orientation and ICC profile honoured.
Real photos (``eval.photos``) at ≤ 320 px."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np
import pytest
from PIL import Image, ImageCms

from agent.session import EditSession, SessionError
from agent.session.archive import SESSION_VERSION
from eval.look import look_distance, structure
from eval.photos import load_photo
from pipelines.image_pixels import convert_profile


def _jpeg(pixels: np.ndarray, **kwargs) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=92, **kwargs)
    return buf.getvalue()


@pytest.fixture(scope="module")
def china() -> np.ndarray:
    return load_photo("china", 320)


@pytest.fixture(scope="module")
def rocket() -> np.ndarray:
    return load_photo("rocket", 320)


@pytest.fixture()
def session(tmp_path, china) -> EditSession:
    return EditSession.create(_jpeg(china), tmp_path / "s")


def _unchanged(session: EditSession, head: str) -> None:
    assert session.graph.head == head and len(session.graph.nodes) == 1


def test_a_turn_matches_the_kept_reference_and_records_its_id(session, rocket, tmp_path):
    result = session.turn("make it look like the reference")
    assert not result.ok and "no reference photo" in result.message
    _unchanged(session, "n0")
    entry = session.add_reference(_jpeg(rocket), "rocket.jpg")
    assert entry["id"] == "ref1" and entry["name"] == "reference 1"
    before = session.current_image()
    result = session.turn("make it look like the reference")
    assert result.ok, result.message
    after = session.current_image()
    ref = load_photo("rocket", 320)
    assert look_distance(after, ref).total <= 0.5 * look_distance(before, ref).total
    assert structure(before, after) >= 0.85
    data = json.loads((session.folder / "session.json").read_text())
    assert data["version"] == SESSION_VERSION == 3
    assert data["references"][0]["file"] == "references/ref1.jpg"
    node = data["graph"]["nodes"][-1]
    text = json.dumps(node)
    assert '"reference": "ref1"' in text and "<image" in text   # an id, never pixels
    reopened = EditSession.open(session.folder)
    assert reopened.references.items == session.references.items


def test_several_references_are_named_and_a_missing_one_is_said(session, rocket):
    session.add_reference(_jpeg(rocket), "rocket.jpg")
    session.add_reference(_jpeg(load_photo("flower", 320)), "flower.jpg")
    result = session.turn("make it look like reference 3")
    assert not result.ok and "no reference 3" in result.message
    assert "reference 1, reference 2" in result.message
    _unchanged(session, "n0")
    result = session.turn("make it look like reference 2")
    assert result.ok and result.steps[0].action["params"]["reference"] == "ref2"
    flower = load_photo("flower", 320)
    assert look_distance(session.current_image(), flower).total < \
        look_distance(session.image_at("n0"), flower).total


def test_the_references_sky_when_it_has_none_is_a_question(session):
    session.add_reference(_jpeg(load_photo("coffee", 320)), "coffee.jpg")
    result = session.turn("make the sky look like the reference's sky")
    assert not result.ok and "no sky" in result.message and "coffee.jpg" in result.message
    assert result.message.rstrip().endswith("Nothing was changed.") or "?" in result.message
    _unchanged(session, "n0")


@pytest.mark.parametrize("case", ["not an image", "too many pixels", "too large", "truncated"])
def test_hostile_references_are_refused_and_nothing_changes(session, rocket, case,
                                                            monkeypatch):
    data = _jpeg(rocket)
    if case == "not an image":
        data = b"<?php system($_GET['x']); ?>" * 10
    elif case == "too many pixels":
        monkeypatch.setenv("LOUPE_MAX_PIXELS", "10000")
    elif case == "too large":
        monkeypatch.setenv("LOUPE_MAX_UPLOAD_MB", "1")
        rng = np.random.default_rng(0)
        data = _jpeg(rng.integers(0, 255, (1400, 1400, 3), dtype=np.uint8))
        assert len(data) > 1024 * 1024
    else:
        data = data[: len(data) // 3]
    with pytest.raises(SessionError, match="evil.jpg"):
        session.add_reference(data, "evil.jpg")
    assert session.references.items == []
    assert not (session.folder / "references").exists() or \
        not any((session.folder / "references").iterdir())
    _unchanged(session, "n0")


def test_exif_orientation_is_honoured(session, rocket):
    exif = Image.Exif()
    exif[0x0112] = 6   # stored sideways: shown turned a quarter clockwise
    entry = session.add_reference(_jpeg(rocket, exif=exif.tobytes()), "sideways.jpg")
    assert (entry["width"], entry["height"]) == (rocket.shape[0], rocket.shape[1])
    pixels = session.references.pixels(session.folder, "ref1", session.original)
    assert pixels.shape[:2] == (rocket.shape[1], rocket.shape[0])


def _swapped_primaries() -> bytes:
    """An sRGB profile with its red and blue primaries swapped (a valid ICC file)."""
    raw = bytearray(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
    count = struct.unpack(">I", raw[128:132])[0]
    where = {}
    for i in range(count):
        at = 132 + 12 * i
        where[bytes(raw[at:at + 4])] = at
    r, b = where[b"rXYZ"], where[b"bXYZ"]
    raw[r + 4:r + 12], raw[b + 4:b + 12] = raw[b + 4:b + 12], raw[r + 4:r + 12]
    return bytes(raw)


def test_the_references_icc_profile_is_honoured(session):
    red = np.zeros((64, 64, 3), np.uint8)
    red[..., 0] = 220
    profile = _swapped_primaries()
    assert convert_profile(red, profile, None)[..., 2].mean() > 150   # it is blue really
    buf = io.BytesIO()
    Image.fromarray(red).save(buf, format="PNG", icc_profile=profile)
    session.add_reference(buf.getvalue(), "tagged.png")
    pixels = session.references.pixels(session.folder, "ref1", session.original)
    assert pixels[..., 2].mean() > 150 and pixels[..., 0].mean() < 60


def test_archives_carry_references_and_older_versions_still_open(session, rocket, tmp_path):
    session.add_reference(_jpeg(rocket), "rocket.jpg")
    assert session.turn("make it look like the reference").ok
    archive = session.export(tmp_path / "s.zip")
    with zipfile.ZipFile(archive) as zf:
        assert "references/ref1.jpg" in zf.namelist()
        data = json.loads(zf.read("session.json"))
    assert data["version"] == 3
    back = EditSession.import_archive(archive, tmp_path / "back")
    assert back.references.items == session.references.items
    assert np.array_equal(back.current_image(), session.current_image())
    for version in (1, 2):   # written before references existed: opened with none
        old = tmp_path / f"v{version}.zip"
        with zipfile.ZipFile(archive) as src, zipfile.ZipFile(old, "w") as dst:
            for info in src.infolist():
                if info.filename.startswith("references/"):
                    continue
                blob = src.read(info)
                if info.filename == "session.json":
                    blob = json.dumps({k: v for k, v in {**data, "version": version}.items()
                                       if k != "references"}).encode()
                dst.writestr(info, blob)
        opened = EditSession.import_archive(old, tmp_path / f"open{version}")
        assert opened.references.items == [] and opened.graph.head == back.graph.head
    # a version-3 archive naming a file outside references/ is refused
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            blob = src.read(info)
            if info.filename == "session.json":
                blob = json.dumps({**data, "references": [{**data["references"][0],
                                                           "file": "../../etc/passwd"}]}
                                  ).encode()
            dst.writestr(info, blob)
    with pytest.raises(SessionError, match="reference list"):
        EditSession.import_archive(bad, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()

