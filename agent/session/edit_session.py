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

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agent.actions import Action
from agent.brain.critic import Critic
from agent.brain.planner import Plan, Planner
from agent.search.tree_search import tree_search
from agent.session.archive import (
    SESSION_FILE,
    SESSION_FORMAT,
    SESSION_VERSION,
    archive_limit,
    check_version,
    safe_root_name,
    unpack,
    write_archive,
)
from agent.session.context import (
    ACCEPT_SCORE,
    MAX_ATTEMPTS,
    MIN_SCORE,
    Backends,
    EditorPicker,
    TurnContext,
    TurnPolicy,
)
from agent.session.inputs import (
    check_image_like,
    check_instruction,
    encode_original,
    named_file,
    source_bytes,
)
from agent.session.memory import ImageContext, Memory
from agent.session.references import References
from agent.session.regions import RegionMemory
from agent.session.results import Attempt, StepResult, TurnResult, action_dict, jsonable
from agent.session.selection import SelectionMixin
from agent.session.state import Node, StateGraph, check_graph, graph_from_file
from agent.session.store import (
    DEFAULT_CACHE_BYTES,
    SessionError,
    StateError,
    diff_layer,
    split_layer,
)
from agent.session.turn import TurnRunner
from pipelines.config import Settings, get_settings
from pipelines.editors.base import Editor, EditRequest
from pipelines.files import atomic_write
from pipelines.images import ImageLoadError, downscale, load_image, save_image
from pipelines.localizers import Localizer
from pipelines.masks import MaskError, fit_mask
from pipelines.progress import ProgressFn, no_progress

log = logging.getLogger(__name__)

__all__ = ["EditSession", "SessionError", "TurnResult", "StepResult", "Attempt",
           "SESSION_FILE", "ACCEPT_SCORE", "MIN_SCORE", "MAX_ATTEMPTS", "check_instruction"]

_ROOT_SUFFIX = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "TIFF": ".tif", "BMP": ".bmp",
                "GIF": ".gif"}

# --------------------------------------------------------------------------- session


class EditSession(SelectionMixin):
    """A multi-turn editing session over one image (see the module doc).

    Build one with ``EditSession.create`` or ``EditSession.open``; the backends (planner,
    critic, localiser, editor picker) default to the configured ones and load lazily.
    """

    def __init__(self, folder: Path, graph: StateGraph, memory: Memory, original: Any,
                 root_file: str, *, settings: Settings | None = None,
                 planner: Planner | None = None, critic: Critic | None = None,
                 localizer: Localizer | None = None,
                 editor_picker: EditorPicker | None = None,
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
        self.tools = Backends(settings, planner=planner, critic=critic, localizer=localizer,
                              editor_picker=editor_picker)
        self._lock = threading.RLock()
        self.turns = 0
        self.regions = RegionMemory()
        self.references = References()

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
        raw, name = source_bytes(image_src)
        loaded = load_image(named_file(raw, name) if raw is not None else image_src)
        if name and not loaded.filename:
            loaded.filename = name
        if raw is None:
            raw = encode_original(loaded)
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
        session.save_state()
        log.info("session %s created (%dx%d)", target, *graph.size)
        return session

    @classmethod
    def open(cls, folder: str | os.PathLike, *, cache_bytes: int = DEFAULT_CACHE_BYTES,
             **backends: Any) -> EditSession:
        """Reopen a session folder (after a restart or a crash).

        The folder is read as a stranger's: the graph is checked (``check_graph``) and the
        original's header must match it, within ``LOUPE_MAX_PIXELS``, before any pixel is
        decoded.

        Raises:
            SessionError: no session there, an unknown version, or damaged files.
        """
        folder = Path(folder)
        path = folder / SESSION_FILE
        if not path.is_file():
            raise SessionError(f"no Loupe session in {folder.name or folder}")
        try:
            data = graph_from_file(path)
            if not isinstance(data, dict):
                raise StateError("the session file is not an object")
            check_version(data)
            root_file = safe_root_name(data.get("root_file"))
            limit = get_settings().max_pixels
            graph_data = data.get("graph")
            check_graph(graph_data, max_pixels=limit)
            if not (folder / root_file).is_file():
                raise SessionError(f"the session's original image {root_file!r} is missing")
            declared = graph_data["width"] * graph_data["height"]
            try:
                loaded = load_image((folder / root_file).read_bytes(),
                                    max_pixels=min(limit, declared))
            except ImageLoadError as err:
                raise SessionError(f"the session's original image is damaged: {err}") \
                    from None
            filename = data.get("filename")
            loaded.filename = filename[:255] if isinstance(filename, str) else loaded.filename
            graph = StateGraph.from_json(graph_data, loaded.pixels, folder,
                                         cache_bytes=cache_bytes)
            memory = _memory_from(data.get("memory"), graph)
            session = cls(folder, graph, memory, loaded, root_file, **backends)
            turns = data.get("turns", 0)
            session.turns = turns if isinstance(turns, int) and turns >= 0 else 0
            regions = data.get("regions")
            session.regions.load(folder, regions if isinstance(regions, list) else [])
            session.references.load(folder, data.get("references"))
        except SessionError:
            raise
        except (StateError, KeyError, TypeError, ValueError, AttributeError,
                RecursionError) as err:
            raise SessionError(f"the session graph is damaged: {err}") from None
        return session

    def _relocate(self, folder: Path) -> None:
        """The session's files moved to ``folder`` (one rename): follow them."""
        old, self.folder = self.folder, Path(folder)
        for node in self.graph.nodes.values():
            for layer in node.layers:
                if layer.folder is not None and Path(layer.folder) == old:
                    layer.folder = self.folder

    # ---- backends -----------------------------------------------------------------
    @property
    def planner(self) -> Planner:
        return self.tools.planner

    @property
    def critic(self) -> Critic:
        return self.tools.critic

    @property
    def localizer(self) -> Localizer:
        return self.tools.localizer

    def pick_editor(self, request: EditRequest, prefer: str | None = None) -> Editor:
        """The editor for a request (raises ``EditError`` when none can do it)."""
        return self.tools.pick_editor(request, prefer)

    def other_editors(self, request: EditRequest, tried: set[str]) -> list[Editor]:
        """Editors other than ``tried`` that can serve ``request`` (see ``Backends``)."""
        return self.tools.other_editors(request, tried)

    def backends(self) -> dict[str, str]:
        """Which backend serves each role, for an honest status line."""
        return self.tools.names()

    def add_reference(self, src: Any, name: str | None = None) -> dict[str, Any]:
        """Keep a reference photo (checked like any upload); returns its entry."""
        with self._lock:
            entry = self.references.add(self.folder, src, name)
            self.save_state()
            return entry

    def _context(self) -> TurnContext:
        """What the next turn runs with (the runner sees nothing else of the session)."""
        return TurnContext(self.graph, self.memory, self.regions, self.tools,
                           TurnPolicy(self.seed, self.max_attempts, self.accept_score,
                                      self.min_score),
                           self.turns + 1, self.remember_node, self._turn_committed,
                           lambda acts: self.references.prepare(self.folder, acts, self.original))

    def _turn_committed(self) -> None:
        self.turns += 1
        self.save_state()

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
            self.save_state()
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
            image_after = check_image_like(image_after, base)
            layer = diff_layer(base, image_after)
            act = action_dict(action)
            node = self.graph.add(parent, act, description, split_layer(layer) if layer else [],
                                  meta={"source": "commit"})
            self.graph.cache.put(node.id, np.array(image_after, copy=True))
            self.remember_node(node, act)
            self.memory.fold_turn(description, targets=[(act or {}).get("target", "")],
                                  operations=[(act or {}).get("operation", "")],
                                  values=(act or {}).get("params", {}), states=[node.id])
            self.save_state()
            return node

    def remember_node(self, node: Node, act: dict[str, Any] | None) -> None:
        """Add a new state to the memory (its ImageContext) and follow the head."""
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
                search (``agent.search.tree_search``).
            progress: called with ``(fraction, text)`` as the turn advances.

        Returns:
            The ``TurnResult``; on a refusal or a failure nothing changed.

        Raises:
            SessionError: an empty or over-long instruction, or a mask of the wrong size.
        """
        instruction = check_instruction(instruction)
        mask = self._check_mask(mask)
        with self._lock:
            self.pending = None
            if search == "tree":
                return self._tree_turn(instruction, progress)
            if search not in ("none", "", None):
                raise SessionError(f"unknown search {search!r}; use 'none' or 'tree'")
            mask = self._bind_selection(instruction, mask)
            runner = TurnRunner(self._context(), instruction, mask, progress or no_progress)
            result = runner.run()
            self.offer_candidates(instruction, runner.offered)
            return result

    def run_actions(self, actions: list[Action], instruction: str, *,
                    mask: np.ndarray | None = None,
                    progress: ProgressFn | None = None) -> TurnResult:
        """Run given actions as one turn (no planning): a UI's crop box, a button.

        Args:
            actions: validated actions, in order.
            instruction: what the chat and the history show for this turn.
            mask: an optional brush mask.
            progress: called with ``(fraction, text)``.

        Returns:
            The ``TurnResult``, as for ``turn``.
        """
        instruction = check_instruction(instruction)
        mask = self._check_mask(mask)
        plan = Plan(list(actions), True, "; ".join(a.describe() for a in actions))
        with self._lock:
            return TurnRunner(self._context(), instruction, mask, progress or no_progress,
                              plan).run()

    def crop(self, box: Any, aspect: str = "free") -> TurnResult:
        """Crop the current frame to ``box`` (``[x0, y0, x1, y1]`` in its pixels), or to
        the largest box of ``aspect`` inside it; one undoable state.

        Raises:
            SessionError: a malformed box or aspect.
        """
        try:
            x0, y0, x1, y1 = (int(round(float(v))) for v in box)
            region = {"type": "box", "box": [x0, y0, x1, y1]}
            action = Action(kind="adjust", operation="crop", region=region,
                            params={"aspect": aspect}, instruction=f"crop to {list(box)}")
        except (TypeError, ValueError) as err:
            raise SessionError(f"a crop box must be four numbers [x0, y0, x1, y1] inside the "
                               f"photo: {err}") from None
        return self.run_actions([action], f"crop to [{x0}, {y0}, {x1}, {y1}]")

    def _check_mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        """The brush mask at the image's size (see ``pipelines.masks.fit_mask``)."""
        if mask is None:
            return None
        width, height = self.graph.size
        try:
            return fit_mask(mask, (height, width), label="the brush mask")
        except MaskError as err:
            raise SessionError(str(err)) from None

    def _tree_turn(self, instruction: str, progress: ProgressFn | None) -> TurnResult:
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
            steps.append(StepResult(i, action_dict(action) or {},
                                    str(item.get("description") or item.get("thought") or item),
                                    status="applied",
                                    node=item.get("node") or item.get("node_id")))
        satisfied = float(getattr(result, "satisfied", 0.0) or 0.0)
        extra = {"topology": getattr(result, "topology", {}), "satisfied": satisfied}
        self.turns += 1
        self.memory.head = self.graph.head
        self.save_state()
        message = (f"Tree search: {len(nodes)} new state(s), {100 * satisfied:.0f}% of the "
                   "checklist satisfied." if nodes else
                   "Tree search found no change that satisfies the request. Nothing was "
                   "changed.")
        plan = {"actions": [s.action for s in steps], "descriptions": [s.description
                                                                        for s in steps],
                "message": "", "is_edit": True}
        return TurnResult(instruction, bool(nodes), bool(nodes), message, plan, steps,
                          self.graph.head, nodes, {"total": time.perf_counter() - start},
                          jsonable(extra))

    # ---- files --------------------------------------------------------------------
    def save_state(self) -> float:
        """Write layers, then the session file, atomically; returns the seconds spent."""
        start = time.perf_counter()
        self.graph.persist_layers(self.folder)
        data = {"format": SESSION_FORMAT, "version": SESSION_VERSION,
                "root_file": self.root_file, "filename": self.original.filename,
                "turns": self.turns, "graph": self.graph.to_json(),
                "memory": self.memory.to_json(), "regions": self.regions.save(self.folder),
                "references": self.references.save()}
        atomic_write(self.folder / SESSION_FILE, json.dumps(data, indent=1, default=str))
        return time.perf_counter() - start

    def save_image(self, dest: str | os.PathLike | None, format: str | None = None,
                   node_id: str | None = None, long_side: int | None = None) -> Path | bytes:
        """Save a state (the head by default) at its full (native) resolution, in the
        original's format unless told otherwise, with its ICC profile and EXIF.

        Args:
            dest: the file to write, or None for the encoded bytes.
            format: override the original's format.
            node_id: the state (the head by default).
            long_side: resize on export so the long side is at most this many pixels
                (never enlarged); the session keeps its native frame.

        Returns:
            The written path, or the encoded bytes when ``dest`` is None.
        """
        pixels = self.image_at(node_id) if node_id else self.current_image()
        if long_side:
            pixels = downscale(pixels, int(long_side))
        return save_image(np.ascontiguousarray(pixels), dest, like=self.original, format=format)

    def export(self, zip_path: str | os.PathLike) -> Path:
        """Write the whole session (graph, memory, original, layers) to one ``.zip``."""
        with self._lock:
            self.save_state()
            return write_archive(self.folder, [SESSION_FILE, self.root_file,
                                              *self._layer_files()], Path(zip_path))

    def _layer_files(self) -> list[str]:
        files = [f for node in self.graph.nodes.values() for layer in node.layers
                 for f in (layer.patch_file, layer.mask_file)]
        return files + list(self.regions._files.values()) + self.references.files()

    @classmethod
    def import_archive(cls, zip_path: str | os.PathLike, folder: str | os.PathLike | None =
                       None, *, max_bytes: int | None = None, label: str | None = None,
                       **backends: Any) -> EditSession:
        """Unpack an exported session into ``folder`` and open it.

        The files are written to a hidden staging folder, the session is opened there,
        and only then does the folder get its name (one rename): a refusal, or a process
        killed midway, never leaves a half session at ``folder``.

        Args:
            zip_path: the archive.
            folder: the session folder to create (absent or empty); default a new folder
                under the configured sessions directory.
            max_bytes: the archive's size limit (default ``LOUPE_MAX_ARCHIVE_MB``).
            label: the archive's name for messages (default its file name).
            **backends: as for ``create``.

        Raises:
            SessionError: not a zip, too large, an entry escaping the folder, a malformed
                graph, a missing or mismatched file or an unknown version.
        """
        limit = archive_limit(max_bytes)
        target = Path(folder) if folder is not None else _default_folder(backends)
        opened: list[EditSession] = []
        unpack(Path(zip_path), target, limit, label=label,
               finish=lambda stage: opened.append(cls.open(stage, **backends)))
        session = opened[-1]
        session._relocate(target)
        return session

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


def _memory_from(data: Any, graph: StateGraph) -> Memory:
    """The memory saved with a session, keeping only states the graph has; a memory that
    does not read back cleanly (a stranger's file) is rebuilt from the graph instead."""
    try:
        memory = Memory.from_json(data if isinstance(data, dict) else {})
        memory.images = {k: v for k, v in memory.images.items() if k in graph.nodes}
        memory.head = graph.head
        memory.render(4000)
        memory.resolve("it, the same colour, before and after the last change")
        return memory
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError):
        log.warning("the session's memory is damaged; rebuilt from its graph")
    memory = Memory()
    for node in graph.nodes.values():
        memory.add_image(ImageContext(node.id, node.parent, node.description))
    memory.head = graph.head
    return memory


def _default_folder(backends: dict[str, Any]) -> Path:
    settings = backends.get("settings")
    if settings is None:
        settings = get_settings()
    return Path(settings.sessions_dir) / (time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6])
