"""Full-reference edit metrics: PSNR, SSIM, LPIPS and their Otsu-masked forms, plus
CLIP-I / CLIP-T / DINO and VQAScore / CIF when their models are here.

SSIM is scikit-image's default definition (7×7 uniform window, K1=0.01, K2=0.03, sample
covariance, reflected borders, the 3-pixel border cropped before averaging, mean over
channels) computed with OpenCV box filters in float32 on centred values, in row strips:
it agrees with ``skimage.metrics.structural_similarity`` to ~1e-7 and is several times
faster at 12 MP. Otsu-masked forms (Agent Banana §3.3) compute the metric only on the
background: pixels whose before/after difference falls at or below Otsu's threshold.

Every metric whose model is missing is reported as ``"unavailable"``, never as a number
from random weights.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines import embeddings
from pipelines.images import load_image
from pipelines.llm import get_model_llm
from pipelines.models import ModelUnavailable, get_manager

log = logging.getLogger(__name__)

UNAVAILABLE = "unavailable"
Box = tuple[int, int, int, int]
_STRIP_ROWS = 512


class MetricError(ValueError):
    """Inputs a metric cannot compare (shape, dtype, empty mask)."""


def _check_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    for name, img in (("before", a), ("after", b)):
        if not isinstance(img, np.ndarray) or img.ndim not in (2, 3) or img.size == 0:
            raise MetricError(f"{name} must be an image array, got {type(img).__name__} "
                              f"{getattr(img, 'shape', '')}")
    if a.shape[:2] != b.shape[:2]:
        raise MetricError(f"images differ in size: {a.shape[:2]} vs {b.shape[:2]}")
    if a.ndim == 3:
        a = a[..., :3]
    if b.ndim == 3:
        b = b[..., :3]
    if a.shape != b.shape:
        raise MetricError(f"images differ in channels: {a.shape} vs {b.shape}")
    return a, b


def _data_range(a: np.ndarray, data_range: float | None) -> float:
    if data_range is not None:
        return float(data_range)
    if a.dtype == np.uint8:
        return 255.0
    if a.dtype == np.uint16:
        return 65535.0
    raise MetricError(f"give data_range for {a.dtype} images")


def _check_mask(mask: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.shape != tuple(shape[:2]):
        raise MetricError(f"mask {mask.shape} does not match the image {shape[:2]}")
    return mask.astype(bool, copy=False)


# --- PSNR ------------------------------------------------------------------------------


def psnr(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None, *,
         data_range: float | None = None) -> float:
    """Peak signal-to-noise ratio in dB, over ``mask`` pixels when given.

    Args:
        a: reference image (uint8/uint16 or float with ``data_range``).
        b: compared image of the same shape.
        mask: optional ``bool`` (H, W): only these pixels count.
        data_range: peak value (inferred from the dtype for integer images).

    Returns:
        PSNR in dB; ``inf`` for identical pixels.

    Raises:
        MetricError: shapes differ or the mask is empty.
    """
    a, b = _check_pair(a, b)
    peak = _data_range(a, data_range)
    mask = _check_mask(mask, a.shape)
    count = a.shape[0] * a.shape[1] if mask is None else int(np.count_nonzero(mask))
    if count == 0:
        raise MetricError("the mask selects no pixel")
    if a.dtype == b.dtype and a.dtype in (np.uint8, np.uint16, np.float32):
        cv_mask = None if mask is None else np.ascontiguousarray(mask).view(np.uint8)
        total = cv2.norm(np.ascontiguousarray(a), np.ascontiguousarray(b), cv2.NORM_L2SQR,
                         mask=cv_mask)
    else:
        diff = a.astype(np.float64) - b.astype(np.float64)
        sq = diff * diff
        total = float((sq if mask is None else sq[mask]).sum())
    mse = total / (count * (a.shape[2] if a.ndim == 3 else 1))
    return math.inf if mse == 0 else 10.0 * math.log10(peak * peak / mse)


# --- SSIM ------------------------------------------------------------------------------


def _ssim_strip(x: np.ndarray, y: np.ndarray, win: int, peak: float) -> np.ndarray:
    """SSIM map (float32, channels averaged) of the windows that fit in the strip."""
    k, border = (win, win), cv2.BORDER_REFLECT
    n = win * win
    cov = n / (n - 1.0)
    c1, c2 = (0.01 * peak) ** 2, (0.03 * peak) ** 2
    off = np.float32(peak / 2.0)  # centred values keep float32 variances accurate
    xs = x.astype(np.float32)
    xs -= off
    ys = y.astype(np.float32)
    ys -= off

    def box(z: np.ndarray) -> np.ndarray:
        return cv2.boxFilter(z, -1, k, normalize=True, borderType=border)

    ux, uy = box(xs), box(ys)
    vxx, vyy, vxy = box(cv2.multiply(xs, xs)), box(cv2.multiply(ys, ys)), box(cv2.multiply(xs, ys))
    del xs, ys
    cv2.subtract(vxx, cv2.multiply(ux, ux), dst=vxx)
    cv2.subtract(vyy, cv2.multiply(uy, uy), dst=vyy)
    cv2.subtract(vxy, cv2.multiply(ux, uy), dst=vxy)
    cv2.add(ux, float(off), dst=ux)
    cv2.add(uy, float(off), dst=uy)
    a1 = cv2.multiply(ux, uy, scale=2.0)
    a1 += c1
    b1 = cv2.add(cv2.multiply(ux, ux), cv2.multiply(uy, uy))
    b1 += c1
    a2 = cv2.addWeighted(vxy, 2.0 * cov, vxy, 0.0, c2)
    b2 = cv2.addWeighted(vxx, cov, vyy, cov, c2)
    s = cv2.divide(cv2.multiply(a1, a2), cv2.multiply(b1, b2))
    pad = (win - 1) // 2
    s = s[pad:s.shape[0] - pad, pad:s.shape[1] - pad]
    return s.mean(axis=2, dtype=np.float64) if s.ndim == 3 else s.astype(np.float64)


def _ssim_sums(a: np.ndarray, b: np.ndarray, masks: list[np.ndarray | None], win: int,
               peak: float) -> list[tuple[float, int]]:
    """Sum and count of SSIM-map values over each mask (None = all), in one pass."""
    pad = (win - 1) // 2
    height, width = a.shape[:2]
    totals = [[0.0, 0] for _ in masks]
    for r0 in range(pad, height - pad, _STRIP_ROWS):
        r1 = min(height - pad, r0 + _STRIP_ROWS)
        s = _ssim_strip(a[r0 - pad:r1 + pad], b[r0 - pad:r1 + pad], win, peak)
        for total, mask in zip(totals, masks):
            if mask is None:
                total[0] += float(s.sum())
                total[1] += s.size
            else:
                m = mask[r0:r1, pad:width - pad]
                total[0] += float(s[m].sum())
                total[1] += int(np.count_nonzero(m))
    return [(t[0], t[1]) for t in totals]


def ssim_many(a: np.ndarray, b: np.ndarray, masks: list[np.ndarray | None], *,
              win_size: int = 7, data_range: float | None = None) -> list[float]:
    """``ssim`` over several masks (None = whole image) from one SSIM map.

    Returns:
        One mean per mask; ``nan`` where a mask selects no pixel inside the border.
    """
    a, b = _check_pair(a, b)
    peak = _data_range(a, data_range)
    masks = [_check_mask(m, a.shape) for m in masks]
    if win_size < 3 or win_size % 2 == 0:
        raise MetricError(f"win_size must be odd and >= 3, got {win_size}")
    if min(a.shape[:2]) < win_size:
        raise MetricError(f"images of {a.shape[:2]} are smaller than the {win_size}px window")
    return [t / n if n else math.nan for t, n in _ssim_sums(a, b, masks, win_size, peak)]


def ssim(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None, *,
         win_size: int = 7, data_range: float | None = None) -> float:
    """Mean structural similarity, scikit-image's default definition.

    Args:
        a: reference image (H, W) or (H, W, C).
        b: compared image of the same shape.
        mask: optional ``bool`` (H, W): average the SSIM map over these pixels only
            (the map's 3-pixel border is excluded, as scikit-image crops it).
        win_size: odd window side (7 like scikit-image).
        data_range: peak value (inferred for integer images).

    Returns:
        SSIM in [-1, 1].

    Raises:
        MetricError: shapes differ, the image is smaller than the window, empty mask.
    """
    value = ssim_many(a, b, [mask], win_size=win_size, data_range=data_range)[0]
    if math.isnan(value):
        raise MetricError("the mask selects no pixel inside the SSIM window border")
    return value


# --- Otsu background -------------------------------------------------------------------


def otsu_background(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Background mask of an edit: difference at or below Otsu's threshold.

    Args:
        before: the image before the edit.
        after: the image after the edit (same shape).

    Returns:
        ``bool`` (H, W), ``True`` on pixels treated as unedited background (all of them
        when the images are identical).
    """
    a, b = _check_pair(before, after)
    diff = cv2.absdiff(np.ascontiguousarray(a), np.ascontiguousarray(b))
    if diff.ndim == 3:
        channels = cv2.split(diff)
        diff = channels[0]
        for channel in channels[1:]:
            diff = cv2.max(diff, channel)
    if diff.dtype != np.uint8:
        diff = np.clip(diff.astype(np.float64) * 255.0 / _data_range(a, None), 0, 255)
        diff = diff.astype(np.uint8)
    if not diff.any():
        return np.ones(diff.shape, bool)
    threshold, _ = cv2.threshold(diff, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return diff <= threshold


def psnr_om(before: np.ndarray, after: np.ndarray) -> float:
    """PSNR on the Otsu background of the edit (see ``otsu_background``)."""
    return psnr(before, after, otsu_background(before, after))


def ssim_om(before: np.ndarray, after: np.ndarray) -> float:
    """SSIM averaged over the Otsu background of the edit."""
    return ssim(before, after, otsu_background(before, after))


# --- LPIPS / ST-LPIPS ------------------------------------------------------------------

_PERCEPTUAL: dict[str, Any] = {}


class MetricUnavailable(RuntimeError):
    """A metric's model is not present here (the message says which)."""


def perceptual_backend() -> str:
    """``"lpips"`` when torchvision's AlexNet weights are cached, else ``"st_lpips"``.

    The model comes from the model manager's ``lpips`` role (which picks between the two).

    Raises:
        MetricUnavailable: neither model can be built from files present here.
    """
    if "name" not in _PERCEPTUAL:
        try:
            loaded = get_manager().load("lpips")
        except ModelUnavailable as exc:
            raise MetricUnavailable(exc.reason) from None
        except ImportError as exc:
            raise MetricUnavailable(f"no LPIPS package: {exc}") from None
        _PERCEPTUAL["model"], _PERCEPTUAL["name"] = loaded.model, loaded.extra["kind"]
    return _PERCEPTUAL["name"]


def _work_size(shape: tuple[int, ...], max_side: int | None) -> tuple[int, int]:
    height, width = shape[:2]
    if max_side is None or max(height, width) <= max_side:
        return width, height
    scale = max_side / max(height, width)
    return max(16, round(width * scale)), max(16, round(height * scale))


def _tensor(img: np.ndarray, size: tuple[int, int]) -> Any:
    import torch

    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    if (img.shape[1], img.shape[0]) != size:
        img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
    t = torch.from_numpy(np.array(img[..., :3], dtype=np.float32)).permute(2, 0, 1)
    return (t / 127.5 - 1.0).unsqueeze(0)


def lpips_map(a: np.ndarray, b: np.ndarray, *, max_side: int | None = 1024) -> np.ndarray:
    """Per-pixel LPIPS (or ST-LPIPS) distance map at the working size.

    Args:
        a: reference uint8 image.
        b: compared uint8 image.
        max_side: images are resampled (area) so the long side is at most this; None
            works at native size (slow on CPU at 4K+).

    Returns:
        float32 (h, w) map at the working size; its mean is the distance.

    Raises:
        MetricUnavailable: no LPIPS model can be built here.
    """
    import torch

    a, b = _check_pair(a, b)
    perceptual_backend()
    size = _work_size(a.shape, max_side)
    model = _PERCEPTUAL["model"]
    device = next(model.parameters()).device
    with torch.inference_mode():
        out = model(_tensor(a, size).to(device), _tensor(b, size).to(device))
        if out.dim() == 4 and out.shape[-2:] != (size[1], size[0]):
            out = torch.nn.functional.interpolate(out, size=(size[1], size[0]),
                                                  mode="bilinear", align_corners=False)
    result = out.float().cpu().numpy().reshape(out.shape[-2:] if out.dim() == 4 else (1, 1))
    if result.size == 1:
        return np.full((size[1], size[0]), float(result.ravel()[0]), np.float32)
    return result.astype(np.float32)


def _enable_spatial() -> None:
    model = _PERCEPTUAL["model"]
    if hasattr(model, "spatial"):
        model.spatial = True


def lpips_distance(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None, *,
                   max_side: int | None = 1024) -> float:
    """LPIPS distance (ST-LPIPS when LPIPS's backbone is absent; see ``perceptual_backend``).

    Args:
        a: reference uint8 image.
        b: compared uint8 image.
        mask: optional ``bool`` (H, W): average the spatial map over these pixels.
        max_side: working long side (see ``lpips_map``).

    Returns:
        The distance (0 = identical).

    Raises:
        MetricUnavailable: no model; MetricError: empty mask or bad shapes.
    """
    a, b = _check_pair(a, b)
    mask = _check_mask(mask, a.shape)
    perceptual_backend()
    _enable_spatial()
    dist = lpips_map(a, b, max_side=max_side)
    if mask is None:
        return float(dist.mean(dtype=np.float64))
    small = cv2.resize(mask.astype(np.float32), (dist.shape[1], dist.shape[0]),
                       interpolation=cv2.INTER_AREA) >= 0.5
    if not small.any():
        raise MetricError("the mask selects no pixel at the LPIPS working size")
    return float(dist[small].mean(dtype=np.float64))


def lpips_om(before: np.ndarray, after: np.ndarray, *, max_side: int | None = 1024) -> float:
    """LPIPS averaged over the Otsu background of the edit."""
    return lpips_distance(before, after, otsu_background(before, after), max_side=max_side)


# --- model-based metrics ---------------------------------------------------------------


def _optional(fn: Callable[[], float], missing: tuple[type[BaseException], ...]) -> float | str:
    """Run a model metric; ``"unavailable"`` when its model or package is not here."""
    try:
        return fn()
    except (ImportError, *missing) as exc:
        log.info("metric unavailable: %s", exc)
        return UNAVAILABLE


def embedding_metrics(before: np.ndarray, after: np.ndarray,
                      instruction: str | None = None) -> dict[str, float | str]:
    """CLIP-I, DINO and (with an instruction) CLIP-T through ``pipelines.embeddings``.

    Returns:
        ``{"clip_i", "dino", "clip_t"}``, each a float or ``"unavailable"``.
    """
    missing = (embeddings.ModelUnavailable, MetricUnavailable)
    out: dict[str, float | str] = {
        "clip_i": _optional(lambda: embeddings.clip_image_similarity(before, after), missing),
        "dino": _optional(lambda: embeddings.dino_similarity(before, after), missing),
    }
    out["clip_t"] = UNAVAILABLE if not instruction else _optional(
        lambda: embeddings.clip_text_similarity(after, instruction), missing)
    return out


def vlm_metrics(before: np.ndarray, after: np.ndarray, instruction: str | None,
                repeats: int = 3) -> dict[str, float | str]:
    """VQAScore and CIF through the configured VLM (``"unavailable"`` without one)."""
    if not instruction:
        return {"vqascore": UNAVAILABLE, "cif": UNAVAILABLE}
    model = get_model_llm()
    if model is None:
        return {"vqascore": UNAVAILABLE, "cif": UNAVAILABLE}
    score = vqa_score(model, before, after, instruction, repeats=repeats)
    return {"vqascore": score, "cif": 1.0 if score >= 1.0 else 0.0}


_QUESTIONS_SCHEMA = {
    "type": "object", "required": ["questions"],
    "properties": {"questions": {"type": "array", "minItems": 1, "maxItems": 8,
                                 "items": {"type": "string", "minLength": 3,
                                           "maxLength": 300}}}}
_ANSWER_SCHEMA = {"type": "object", "required": ["answer"],
                  "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}}}
_ANALYST = ("You turn an image-editing instruction into a short checklist of yes/no "
            "questions, one per visual change the instruction requires, each answerable "
            "by looking at the edited image. Reply with JSON only.")
_CHECKER = ("You see two images: the original first, the edited one second. Answer the "
            "question about the edited image with yes or no. Reply with JSON only.")


def vqa_score(model: Any, before: np.ndarray, after: np.ndarray, instruction: str, *,
              repeats: int = 3) -> float:
    """VQAScore (MSRA-MIE §3.1): the share of checklist questions answered "yes".

    The instruction is split into yes/no questions by the model; each question is asked
    ``repeats`` times about (before, after) and settled by majority.

    Args:
        model: an object with the ``pipelines.llm.LLM`` protocol (``complete_json``).
        before: the source image.
        after: the edited image.
        instruction: the edit instruction.
        repeats: answers per question (odd avoids ties; ties count as "no").

    Returns:
        The fraction in [0, 1]; CIF is 1 when it is exactly 1.
    """
    data = model.complete_json(_ANALYST, [{"role": "user", "content": instruction}], None,
                               _QUESTIONS_SCHEMA)
    questions = [str(q) for q in data["questions"]]
    yes = 0
    for question in questions:
        votes = sum(model.complete_json(_CHECKER, [{"role": "user", "content": question}],
                                        [before, after], _ANSWER_SCHEMA)["answer"] == "yes"
                    for _ in range(max(1, repeats)))
        yes += votes * 2 > max(1, repeats)
    return yes / len(questions)


# --- one call for everything -----------------------------------------------------------


def _bbox_mask(bbox: Box, shape: tuple[int, ...]) -> np.ndarray:
    x0, y0, x1, y1 = (int(v) for v in bbox)
    height, width = shape[:2]
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise MetricError(f"bbox {bbox} is not inside the {width}x{height} image")
    mask = np.zeros((height, width), bool)
    mask[y0:y1, x0:x1] = True
    return mask


def load_mask(path: str | Path, shape: tuple[int, ...]) -> np.ndarray:
    """Read a mask image (non-zero = edit area) and check it matches ``shape``."""
    pixels = load_image(path).pixels
    mask = pixels[..., :3].max(axis=2) > 127 if pixels.ndim == 3 else pixels > 127
    if mask.shape != tuple(shape[:2]):
        raise MetricError(f"mask {mask.shape} does not match the image {shape[:2]}")
    return mask


def score_pair(before: np.ndarray, after: np.ndarray, *, mask: np.ndarray | None = None,
               bbox: Box | None = None, instruction: str | None = None,
               lpips_side: int | None = 1024, models: bool = True,
               judge: Callable[..., dict] | None = None) -> dict[str, Any]:
    """Every metric available here for one edit.

    Args:
        before: the source image (uint8).
        after: the edited image; resampled to ``before``'s size when it differs
            (reported as ``resized_after``).
        mask: optional edit area (``True`` = edited); adds ``*_outside`` metrics on the
            rest of the image.
        bbox: optional edit box ``(x0, y0, x1, y1)``, an alternative to ``mask``.
        instruction: the edit instruction, for CLIP-T and VQAScore/CIF.
        lpips_side: working long side of LPIPS (None = native, 0 = skip LPIPS).
        models: also try the model-based metrics (CLIP/DINO/VLM).
        judge: with an instruction, an instruction-following judge
            (``eval.systems.get_judge()``: the agent's critic) adds ``if_score`` etc.
            (see ``instruction_following``).

    Returns:
        ``psnr``, ``ssim``, ``lpips`` or ``st_lpips``, ``psnr_om``, ``ssim_om``,
        ``lpips_om`` or ``st_lpips_om``, ``om_background``, optional ``*_outside``,
        ``clip_i``, ``clip_t``, ``dino``, ``vqascore``, ``cif``; unavailable metrics
        hold ``"unavailable"``.
    """
    before, after = np.asarray(before), np.asarray(after)
    out: dict[str, Any] = {}
    if before.shape[:2] != after.shape[:2]:
        after = cv2.resize(after, (before.shape[1], before.shape[0]),
                           interpolation=cv2.INTER_CUBIC)
        out["resized_after"] = True
    before, after = _check_pair(before, after)
    if mask is not None and bbox is not None:
        raise MetricError("give a mask or a bbox, not both")
    area = _check_mask(mask, before.shape) if mask is not None else (
        _bbox_mask(bbox, before.shape) if bbox is not None else None)
    background = otsu_background(before, after)
    outside = None if area is None or area.all() else ~area
    full, om, out_ssim = ssim_many(before, after, [None, background, outside])
    out.update(psnr=psnr(before, after), ssim=full, psnr_om=psnr(before, after, background),
               ssim_om=om, om_background=float(background.mean()))
    if lpips_side != 0:
        out.update(_perceptual(before, after, background, area, lpips_side))
    if outside is not None:
        out["psnr_outside"] = psnr(before, after, outside)
        out["ssim_outside"] = out_ssim
        out["edit_area"] = float(area.mean())
    if models:
        out.update(embedding_metrics(before, after, instruction))
        out.update(vlm_metrics(before, after, instruction))
    if judge is not None and instruction:
        out.update(instruction_following(before, after, instruction, judge, area))
    return out


#: the IF score at or above which an edit counts as following its instruction
IF_FOLLOWED = 0.7
CANNOT_DECIDE = "cannot decide"


def instruction_following(before: np.ndarray, after: np.ndarray, instruction: str,
                          judge: Callable[..., dict], mask: np.ndarray | None = None
                          ) -> dict[str, Any]:
    """The judge's verdict as an instruction-following score, offline (no VLM needed).

    Args:
        before, after: the pair (same size).
        instruction: what was asked.
        judge: ``judge(before, after, instruction, mask) -> {"score" 0–10, "passed",
            "reasons", "decided"}`` (the agent's critic registers one).
        mask: the edited area when known (None: the judge finds the target itself).

    Returns:
        ``if_score`` (the judge's score / 10, or ``"cannot decide"``), ``if_followed``
        (False when it cannot decide), ``if_reasons`` (plain words) and
        ``if_undecided`` (checks that could not decide).
    """
    try:
        verdict = judge(before, after, instruction, mask)
    except Exception as exc:  # noqa: BLE001 — a failing judge is "cannot decide", said so
        log.warning("instruction-following judge failed: %s", exc)
        return {"if_score": CANNOT_DECIDE, "if_followed": False,
                "if_reasons": [f"the judge failed: {exc}"], "if_undecided": []}
    undecided = sorted({f"{name}: {why}" for step in verdict.get("steps", [])
                        for name, why in (step.get("undecided") or {}).items()})
    reasons = [str(r) for r in verdict.get("reasons", [])]
    if not verdict.get("decided", True):
        return {"if_score": CANNOT_DECIDE, "if_followed": False, "if_reasons": reasons,
                "if_undecided": undecided}
    score = max(0.0, min(1.0, float(verdict.get("score", 0.0)) / 10.0))
    return {"if_score": round(score, 3),
            "if_followed": bool(verdict.get("passed")) and score >= IF_FOLLOWED,
            "if_reasons": reasons, "if_undecided": undecided}


def _perceptual(before: np.ndarray, after: np.ndarray, background: np.ndarray,
                area: np.ndarray | None, side: int | None) -> dict[str, Any]:
    try:
        name = perceptual_backend()
        _enable_spatial()
    except MetricUnavailable as exc:
        log.info("LPIPS unavailable: %s", exc)
        return {"lpips": UNAVAILABLE, "lpips_om": UNAVAILABLE}
    dist = lpips_map(before, after, max_side=side)
    size = (dist.shape[1], dist.shape[0])

    def over(mask: np.ndarray) -> float | str:
        small = cv2.resize(mask.astype(np.float32), size, interpolation=cv2.INTER_AREA) >= 0.5
        return float(dist[small].mean(dtype=np.float64)) if small.any() else UNAVAILABLE

    out: dict[str, Any] = {name: float(dist.mean(dtype=np.float64)),
                           f"{name}_om": over(background)}
    if area is not None and not area.all():
        out[f"{name}_outside"] = over(~area)
    return out
