"""Colour names Loupe understands and ``parse_color`` (names, ``#rrggbb``, RGB triples)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from pipelines.operations.errors import OperationError

#: Colour names the localiser, recolour and planners understand (sRGB).
NAMED_COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30), "orange": (245, 130, 20), "yellow": (240, 215, 30),
    "green": (40, 170, 50), "lime": (150, 230, 40), "teal": (20, 140, 140),
    "cyan": (30, 210, 230), "blue": (30, 70, 220), "navy": (20, 30, 110),
    "purple": (130, 40, 170), "violet": (150, 90, 220), "magenta": (220, 40, 200),
    "pink": (245, 130, 180), "brown": (120, 70, 30), "black": (15, 15, 15),
    "white": (245, 245, 245), "gray": (128, 128, 128), "grey": (128, 128, 128),
    "silver": (192, 192, 192), "gold": (212, 175, 55), "beige": (225, 205, 165),
    "maroon": (120, 20, 30), "olive": (120, 120, 30), "turquoise": (60, 210, 200),
}

@lru_cache(maxsize=1)
def more_colour_names() -> dict[str, tuple[int, int, int]]:
    """CSS4 and XKCD colour names (``"rebeccapurple"``, ``"dusty rose"``) → sRGB.

    Read from matplotlib's tables on first use (matplotlib is slow to import and only
    needed for names outside ``NAMED_COLORS``).
    """
    try:
        from matplotlib import colors  # noqa: PLC0415 — heavy import, first use only
    except ImportError:
        return {}
    out: dict[str, tuple[int, int, int]] = {}
    for table, prefix in ((colors.XKCD_COLORS, "xkcd:"), (colors.CSS4_COLORS, "")):
        for name, value in table.items():
            rgb = tuple(int(round(c * 255)) for c in colors.to_rgb(value))
            out[name.removeprefix(prefix).lower()] = rgb  # type: ignore[assignment]
    return out


_HEX = re.compile(r"^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$")


def parse_color(value: Any, *, where: str = "color") -> tuple[int, int, int]:
    """``'red'``, ``'#ff0000'``, ``'f00'`` or an RGB triple → ``(r, g, b)``."""
    if isinstance(value, (tuple, list)) and len(value) == 3 and \
            all(isinstance(c, (int, float)) and 0 <= c <= 255 for c in value):
        return int(value[0]), int(value[1]), int(value[2])
    if isinstance(value, str):
        text = value.strip().lower()
        if text in NAMED_COLORS:
            return NAMED_COLORS[text]
        extra = more_colour_names().get(text) or more_colour_names().get(
            text.replace("grey", "gray"))
        if extra is not None:
            return extra
        match = _HEX.match(text)
        if match:
            digits = match.group(1)
            if len(digits) == 3:
                digits = "".join(c * 2 for c in digits)
            return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    raise OperationError(f"{where}: {value!r} is not a colour; use a name "
                         f"({', '.join(list(NAMED_COLORS)[:8])}, …) or #rrggbb")
