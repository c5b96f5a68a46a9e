"""Text: words drawn into a region, as large as fit, in a named colour."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.operations.base import Family, ParamSpec
from pipelines.operations.colours import parse_color
from pipelines.operations.engines import FloatOp
from pipelines.operations.measures import Measured, Verdict, lab

family = Family("text")


def font_path() -> str | None:
    """A TrueType font file: matplotlib's bundled DejaVu Sans, or None (PIL default)."""
    try:
        import matplotlib

        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        return str(path) if path.is_file() else None
    except ImportError:
        return None


def _font(size: int) -> Any:
    from PIL import ImageFont

    path = font_path()
    return ImageFont.truetype(path, size) if path else ImageFont.load_default(size)


def _layout(text: str, box_w: int, box_h: int) -> tuple[str, int]:
    """Line breaks and font size that make ``text`` as large as fits the box."""
    from PIL import Image, ImageDraw

    draw = ImageDraw.Draw(Image.new("L", (1, 1)))
    words = text.split() or [text]
    best = ("\n".join(words) if len(words) > 1 else text, 1)
    for lines in range(1, min(len(words), 6) + 1):
        width = max(1, math.ceil(len(text) / lines))
        wrapped = "\n".join(textwrap.wrap(text, width=width, break_long_words=False,
                                             break_on_hyphens=False)) if lines > 1 else text
        lo, hi = 1, max(2, box_h * 2)
        while lo < hi:   # largest size that fits
            mid = (lo + hi + 1) // 2
            x0, y0, x1, y1 = draw.multiline_textbbox((0, 0), wrapped, font=_font(mid))
            if x1 - x0 <= box_w and y1 - y0 <= box_h:
                lo = mid
            else:
                hi = mid - 1
        if lo > best[1]:
            best = (wrapped, lo)
    return best


def inner_box(mask: np.ndarray, coverage: float = 0.97) -> tuple[int, int, int, int]:
    """``(x, y, w, h)``: the mask's box shrunk about its centroid until the mask fills it.

    Text fitted to this box stays inside round or irregular regions.
    """
    rows, cols = np.nonzero(mask)
    cy, cx = rows.mean(), cols.mean()
    y0, y1, x0, x1 = rows.min(), rows.max() + 1.0, cols.min(), cols.max() + 1.0
    for _ in range(30):
        box = mask[int(y0):max(int(y0) + 1, int(y1)), int(x0):max(int(x0) + 1, int(x1))]
        if box.mean() >= coverage:
            break
        y0, y1 = cy + 0.93 * (y0 - cy), cy + 0.93 * (y1 - cy)
        x0, x1 = cx + 0.93 * (x0 - cx), cx + 0.93 * (x1 - cx)
    x, y = int(x0), int(y0)
    return x, y, max(1, int(x1) - x), max(1, int(y1) - y)


def _text(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    from PIL import Image, ImageDraw

    text = p["text"].strip()
    if not text or not mask.any():
        return rgb
    x0, y0, bw, bh = inner_box(mask)
    wrapped, size = _layout(text, max(1, int(bw * p["scale"])), max(1, int(bh * p["scale"])))
    font = _font(size)
    layer = Image.new("L", (rgb.shape[1], rgb.shape[0]), 0)
    draw = ImageDraw.Draw(layer)
    tx0, ty0, tx1, ty1 = draw.multiline_textbbox((0, 0), wrapped, font=font, align="center")
    origin = (x0 + (bw - (tx1 - tx0)) / 2 - tx0, y0 + (bh - (ty1 - ty0)) / 2 - ty0)
    draw.multiline_text(origin, wrapped, fill=255, font=font, align="center")
    alpha = (np.asarray(layer, dtype=np.float32) / 255.0)[..., None]
    colour = np.array(parse_color(p["color"]), dtype=np.float32) / 255.0
    return rgb * (1.0 - alpha) + colour * alpha

# ---------------------------------------------------------------------------- editor



@family
class Text(FloatOp):
    name = "text"
    kinds = ("add",)
    description = "Render text in the region."
    params = (ParamSpec("text", "str", None, "the words to write", required=True),
              ParamSpec("color", "color", "white", "text colour"),
              ParamSpec("scale", "float", 1.0, "size relative to fitting the region",
                        0.1, 1.0))
    main = "text"
    needs_target = True
    role = "write"
    words = ("write", "caption", "label", "overlay")

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _text(rgb, mask, p)

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        words = str(params.get("text") or "").strip()
        return f"write “{words}” on {where}" if words else f"add text to {where}"

    def check(self, m: Measured) -> Verdict:
        p, lb, la, inside = m.params, m.lb, m.la, m.inside

        def edges(img: np.ndarray) -> float:
            grey = cv2.cvtColor(np.ascontiguousarray(img[..., :3]), cv2.COLOR_RGB2GRAY)
            return float((cv2.Canny(grey, 60, 160) > 0)[inside].mean())

        gain = edges(m.after) - edges(m.before)
        colour = lab(np.array([[parse_color(p.get("color") or "white")]], dtype=np.uint8))[0, 0]
        near = float((np.linalg.norm(la[inside] - colour, axis=1) < 25).mean())
        bg_light = float(lb[..., 0][inside].mean())
        measures = {"edge_gain": round(gain, 4), "text_colour_fraction": round(near, 4)}
        if gain > 0.01 and 0.005 < near < 0.7:
            return Verdict(1.0, keep=["text is visible in the region"], measures=measures)
        retry: dict[str, Any] = {"scale": self.clamp("scale", p.get("scale", 1.0) * 1.2,
                                                     digits=3)}
        if abs(float(colour[0]) - bg_light) < 30:
            retry["color"] = "black" if bg_light > 50 else "white"
        return Verdict(0.2, fix=["no legible text appeared in the region"], retry=retry,
                       measures=measures)
