"""``python -m pipelines``: inspect and edit images from the command line.

Commands:

* ``info IN`` — size, mode, format, bit depth, ICC/EXIF presence, as JSON.
* ``edit IN OUT --op NAME [--param k=v …] [--mask M.png | --phrase P | --box x0,y0,x1,y1]``
  — run one classical operation on the target (the whole image when no target is
  given), compose it back at full resolution, save in the source's format (or OUT's
  suffix) with its ICC profile and EXIF. A JSON summary goes to stdout.
* ``models [--role R]`` — which model serves each role (``pipelines.models``).

Errors end the command with a non-zero exit status and one line on stderr: 1 for bad
input or a failed edit, 2 for bad usage, 3 when a phrase cannot be localised.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from pipelines.cli import fail, guarded
from pipelines.editors.base import EditRequest
from pipelines.editors.operations import get_operation
from pipelines.editors.registry import get_editor
from pipelines.images import ImageLoadError, LoadedImage, image_info, load_image, save_image
from pipelines.layers import compose, decompose, default_feather, feather_alpha
from pipelines.localizers import get_localizer
from pipelines.localizers.steady import settle
from pipelines.masks import MaskError, load_mask
from pipelines.models import main as models_main

log = logging.getLogger("pipelines.cli")

EXIT_ERROR, EXIT_USAGE, EXIT_UNRESOLVED = 1, 2, 3


class CliError(Exception):
    """A failure to report on one line, with its exit status."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


def _out(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


# ------------------------------------------------------------------------------- info


def cmd_info(args: argparse.Namespace) -> int:
    """Print the header facts of ``args.input`` as JSON."""
    _out(image_info(args.input))
    return 0


# ------------------------------------------------------------------------------- edit


def cmd_edit(args: argparse.Namespace) -> int:
    """Edit ``args.input`` as asked and write ``args.output``."""
    spec = get_operation(args.op)
    params = _parse_params(args.param, spec)
    printable = _printable(spec.validate(params))  # bad values fail before any work
    loaded = load_image(args.input)
    masks = _target_masks(args, loaded)
    request = EditRequest(kind=args.kind or spec.kinds[0], operation=spec.name,
                          params=params, instruction=args.phrase or "",
                          target=args.phrase or "")
    editor = _classical_editor()
    layers = decompose(loaded.pixels, masks)
    edits = []
    for layer in layers:
        feather = default_feather(layer) if args.feather is None else max(0, args.feather)
        # The editor keeps every pixel outside the mask it is given; giving it the mask
        # grown by the feather lets compose fade the edit out instead of cutting it.
        reach = feather_alpha(layer.mask, feather) > 0
        edits.append((layer, editor.edit(layer.patch, reach, request), feather))
    result = loaded.pixels.copy()
    for layer, patch, feather in edits:
        compose(result, layer, patch, feather=feather, out=result)
    written = save_image(result, args.output, like=loaded, format=args.format,
                         quality=args.quality)
    changed = int(np.any(result != loaded.pixels, axis=2).sum())
    _out({"output": str(written), "operation": spec.name, "params": printable,
          "width": loaded.width, "height": loaded.height,
          "format": image_info(written)["format"], "targets": len(layers),
          "boxes": [list(layer.bbox) for layer in layers], "changed_pixels": changed})
    return 0


def _target_masks(args: argparse.Namespace, loaded: LoadedImage) -> list[np.ndarray]:
    height, width = loaded.height, loaded.width
    if args.mask:
        return [_mask_from_file(args.mask, width, height)]
    if args.box:
        return [_mask_from_box(args.box, width, height)]
    if args.phrase:
        return _masks_from_phrase(args.phrase, loaded.pixels)
    return [np.ones((height, width), bool)]


def _mask_from_file(path: str, width: int, height: int) -> np.ndarray:
    try:
        return load_mask(path, (height, width), label=os.path.basename(path))
    except MaskError as exc:
        raise CliError(str(exc)) from None


def _mask_from_box(text: str, width: int, height: int) -> np.ndarray:
    try:
        x0, y0, x1, y1 = (int(round(float(v))) for v in text.split(","))
    except ValueError:
        raise CliError(f"--box must be x0,y0,x1,y1 in pixels, got {text!r}",
                       EXIT_USAGE) from None
    x0, x1 = max(0, min(x0, x1)), min(width, max(x0, x1))
    y0, y1 = max(0, min(y0, y1)), min(height, max(y0, y1))
    if x1 <= x0 or y1 <= y0:
        raise CliError(f"--box {text} lies outside the {width}x{height} image")
    mask = np.zeros((height, width), bool)
    mask[y0:y1, x0:x1] = True
    return mask


def _masks_from_phrase(phrase: str, pixels: np.ndarray) -> list[np.ndarray]:
    found = settle(get_localizer(), pixels, phrase)
    if found.status != "resolved" or not found.masks:
        reason = found.reason or "no region matches"
        raise CliError(f"could not localise {phrase!r} ({found.status}): {reason}",
                       EXIT_UNRESOLVED)
    masks = []
    for item in found.masks:
        mask = np.asarray(item.mask)
        if mask.shape != pixels.shape[:2]:
            mask = cv2.resize(mask.astype(np.uint8), (pixels.shape[1], pixels.shape[0]),
                              interpolation=cv2.INTER_NEAREST)
        if mask.any():
            masks.append(mask.astype(bool))
    if not masks:
        raise CliError(f"could not localise {phrase!r}: its masks are empty", EXIT_UNRESOLVED)
    return masks


def _parse_params(pairs: Sequence[str], spec: Any) -> dict[str, Any]:
    params: dict[str, Any] = {}
    kinds = {p.name: p.type for p in spec.params}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CliError(f"--param must be key=value, got {pair!r}", EXIT_USAGE)
        if key not in kinds:
            known = ", ".join(kinds) or "none"
            raise CliError(f"{spec.name} has no parameter {key!r} (it takes: {known})",
                           EXIT_USAGE)
        params[key] = load_image(value).pixels if kinds[key] == "image" else value
    return params


def _printable(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (f"<image {v.shape[1]}x{v.shape[0]}>" if isinstance(v, np.ndarray) else v)
            for k, v in params.items()}


def _classical_editor() -> Any:
    """The registry's classical editor."""
    return get_editor("classical")


# ----------------------------------------------------------------------------- models


def cmd_models(argv: Sequence[str]) -> int:
    """Delegate to ``pipelines.models.main``."""
    return int(models_main(list(argv)) or 0)


# ------------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m pipelines``."""
    parser = argparse.ArgumentParser(prog="python -m pipelines",
                                     description="Loupe's pixel tools: inspect and edit "
                                                 "images at native resolution.")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="size, mode, format, ICC/EXIF of an image (JSON)")
    info.add_argument("input", help="image file")
    edit = sub.add_parser("edit", help="apply one operation to a region or the whole image")
    edit.add_argument("input", help="image file to edit")
    edit.add_argument("output", help="where to write the result (format from the suffix, "
                                     "else the input's)")
    edit.add_argument("--op", required=True, help="operation name (e.g. exposure, recolor)")
    edit.add_argument("--param", action="append", default=[], metavar="K=V",
                      help="operation parameter (repeatable); an image parameter takes a path")
    target = edit.add_mutually_exclusive_group()
    target.add_argument("--mask", help="mask image: white (or opaque) marks the region")
    target.add_argument("--phrase", help='phrase naming the region, e.g. "the red car"')
    target.add_argument("--box", help="region box x0,y0,x1,y1 in pixels")
    edit.add_argument("--kind", help="action kind when the operation serves several")
    edit.add_argument("--feather", type=int, default=None, help="feather width in pixels")
    edit.add_argument("--format", default=None, help="JPEG, PNG, WEBP, TIFF or BMP")
    edit.add_argument("--quality", type=int, default=95, help="JPEG/WebP quality (1-100)")
    sub.add_parser("models", help="which model serves each role", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (errors are one line on stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")

    def run() -> int:
        try:
            if argv[:1] == ["models"]:
                return cmd_models(argv[1:])
            args = build_parser().parse_args(argv)
            return cmd_info(args) if args.command == "info" else cmd_edit(args)
        except CliError as exc:
            return fail(str(exc), exc.code)

    return guarded(run, (ImageLoadError, ValueError, RuntimeError, OSError), code=EXIT_ERROR)


if __name__ == "__main__":
    raise SystemExit(main())
