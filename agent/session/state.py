"""The state graph: every image state of a session, stored as what changed.

A node is one image state: its parent, the action that made it, a short description and
the layers (bbox + patch + mask of the changed pixels) that turn the parent into it. No
node holds a full copy of the image: rebuilding a node replays the layers from the root,
starting from the nearest ancestor found in a small LRU cache of materialised images
bounded in bytes. Undo, redo and checkout only move the head; editing from a node that
already has children makes a branch; nothing is ever deleted.

The layers are stored by ``agent.session.store``: PNG files written atomically and
loaded lazily, so a long session's memory grows with neither the number of turns nor the
image size times the turns.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent.session.store import (
    DEFAULT_CACHE_BYTES,
    ImageCache,
    StateError,
    StoredLayer,
    check_box,
    check_layer_path,
)
from pipelines.arrays import rgb_array
from pipelines.editors.frame import FrameChange, FrameError, apply_frame
from pipelines.files import BadIdError, check_id

Box = tuple[int, int, int, int]

GRAPH_VERSION = 1
#: Version written when some state changes the frame (crop, rotate…); older Loupes, which
#: read only version 1, then refuse the file instead of misreading it.
FRAME_GRAPH_VERSION = 2
READABLE_GRAPH_VERSIONS = (GRAPH_VERSION, FRAME_GRAPH_VERSION)
#: most states a graph read from a file may hold
MAX_NODES = 100_000
#: longest description kept from a file
MAX_TEXT = 1000


# --------------------------------------------------------------------------- graph


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Node:
    """One image state.

    Attributes:
        id: short id (``n0`` is the root).
        parent: the parent's id, None for the root.
        action: the action that made this state (JSON-able dict), None for the root.
        description: one line for people and for the planner's memory.
        created: ISO-8601 UTC timestamp.
        layers: what changed from the parent, in order.
        meta: small JSON-able extras (score, editor, source of the edit…).
        frame: for a frame edit (crop, rotate, flip, straighten, resize), how this state's
            frame derives from the parent's; its layers then live in the new frame.
    """

    id: str
    parent: str | None
    action: dict[str, Any] | None
    description: str
    created: str = field(default_factory=_now)
    layers: list[StoredLayer] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    frame: FrameChange | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "parent": self.parent, "action": self.action,
               "description": self.description, "created": self.created,
               "layers": [layer.to_json() for layer in self.layers], "meta": self.meta}
        if self.frame is not None:
            out["frame"] = self.frame.to_json()
        return out

    @property
    def changed_pixels_box(self) -> Box | None:
        """Union box of this node's layers (None for the root / an empty node)."""
        if not self.layers:
            return None
        boxes = np.array([layer.bbox for layer in self.layers])
        return (int(boxes[:, 0].min()), int(boxes[:, 1].min()), int(boxes[:, 2].max()),
                int(boxes[:, 3].max()))


class StateGraph:
    """Image states of one session and the head (the state the user sees).

    Args:
        root_image: the original pixels (``uint8`` HWC); kept read-only.
        cache_bytes: byte budget of the materialised-image cache.
        root_description: the root node's description.
    """

    def __init__(self, root_image: np.ndarray, *, cache_bytes: int = DEFAULT_CACHE_BYTES,
                 root_description: str = "original image") -> None:
        rgb_array(root_image, "root image", alpha=True)
        self._root_pixels = np.ascontiguousarray(root_image)
        self._root_pixels.setflags(write=False)
        self.root = "n0"
        self.nodes: dict[str, Node] = {"n0": Node("n0", None, None, root_description)}
        self.head = self.root
        self._children: dict[str, list[str]] = {"n0": []}
        self._redo: dict[str, str] = {}
        self._counter = 1
        self.cache = ImageCache(cache_bytes)

    # ---- shape -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """``(height, width, channels)`` of the head's frame."""
        width, height = self.size_at(self.head)
        return height, width, self._root_pixels.shape[2]

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the head's frame (frame edits change it)."""
        return self.size_at(self.head)

    @property
    def root_size(self) -> tuple[int, int]:
        """``(width, height)`` of the original."""
        return self._root_pixels.shape[1], self._root_pixels.shape[0]

    def node(self, node_id: str) -> Node:
        """The node with this id, or a ``StateError`` naming the known ones."""
        try:
            return self.nodes[node_id]
        except KeyError:
            known = ", ".join(list(self.nodes)[-8:])
            raise StateError(f"no state {node_id!r} in this session (latest: {known})") \
                from None

    def children(self, node_id: str) -> list[str]:
        """Ids of the direct children, oldest first."""
        self.node(node_id)
        return list(self._children.get(node_id, []))

    def path(self, node_id: str | None = None) -> list[str]:
        """Ids from the root to ``node_id`` (the head by default), both included."""
        current: str | None = self.head if node_id is None else self.node(node_id).id
        out = []
        while current is not None:
            out.append(current)
            if len(out) > len(self.nodes):  # from_json refuses cycles; never loop anyway
                raise StateError("the state graph has a cycle")
            current = self.nodes[current].parent
        return out[::-1]

    def leaves(self) -> list[str]:
        return [nid for nid, kids in self._children.items() if not kids]

    # ---- edits -------------------------------------------------------------------
    def add(self, parent: str | None, action: dict[str, Any] | None, description: str,
            edits: Iterable[StoredLayer], *, meta: dict[str, Any] | None = None) -> Node:
        """Add a state made from ``parent`` (the head by default) and move the head to it.

        Args:
            parent: the state edited; a node with children gets a new branch.
            action: the action that made it (JSON-able dict) or None.
            description: one line for people and the planner.
            edits: layers of the changed pixels, applied in order.
            meta: small JSON-able extras stored with the node.

        Returns:
            The new node (now the head).
        """
        parent = self.head if parent is None else self.node(parent).id
        layers = list(edits)
        width, height = self.size_at(parent)
        for layer in layers:
            check_box(layer.bbox, width, height)
        node_id = self._new_id()
        node = Node(node_id, parent, action, description.strip() or "edit", layers=layers,
                    meta=dict(meta or {}))
        self.nodes[node_id] = node
        self._children.setdefault(parent, []).append(node_id)
        self._children[node_id] = []
        self._redo[parent] = node_id
        self.head = node_id
        return node

    # ---- frames: states whose frame differs from their parent's ---------------------
    def size_at(self, node_id: str | None = None) -> tuple[int, int]:
        """``(width, height)`` of a state's frame: the latest frame edit on its path, else
        the original's."""
        current: str | None = self.head if node_id is None else self.node(node_id).id
        while current is not None:
            node = self.nodes[current]
            if node.frame is not None:
                return node.frame.size
            current = node.parent
        return self.root_size

    def frame_key(self, node_id: str | None = None) -> str:
        """Id of the state that set this state's frame (the root when none did): two
        states with the same key share pixel coordinates."""
        current: str | None = self.head if node_id is None else self.node(node_id).id
        while current is not None:
            node = self.nodes[current]
            if node.frame is not None or node.parent is None:
                return node.id
            current = node.parent
        return self.root

    def add_frame(self, parent: str | None, action: dict[str, Any] | None, description: str,
                  frame: FrameChange, edits: Iterable[StoredLayer], *,
                  meta: dict[str, Any] | None = None) -> Node:
        """Add a state whose frame differs from ``parent``'s (crop, rotate, flip,
        straighten, resize) and move the head to it.

        Args:
            parent: the state edited (the head by default).
            action: the action that made it.
            description: one line for people and the planner.
            frame: how the new frame derives from the parent's (``apply_frame`` replays it).
            edits: layers in the new frame (for a ``canvas`` frame: all its pixels).
            meta: small JSON-able extras.

        Returns:
            The new node (now the head).
        """
        layers = list(edits)
        for layer in layers:
            check_box(layer.bbox, *frame.size)
        node = self.add(parent, action, description, [], meta=meta)
        node.frame, node.layers = frame, layers
        return node

    def _new_id(self) -> str:
        while f"n{self._counter}" in self.nodes:
            self._counter += 1
        node_id = f"n{self._counter}"
        self._counter += 1
        return node_id

    # ---- navigation -------------------------------------------------------------
    def undo(self, steps: int = 1) -> str:
        """Move the head ``steps`` states towards the root; returns the new head."""
        if steps < 1:
            raise StateError("undo needs at least one step")
        if self.head == self.root:
            raise StateError("nothing to undo: this is the original image")
        for _ in range(steps):
            parent = self.nodes[self.head].parent
            if parent is None:
                break
            self._redo[parent] = self.head
            self.head = parent
        return self.head

    def redo(self) -> str:
        """Move the head to the child it came from (else the latest child)."""
        kids = self._children.get(self.head, [])
        if not kids:
            raise StateError("nothing to redo: this state has no later edits")
        target = self._redo.get(self.head)
        self.head = target if target in kids else kids[-1]
        return self.head

    def checkout(self, node_id: str) -> str:
        """Move the head to any state."""
        self.head = self.node(node_id).id
        return self.head

    # ---- pixels -----------------------------------------------------------------
    def image(self, node_id: str | None = None) -> np.ndarray:
        """The pixels of a state (the head by default), read-only; copy before editing.

        Replays layers from the nearest cached ancestor (or the root).
        """
        chain = self.path(node_id)
        target = chain[-1]
        if target == self.root:
            return self._root_pixels
        cached = self.cache.get(target)
        if cached is not None:
            return cached
        start = 0
        for i in range(len(chain) - 2, 0, -1):
            if chain[i] in self.cache:
                start = i
                break
        image = self._working_copy(chain[start] if start else None)
        for nid in chain[start + 1:]:
            node = self.nodes[nid]
            if node.frame is not None:
                image = apply_frame(image, node.frame)
            for layer in node.layers:
                layer.apply(image)
        self.cache.put(target, image)
        return image

    def _working_copy(self, cached: str | None) -> np.ndarray:
        """A writable copy of a cached state (or the root) to replay layers onto.

        When the cache has no room for a second frame and nobody outside the cache holds
        the cached array (not even a view), its buffer is taken over instead of copied.
        """
        if cached is None:
            return self._root_pixels.copy()
        if not self.cache.room_for(self.cache.get(cached).nbytes) \
                and self.cache.only_holder(cached):
            image = self.cache.take(cached)
            image.setflags(write=True)
            return image
        return self.cache.get(cached).copy()

    # ---- JSON -------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The graph as a JSON-able dict (layers by file name; persist them first)."""
        framed = any(n.frame is not None for n in self.nodes.values())
        return {"version": FRAME_GRAPH_VERSION if framed else GRAPH_VERSION,
                "root": self.root, "head": self.head, "width": self.root_size[0],
                "height": self.root_size[1], "channels": self._root_pixels.shape[2],
                "counter": self._counter, "redo": dict(self._redo),
                "nodes": [n.to_json() for n in self.nodes.values()]}

    def summary(self) -> dict[str, Any]:
        """A small topology for UIs: nodes (id, parent, description, created), head."""
        on_path = set(self.path())
        return {"root": self.root, "head": self.head, "nodes": [
            {"id": n.id, "parent": n.parent, "description": n.description,
             "created": n.created, "children": self._children.get(n.id, []),
             "on_path": n.id in on_path} for n in self.nodes.values()]}

    @classmethod
    def from_json(cls, data: dict[str, Any], root_image: np.ndarray, folder: Path, *,
                  cache_bytes: int = DEFAULT_CACHE_BYTES) -> StateGraph:
        """Rebuild a graph saved by ``to_json`` (layers are read lazily from ``folder``).

        The data is checked first (``check_graph``): a graph from a file is a stranger's.
        """
        check_graph(data)
        version = data["version"]
        width, height = int(data["width"]), int(data["height"])
        if root_image.shape[:2] != (height, width):
            raise StateError(f"the stored original is {root_image.shape[1]}x"
                             f"{root_image.shape[0]}, the graph expects {width}x{height}")
        graph = cls(root_image, cache_bytes=cache_bytes)
        graph.nodes.clear()
        for item in data["nodes"]:
            action, meta = item.get("action"), item.get("meta")
            graph.nodes[item["id"]] = Node(
                item["id"], item.get("parent"), action if isinstance(action, dict) else None,
                str(item.get("description", ""))[:MAX_TEXT], str(item.get("created", ""))[:40],
                [StoredLayer.from_json(x, folder) for x in item.get("layers") or []],
                meta if isinstance(meta, dict) else {}, frame_from_json(item, version))
        graph._children = {node_id: [] for node_id in graph.nodes}
        for node in graph.nodes.values():
            if node.parent is not None:
                graph._children[node.parent].append(node.id)
        graph.root = data.get("root", "n0")
        graph.head = data.get("head", graph.root)
        counter = data.get("counter", len(graph.nodes))
        graph._counter = counter if isinstance(counter, int) and 0 <= counter < 10 ** 9 else 1
        redo = data.get("redo") if isinstance(data.get("redo"), dict) else {}
        graph._redo = {k: v for k, v in redo.items() if k in graph.nodes and v in graph.nodes}
        return graph

    def persist_layers(self, folder: Path) -> None:
        """Write every in-memory layer to ``folder/layers`` and drop the pixel copies."""
        jobs = [(layer, f"{node.id}-{i}") for node in self.nodes.values()
                for i, layer in enumerate(node.layers)
                if layer.in_memory or (layer.folder is not None
                                       and Path(layer.folder) != Path(folder))]
        if len(jobs) == 1:
            jobs[0][0].persist(Path(folder), jobs[0][1])
        elif jobs:  # OpenCV's PNG encoder releases the GIL: bands encode in parallel
            with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 2)) as pool:
                list(pool.map(lambda job: job[0].persist(Path(folder), job[1]), jobs))

    def stored_bytes(self) -> int:
        """Bytes of the layer pixels held in memory (0 once persisted)."""
        return sum(layer.patch.nbytes + layer.mask.nbytes for node in self.nodes.values()
                   for layer in node.layers if layer.in_memory)


def check_graph(data: Any, *, max_pixels: int | None = None) -> None:
    """Raise a ``StateError`` unless ``data`` is a graph ``from_json`` may trust.

    In one linear pass: the version; a positive size (within ``max_pixels`` when given);
    at most ``MAX_NODES`` states, each with a well-formed, unique id (``check_id``), a
    well-formed frame record (version 2 only) and layer files named ``layers/<id>.png``;
    the parent links form one tree rooted at ``root`` (one root, no orphan, no cycle); the
    head is a state; every layer box lies inside its own state's frame (the original's
    size, or the latest crop/rotate/resize on its path), and no frame exceeds the limit.

    Args:
        data: the ``graph`` object of a session file.
        max_pixels: the largest image allowed (None: not checked here).
    """
    if not isinstance(data, dict):
        raise StateError("the session graph is not an object")
    version = data.get("version")
    if version not in READABLE_GRAPH_VERSIONS:
        raise StateError(f"unknown session graph version {str(version)[:20]} (this Loupe "
                         f"reads versions {', '.join(map(str, READABLE_GRAPH_VERSIONS))})")
    width, height = data.get("width"), data.get("height")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
               for v in (width, height)):
        raise StateError("the session graph has no valid image size")
    _check_pixels(width, height, max_pixels)
    nodes = data.get("nodes")
    if not isinstance(nodes, list) or not 1 <= len(nodes) <= MAX_NODES:
        raise StateError(f"the session graph must hold 1 to {MAX_NODES} states")
    try:
        root = check_id(data.get("root", "n0"), "root state id")
        records = _records(nodes, version)
        head = check_id(data.get("head", root), "head state id")
    except BadIdError as err:
        raise StateError(str(err)) from None
    roots = [nid for nid, rec in records.items() if rec.parent is None]
    if roots != [root]:
        raise StateError(f"the session graph must have exactly one first state, {root!r} "
                         f"(found {len(roots)} state(s) without a parent)")
    children: dict[str, list[str]] = {nid: [] for nid in records}
    for nid, rec in records.items():
        if rec.parent is not None:
            if rec.parent not in children:
                raise StateError(f"state {nid} names an unknown parent {rec.parent}")
            children[rec.parent].append(nid)
    sizes = {root: _frame_size(records[root], (width, height), max_pixels)}
    todo = [root]
    while todo:
        parent = todo.pop()
        for kid in children[parent]:
            sizes[kid] = _frame_size(records[kid], sizes[parent], max_pixels)
            todo.append(kid)
    if len(sizes) != len(records):
        lost = next(n for n in records if n not in sizes)
        raise StateError(f"state {lost} is not connected to {root}: the parent links "
                         "form a cycle")
    for nid, rec in records.items():
        for box in rec.boxes:
            check_box(box, *sizes[nid])
    if head not in records:
        raise StateError(f"the session's current state {head!r} is not in its graph")


@dataclass
class _Record:
    """What ``check_graph`` keeps of one stored state."""

    parent: str | None
    frame: FrameChange | None
    boxes: list[Any]


def _check_pixels(width: int, height: int, max_pixels: int | None) -> None:
    if max_pixels is not None and width * height > max_pixels:
        raise StateError(f"the session's image is {width}x{height} "
                         f"({width * height / 1e6:.1f} MP), more than the "
                         f"{max_pixels / 1e6:g}-MP limit (LOUPE_MAX_PIXELS)")


def _frame_size(rec: _Record, inherited: tuple[int, int],
                max_pixels: int | None) -> tuple[int, int]:
    if rec.frame is None:
        return inherited
    _check_pixels(*rec.frame.size, max_pixels)
    return rec.frame.size


def _records(nodes: list[Any], version: Any) -> dict[str, _Record]:
    """``{id: record}`` of well-formed nodes (ids unique, layer files and frames checked)."""
    records: dict[str, _Record] = {}
    for item in nodes:
        if not isinstance(item, dict):
            raise StateError("a state of the session graph is not an object")
        nid = check_id(item.get("id"), "state id")
        parent = item.get("parent")
        if parent is not None:
            check_id(parent, "parent state id")
        if nid in records:
            raise StateError(f"two states share the id {nid}")
        layers = item.get("layers") or []
        if not isinstance(layers, list):
            raise StateError(f"state {nid} has malformed layers")
        boxes = []
        for layer in layers:
            if not isinstance(layer, dict):
                raise StateError(f"state {nid} has a malformed layer")
            check_layer_path(layer.get("patch"))
            check_layer_path(layer.get("mask"))
            boxes.append(layer.get("bbox"))
        records[nid] = _Record(parent, frame_from_json(item, version), boxes)
    return records


def frame_from_json(item: dict[str, Any], version: Any) -> FrameChange | None:
    """A stored node's frame record (version 2 files), checked; None when it has none."""
    data = item.get("frame")
    if data is None:
        return None
    if version == GRAPH_VERSION:
        raise StateError(f"state {str(item.get('id'))[:40]!r} has a frame edit, which a "
                         "version-1 session cannot hold")
    try:
        return FrameChange.from_json(data)
    except FrameError as err:
        raise StateError(f"state {str(item.get('id'))[:40]!r}: {str(err)[:200]}") from None


def graph_from_file(path: Path) -> dict[str, Any]:
    """Read a graph JSON file with a clear error for a corrupt one."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise StateError(f"cannot read the session file {Path(path).name}: {err}") from None
