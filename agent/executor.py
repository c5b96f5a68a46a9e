"""The one executor: how an action becomes pixels, for the turn loop and both searches.

``cut(image, mask, request, editor)`` takes the layer an edit works on (the mask's box
with the context the operation needs, DLEBench's λ(s) rule by default);
``run(layer, request, editor)`` edits that layer and composes the result back into the
layer's own pixels at native resolution (feathered, only masked pixels change);
``execute(image, request, mask)`` does both. The result is an ``Execution``: the layer and
its edited patch, which the turn loop stores as a state of the graph and the searches
paste into their working images.

Two strategies keep whole-frame edits fast without changing what they do:

* a whole-frame edit by a model that works at its own size goes through
  ``edit_whole_frame`` (the model sees the frame at its working size; only the
  low-frequency change is carried back, so native detail survives);
* with ``fast=True`` (the searches), whole-frame per-channel curves run as a 1-D look-up
  table measured by the same editor on a ramp, and smooth gain fields (shadows,
  highlights, vignette) are computed on a 1024-px copy and carried over.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from agent.actions import Action
from pipelines.editors.base import Editor, EditRequest
from pipelines.editors.objects import grow_object_mask, growth_limit, moved_mask
from pipelines.editors.operations import get_operation, operations_with
from pipelines.editors.registry import pick_editor
from pipelines.images import downscale
from pipelines.layers import (
    Layer,
    compose,
    decompose,
    default_feather,
    feather_for,
    mask_bbox,
    spread_beyond,
)
from pipelines.operations.errors import EditError
from pipelines.wholeframe import edit_whole_frame

#: Operations whose result at a pixel depends only on that pixel (and statistics of the
#: masked pixels): their patch needs no surrounding context.
POINTWISE_OPS = operations_with("pointwise")
#: Per-channel tone curves (a look-up table reproduces them on large frames).
CURVE_OPS = operations_with("curve")
#: Operations on a whole object: the mask first grows over its anti-aliased edge/shadow.
OBJECT_EDGE_OPS = operations_with("object_edge")
#: Operations that move the target (their layer holds where it lands as well).
MOVING_OPS = operations_with("moves_target")
#: Removals: the hole takes every ring that stands out around the object (a halo; the
#: fill check's measures were set on such holes); the others grow only while it fades.
REMOVING_OPS = operations_with("removes_target")
#: Object operations that keep the object where it is (a recolour): ``coverage`` unmixes
#: its edge pixels by colour, so its mask grows over the anti-aliased edge and the
#: localiser's scale-up error only (``EDGE_BAND`` of the long side), not over a cast
#: shadow as far as a removal's: on a bus among buses and trees the quarter-radius growth
#: (44 px at 500 px) took a neighbour's orange and specks of foliage, recoloured blue.
IN_PLACE_OBJECT_OPS = OBJECT_EDGE_OPS - MOVING_OPS - REMOVING_OPS
EDGE_BAND, EDGE_BAND_MIN = 0.005, 4
#: Smooth gain fields (carried over from a small copy on large frames).
LOW_FREQUENCY_OPS = operations_with("low_frequency")
#: Frame size (pixels) above which the fast strategies are worth their setup.
LUT_MIN_PIXELS = 600_000
GAIN_MIN_PIXELS = 1_200_000
#: Long side of the copy the fast strategies measure on.
FAST_SIDE = 1024


@dataclass
class Execution:
    """An executed edit: the layer it worked on and that layer's pixels after the edit.

    Attributes:
        layer: bbox (full-resolution pixels), the patch before the edit, the soft mask.
        patch: the patch after the edit, composed (feathered) into the layer's own pixels.
        feather: the feather width used.
    """

    layer: Layer
    patch: np.ndarray
    feather: int
    region: np.ndarray | None = None

    @property
    def changed_area(self) -> np.ndarray:
        """Where the edit may change pixels, in the patch: the target, plus where a moved
        target lands."""
        return self.layer.mask if self.region is None else self.region

    def paste(self, image: np.ndarray, *, copy: bool = True) -> np.ndarray:
        """The frame with the edited patch in place (a copy unless ``copy=False``)."""
        out = np.array(image, copy=True) if copy else image
        x0, y0, x1, y1 = self.layer.bbox
        out[y0:y1, x0:x1] = self.patch
        return out


def as_request(action: Action | EditRequest, *, seed: int = 0,
               params: dict | None = None) -> EditRequest:
    """The editor request for an action (a request is returned as it is)."""
    if isinstance(action, EditRequest):
        return action
    return action.to_request(seed=seed) if params is None else \
        action.to_request(seed=seed, params=params)


def context_for(operation: str, editor: Editor, mask: np.ndarray) -> float | None:
    """Crop context for ``decompose``: DLEBench's λ(s) (None) where the editor can use the
    surroundings; for per-pixel operations at native size just the feather band plus a
    margin, so big targets do not drag 2.5× their area through the editor."""
    if operation not in POINTWISE_OPS or getattr(editor, "working_size", None):
        return None
    box = mask_bbox(mask)
    if box is None:
        return None
    short = max(1, min(box[2] - box[0], box[3] - box[1]))
    return (2 * feather_for(mask) + 8) / short


def cut(image: np.ndarray, mask: np.ndarray, request: EditRequest, editor: Editor,
        avoid: np.ndarray | None = None, within: np.ndarray | None = None) -> Layer:
    """The layer an edit of ``request`` by ``editor`` works on.

    For operations on a whole object (remove, recolour, move) the mask is first grown over
    the object's anti-aliased edge and cast shadow (``objects.grow_object_mask``; a
    recolour over its edge only, ``IN_PLACE_OBJECT_OPS``), so no rim of the old object is
    left outside it; never into ``avoid`` (the other objects the localiser saw, bool at
    the image's size) or pixels nearer their colour, nor beyond ``within`` (bool, the
    image's size) when given.
    """
    if request.operation in OBJECT_EDGE_OPS:
        band = max(EDGE_BAND_MIN, round(EDGE_BAND * max(image.shape[:2]))) \
            if request.operation in IN_PLACE_OBJECT_OPS else None
        mask, _ = grow_object_mask(image, mask, avoid, band=band,
                                   fade=request.operation not in REMOVING_OPS)
    if within is not None:
        mask = mask & within
    if request.operation in MOVING_OPS:   # the box must hold where the target lands too
        params = get_operation(request.operation).validate(request.params)
        height, width = image.shape[:2]
        shift = (params["dx"] * width, params["dy"] * height)
        whole = decompose(image, mask | moved_mask(mask, params["scale"], shift))
        rows, cols = whole.slices
        return Layer(whole.bbox, whole.patch, np.ascontiguousarray(mask[rows, cols]))
    return decompose(image, mask, context=context_for(request.operation, editor, mask))


def rim_layer(image: np.ndarray, layer: Layer, grow: int, request: EditRequest,
              editor: Editor, target: np.ndarray | None, avoid: np.ndarray | None = None
              ) -> Layer | None:
    """The layer of a retry that covers a rim the last attempt left (``layer``'s mask
    dilated by ``grow`` px, cut again), never farther from ``target`` (the thing as
    located, bool at the image's size) than its edge may grow (``growth_limit``): past
    that the "rim" is the surround's own colour (a drop's dark glow on a darker print
    went with it, 10 px beyond the drop's reach, and was reported done). ``target=None``
    (the user's own brush or box, which may have missed the object): no such bound.
    None when the retry adds nothing to ``layer``.
    """
    height, width = image.shape[:2]
    within = None
    if target is not None:
        target = np.asarray(target, bool)
        box = mask_bbox(target)
        if box is None or target.all():
            return None
        reach = growth_limit(target)
        x0, y0 = max(0, box[0] - reach - 1), max(0, box[1] - reach - 1)
        x1, y1 = min(width, box[2] + reach + 1), min(height, box[3] + reach + 1)
        within = np.zeros((height, width), bool)
        far = cv2.distanceTransform((~target[y0:y1, x0:x1]).view(np.uint8), cv2.DIST_L2, 5)
        within[y0:y1, x0:x1] = far <= reach
    mask = np.zeros((height, width), bool)
    lx0, ly0, lx1, ly1 = layer.bbox
    mask[ly0:ly1, lx0:lx1] = layer.mask
    kernel = np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)
    wider = cut(image, cv2.dilate(mask.view(np.uint8), kernel).astype(bool), request, editor,
                avoid, within)
    wx0, wy0, wx1, wy1 = wider.bbox
    if not (mask[wy0:wy1, wx0:wx1] < wider.mask).any():
        return None
    return wider


def run(layer: Layer, request: EditRequest, editor: Editor, *, feather: int | None = None,
        fast: bool = False, frame_size: tuple[int, int] | None = None) -> Execution:
    """Edit the layer and compose the result into its own pixels.

    Args:
        layer: from ``cut`` (or ``decompose``).
        request: what to do.
        editor: who does it.
        feather: the feather width; default ``default_feather(layer)`` (the target's own,
            ``feather_for`` its mask). Never more than that outside the mask: a wider one
            fades the edit in from inside the mask instead (at most that width again).
        fast: allow the look-up-table / gain-map strategies on whole frames.
        frame_size: the full frame's ``(width, height)``, for operations measured in
            fractions of the frame (``transform``).

    Returns:
        The ``Execution``.

    Raises:
        EditError: the composed patch changed a pixel farther than its feather from the
            target (``check_reach``): never reported done.
    """
    own = default_feather(layer)
    band = own if feather is None else int(feather)
    # the Layer invariant names the target's own feather: a wider one asked for (a retry
    # after a seam) softens the edge inside the target instead, never beyond that
    # feather, and by at most as much again (a fade twice as wide: a small target's
    # edge is not left barely edited)
    band, inner = min(band, own), min(own, max(0, band - own))
    if request.operation in MOVING_OPS:
        return check_reach(_run_move(layer, request, editor, band, frame_size, inner))
    whole = bool(layer.mask.all())
    if whole and fast and _fast_kind(request.operation, layer.patch) is not None:
        return Execution(layer, _fast_edit(layer.patch, request, editor), band)
    if whole and getattr(editor, "working_area", None):
        edited = edit_whole_frame(layer.patch, editor, request)
    else:
        edited = editor.edit(layer.patch, layer.mask, request, margin=band)
    return check_reach(Execution(layer, _compose_patch(layer, edited, band, inner), band))


def check_reach(done: Execution) -> Execution:
    """``done`` when nothing it changed lies farther than its feather from where it may
    change (``Execution.changed_area``); else an ``EditError``, so the step fails instead
    of being reported done with pixels changed beyond the target (issue 32)."""
    area = done.changed_area
    if area.all():
        return done
    spread = spread_beyond(done.layer.patch, done.patch, area, done.feather)
    if spread:
        raise EditError(f"the edit changed {spread} px farther than its feather "
                        f"({done.feather} px) from the target; nothing was applied")
    return done


def execute(image: np.ndarray, action: Action | EditRequest, mask: np.ndarray | None = None,
            *, editor: Editor | None = None, seed: int = 0, params: dict | None = None,
            feather: int | None = None, fast: bool = False) -> Execution:
    """Apply one action to an image: cut the layer, edit it, compose it.

    Args:
        image: ``uint8`` RGB/RGBA frame at native resolution.
        action: an ``Action`` or an ``EditRequest``.
        mask: the target (bool, the image's size); None = the whole frame.
        editor: default: the first available editor for the request.
        seed: passed to the editor (with an ``Action``).
        params: overrides the action's parameters (with an ``Action``).
        feather: the feather width; default from the layer.
        fast: allow the fast whole-frame strategies (see the module doc).

    Returns:
        The ``Execution``; ``execution.paste(image)`` gives the edited frame.
    """
    request = as_request(action, seed=seed, params=params)
    editor = editor or pick_editor(request)
    frame = (image.shape[1], image.shape[0])
    if mask is None and fast and request.operation not in MOVING_OPS and \
            _fast_kind(request.operation, image) is not None:
        # the whole frame through a curve or a gain map reads the frame in place: the
        # layer is the frame itself, not a copy of it (nothing writes to it)
        layer = Layer((0, 0, *frame), image, np.ones(image.shape[:2], bool))
        return run(layer, request, editor, feather=feather, fast=True, frame_size=frame)
    if mask is None:
        mask = np.ones(image.shape[:2], bool)
    return run(cut(image, mask, request, editor), request, editor, feather=feather, fast=fast,
               frame_size=frame)


def _run_move(layer: Layer, request: EditRequest, editor: Editor, band: int,
              frame_size: tuple[int, int] | None, inner: int = 0) -> Execution:
    """A moving edit: the editor gets the target's mask and the frame geometry; the result
    is composed over where the target was and where it lands."""
    if frame_size is None:
        raise ValueError(f"{request.operation} needs the frame size")
    request = replace(request, frame=(layer.bbox[0], layer.bbox[1], *frame_size))
    edited = editor.edit(layer.patch, layer.mask, request, margin=band)
    params = get_operation(request.operation).validate(request.params)
    region = layer.mask | moved_mask(layer.mask, params["scale"], request.shift_px(params))
    area = Layer(layer.bbox, layer.patch, region)
    return Execution(layer, _compose_patch(area, edited, band, inner), band, region)


def _compose_patch(layer: Layer, edited: np.ndarray, feather: int, inner: int = 0
                   ) -> np.ndarray:
    """Compose an edited patch back into the layer's own pixels (native resolution).

    A whole-frame edit at the frame's size is taken as is: there is no edge to feather
    (a feather would only fade the edit out along the image border).
    """
    height, width = layer.patch.shape[:2]
    if edited.shape == layer.patch.shape and layer.mask.all():
        return edited
    local = Layer((0, 0, width, height), layer.patch, layer.mask)
    return compose(layer.patch, local, edited, feather=feather, inner=inner)


# --------------------------------------------------------------------------- fast paths


def _fast_kind(operation: str, image: np.ndarray) -> str | None:
    pixels = image.shape[0] * image.shape[1]
    if operation in CURVE_OPS and pixels > LUT_MIN_PIXELS:
        return "lut"
    if operation in LOW_FREQUENCY_OPS and pixels > GAIN_MIN_PIXELS:
        return "gain"
    return None


def _fast_edit(image: np.ndarray, request: EditRequest, editor: Editor) -> np.ndarray:
    rgb = np.ascontiguousarray(image[..., :3])
    if _fast_kind(request.operation, image) == "lut":
        lut = _channel_lut(rgb, request, editor)
        if image.shape[2] == 4:   # alpha through an identity curve
            lut = np.hstack([lut, np.arange(256, dtype=np.uint8)[:, None]])
        # one pass with a per-channel table (8x the three single-channel LUTs + dstack)
        table = np.ascontiguousarray(lut).reshape(256, 1, image.shape[2])
        return cv2.LUT(np.ascontiguousarray(image), table)
    out = _gain_transfer(rgb, request, editor)
    if image.shape[2] == 4:
        full = np.empty(image.shape, np.uint8)
        full[..., :3], full[..., 3] = out, image[..., 3]
        return full
    return np.ascontiguousarray(out)


def _whole(image: np.ndarray, request: EditRequest, editor: Editor) -> np.ndarray:
    return editor.edit(image, np.ones(image.shape[:2], bool), request)


def _channel_lut(rgb: np.ndarray, request: EditRequest, editor: Editor) -> np.ndarray:
    """The op's per-channel curve, measured by the editor on a ramp under the image's stats
    (the small copy sits above the ramp, so statistics-driven ops see the image's)."""
    stats = downscale(rgb, FAST_SIDE)
    width = stats.shape[1]
    rows = math.ceil(256 / width)
    ramp = np.zeros((rows * width, 3), np.uint8)
    ramp[:256] = np.arange(256, dtype=np.uint8)[:, None]
    ramp[256:] = 128
    probe = np.vstack([stats, ramp.reshape(rows, width, 3)])
    return _whole(probe, request, editor)[stats.shape[0]:].reshape(-1, 3)[:256]


def _gain_transfer(rgb: np.ndarray, request: EditRequest, editor: Editor) -> np.ndarray:
    """Apply a low-frequency op via its gain map computed on a 1024-px copy."""
    small = downscale(rgb, FAST_SIDE)
    edited = _whole(small, request, editor).astype(np.float32)
    gain = (edited + 4.0) / (small.astype(np.float32) + 4.0)
    gain = cv2.GaussianBlur(gain, (0, 0), 1.5)
    gain = cv2.resize(gain, (rgb.shape[1], rgb.shape[0]), interpolation=cv2.INTER_LINEAR)
    out = cv2.multiply(rgb.astype(np.float32) + 4.0, gain) - 4.0
    return np.clip(out, 0, 255).astype(np.uint8)
