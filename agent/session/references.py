"""Reference photos kept with a session (issue 35): "make it look like the reference".

A reference is a stranger's file, checked like any upload before it is kept: its size
(``LOUPE_MAX_UPLOAD_MB``), its pixels from the header (``LOUPE_MAX_PIXELS``) and its
format (``pipelines.images.load_image``, which also turns it upright by its EXIF
orientation). Its own bytes are kept as ``references/ref<n>.<ext>`` in the session folder
and listed in ``session.json`` (``"references"``: id, name, file, checksum, size and the
user's file name). References are named in order: ``ref1`` is "reference 1".

An operation that takes a reference (a ``reference`` parameter and an ``image`` one)
names it by id in its parameters, so turn records stay JSON; ``prepare`` fills in the
pixels just before a turn runs: a copy at most ``REFERENCE_SIDE`` on its long side,
converted into the photo's colour space when either carries an ICC profile.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from agent.actions import Action
from agent.session.inputs import named_file, source_bytes
from agent.session.store import SessionError
from pipelines.config import get_settings
from pipelines.editors.operations import get_operation
from pipelines.files import atomic_write
from pipelines.image_pixels import convert_profile
from pipelines.images import ImageLoadError, downscale, load_image
from pipelines.operations.reference import ReferenceError, reference_region

#: long side of the copy an operation gets (the fit works on smaller copies still)
REFERENCE_SIDE = 1024
#: most references one session keeps
MAX_REFERENCES = 8
FOLDER = "references"
_ID = re.compile(r"ref([1-9][0-9]?)")
_SUFFIX = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "TIFF": ".tif", "BMP": ".bmp",
           "GIF": ".gif", "MPO": ".jpg"}
#: the file name a kept reference has in the session folder (and in an archive)
FILE_RE = re.compile(r"references/ref[1-9][0-9]?\.(?:jpg|png|webp|tif|bmp|gif|img)")


def check_reference(raw: bytes, label: str) -> Any:
    """The reference's bytes loaded as an image, or a ``SessionError`` naming ``label``
    (the user's file name): too large, too many pixels, not an image."""
    settings = get_settings()
    limit = settings.max_upload_mb * 1024 * 1024
    if len(raw) > limit:
        raise SessionError(f"the reference {label} is {len(raw) / 1e6:.1f} MB, over the "
                           f"{settings.max_upload_mb} MB upload limit; nothing was changed")
    try:
        return load_image(named_file(raw, label), max_pixels=settings.max_pixels)
    except ImageLoadError as err:
        raise SessionError(f"the reference {label} was refused: {err}; nothing was "
                           "changed") from None


def reference_pixels(raw: bytes, label: str, like: Any = None) -> np.ndarray:
    """A reference's pixels as an operation gets them: checked, at most
    ``REFERENCE_SIDE``, in the colour space of ``like`` (a loaded photo)."""
    loaded = check_reference(raw, label)
    small = downscale(np.ascontiguousarray(loaded.pixels[..., :3]), REFERENCE_SIDE)
    return convert_profile(small, loaded.icc_profile, getattr(like, "icc_profile", None))


def label_of(ref_id: str) -> str:
    """``ref2`` → "reference 2"."""
    match = _ID.fullmatch(ref_id)
    return f"reference {match.group(1)}" if match else ref_id


class References:
    """The references of one session (see the module doc)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._pixels: dict[str, np.ndarray] = {}

    # ---- files ----------------------------------------------------------------------
    def add(self, folder: Path, src: Any, name: str | None = None) -> dict[str, Any]:
        """Check and keep a reference; returns its entry (``id``, ``name``, …).

        Raises:
            SessionError: the file is refused (the message names it) or the session
                already holds ``MAX_REFERENCES``.
        """
        raw, found = source_bytes(src)
        label = Path(name or found or "reference").name[:120] or "reference"
        if raw is None:
            raise SessionError(f"the reference {label} could not be read; nothing was changed")
        if len(self.items) >= MAX_REFERENCES:
            raise SessionError(f"this session already keeps {MAX_REFERENCES} references")
        loaded = check_reference(raw, label)
        number = max((int(_ID.fullmatch(i["id"]).group(1)) for i in self.items), default=0) + 1
        ref_id = f"ref{number}"
        file = f"{FOLDER}/{ref_id}{_SUFFIX.get((loaded.format or '').upper(), '.img')}"
        (Path(folder) / FOLDER).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(folder) / file, raw)
        height, width = loaded.pixels.shape[:2]
        entry = {"id": ref_id, "name": label_of(ref_id), "file": file, "filename": label,
                 "sha256": hashlib.sha256(raw).hexdigest(), "width": width, "height": height}
        self.items.append(entry)
        return entry

    def load(self, folder: Path, items: Any) -> None:
        """Read the list saved in ``session.json`` (a stranger's: every entry checked)."""
        self.items = []
        for item in items if isinstance(items, list) else []:
            self.items.append(check_entry(item, folder))

    def save(self) -> list[dict[str, Any]]:
        return [dict(item) for item in self.items]

    def files(self) -> list[str]:
        return [item["file"] for item in self.items]

    # ---- lookups --------------------------------------------------------------------
    def find(self, ref_id: str = "") -> dict[str, Any]:
        """The entry ``ref_id`` names ("" = the latest added)."""
        if not self.items:
            raise SessionError("there is no reference photo in this session: add one (the "
                               "Reference photo box, or --reference) and ask again. Nothing "
                               "was changed.")
        if not ref_id:
            return self.items[-1]
        for item in self.items:
            if item["id"] == ref_id:
                return item
        known = ", ".join(item["name"] for item in self.items)
        raise SessionError(f"there is no {label_of(ref_id)} in this session (it has "
                           f"{known}). Nothing was changed.")

    def pixels(self, folder: Path, ref_id: str, like: Any = None) -> np.ndarray:
        """The reference's pixels for an operation (≤ ``REFERENCE_SIDE``, in the colour
        space of ``like``, the session's original)."""
        item = self.find(ref_id)
        if item["id"] not in self._pixels:
            raw = (Path(folder) / item["file"]).read_bytes()
            self._pixels[item["id"]] = reference_pixels(raw, item["filename"], like)
        return self._pixels[item["id"]]

    def prepare(self, folder: Path, actions: list[Action], like: Any = None) -> list[Action]:
        """Fill in the reference of every action whose operation takes one: its id in
        ``reference`` (the latest when none was named) and its pixels in ``image``.

        Raises:
            SessionError: no such reference, or it lacks the part the turn names (a
                question: "the reference has no sky…").
        """
        for action in actions:
            if not action.operation:
                continue
            op = get_operation(action.operation)
            if "reference" not in op.param_names or "image" not in op.param_names:
                continue
            item = self.find(str(action.params.get("reference") or ""))
            pixels = self.pixels(folder, item["id"], like)
            region = str(action.params.get("ref_region") or "whole")
            try:
                reference_region(pixels, region)
            except ReferenceError as err:
                raise SessionError(str(err).replace("the reference photo",
                                                    f"{item['name']} ({item['filename']})")
                                   ) from None
            action.params = {**action.params, "reference": item["id"], "image": pixels}
        return actions


def check_entry(item: Any, folder: Path) -> dict[str, Any]:
    """One saved reference entry, checked (id, file name inside ``references/``)."""
    if not isinstance(item, dict):
        raise SessionError("the session's reference list is damaged")
    ref_id, file = item.get("id"), item.get("file")
    if not isinstance(ref_id, str) or not _ID.fullmatch(ref_id) or \
            not isinstance(file, str) or not FILE_RE.fullmatch(file) or \
            PurePosixPath(file).stem != ref_id:
        raise SessionError("the session's reference list is damaged")
    if not (Path(folder) / file).is_file():
        raise SessionError(f"the session's {label_of(ref_id)} is missing")
    filename = item.get("filename")
    return {"id": ref_id, "name": label_of(ref_id), "file": file,
            "filename": filename[:120] if isinstance(filename, str) else label_of(ref_id),
            "sha256": str(item.get("sha256") or "")[:64],
            "width": int(item.get("width") or 0), "height": int(item.get("height") or 0)}
