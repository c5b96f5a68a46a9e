"""Apply a pixel or neighbourhood operation to a large image tile by tile.

Each tile is handed to the operation with ``overlap`` extra pixels of real image on every
side that has a neighbour, and only its core is kept. A filter whose radius is within the
overlap therefore sees exactly what it would see on the whole image, so the result
matches the whole-image result and no seam can appear; at the image's own border the
tile border *is* the image border, so border handling matches too. Memory beyond the
output is a few tiles, whatever the image's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Tile:
    """One tile of a tiling.

    Attributes:
        core: ``(x0, y0, x1, y1)`` of the pixels this tile is responsible for; the cores
            of a tiling cover the image exactly once.
        padded: the core grown by the overlap and clamped to the image: what the
            operation is given.
    """

    core: Box
    padded: Box

    @property
    def padded_slices(self) -> tuple[slice, slice]:
        """``(rows, cols)`` of the padded tile in the image."""
        x0, y0, x1, y1 = self.padded
        return slice(y0, y1), slice(x0, x1)

    @property
    def core_slices(self) -> tuple[slice, slice]:
        """``(rows, cols)`` of the core in the image."""
        x0, y0, x1, y1 = self.core
        return slice(y0, y1), slice(x0, x1)

    @property
    def inner_slices(self) -> tuple[slice, slice]:
        """``(rows, cols)`` of the core inside the padded tile."""
        x0, y0, x1, y1 = self.core
        px, py = self.padded[0], self.padded[1]
        return slice(y0 - py, y1 - py), slice(x0 - px, x1 - px)


def iter_tiles(shape: tuple[int, ...], tile: int = 1024, overlap: int = 64) -> Iterator[Tile]:
    """Tiles covering an image of ``shape``, row by row.

    Args:
        shape: the image's shape, ``(H, W)`` or ``(H, W, C)``.
        tile: side of a tile's core in pixels (the last row/column may be smaller).
        overlap: pixels of context added on each side that has a neighbour.

    Yields:
        ``Tile`` objects whose cores cover every pixel exactly once.

    Raises:
        ValueError: ``tile`` < 1 or ``overlap`` < 0.
    """
    _check(tile, overlap)
    height, width = int(shape[0]), int(shape[1])
    for y0 in range(0, height, tile):
        y1 = min(height, y0 + tile)
        for x0 in range(0, width, tile):
            x1 = min(width, x0 + tile)
            padded = (max(0, x0 - overlap), max(0, y0 - overlap),
                      min(width, x1 + overlap), min(height, y1 + overlap))
            yield Tile(core=(x0, y0, x1, y1), padded=padded)


def _check(tile: int, overlap: int) -> None:
    if tile < 1:
        raise ValueError(f"tile must be >= 1, got {tile}")
    if overlap < 0:
        raise ValueError(f"overlap must be >= 0, got {overlap}")


def count_tiles(shape: tuple[int, ...], tile: int = 1024) -> int:
    """How many tiles ``iter_tiles`` yields for ``shape``."""
    _check(tile, 0)
    return -(-int(shape[0]) // tile) * -(-int(shape[1]) // tile)


def apply_tiled(image: np.ndarray, fn: Callable[[np.ndarray], np.ndarray], *,
                tile: int = 1024, overlap: int = 64,
                progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Apply ``fn`` to ``image`` in overlapping tiles and stitch the cores.

    Args:
        image: ``uint8`` HWC (or HW) image of any size.
        fn: the operation: takes a C-contiguous tile, returns an array of the same shape
            and dtype. It must not depend on where the tile lies in the image.
        tile: core side of a tile in pixels.
        overlap: context on each side; at least the operation's radius for the result to
            equal the whole-image result.
        progress: called with ``(done, total)`` after each tile.

    Returns:
        A new array of ``image``'s shape and dtype.

    Raises:
        ValueError: ``fn`` returned another shape or dtype, or bad tile/overlap values.
    """
    out = np.empty_like(image)
    total = count_tiles(image.shape, tile)
    for done, part in enumerate(iter_tiles(image.shape, tile, overlap), start=1):
        source = np.ascontiguousarray(image[part.padded_slices])
        result = np.asarray(fn(source))
        if result.shape != source.shape or result.dtype != source.dtype:
            raise ValueError(f"the tiled operation returned {result.dtype} {result.shape} "
                             f"for a {source.dtype} {source.shape} tile; it must keep both")
        out[part.core_slices] = result[part.inner_slices]
        if progress is not None:
            progress(done, total)
    return out
