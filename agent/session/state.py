"""The state graph: every image state of a session, stored as what changed.

A node is one image state: its parent, the action that made it, a short description and
the layers (bbox + patch + mask of the changed pixels) that turn the parent into it. No
node holds a full copy of the image: rebuilding a node replays the layers from the root,
starting from the nearest ancestor found in a small LRU cache of materialised images
bounded in bytes. Undo, redo and checkout only move the head; editing from a node that
already has children makes a branch; nothing is ever deleted.

Persistence helpers live here too: layers are written as PNG files (atomically: a
temporary file, then ``os.replace``) and loaded lazily, so a long session's memory grows
with neither the number of turns nor the image size times the turns.
"""

from __future__ import annotations

import json
import numbers
import os
import re
import sys
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.arrays import rgb_array
from pipelines.editors.frame import FrameChange, FrameError, apply_frame
from pipelines.files import BadIdError, atomic_write, check_id
from pipelines.images import image_header
from pipelines.layers import mask_bbox

Box = tuple[int, int, int, int]

#: Default byte budget of the materialised-image cache: two 12-MP or one 20-MP RGB image.
DEFAULT_CACHE_BYTES = 96 * 1024 * 1024
GRAPH_VERSION = 1
#: Version written when some state changes the frame (crop, rotate…); older Loupes, which
#: read only version 1, then refuse the file instead of misreading it.
FRAME_GRAPH_VERSION = 2
READABLE_GRAPH_VERSIONS = (GRAPH_VERSION, FRAME_GRAPH_VERSION)
LAYER_DIR = "layers"
#: a layer or region file inside a session folder: ``layers/<id>.png``, nothing else
LAYER_FILE_RE = re.compile(r"layers/[A-Za-z0-9_-]{1,64}\.png")
#: most states a graph read from a file may hold
MAX_NODES = 100_000
#: longest description kept from a file
MAX_TEXT = 1000


class StateError(ValueError):
    """A request about the graph that cannot be met (unknown node, nothing to undo…)."""


class SessionError(ValueError):
    """A session request that cannot be met; the message says why, for a person."""


# --------------------------------------------------------------------------- files


def encode_png(pixels: np.ndarray, *, level: int = 1) -> bytes:
    """Lossless PNG bytes of an RGB/RGBA ``uint8`` array or a ``bool`` mask."""
    if pixels.dtype == bool:
        arr = pixels.astype(np.uint8) * 255
    elif pixels.ndim == 3 and pixels.shape[2] == 3:
        arr = cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR)
    elif pixels.ndim == 3 and pixels.shape[2] == 4:
        arr = cv2.cvtColor(pixels, cv2.COLOR_RGBA2BGRA)
    else:
        arr = pixels
    # the "up" filter alone: about half the CPU of adaptive filtering, same size on photos
    ok, buf = cv2.imencode(".png", arr, [cv2.IMWRITE_PNG_COMPRESSION, level,
                                         cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_UP])
    if not ok:
        raise OSError("could not encode a PNG")
    return buf.tobytes()


def decode_png(path: Path, *, mask: bool = False,
               shape: tuple[int, int] | None = None) -> np.ndarray:
    """Read a PNG written by ``encode_png`` back (RGB/RGBA ``uint8`` or a ``bool`` mask).

    Args:
        path: the file.
        mask: read a ``bool`` mask.
        shape: the ``(height, width)`` it must have; checked from the header before any
            pixel is decoded (a file from an archive may claim any size).
    """
    raw = np.fromfile(str(path), dtype=np.uint8) if Path(path).is_file() else None
    if raw is None or not raw.size:
        raise StateError(f"cannot read the layer file {Path(path).name}: corrupt or missing")
    if shape is not None:
        header = image_header(raw[:4096].tobytes())
        if header is None or header[0] != "PNG" or (header[2], header[1]) != tuple(shape):
            raise StateError(f"the layer file {Path(path).name} is not the "
                             f"{shape[1]}x{shape[0]} PNG its box says: corrupt or missing")
    arr = cv2.imdecode(raw, cv2.IMREAD_UNCHANGED)
    if arr is None:
        raise StateError(f"cannot read the layer file {Path(path).name}: corrupt or missing")
    if mask:
        return (arr if arr.ndim == 2 else arr[..., 0]) > 127
    if arr.ndim == 2:
        return np.repeat(arr[..., None], 3, axis=2)
    code = cv2.COLOR_BGRA2RGBA if arr.shape[2] == 4 else cv2.COLOR_BGR2RGB
    return cv2.cvtColor(arr, code)


# --------------------------------------------------------------------------- layers


@dataclass
class StoredLayer:
    """The pixels one edit changed: ``patch`` holds the new values where ``mask`` is True.

    The arrays may live only on disk (``patch_file``/``mask_file`` relative to
    ``folder``); they are then read when needed and not kept.
    """

    bbox: Box
    _patch: np.ndarray | None = None
    _mask: np.ndarray | None = None
    patch_file: str = ""
    mask_file: str = ""
    folder: Path | None = None

    @property
    def patch(self) -> np.ndarray:
        if self._patch is not None:
            return self._patch
        return decode_png(self._where(self.patch_file), shape=self.shape)

    @property
    def mask(self) -> np.ndarray:
        if self._mask is not None:
            return self._mask
        return decode_png(self._where(self.mask_file), mask=True, shape=self.shape)

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)`` of the box."""
        x0, y0, x1, y1 = self.bbox
        return y1 - y0, x1 - x0

    @property
    def area(self) -> int:
        x0, y0, x1, y1 = self.bbox
        return (x1 - x0) * (y1 - y0)

    @property
    def in_memory(self) -> bool:
        return self._patch is not None

    def _where(self, name: str) -> Path:
        if not name or self.folder is None:
            raise StateError("a layer has neither pixels in memory nor a file")
        return self.folder / name

    def apply(self, image: np.ndarray) -> None:
        """Write the changed pixels into ``image`` (in place)."""
        x0, y0, x1, y1 = self.bbox
        region = image[y0:y1, x0:x1]
        np.copyto(region, self.patch, where=self.mask[..., None])

    def persist(self, folder: Path, stem: str) -> None:
        """Write the PNG files (atomically) and drop the in-memory copies."""
        if self._patch is None:
            if self.folder is not None and Path(self.folder) != Path(folder):
                self._patch, self._mask = self.patch, self.mask
            else:
                return
        self.patch_file = f"{LAYER_DIR}/{stem}-patch.png"
        self.mask_file = f"{LAYER_DIR}/{stem}-mask.png"
        atomic_write(folder / self.patch_file, encode_png(self._patch))
        atomic_write(folder / self.mask_file, encode_png(self._mask))
        self.folder = Path(folder)
        self._patch = self._mask = None

    def to_json(self) -> dict[str, Any]:
        return {"bbox": list(self.bbox), "patch": self.patch_file, "mask": self.mask_file}

    @classmethod
    def from_json(cls, data: dict[str, Any], folder: Path) -> StoredLayer:
        """A layer read lazily from ``folder`` (check the data with ``check_graph``)."""
        bbox = tuple(int(v) for v in data["bbox"])
        if len(bbox) != 4:
            raise StateError(f"bad layer box {data['bbox']!r}")
        for name in (data["patch"], data["mask"]):
            check_layer_path(name)
        return cls(bbox=bbox, patch_file=data["patch"], mask_file=data["mask"],
                   folder=Path(folder))


def check_layer_path(name: Any) -> str:
    """``name`` when it is ``layers/<id>.png``, else a ``StateError``."""
    if not isinstance(name, str) or not LAYER_FILE_RE.fullmatch(name):
        shown = repr(name)[:60]
        raise StateError(f"the layer file {shown} is outside the session's layers folder "
                         "(it would escape it; layer files are layers/<id>.png)")
    return name


def check_box(box: Any, width: int, height: int) -> Box:
    """``box`` as four ints inside a ``width``×``height`` image, else a ``StateError``."""
    try:
        if any(not isinstance(v, numbers.Integral) or isinstance(v, bool) for v in box):
            raise TypeError
        x0, y0, x1, y1 = (int(v) for v in box)
    except (TypeError, ValueError, OverflowError):
        raise StateError(f"bad layer box {str(box)[:60]}: four whole numbers expected") \
            from None
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise StateError(f"layer box {(x0, y0, x1, y1)} is outside the {width}x{height} image")
    return x0, y0, x1, y1


def changed_mask(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """``bool`` (H, W): where any channel differs (OpenCV's SIMD paths, ~10× numpy's)."""
    diff = cv2.absdiff(np.ascontiguousarray(before), np.ascontiguousarray(after))
    if diff.ndim == 3:
        diff = cv2.transform(diff, np.ones((1, diff.shape[2]), np.float32))
    return diff > 0


def diff_layer(before: np.ndarray, after: np.ndarray,
               offset: tuple[int, int] = (0, 0)) -> StoredLayer | None:
    """The layer that turns ``before`` into ``after`` (same shape), or None if equal.

    Args:
        before: the pixels before the edit (a full image or a region of one).
        after: the pixels after, same shape and dtype.
        offset: ``(x, y)`` of the region's top-left corner in the full image.

    Returns:
        A ``StoredLayer`` with the tight box of the changed pixels, the new values there
        (unchanged pixels zeroed, which compresses well) and the changed-pixel mask.
    """
    if before.shape != after.shape:
        raise ValueError(f"before {before.shape} and after {after.shape} differ in shape")
    changed = changed_mask(before, after)
    box = mask_bbox(changed)
    if box is None:
        return None
    x0, y0, x1, y1 = box
    mask = np.ascontiguousarray(changed[y0:y1, x0:x1])
    crop = np.ascontiguousarray(after[y0:y1, x0:x1])
    patch = cv2.bitwise_and(crop, crop, mask=mask.view(np.uint8))
    if patch.ndim == 2:
        patch = patch[..., None]
    dx, dy = offset
    return StoredLayer(bbox=(x0 + dx, y0 + dy, x1 + dx, y1 + dy), _patch=patch, _mask=mask)


def split_layer(layer: StoredLayer, max_pixels: int = 2_000_000) -> list[StoredLayer]:
    """Cut a large layer into horizontal bands (each its own PNG pair, encoded in parallel
    by ``StateGraph.persist_layers``); bands with no changed pixel are dropped."""
    if not layer.in_memory or layer.area <= max_pixels:
        return [layer]
    x0, y0, x1, y1 = layer.bbox
    rows = max(1, max_pixels // max(1, x1 - x0))
    out = []
    for top in range(0, y1 - y0, rows):
        mask = layer.mask[top:top + rows]
        if mask.any():
            out.append(StoredLayer((x0, y0 + top, x1, y0 + top + mask.shape[0]),
                                   _patch=np.ascontiguousarray(layer.patch[top:top + rows]),
                                   _mask=np.ascontiguousarray(mask)))
    return out


# --------------------------------------------------------------------------- cache


class ImageCache:
    """LRU cache of materialised images, bounded in bytes.

    The entry inserted last is never evicted, even when it alone exceeds the budget, so
    the head image is not rebuilt on every call.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self.bytes = 0

    def get(self, key: str) -> np.ndarray | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: str, image: np.ndarray) -> None:
        if key in self._items:
            self.bytes -= self._items.pop(key).nbytes
        image.setflags(write=False)
        self._items[key] = image
        self.bytes += image.nbytes
        while self.bytes > self.max_bytes and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self.bytes -= old.nbytes

    def room_for(self, nbytes: int) -> bool:
        """Whether one more entry of ``nbytes`` fits beside the current ones."""
        return self.bytes + nbytes <= self.max_bytes

    def only_holder(self, key: str) -> bool:
        """True when the cache holds the only reference to this entry's own buffer."""
        item = self._items[key]
        # references: the dict entry, ``item`` and getrefcount's argument
        return bool(item.flags.owndata) and sys.getrefcount(item) <= 3

    def take(self, key: str) -> np.ndarray:
        """Remove an entry and hand its array over to the caller."""
        item = self._items.pop(key)
        self.bytes -= item.nbytes
        return item

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0


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
