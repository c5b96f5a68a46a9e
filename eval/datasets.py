"""Dataset loaders: every benchmark becomes a list of ``Sample`` (a source image and turns).

Formats: MagicBrush (``edit_sessions.json``), ImgEdit-style JSON (id, prompt, edit_type),
Complex-Edit-style compound instructions by level, DLEBench-style JSON (type, target
boxes, optional reference), HDD folders (``python -m eval make-hdd``) and a plain folder
of source / edited / instruction triples. Every path named inside a dataset must stay
inside the dataset folder; one that escapes it (``..``, absolute, a symlink out) is
rejected with ``DatasetError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.dle import DLEError, DLESample
from eval.hdd import HDDError, load_session

IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".bmp")
MAX_JSON_BYTES = 256 * 1024 * 1024


class DatasetError(ValueError):
    """A dataset that cannot be read: missing files, bad JSON, paths escaping the folder."""


@dataclass
class Turn:
    """One instruction of a sample.

    Attributes:
        instruction: the request, in words.
        target: ground-truth image after the turn, when the dataset has one.
        mask: the edit-area mask image, when given (white = edit).
        state: HDD target state (JSON) after the turn.
        commands: HDD canonical commands of the turn (JSON).
    """

    instruction: str
    target: Path | None = None
    mask: Path | None = None
    state: dict[str, Any] | None = None
    commands: list[dict[str, Any]] | None = None


@dataclass
class Sample:
    """One evaluation unit: a source image and one or more turns.

    Attributes:
        id: unique within the dataset.
        source: the input image.
        turns: the instructions in order.
        type: edit type, level or DLEBench category ("" when unknown).
        dataset: the format's name.
        meta: format-specific extras (boxes, reference, HDD states, size …).
    """

    id: str
    source: Path
    turns: list[Turn]
    type: str = ""
    dataset: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def inside(root: Path, relative: str | Path) -> Path:
    """``root / relative`` if it stays inside ``root`` (symlinks resolved), else an error.

    Raises:
        DatasetError: absolute, ``..``-escaping or symlinked-out paths.
    """
    if not isinstance(relative, (str, Path)) or not str(relative).strip():
        raise DatasetError(f"bad path {relative!r} in {root}")
    if Path(relative).is_absolute() or "\x00" in str(relative):
        raise DatasetError(f"path {relative!r} escapes the dataset folder {root}")
    base = root.resolve()
    path = (base / relative).resolve()
    if path != base and base not in path.parents:
        raise DatasetError(f"path {relative!r} escapes the dataset folder {root}")
    return path


def _existing(root: Path, relative: str | Path) -> Path:
    path = inside(root, relative)
    if not path.is_file():
        raise DatasetError(f"missing file {relative!r} in {root}")
    return path


def _read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise DatasetError(f"{path} is too large ({path.stat().st_size} bytes)")
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from None


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{where}: expected a non-empty instruction, got {value!r}")
    return value.strip()


def _records(data: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    """A list of records or an ``{id: record}`` mapping → ``[(key, record)]``."""
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = [(str(i), r) for i, r in enumerate(data)]
    else:
        raise DatasetError(f"{where}: expected a list or a mapping of records")
    for key, record in items:
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: record {key!r} is not an object")
    return [(str(k), r) for k, r in items]


# --- formats ---------------------------------------------------------------------------


def load_magicbrush(root: Path) -> list[Sample]:
    """MagicBrush: ``edit_sessions.json`` maps an image id to its turns
    (``input``, ``mask``, ``output``, ``instruction``); images in ``images/<id>/``."""
    data = _read_json(root / "edit_sessions.json")
    samples = []
    for img_id, turns in sorted(_mapping(data, "edit_sessions.json").items()):
        if not isinstance(turns, list) or not turns:
            raise DatasetError(f"edit_sessions.json: session {img_id!r} has no turns")

        def find(name: str, img_id: str = img_id) -> Path:
            folder = root / "images" / img_id
            candidate = inside(root, Path("images") / img_id / name)
            return candidate if folder.is_dir() and candidate.is_file() else _existing(root, name)

        out_turns = []
        for t, turn in enumerate(turns):
            where = f"edit_sessions.json {img_id} turn {t + 1}"
            if not isinstance(turn, dict):
                raise DatasetError(f"{where}: not an object")
            out_turns.append(Turn(
                _text(turn.get("instruction"), where),
                target=find(turn["output"]) if turn.get("output") else None,
                mask=find(turn["mask"]) if turn.get("mask") else None))
        first = turns[0]
        if not first.get("input"):
            raise DatasetError(f"edit_sessions.json {img_id}: first turn has no input")
        samples.append(Sample(str(img_id), find(first["input"]), out_turns, "multi-turn",
                              "magicbrush"))
    return samples


def _mapping(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: expected an object keyed by image id")
    return data


def _json_file(root: Path, names: tuple[str, ...]) -> Path:
    if root.is_file():
        return root
    for name in names:
        if (root / name).is_file():
            return root / name
    found = sorted(root.glob("*.json"))
    if len(found) == 1:
        return found[0]
    raise DatasetError(f"no {' / '.join(names)} in {root}")


def _source_of(root: Path, record: dict[str, Any], key: str) -> Path:
    for name in ("image", "source", "input", "path", "image_path"):
        if record.get(name):
            return _existing(root, record[name])
    for ext in IMAGE_EXTS:  # ImgEdit names images by id
        candidate = inside(root, f"{record.get('id', key)}{ext}")
        if candidate.is_file():
            return candidate
    raise DatasetError(f"record {key!r} names no source image")


def load_imgedit(root: Path) -> list[Sample]:
    """ImgEdit-style JSON: records with ``id``, ``prompt``, ``edit_type`` and an image
    path (``image``/``source``, or ``<id>.png`` next to the file)."""
    path = _json_file(root, ("imgedit.json", "singleturn.json", "annotations.json"))
    base = path.parent
    samples = []
    for key, record in _records(_read_json(path), path.name):
        where = f"{path.name} {key}"
        target = record.get("target") or record.get("edited")
        samples.append(Sample(
            str(record.get("id", key)), _source_of(base, record, key),
            [Turn(_text(record.get("prompt") or record.get("instruction"), where),
                  target=_existing(base, target) if target else None)],
            str(record.get("edit_type", "")), "imgedit"))
    return samples


def load_complex_edit(root: Path) -> list[Sample]:
    """Complex-Edit-style JSON: each record has an image and compound instructions by
    complexity level (``{"levels": {"1": "...", "2": "..."}}`` or
    ``[{"level": 1, "instruction": "..."}]``); one sample per (record, level), type ``C<level>``."""
    path = _json_file(root, ("complex_edit.json", "complex-edit.json"))
    base = path.parent
    samples = []
    for key, record in _records(_read_json(path), path.name):
        levels = record.get("levels") or record.get("compound") or record.get("instructions")
        if isinstance(levels, dict):
            pairs = [(str(k), v) for k, v in levels.items()]
        elif isinstance(levels, list):
            pairs = [(str(item.get("level", i + 1)), item.get("instruction") or
                      item.get("compound_instruction")) for i, item in enumerate(levels)
                     if isinstance(item, dict)]
        else:
            raise DatasetError(f"{path.name} {key}: no instructions by level")
        source = _source_of(base, record, key)
        for level, text in pairs:
            samples.append(Sample(f"{record.get('id', key)}-C{level}", source,
                                  [Turn(_text(text, f"{path.name} {key} level {level}"))],
                                  f"C{level}", "complex-edit", {"level": level}))
    return samples


def load_dle(root: Path) -> list[Sample]:
    """DLEBench-style JSON (see ``eval.dle.DLESample``): source, instruction, type among
    the seven categories, target boxes, optional reference."""
    path = _json_file(root, ("dlebench.json", "dle.json"))
    base = path.parent
    samples = []
    for key, record in _records(_read_json(path), path.name):
        try:
            dle = DLESample.from_json(record, key)
        except DLEError as exc:
            raise DatasetError(str(exc)) from None
        reference = _existing(base, dle.reference) if dle.reference else None
        samples.append(Sample(dle.id, _existing(base, dle.source),
                              [Turn(dle.instruction, target=reference)],
                              dle.type, "dle",
                              {"boxes": [list(b) for b in dle.boxes],
                               "reference": str(reference) if reference else None}))
    return samples


def load_hdd(root: Path) -> list[Sample]:
    """An HDD folder written by ``eval.hdd.make_dataset`` (``manifest.json``)."""
    manifest = _read_json(root / "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("benchmark") != "hdd":
        raise DatasetError(f"{root}/manifest.json is not an HDD manifest")
    samples = []
    for name in manifest.get("sessions", []):
        folder = inside(root, name)
        try:
            session = load_session(folder)
        except HDDError as exc:
            raise DatasetError(str(exc)) from None
        turns = []
        for t, (text, commands) in enumerate(zip(session.instructions, session.commands)):
            target = folder / f"turn_{t + 1}.png"
            turns.append(Turn(text, target=target if target.is_file() else None,
                              state=session.states[t + 1].to_json(),
                              commands=[c.to_json() for c in commands]))
        kinds = sorted({c["kind"] for turn in turns for c in turn.commands or []})
        samples.append(Sample(session.id, _existing(folder, "turn_0.png"), turns,
                              "+".join(kinds), "hdd",
                              {"size": manifest.get("size"),
                               "states": [s.to_json() for s in session.states]}))
    return samples


def load_folder(root: Path) -> list[Sample]:
    """A plain folder of triples: ``<name>.txt`` (instruction), a source image
    ``<name>.<ext>`` / ``<name>_source.<ext>`` / ``source/<name>.<ext>``, and optionally
    ``<name>_edited.<ext>`` / ``edited/<name>.<ext>``."""
    texts = sorted(root.glob("*.txt")) or sorted((root / "instructions").glob("*.txt"))
    if not texts:
        raise DatasetError(f"no <name>.txt instructions in {root}")
    samples = []
    for text_path in texts:
        name = text_path.stem
        source = _first(root, [f"{name}_source", f"source/{name}", name])
        if source is None:
            raise DatasetError(f"no source image for {name!r} in {root}")
        edited = _first(root, [f"{name}_edited", f"edited/{name}", f"{name}_target"])
        instruction = _text(text_path.read_text(encoding="utf-8", errors="replace"),
                            text_path.name)
        samples.append(Sample(name, source, [Turn(instruction, target=edited)], "",
                              "folder"))
    return samples


def _first(root: Path, stems: list[str]) -> Path | None:
    for stem in stems:
        for ext in IMAGE_EXTS:
            path = inside(root, stem + ext)
            if path.is_file():
                return path
    return None


LOADERS: dict[str, Callable[[Path], list[Sample]]] = {
    "magicbrush": load_magicbrush, "imgedit": load_imgedit, "complex-edit": load_complex_edit,
    "dle": load_dle, "hdd": load_hdd, "folder": load_folder,
}


def detect_format(path: Path) -> str:
    """Guess a dataset's format from the files in it."""
    if path.is_file():
        data = _read_json(path)
        records = _records(data, path.name)
        first = records[0][1] if records else {}
        if "edit_type" in first or "prompt" in first:
            return "imgedit"
        if any(k in first for k in ("levels", "compound")):
            return "complex-edit"
        if "boxes" in first or "bbox" in first:
            return "dle"
        raise DatasetError(f"cannot tell the format of {path}")
    if (path / "manifest.json").is_file():
        return "hdd"
    if (path / "edit_sessions.json").is_file():
        return "magicbrush"
    jsons = sorted(path.glob("*.json"))
    if len(jsons) == 1:
        return detect_format(jsons[0])
    return "folder"


def load_dataset(path: str | Path, kind: str | None = None, *,
                 limit: int | None = None) -> list[Sample]:
    """Load a dataset folder (or JSON file) as samples.

    Args:
        path: the dataset folder, or its JSON file.
        kind: one of ``LOADERS`` (``magicbrush``, ``imgedit``, ``complex-edit``, ``dle``,
            ``hdd``, ``folder``); detected from the files when None.
        limit: keep the first ``limit`` samples.

    Returns:
        The samples, in a stable order.

    Raises:
        DatasetError: unknown format, unreadable files, paths escaping the folder.
    """
    root = Path(path)
    if not root.exists():
        raise DatasetError(f"no dataset at {root}")
    kind = kind or detect_format(root)
    if kind not in LOADERS:
        raise DatasetError(f"unknown dataset format {kind!r}; known: {', '.join(LOADERS)}")
    samples = LOADERS[kind](root)
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"{root}: duplicate sample ids")
    return samples[:limit] if limit is not None else samples
