"""Where each target phrase was found, kept so a later step naming it finds it again."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np

from agent.session.store import LAYER_DIR, check_layer_path, decode_png, encode_png
from pipelines.files import atomic_write
from pipelines.layers import Layer


class RegionMemory:
    """Where each target phrase was found, as a cropped mask (small even at 20 MP).

    A later step naming the same target reuses it when the localiser no longer finds the
    words (the earlier edit may have changed the very colour the phrase names). Saved with
    the session (``layers/region-*.png``), so this survives a restart.
    """

    def __init__(self, limit: int = 64) -> None:
        self._items: dict[str, tuple[tuple[int, int, int, int], np.ndarray]] = {}
        self._files: dict[str, str] = {}
        self._frames: dict[str, str] = {}   # the frame (graph.frame_key) each mask lives in
        self.limit = limit

    def put(self, phrase: str, layer: Layer, frame: str = "n0") -> None:
        key = phrase.strip().lower()
        self._items.pop(key, None)
        self._files.pop(key, None)
        self._items[key] = (layer.bbox, layer.mask.copy())
        self._frames[key] = frame
        while len(self._items) > self.limit:
            old = next(iter(self._items))
            self._items.pop(old)
            self._files.pop(old, None)
            self._frames.pop(old, None)

    def save(self, folder: Path) -> list[dict[str, Any]]:
        """Write new masks under ``folder/layers`` (atomically); returns the index."""
        index = []
        for key, (bbox, crop) in self._items.items():
            if key not in self._files:
                name = f"{LAYER_DIR}/region-{uuid.uuid4().hex[:10]}.png"
                atomic_write(folder / name, encode_png(crop))
                self._files[key] = name
            index.append({"phrase": key, "bbox": list(bbox), "mask": self._files[key],
                          "frame": self._frames.get(key, "n0")})
        return index

    def load(self, folder: Path, index: list[dict[str, Any]]) -> None:
        """Read the masks back; damaged or missing entries are skipped (a cache)."""
        for item in index[-self.limit:]:
            try:
                name = check_layer_path(item["mask"])
                bbox = tuple(int(v) for v in item["bbox"])
                crop = decode_png(folder / name, mask=True,
                                  shape=(bbox[3] - bbox[1], bbox[2] - bbox[0]))
            except (KeyError, TypeError, ValueError, IndexError):
                continue
            if crop.shape == (bbox[3] - bbox[1], bbox[2] - bbox[0]):
                self._items[str(item["phrase"])] = (bbox, crop)
                self._files[str(item["phrase"])] = name
                self._frames[str(item["phrase"])] = str(item.get("frame", "n0"))

    def get(self, phrase: str, shape: tuple[int, int], frame: str = "n0") -> np.ndarray | None:
        key = phrase.strip().lower()
        item = self._items.get(key)
        if item is None or self._frames.get(key, "n0") != frame:
            return None  # located in another frame (before a crop, rotation…)
        (x0, y0, x1, y1), crop = item
        if x1 > shape[1] or y1 > shape[0]:
            return None
        mask = np.zeros(shape, bool)
        mask[y0:y1, x0:x1] = crop
        return mask
