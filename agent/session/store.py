"""How a session's pixels are stored: changed-pixel layers (bbox + patch + mask) written
as PNG files atomically and read lazily, and the byte-bounded cache of materialised
images. The state graph (``agent.session.state``) is built from these."""

from __future__ import annotations

import numbers
import os
import re
import sys
import threading
from collections import OrderedDict
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.files import atomic_write
from pipelines.images import image_header
from pipelines.layers import mask_bbox

Box = tuple[int, int, int, int]
#: Default byte budget of the materialised-image cache: two 12-MP or one 20-MP RGB image.
DEFAULT_CACHE_BYTES = 96 * 1024 * 1024
LAYER_DIR = "layers"
#: share of changed pixels from which a patch is coded without run-length matching (an
#: ellipse fills 79 % of its box: its zeroed corners are still runs worth coding)
DENSE_SHARE = 0.95
#: a layer or region file inside a session folder: ``layers/<id>.png``, nothing else
LAYER_FILE_RE = re.compile(r"layers/[A-Za-z0-9_-]{1,64}\.png")


class StateError(ValueError):
    """A request about the graph that cannot be met (unknown node, nothing to undo…)."""


class SessionError(ValueError):
    """A session request that cannot be met; the message says why, for a person."""


# --------------------------------------------------------------------------- files


def encode_png(pixels: np.ndarray, *, level: int = 1, dense: bool = False) -> bytes:
    """Lossless PNG bytes of an RGB/RGBA ``uint8`` array or a ``bool`` mask (``dense``: a
    colour patch with few zeroed pixels, coded with Huffman codes alone)."""
    if pixels.dtype == bool:
        arr = pixels.astype(np.uint8) * 255
    elif pixels.ndim == 3 and pixels.shape[2] == 3:
        arr = cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR)
    elif pixels.ndim == 3 and pixels.shape[2] == 4:
        arr = cv2.cvtColor(pixels, cv2.COLOR_RGBA2BGRA)
    else:
        arr = pixels
    # the "up" filter alone: about half the CPU of adaptive filtering, same size on photos;
    # colour patches with zlib's run-length strategy: a quarter less CPU and smaller files
    # than level-1 deflate on photos (the zeroed unchanged pixels are runs); a dense patch
    # (a whole-frame edit: no runs) with Huffman codes alone, a sixth less CPU again for
    # the same size; masks as before
    params = [cv2.IMWRITE_PNG_COMPRESSION, level, cv2.IMWRITE_PNG_FILTER,
              cv2.IMWRITE_PNG_FILTER_UP]
    if arr.ndim == 3:
        params += [cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_HUFFMAN_ONLY if dense
                   else cv2.IMWRITE_PNG_STRATEGY_RLE]
    ok, buf = cv2.imencode(".png", arr, params)
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
    #: the PNG bytes of the patch and mask, encoded ahead on a background thread
    _encoded: Future | None = field(default=None, repr=False, compare=False)

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
        patch_png, mask_png = self._png()
        atomic_write(folder / self.patch_file, patch_png)
        atomic_write(folder / self.mask_file, mask_png)
        self.folder = Path(folder)
        self._patch = self._mask = None
        self._encoded = None

    def encode_ahead(self) -> None:
        """Start encoding the in-memory pixels to PNG on a background thread (``persist``
        then writes those bytes: the same bytes, only made earlier)."""
        if self._patch is not None and self._encoded is None:
            self._encoded = _pool().submit(_encode_layer, self._patch, self._mask)

    def _png(self) -> tuple[bytes, bytes]:
        if self._encoded is not None:
            try:
                return self._encoded.result()
            except CancelledError:
                pass
        return _encode_layer(self._patch, self._mask)

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


def _encode_layer(patch: np.ndarray, mask: np.ndarray) -> tuple[bytes, bytes]:
    """The PNG bytes of a layer's patch and mask (a patch where nearly every pixel changed,
    a whole-frame edit's, has no zeroed runs: ``dense``)."""
    dense = mask.size > 0 and np.count_nonzero(mask) >= DENSE_SHARE * mask.size
    return encode_png(patch, dense=dense), encode_png(mask)


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


class LayerDraft:
    """The layers an attempt would store, made while the critic judges it: the diff
    (``diff_layer``, ``split_layer``) and each band's PNG encoding run on background
    threads. The files are still written only when the turn commits (``persist``), so a
    step reported done survives a kill exactly as before; a draft that is not kept is
    cancelled.

    Args:
        before: the layer's patch before the edit.
        after: the composed patch (``after``), same shape.
        offset: ``(x, y)`` of the patch in the frame.
    """

    def __init__(self, before: np.ndarray, after: np.ndarray, offset: tuple[int, int]
                 ) -> None:
        self.after = after
        self._bands: list[StoredLayer] = []
        self._future = _pool().submit(self._make, before, after, offset)

    def _make(self, before: np.ndarray, after: np.ndarray, offset: tuple[int, int]
              ) -> StoredLayer | None:
        stored = diff_layer(before, after, offset=offset)
        if stored is not None:
            self._bands = split_layer(stored)
            for band in self._bands:
                band.encode_ahead()
        return stored

    def layer(self) -> StoredLayer | None:
        """The whole changed-pixel layer (None when nothing changed); waits for the diff."""
        return self._future.result()

    def bands(self) -> list[StoredLayer]:
        """The layer cut in bands (``split_layer``), each being encoded."""
        self._future.result()
        return self._bands

    def cancel(self) -> None:
        """Stop what has not started: this attempt's layer will not be kept."""
        if not self._future.cancel():
            for band in self._bands:
                if band._encoded is not None:
                    band._encoded.cancel()


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The background pool of layer drafts (one per process; OpenCV's PNG encoder and
    diff release the GIL, so bands encode beside the critic)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2),
                                       thread_name_prefix="layer-draft")
        return _POOL


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
