"""One editing session: the plan → execute → reflect turn loop over a persisted state graph.

``EditSession.turn(instruction, mask)`` runs one chat turn:

1. plan — the planner turns the instruction (with the folded memory) into atomic Actions;
2. check — every action can be served (a brush mask where one is needed, an editor for
   the operation); if not, the turn says so and changes nothing;
3. execute — for each action in dependency order: localise → decompose → edit the patch
   → compose at native resolution → critique; below the threshold retry with the
   critique's fix (new parameters, another candidate region, another editor), up to three
   attempts, then keep the best attempt or roll the step back when even that is poor;
4. commit — each kept step becomes a node of the graph (only the changed pixels), written
   to the session folder atomically, and the memory folds the turn.

The session folder holds ``session.json`` (graph + memory), the original file as uploaded
(``root.<ext>``, so ICC/EXIF survive) and ``layers/*.png``; ``EditSession.open`` restores
everything after a crash or restart, ``export``/``import_archive`` move it as one zip.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import stat
import sys
import threading
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from agent.actions import Action, ActionKind, RegionType
from agent.memory import ImageContext, Memory, ToolContext
from agent.state import (
    DEFAULT_CACHE_BYTES,
    LAYER_DIR,
    Node,
    StateError,
    StateGraph,
    StoredLayer,
    atomic_write,
    decode_png,
    diff_layer,
    encode_png,
    graph_from_file,
    split_layer,
)
from pipelines.layers import Layer, compose, decompose, default_feather

log = logging.getLogger(__name__)

SESSION_FILE = "session.json"
SESSION_FORMAT = "loupe-session"
SESSION_VERSION = 1
#: Critique score at or above which an attempt is accepted without retrying.
ACCEPT_SCORE = 7.0
#: Below this even the best attempt is rolled back.
MIN_SCORE = 4.0
MAX_ATTEMPTS = 3
MAX_INSTRUCTION_CHARS = 2000
#: Largest archive ``import_archive`` accepts (compressed and uncompressed), in bytes;
#: ``LOUPE_MAX_ARCHIVE_MB`` overrides it.
DEFAULT_MAX_ARCHIVE_BYTES = 2 * 1024 ** 3
_ROOT_SUFFIX = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "TIFF": ".tif", "BMP": ".bmp",
                "GIF": ".gif"}

#: Operations whose result at a pixel depends only on that pixel (and statistics of the
#: masked pixels): their patch needs no surrounding context.
POINTWISE_OPS = frozenset({"exposure", "brightness", "contrast", "saturation", "vibrance",
                           "temperature", "tint", "gamma", "shadows", "highlights", "hue",
                           "grayscale", "sepia", "recolor", "auto_levels",
                           "auto_white_balance"})

ProgressFn = Callable[[float, str], None]


class SessionError(ValueError):
    """A session request that cannot be met; the message says why, for a person."""


# --------------------------------------------------------------------------- results


@dataclass
class Attempt:
    """One try at one step: the parameters, the editor, the critique and the time."""

    index: int
    editor: str
    params: dict[str, Any]
    region: str
    score: float = 0.0
    keep: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class StepResult:
    """One action of a turn and what became of it.

    ``status`` is ``applied``, ``rolled_back`` (the best attempt was unacceptable),
    ``unchanged`` (the edit changed no pixel), ``failed``, ``skipped`` (it depended on a
    step that did not apply), ``needs_mask``, ``unsupported`` or ``undo``.
    """

    index: int
    action: dict[str, Any]
    description: str
    status: str = "pending"
    message: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    chosen: int | None = None
    score: float | None = None
    node: str | None = None
    region: str = ""
    bbox: list[int] | None = None
    seconds: float = 0.0

    @property
    def applied(self) -> bool:
        return self.status == "applied"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["attempts"] = [a.to_dict() for a in self.attempts]
        return out


@dataclass
class TurnResult:
    """Everything a chat needs about one turn.

    Attributes:
        instruction: the user's words.
        ok: the request was carried out (fully, or partly with the rest explained).
        changed: the head moved (a new image state or a navigation).
        message: one human paragraph saying what happened and why.
        plan: ``{"actions": [...], "descriptions": [...], "message": str, "is_edit": bool}``.
        steps: one ``StepResult`` per action.
        head: the head after the turn.
        nodes: ids of the states this turn created.
        timings: seconds per phase (``plan``, ``execute``, ``save``, ``total``).
        extra: search topologies and the like (JSON-able).
    """

    instruction: str
    ok: bool
    changed: bool
    message: str
    plan: dict[str, Any]
    steps: list[StepResult]
    head: str
    nodes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "steps"}
        out["steps"] = [s.to_dict() for s in self.steps]
        return out


class _NeedsMask(Exception):
    """A step's target cannot be found without a brush mask."""


@dataclass
class _Region:
    mask: np.ndarray
    source: str
    alternatives: list[np.ndarray] = field(default_factory=list)


@dataclass
class _Best:
    attempt: Attempt
    composed: np.ndarray
    layer: Layer


class RegionMemory:
    """Where each target phrase was found, as a cropped mask (small even at 20 MP).

    A later step naming the same target reuses it when the localiser no longer finds the
    words (the earlier edit may have changed the very colour the phrase names). Kept for
    the life of the session object; after a restart phrases are localised afresh.
    """

    def __init__(self, limit: int = 64) -> None:
        self._items: dict[str, tuple[tuple[int, int, int, int], np.ndarray]] = {}
        self._files: dict[str, str] = {}
        self.limit = limit

    def put(self, phrase: str, layer: Layer) -> None:
        key = phrase.strip().lower()
        self._items.pop(key, None)
        self._files.pop(key, None)
        self._items[key] = (layer.bbox, layer.mask.copy())
        while len(self._items) > self.limit:
            old = next(iter(self._items))
            self._items.pop(old)
            self._files.pop(old, None)

    def save(self, folder: Path) -> list[dict[str, Any]]:
        """Write new masks under ``folder/layers`` (atomically); returns the index."""
        index = []
        for key, (bbox, crop) in self._items.items():
            if key not in self._files:
                name = f"{LAYER_DIR}/region-{uuid.uuid4().hex[:10]}.png"
                atomic_write(folder / name, encode_png(crop))
                self._files[key] = name
            index.append({"phrase": key, "bbox": list(bbox), "mask": self._files[key]})
        return index

    def load(self, folder: Path, index: list[dict[str, Any]]) -> None:
        """Read the masks back; damaged or missing entries are skipped (a cache)."""
        for item in index[-self.limit:]:
            try:
                name = str(item["mask"])
                _safe_member(name)
                crop = decode_png(folder / name, mask=True)
                bbox = tuple(int(v) for v in item["bbox"])
            except (KeyError, TypeError, ValueError, SessionError, StateError):
                continue
            if crop.shape == (bbox[3] - bbox[1], bbox[2] - bbox[0]):
                self._items[str(item["phrase"])] = (bbox, crop)
                self._files[str(item["phrase"])] = name

    def get(self, phrase: str, shape: tuple[int, int]) -> np.ndarray | None:
        item = self._items.get(phrase.strip().lower())
        if item is None:
            return None
        (x0, y0, x1, y1), crop = item
        mask = np.zeros(shape, bool)
        mask[y0:y1, x0:x1] = crop
        return mask


# --------------------------------------------------------------------------- session


class EditSession:
    """A multi-turn editing session over one image (see the module doc).

    Build one with ``EditSession.create`` or ``EditSession.open``; the backends (planner,
    critic, localiser, editor picker) default to the configured ones and load lazily.
    """

    def __init__(self, folder: Path, graph: StateGraph, memory: Memory, original: Any,
                 root_file: str, *, settings: Any = None, planner: Any = None,
                 critic: Any = None, localizer: Any = None,
                 editor_picker: Callable[..., Any] | None = None,
                 accept_score: float = ACCEPT_SCORE, min_score: float = MIN_SCORE,
                 max_attempts: int = MAX_ATTEMPTS, seed: int = 0) -> None:
        self.folder = Path(folder)
        self.graph = graph
        self.memory = memory
        self.original = original
        self.root_file = root_file
        self.settings = settings
        self.accept_score = float(accept_score)
        self.min_score = float(min_score)
        self.max_attempts = max(1, int(max_attempts))
        self.seed = int(seed)
        self._planner, self._critic, self._localizer = planner, critic, localizer
        self._pick = editor_picker
        self._lock = threading.RLock()
        self.turns = 0
        self.regions = RegionMemory()

    # ---- construction -------------------------------------------------------------
    @classmethod
    def create(cls, image_src: Any, folder: str | os.PathLike | None = None, *,
               cache_bytes: int = DEFAULT_CACHE_BYTES, **backends: Any) -> EditSession:
        """Start a session on an image and write its folder.

        Args:
            image_src: a path, encoded bytes, a file object, a PIL image or an array.
            folder: the session folder (created; must be empty); default a new folder
                under the configured sessions directory.
            cache_bytes: byte budget of the materialised-image cache.
            **backends: ``planner``, ``critic``, ``localizer``, ``editor_picker``,
                ``settings``, ``accept_score``, ``min_score``, ``max_attempts``, ``seed``.

        Returns:
            The session, its root written to the folder.

        Raises:
            ImageLoadError: the image cannot be loaded.
            SessionError: the folder is not empty.
        """
        from pipelines.images import load_image

        raw, name = _source_bytes(image_src)
        loaded = load_image(raw if raw is not None else image_src)
        if name and not loaded.filename:
            loaded.filename = name
        if raw is None:
            raw = _encode_original(loaded)
            loaded.format = loaded.format or "PNG"
        target = Path(folder) if folder is not None else _default_folder(backends)
        if target.exists() and any(target.iterdir()):
            raise SessionError(f"the session folder {target.name} is not empty")
        target.mkdir(parents=True, exist_ok=True)
        root_file = "root" + _ROOT_SUFFIX.get((loaded.format or "PNG").upper(), ".img")
        atomic_write(target / root_file, raw)
        graph = StateGraph(loaded.pixels, cache_bytes=cache_bytes,
                           root_description=f"original {loaded.filename or 'image'}")
        memory = Memory()
        memory.add_image(ImageContext("n0", None, graph.nodes["n0"].description, "upload"))
        memory.head = "n0"
        session = cls(target, graph, memory, loaded, root_file, **backends)
        session._save()
        log.info("session %s created (%dx%d)", target, *graph.size)
        return session

    @classmethod
    def open(cls, folder: str | os.PathLike, *, cache_bytes: int = DEFAULT_CACHE_BYTES,
             **backends: Any) -> EditSession:
        """Reopen a session folder (after a restart or a crash).

        Raises:
            SessionError: no session there, an unknown version, or damaged files.
        """
        from pipelines.images import ImageLoadError, load_image

        folder = Path(folder)
        path = folder / SESSION_FILE
        if not path.is_file():
            raise SessionError(f"no Loupe session in {folder}")
        try:
            data = graph_from_file(path)
        except StateError as err:
            raise SessionError(str(err)) from None
        _check_version(data)
        root_file = str(data.get("root_file", ""))
        if PurePosixPath(root_file).name != root_file or not (folder / root_file).is_file():
            raise SessionError(f"the session's original image {root_file!r} is missing")
        graph_data = data["graph"]
        pixels = int(graph_data["width"]) * int(graph_data["height"])
        try:
            loaded = load_image((folder / root_file).read_bytes(), max_pixels=pixels)
        except ImageLoadError as err:
            raise SessionError(f"the session's original image is damaged: {err}") from None
        loaded.filename = data.get("filename") or loaded.filename
        try:
            graph = StateGraph.from_json(graph_data, loaded.pixels, folder,
                                         cache_bytes=cache_bytes)
        except (StateError, KeyError, TypeError, ValueError) as err:
            raise SessionError(f"the session graph is damaged: {err}") from None
        memory = Memory.from_json(data.get("memory") or {})
        memory.head = graph.head
        session = cls(folder, graph, memory, loaded, root_file, **backends)
        session.turns = int(data.get("turns", 0))
        session.regions.load(folder, list(data.get("regions") or []))
        return session

    # ---- backends -----------------------------------------------------------------
    @property
    def planner(self) -> Any:
        if self._planner is None:
            from agent.planner import get_planner

            self._planner = get_planner(self.settings)
        return self._planner

    @property
    def critic(self) -> Any:
        if self._critic is None:
            from agent.critic import get_critic

            self._critic = get_critic(self.settings)
        return self._critic

    @property
    def localizer(self) -> Any:
        if self._localizer is None:
            from pipelines.grounding import get_localizer

            self._localizer = get_localizer()
        return self._localizer

    def pick_editor(self, request: Any, prefer: str | None = None) -> Any:
        """The editor for a request (raises ``EditError`` when none can do it)."""
        if self._pick is not None:
            return self._pick(request, prefer)
        from pipelines.editors.registry import pick_editor

        return pick_editor(request, prefer=prefer)

    def _other_editors(self, request: Any, tried: set[str]) -> list[Any]:
        if self._pick is not None:
            return []
        from pipelines.editors.registry import available_editors, get_editor

        out = []
        for name, status in available_editors().items():
            if name in tried or not _is_available(status):
                continue
            try:
                editor = get_editor(name)
            except Exception:  # noqa: BLE001 — a broken backend is just not an option
                continue
            if editor.supports(request):
                out.append(editor)
        return out

    def backends(self) -> dict[str, str]:
        """Which backend serves each role, for an honest status line."""
        out = {"planner": _name(self.planner), "critic": _name(self.critic),
               "localizer": _name(self.localizer)}
        try:
            from pipelines.editors.registry import available_editors

            live = [n for n, s in available_editors().items() if _is_available(s)]
            out["editor"] = ", ".join(live) or "none"
        except ImportError:
            out["editor"] = "none"
        return out

    # ---- navigation ---------------------------------------------------------------
    @property
    def head(self) -> str:
        return self.graph.head

    def undo(self, steps: int = 1) -> str:
        """Move the head back ``steps`` states (nothing is deleted); returns the head."""
        return self._move(lambda: self.graph.undo(steps))

    def redo(self) -> str:
        """Move the head forward again; returns the head."""
        return self._move(self.graph.redo)

    def checkout(self, node_id: str) -> str:
        """Move the head to any state; the next edit from there makes a branch."""
        head = self._move(lambda: self.graph.checkout(node_id))
        self.memory.refer(head)
        return head

    def _move(self, fn: Callable[[], str]) -> str:
        with self._lock:
            try:
                head = fn()
            except StateError as err:
                raise SessionError(str(err)) from None
            self.memory.head = head
            self._save()
            return head

    def current_image(self) -> np.ndarray:
        """The head's pixels at full resolution (read-only; copy before editing)."""
        with self._lock:
            return self.graph.image()

    def image_at(self, node_id: str) -> np.ndarray:
        """Any state's pixels at full resolution (read-only)."""
        with self._lock:
            try:
                return self.graph.image(node_id)
            except StateError as err:
                raise SessionError(str(err)) from None

    # ---- commits ------------------------------------------------------------------
    def commit(self, image_after: np.ndarray, action: Action | dict[str, Any] | None,
               description: str, parent: str | None = None) -> Node:
        """Land any full-size image as a new state (only the changed pixels are stored).

        Args:
            image_after: ``uint8`` image of the session's size and channels.
            action: what made it (an ``Action``, a JSON-able dict, or None).
            description: one line for the state graph and the memory.
            parent: the state it was made from (the head by default).

        Returns:
            The new node, now the head.
        """
        with self._lock:
            base = self.image_at(parent) if parent else self.graph.image()
            image_after = _check_image_like(image_after, base)
            layer = diff_layer(base, image_after)
            act = _action_dict(action)
            node = self.graph.add(parent, act, description, split_layer(layer) if layer else [],
                                  meta={"source": "commit"})
            self.graph.cache.put(node.id, np.array(image_after, copy=True))
            self._remember_node(node, act)
            self.memory.fold_turn(description, targets=[(act or {}).get("target", "")],
                                  operations=[(act or {}).get("operation", "")],
                                  values=(act or {}).get("params", {}), states=[node.id])
            self._save()
            return node

    def _remember_node(self, node: Node, act: dict[str, Any] | None) -> None:
        act = act or {}
        self.memory.add_image(ImageContext(node.id, node.parent, node.description,
                                           str(act.get("operation") or act.get("kind") or ""),
                                           str(act.get("target") or "")))
        self.memory.head = self.graph.head

    # ---- the turn -----------------------------------------------------------------
    def turn(self, instruction: str, mask: np.ndarray | None = None, *, search: str = "none",
             progress: ProgressFn | None = None) -> TurnResult:
        """Run one chat turn (see the module doc).

        Args:
            instruction: the user's request in plain words.
            mask: an optional brush mask (``bool``/``uint8`` of the image's size).
            search: ``"none"`` for the plan–execute–reflect loop, ``"tree"`` for the tree
                search (``agent.tree_search``).
            progress: called with ``(fraction, text)`` as the turn advances.

        Returns:
            The ``TurnResult``; on a refusal or a failure nothing changed.

        Raises:
            SessionError: an empty or over-long instruction, or a mask of the wrong size.
        """
        instruction = _check_instruction(instruction)
        mask = self._check_mask(mask)
        with self._lock:
            if search == "tree":
                return self._tree_turn(instruction, progress)
            if search not in ("none", "", None):
                raise SessionError(f"unknown search {search!r}; use 'none' or 'tree'")
            return _TurnRunner(self, instruction, mask, progress or _no_progress).run()

    def _check_mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        if mask is None:
            return None
        mask = np.asarray(mask)
        if mask.ndim == 3:
            mask = mask[..., -1] if mask.shape[2] in (2, 4) else mask.max(axis=2)
        width, height = self.graph.size
        if mask.shape != (height, width):
            raise SessionError(f"the brush mask is {mask.shape[1]}x{mask.shape[0]} but the "
                               f"image is {width}x{height}")
        mask = mask > 0 if mask.dtype != bool else mask
        return mask if mask.any() else None

    def _tree_turn(self, instruction: str, progress: ProgressFn | None) -> TurnResult:
        try:
            from agent.tree_search import tree_search
        except ImportError as err:
            raise SessionError(f"tree search is not available in this build ({err})") from None
        start = time.perf_counter()
        head, known = self.graph.head, set(self.graph.nodes)
        result = tree_search(np.array(self.graph.image()), instruction, session=self,
                             seed=self.seed)
        if self.graph.head == head and not np.array_equal(result.image, self.graph.image()):
            self.commit(result.image, None, f"tree search: {instruction}")
        nodes = [n for n in self.graph.nodes if n not in known]
        steps = []
        for i, item in enumerate(getattr(result, "steps", []) or []):
            item = item if isinstance(item, dict) else {"description": str(item)}
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            steps.append(StepResult(i, _action_dict(action) or {},
                                    str(item.get("description") or item.get("thought") or item),
                                    status="applied",
                                    node=item.get("node") or item.get("node_id")))
        satisfied = float(getattr(result, "satisfied", 0.0) or 0.0)
        extra = {"topology": getattr(result, "topology", {}), "satisfied": satisfied}
        self.turns += 1
        self.memory.head = self.graph.head
        self._save()
        message = (f"Tree search: {len(nodes)} new state(s), {100 * satisfied:.0f}% of the "
                   "checklist satisfied." if nodes else
                   "Tree search found no change that satisfies the request. Nothing was "
                   "changed.")
        plan = {"actions": [s.action for s in steps], "descriptions": [s.description
                                                                        for s in steps],
                "message": "", "is_edit": True}
        return TurnResult(instruction, bool(nodes), bool(nodes), message, plan, steps,
                          self.graph.head, nodes, {"total": time.perf_counter() - start},
                          _jsonable(extra))

    # ---- files --------------------------------------------------------------------
    def _save(self) -> float:
        """Write layers, then the session file, atomically; returns the seconds spent."""
        start = time.perf_counter()
        self.graph.persist_layers(self.folder)
        data = {"format": SESSION_FORMAT, "version": SESSION_VERSION,
                "root_file": self.root_file, "filename": self.original.filename,
                "turns": self.turns, "graph": self.graph.to_json(),
                "memory": self.memory.to_json(), "regions": self.regions.save(self.folder)}
        atomic_write(self.folder / SESSION_FILE, json.dumps(data, indent=1, default=str))
        return time.perf_counter() - start

    def save_image(self, dest: str | os.PathLike | None, format: str | None = None,
                   node_id: str | None = None) -> Path | bytes:
        """Save a state (the head by default) at full resolution, in the original's
        format unless told otherwise, with its ICC profile and EXIF.

        Returns:
            The written path, or the encoded bytes when ``dest`` is None.
        """
        from pipelines.images import save_image

        pixels = self.image_at(node_id) if node_id else self.current_image()
        return save_image(np.ascontiguousarray(pixels), dest, like=self.original, format=format)

    def export(self, zip_path: str | os.PathLike) -> Path:
        """Write the whole session (graph, memory, original, layers) to one ``.zip``."""
        with self._lock:
            self._save()
            dest = Path(zip_path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                with zipfile.ZipFile(tmp, "w") as zf:
                    zf.write(self.folder / SESSION_FILE, SESSION_FILE,
                             compress_type=zipfile.ZIP_DEFLATED)
                    zf.write(self.folder / self.root_file, self.root_file)
                    for name in self._layer_files():
                        zf.write(self.folder / name, name)
                os.replace(tmp, dest)
            finally:
                tmp.unlink(missing_ok=True)
            return dest

    def _layer_files(self) -> list[str]:
        files = [f for node in self.graph.nodes.values() for layer in node.layers
                 for f in (layer.patch_file, layer.mask_file)]
        return files + list(self.regions._files.values())

    @classmethod
    def import_archive(cls, zip_path: str | os.PathLike, folder: str | os.PathLike | None =
                       None, *, max_bytes: int | None = None, **backends: Any) -> EditSession:
        """Unpack an exported session into ``folder`` and open it.

        Raises:
            SessionError: not a zip, too large, an entry escaping the folder, a missing
                session file or an unknown version.
        """
        limit = _archive_limit(max_bytes)
        target = Path(folder) if folder is not None else _default_folder(backends)
        _unpack(Path(zip_path), target, limit)
        return cls.open(target, **backends)

    # ---- views --------------------------------------------------------------------
    def log_lines(self) -> list[str]:
        """One line per state, oldest first, the head marked with ``*``."""
        on_path = set(self.graph.path())
        lines = []
        for node in self.graph.nodes.values():
            mark = "*" if node.id == self.graph.head else ("|" if node.id in on_path else " ")
            parent = node.parent or "-"
            lines.append(f"{mark} {node.id:<5} <- {parent:<5} {node.created}  "
                         f"{node.description}")
        return lines


# --------------------------------------------------------------------------- turn runner


class _TurnRunner:
    """The state of one turn while it runs (kept off ``EditSession`` to stay small)."""

    def __init__(self, session: EditSession, instruction: str, mask: np.ndarray | None,
                 progress: ProgressFn) -> None:
        self.s = session
        self.instruction = instruction
        self.mask = mask
        self.progress = progress
        self.timings: dict[str, float] = {}
        self.start_head = session.graph.head
        self.steps: list[StepResult] = []
        self.staged: list[tuple[StepResult, Action, list[StoredLayer]]] = []
        self.work: np.ndarray | None = None
        self.applied = 0

    # 1. plan ------------------------------------------------------------------------
    def run(self) -> TurnResult:
        t0 = time.perf_counter()
        self.progress(0.0, "planning")
        plan = self.s.planner.plan(self.instruction, memory=self.s.memory,
                                   has_mask=self.mask is not None, image_size=self.s.graph.size)
        self.timings["plan"] = time.perf_counter() - t0
        actions = _dependency_order(list(plan.actions))
        self.plan_info = {"actions": [_action_dict(a) for a in actions],
                          "descriptions": [a.describe() for a in actions],
                          "message": plan.message, "is_edit": bool(plan.is_edit)}
        self.steps = [StepResult(i, _action_dict(a) or {}, a.describe())
                      for i, a in enumerate(actions)]
        if not plan.is_edit or not actions:
            msg = plan.message or "That does not read as a change to the image."
            return self._result(False, msg, t0)
        # 2. check ---------------------------------------------------------------------
        refusal = self._precheck(actions)
        if refusal:
            return self._result(False, refusal, t0)
        # 3. execute -------------------------------------------------------------------
        t1 = time.perf_counter()
        try:
            self._execute(actions)
        except _NeedsMask as err:
            self.s.graph.head = self.start_head
            self.s.memory.drop_tools()
            self.timings["execute"] = time.perf_counter() - t1
            return self._result(False, str(err), t0)
        self.timings["execute"] = time.perf_counter() - t1
        # 4. commit --------------------------------------------------------------------
        return self._commit(t0)

    def _precheck(self, actions: list[Action]) -> str:
        """A refusal message when some action cannot be served, else ''."""
        from pipelines.editors.base import EditError

        for step, action in zip(self.steps, actions):
            if action.kind is ActionKind.undo:
                continue
            if action.region.type is RegionType.mask and self.mask is None:
                step.status = "needs_mask"
                step.message = (f"'{action.describe()}' needs a brush mask: paint the area "
                                "and send the instruction again. Nothing was changed.")
                return step.message
            try:
                self.s.pick_editor(action.to_request(seed=self.s.seed))
            except EditError as err:
                step.status = "unsupported"
                step.message = (f"'{action.describe()}' needs an editor that is not "
                                f"available here: {err}. Nothing was changed.")
                return step.message
        return ""

    def _execute(self, actions: list[Action]) -> None:
        failed: set[str] = set()
        for n, (step, action) in enumerate(zip(self.steps, actions)):
            self.progress(0.05 + 0.85 * n / len(actions), step.description)
            if action.kind is ActionKind.undo:
                self._undo(step, action)
                continue
            if failed & set(action.depends_on):
                step.status, step.message = "skipped", "skipped: it depended on a step " \
                                                       "that was not applied"
                failed.add(action.id)
                continue
            t = time.perf_counter()
            layers = self._run_step(step, action)
            step.seconds = time.perf_counter() - t
            if layers is None:
                failed.add(action.id)
                continue
            self.staged.append((step, action, layers))

    def _image(self) -> np.ndarray:
        """The image the next step edits: the head plus this turn's staged layers.

        The full-size working copy is made only when a step follows a staged one, so a
        one-action turn never copies the frame.
        """
        if not self.staged:
            return self.s.graph.image()
        if self.work is None:
            self.work = np.array(self.s.graph.image(), copy=True)
            self.applied = 0
        for _, _, layers in self.staged[self.applied:]:
            for layer in layers:
                layer.apply(self.work)
        self.applied = len(self.staged)
        return self.work

    def _undo(self, step: StepResult, action: Action) -> None:
        graph, memory = self.s.graph, self.s.memory
        if self.staged:
            drop = min(action.steps, len(self.staged))
            for st, _, _ in self.staged[-drop:]:
                st.status, st.message = "rolled_back", "undone later in the same turn"
            del self.staged[-drop:]
            self.work = None
            step.status, step.message = "undo", f"dropped {drop} step(s) of this turn"
            return
        target = action.target.strip()
        try:
            if target and target in graph.nodes:
                graph.checkout(target)
            elif target:
                found = memory.find_node(target)
                if found is None:
                    raise StateError(f"no earlier state matches '{target}'")
                graph.checkout(found)
            else:
                graph.undo(action.steps)
        except StateError as err:
            step.status, step.message = "failed", str(err)
            return
        memory.refer(graph.head)
        step.status = "undo"
        step.node = graph.head
        step.message = f"went back to {graph.head} ({graph.nodes[graph.head].description})"

    # step: localise → decompose → edit → compose → critique, with retries ----------
    def _run_step(self, step: StepResult, action: Action) -> list[StoredLayer] | None:
        image = self._image()
        region = self._localise(action, image)
        step.region = region.source
        best = self._attempts(step, action, image, region)
        if best is None:
            step.status = "failed"
            step.message = "; ".join(a.error for a in step.attempts if a.error) or "failed"
            return None
        step.chosen, step.score = best.attempt.index, best.attempt.score
        if best.attempt.score < self.s.min_score:
            step.status = "rolled_back"
            step.message = (f"rolled back: the best of {len(step.attempts)} attempt(s) "
                            f"scored {best.attempt.score:.1f}/10 — "
                            + ("; ".join(best.attempt.fix) or "not good enough"))
            return None
        x0, y0 = best.layer.bbox[:2]
        stored = diff_layer(best.layer.patch, best.composed, offset=(x0, y0))
        if stored is None:
            step.status, step.message = "unchanged", "the edit changed no pixel"
            return None
        if action.region.type is RegionType.phrase:
            self.s.regions.put(action.region.phrase or action.target, best.layer)
        step.status, step.bbox = "applied", list(stored.bbox)
        step.message = f"score {best.attempt.score:.1f}/10 after {len(step.attempts)} " \
                       f"attempt{'s' if len(step.attempts) > 1 else ''}"
        return split_layer(stored)

    def _localise(self, action: Action, image: np.ndarray) -> _Region:
        height, width = image.shape[:2]
        kind = action.region.type
        if kind is RegionType.mask:
            return _Region(self.mask, "brush mask")
        if kind is RegionType.image:
            return _Region(np.ones((height, width), bool), "whole image")
        if kind is RegionType.box:
            x0, y0, x1, y1 = action.region.box
            mask = np.zeros((height, width), bool)
            mask[max(0, y0):min(height, y1), max(0, x0):min(width, x1)] = True
            if not mask.any():
                raise _NeedsMask(f"the box {action.region.box} lies outside the "
                                 f"{width}x{height} image. Nothing was changed.")
            return _Region(mask, "box")
        return self._locate_phrase(action, image)

    def _locate_phrase(self, action: Action, image: np.ndarray) -> _Region:
        from pipelines.grounding import Hint

        phrase = action.region.phrase or action.target
        hint = Hint(mask=self.mask) if self.mask is not None else None
        found = self.s.localizer.locate(image, phrase, hint)
        masks = [m.mask for m in found.masks if np.asarray(m.mask).any()]
        known = self.s.regions.get(phrase, image.shape[:2])
        if found.status == "resolved" and masks and (known is None
                                                     or _overlap(masks[0], known) >= 0.3):
            return _Region(masks[0], f"found '{phrase}'", masks[1:])
        if known is not None:
            # the same words as an earlier step: the same object, even if that step
            # changed how it looks ("make the red circle blue" … "make it brighter")
            return _Region(known, f"'{phrase}' as located earlier", masks)
        if self.mask is not None:
            return _Region(self.mask, "brush mask")
        why = found.reason or ("several candidates match" if found.status == "ambiguous"
                               else "it was not found")
        raise _NeedsMask(f"I could not tell where '{phrase}' is ({why}). Paint it with the "
                         "brush and send the instruction again. Nothing was changed.")

    def _attempts(self, step: StepResult, action: Action, image: np.ndarray,
                  region: _Region) -> _Best | None:
        from pipelines.editors.base import EditError
        from pipelines.editors.operations import OperationError

        params = dict(action.params)
        editor = self.s.pick_editor(action.to_request(seed=self.s.seed))
        tried = {_name(editor)}
        feather: int | None = None
        best: _Best | None = None
        layer = decompose(image, region.mask, context=_context(action, editor, region.mask))
        for i in range(self.s.max_attempts):
            t = time.perf_counter()
            attempt = Attempt(i + 1, _name(editor), _plain(params), region.source)
            try:
                request = action.to_request(seed=self.s.seed + i, params=params)
                band = default_feather(layer) if feather is None else feather
                edited = editor.edit(layer.patch, layer.mask, request, margin=band)
                composed = _compose_patch(layer, edited, band)
                critique = self.s.critic.critique(layer.patch, composed, action, layer.mask)
                attempt.score = float(critique.score)
                attempt.keep, attempt.fix = list(critique.keep), list(critique.fix)
            except (EditError, OperationError, ValueError) as err:
                attempt.error, critique, composed = str(err), None, None
            attempt.seconds = time.perf_counter() - t
            step.attempts.append(attempt)
            self.s.memory.record_attempt(ToolContext(step.description, attempt.editor,
                                                     attempt.params, "; ".join(attempt.fix),
                                                     attempt.score, attempt.fix))
            if composed is not None and (best is None or attempt.score > best.attempt.score):
                best = _Best(attempt, composed, layer)
            if composed is not None and attempt.score >= self.s.accept_score:
                break
            # reflect: pick what to change for the next attempt
            change = self._next_try(action, params, critique, region, tried)
            if change is None:
                break
            what, value = change
            if what == "params":
                params = value
            elif what == "region":
                layer = decompose(image, value, context=_context(action, editor, value))
                region.source = f"{region.source} (candidate {i + 2})"
            elif what == "editor":
                editor = value
                tried.add(_name(editor))
            elif what == "feather":
                feather = value
        return best

    def _next_try(self, action: Action, params: dict[str, Any], critique: Any,
                  region: _Region, tried: set[str]) -> tuple[str, Any] | None:
        from pipelines.editors.operations import OperationError, get_operation

        if critique is not None and getattr(critique, "retry_params", None):
            merged = dict(params) | dict(critique.retry_params)
            try:
                clean = get_operation(action.operation).validate(
                    {k: v for k, v in merged.items() if not hasattr(v, "shape")})
                clean.update({k: v for k, v in merged.items() if hasattr(v, "shape")})
            except OperationError:
                clean = None
            if clean is not None and _plain(clean) != _plain(params):
                return "params", clean
        fix_text = " ".join(getattr(critique, "fix", []) or []).lower()
        if region.alternatives and any(w in fix_text for w in ("region", "mask", "target",
                                                               "locali", "outside")):
            return "region", region.alternatives.pop(0)
        others = self.s._other_editors(action.to_request(seed=self.s.seed), tried)
        if others:
            return "editor", others[0]
        if "seam" in fix_text or "edge" in fix_text:
            return "feather", 24
        return None

    # 4. commit ---------------------------------------------------------------------
    def _commit(self, t0: float) -> TurnResult:
        s = self.s
        t = time.perf_counter()
        nodes: list[str] = []
        parent = s.graph.head
        for step, action, layers in self.staged:
            act = _action_dict(action)
            node = s.graph.add(parent, act, action.describe(), layers,
                               meta={"score": step.score, "turn": s.turns + 1,
                                     "editor": step.attempts[step.chosen - 1].editor
                                     if step.chosen else ""})
            step.node, parent = node.id, node.id
            nodes.append(node.id)
            s._remember_node(node, act)
            s._save()
        if self.work is not None and nodes and self.applied == len(self.staged):
            s.graph.cache.put(nodes[-1], self.work)
        applied = [st for st, _, _ in self.staged]
        moved = s.graph.head != self.start_head
        ok = bool(applied) or (moved and all(st.status in ("undo", "skipped")
                                             for st in self.steps))
        s.turns += 1
        s.memory.fold_turn(self.instruction, targets=[a.target for _, a, _ in self.staged],
                           operations=[a.operation for _, a, _ in self.staged],
                           values=_merged_values(a for _, a, _ in self.staged),
                           states=nodes or [s.graph.head],
                           outcome=_outcome(self.steps, applied, moved))
        s.memory.head = s.graph.head
        s._save()
        self.timings["save"] = time.perf_counter() - t
        return self._result(ok, _summary(self.steps, moved and not applied, s.graph), t0,
                            nodes, changed=moved)

    def _result(self, ok: bool, message: str, t0: float, nodes: list[str] | None = None,
                changed: bool = False) -> TurnResult:
        self.timings["total"] = time.perf_counter() - t0
        _release_memory()
        self.progress(1.0, "done")
        return TurnResult(self.instruction, ok, changed, message,
                          getattr(self, "plan_info", {}), self.steps, self.s.graph.head,
                          nodes or [], {k: round(v, 4) for k, v in self.timings.items()})


# --------------------------------------------------------------------------- helpers


def _release_memory() -> None:
    """Hand freed heap pages back to the OS after a turn (glibc only; a no-op elsewhere).

    An edit allocates and frees many mid-sized float arrays; without this the freed heap
    stays in the process and a long session's resident memory creeps up.
    """
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL("libc.so.6") if sys.platform.startswith("linux") else False
        except OSError:
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC: Any = None


def _no_progress(fraction: float, text: str) -> None:
    log.debug("turn %.0f%% %s", 100 * fraction, text)


def _name(obj: Any) -> str:
    return str(getattr(obj, "name", "") or type(obj).__name__)


def _is_available(status: Any) -> bool:
    if isinstance(status, bool):
        return status
    if isinstance(status, dict):
        return bool(status.get("available", status.get("ok", False)))
    text = str(status).lower()
    return text in ("ok", "ready", "available", "loaded", "live", "true")


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """JSON-able params (arrays shown by their shape)."""
    return {k: (f"<image {v.shape[1]}x{v.shape[0]}>" if hasattr(v, "shape") else v)
            for k, v in params.items()}


def _action_dict(action: Action | dict[str, Any] | None) -> dict[str, Any] | None:
    if action is None:
        return None
    if isinstance(action, Action):
        data = action.model_dump(mode="python")
        data["params"] = _plain(action.params)
        return json.loads(json.dumps(data, default=str))
    if isinstance(action, dict):
        return json.loads(json.dumps(action, default=str))
    raise SessionError(f"an action must be an Action or a dict, got {type(action).__name__}")


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two masks."""
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 0.0


def _context(action: Action, editor: Any, mask: np.ndarray) -> float | None:
    """Crop context for ``decompose``: DLEBench's λ(s) (None) where the editor can use the
    surroundings; for per-pixel operations at native size just the feather band plus a
    margin, so big targets do not drag 2.5× their area through the editor."""
    if action.operation not in POINTWISE_OPS or getattr(editor, "working_size", None):
        return None
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    short = max(1, min(rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1))
    feather = min(24, max(2, round(0.02 * short)))
    return (2 * feather + 8) / short


def _compose_patch(layer: Layer, edited: np.ndarray, feather: int) -> np.ndarray:
    """Compose an edited patch back into the layer's own pixels (native resolution).

    A whole-frame edit at the frame's size is taken as is: there is no edge to feather
    (a feather would only fade the edit out along the image border).
    """
    height, width = layer.patch.shape[:2]
    if edited.shape == layer.patch.shape and layer.mask.all():
        return edited
    local = Layer((0, 0, width, height), layer.patch, layer.mask)
    return compose(layer.patch, local, edited, feather=feather)


def _dependency_order(actions: list[Action]) -> list[Action]:
    """Stable topological order: an action comes after every action it depends on."""
    by_id = {a.id: a for a in actions}
    done: set[str] = set()
    out: list[Action] = []

    def visit(action: Action, stack: tuple[str, ...]) -> None:
        if action.id in done or action.id in stack:
            return
        for dep in action.depends_on:
            if dep in by_id:
                visit(by_id[dep], stack + (action.id,))
        done.add(action.id)
        out.append(action)

    for action in actions:
        visit(action, ())
    return out


def _merged_values(actions: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for action in actions:
        out.update({k: v for k, v in action.params.items() if not hasattr(v, "shape")})
    return out


def _outcome(steps: list[StepResult], applied: list[StepResult], moved: bool) -> str:
    if applied and len(applied) == sum(1 for s in steps if s.status != "undo"):
        return "done"
    if applied:
        return "partial"
    return "undo" if moved else "nothing"


def _summary(steps: list[StepResult], navigated: bool, graph: StateGraph) -> str:
    parts = []
    for step in steps:
        if step.status == "applied":
            parts.append(f"{step.description}: {step.message}")
        elif step.status == "undo":
            parts.append(step.message)
        else:
            parts.append(f"{step.description}: {step.status.replace('_', ' ')} — {step.message}")
    if not any(s.status in ("applied", "undo") for s in steps):
        parts.append("Nothing was changed.")
    elif navigated:
        parts.append(f"Now at {graph.head}.")
    return " ".join(p if p.endswith(".") else p + "." for p in parts)


def _check_instruction(instruction: Any) -> str:
    if not isinstance(instruction, str):
        raise SessionError("the instruction must be text")
    text = instruction.replace("\x00", "").strip()
    if not text:
        raise SessionError("the instruction is empty: say what to change")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise SessionError(f"the instruction is too long ({len(text)} characters, "
                           f"max {MAX_INSTRUCTION_CHARS})")
    return text


def _check_image_like(image: np.ndarray, base: np.ndarray) -> np.ndarray:
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3:
        raise SessionError(f"the image must be uint8 HWC, got {image.dtype} {image.shape}")
    if image.shape[:2] != base.shape[:2]:
        raise SessionError(f"the image is {image.shape[1]}x{image.shape[0]} but the session "
                           f"is {base.shape[1]}x{base.shape[0]}")
    if image.shape[2] != base.shape[2]:
        if base.shape[2] == 4 and image.shape[2] == 3:
            image = np.dstack([image, base[..., 3]])
        elif base.shape[2] == 3 and image.shape[2] == 4:
            image = image[..., :3]
        else:
            raise SessionError(f"the image has {image.shape[2]} channels, the session "
                               f"{base.shape[2]}")
    return image


def _source_bytes(src: Any) -> tuple[bytes | None, str | None]:
    """The uploaded file's own bytes (kept as the root) and its name, when there are any."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src), None
    if isinstance(src, (str, os.PathLike)):
        path = Path(src)
        if path.is_file():
            return path.read_bytes(), path.name
        return None, None
    if hasattr(src, "read") and not hasattr(src, "shape"):
        name = getattr(src, "name", None)
        data = src.read()
        return (bytes(data) if isinstance(data, (bytes, bytearray)) else None,
                Path(name).name if isinstance(name, str) else None)
    return None, None


def _encode_original(loaded: Any) -> bytes:
    from pipelines.images import save_image

    return save_image(loaded.pixels, None, like=loaded, format="PNG")


def _default_folder(backends: dict[str, Any]) -> Path:
    settings = backends.get("settings")
    if settings is None:
        from pipelines.config import get_settings

        settings = get_settings()
    return Path(settings.sessions_dir) / (time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6])


def _check_version(data: dict[str, Any]) -> None:
    if data.get("format") != SESSION_FORMAT:
        raise SessionError("this is not a Loupe session file")
    version = data.get("version")
    if version != SESSION_VERSION:
        raise SessionError(f"unknown session version {version!r}: this Loupe reads version "
                           f"{SESSION_VERSION}")


def _archive_limit(max_bytes: int | None) -> int:
    if max_bytes is not None:
        return int(max_bytes)
    env = os.environ.get("LOUPE_MAX_ARCHIVE_MB", "").strip()
    return int(float(env) * 1024 * 1024) if env else DEFAULT_MAX_ARCHIVE_BYTES


def _safe_member(name: str) -> PurePosixPath:
    """The entry's relative path, or a ``SessionError`` if it would escape the folder."""
    path = PurePosixPath(name.replace("\\", "/"))
    if (not name or path.is_absolute() or ".." in path.parts or ":" in name
            or name.startswith(("/", "\\"))):
        raise SessionError(f"the archive entry {name!r} would escape the session folder; "
                           "the archive is rejected")
    return path


def _unpack(zip_path: Path, target: Path, limit: int) -> None:
    if not zip_path.is_file():
        raise SessionError(f"no archive at {zip_path.name}")
    if zip_path.stat().st_size > limit:
        raise SessionError(f"the archive is {zip_path.stat().st_size / 1e6:.1f} MB, over the "
                           f"{limit / 1e6:.1f} MB limit")
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as err:
        raise SessionError(f"{zip_path.name} is not a valid zip archive ({err})") from None
    with zf:
        infos = zf.infolist()
        for info in infos:
            _safe_member(info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SessionError(f"the archive entry {info.filename!r} is a link; "
                                   "the archive is rejected")
        if sum(i.file_size for i in infos) > limit:
            raise SessionError(f"the archive unpacks to more than the {limit / 1e6:.1f} MB "
                               "limit")
        names = {i.filename: i for i in infos}
        if SESSION_FILE not in names:
            raise SessionError("the archive holds no session.json: not a Loupe session")
        data = _read_json_member(zf, names[SESSION_FILE], limit)
        _check_version(data)
        wanted = _wanted_members(data)
        missing = sorted(w for w in wanted if w not in names)
        if missing:
            raise SessionError(f"the archive lacks {len(missing)} file(s), e.g. {missing[0]}")
        if target.exists() and any(target.iterdir()):
            raise SessionError(f"the folder {target.name} is not empty")
        _extract(zf, [names[w] for w in sorted(wanted)], target, limit)


def _read_json_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> dict:
    try:
        raw = _read_capped(zf, info, min(limit, 256 * 1024 * 1024))
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, zipfile.BadZipFile) as err:
        raise SessionError(f"the archive's session.json is damaged ({err})") from None
    if not isinstance(data, dict):
        raise SessionError("the archive's session.json is not a Loupe session")
    return data


def _wanted_members(data: dict[str, Any]) -> set[str]:
    root = str(data.get("root_file", ""))
    if not root or PurePosixPath(root).name != root:
        raise SessionError(f"the archive names a bad original image {root!r}")
    wanted = {SESSION_FILE, root}
    try:
        for node in data["graph"]["nodes"]:
            for layer in node.get("layers", []):
                for key in ("patch", "mask"):
                    name = str(layer[key])
                    path = _safe_member(name)
                    if path.parts[0] != LAYER_DIR:
                        raise SessionError(f"the archive's layer {name!r} is outside "
                                           f"{LAYER_DIR}/")
                    wanted.add(name)
        for item in data.get("regions") or []:
            name = str(item["mask"])
            if _safe_member(name).parts[0] != LAYER_DIR:
                raise SessionError(f"the archive's region mask {name!r} is outside "
                                   f"{LAYER_DIR}/")
            wanted.add(name)
    except (KeyError, TypeError) as err:
        raise SessionError(f"the archive's session graph is damaged ({err})") from None
    return wanted


def _read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    chunks, total = [], 0
    with zf.open(info) as fh:
        while chunk := fh.read(1 << 20):
            total += len(chunk)
            if total > cap:
                raise SessionError(f"the archive entry {info.filename!r} unpacks past the "
                                   "size limit")
            chunks.append(chunk)
    return b"".join(chunks)


def _extract(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], target: Path,
             limit: int) -> None:
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    total = 0
    for info in infos:
        dest = (target / _safe_member(info.filename)).resolve()
        if root not in dest.parents:
            raise SessionError(f"the archive entry {info.filename!r} would escape the "
                               "session folder")
        data = _read_capped(zf, info, limit - total)
        total += len(data)
        atomic_write(dest, data)
