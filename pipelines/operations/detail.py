"""Detail: sharpen, denoise, blur, local contrast (CLAHE)."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from pipelines.operations.base import Family, Operation, ParamSpec, Proposal, asks
from pipelines.operations.engines import FloatOp
from pipelines.operations.lexicon import number
from pipelines.operations.measures import Measured, Verdict, detail, noise_sigma
from pipelines.operations.pixels import from_lab, luma, sigma_blur, to_lab

family = Family("detail")

# ------------------------------------------------------------------------------ pixels

def _clahe(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    lab = to_lab(rgb)
    light = np.clip(lab[..., 0] * 655.35, 0, 65535).astype(np.uint16)
    tiles = max(1, min(p["tile"], *light.shape))
    clahe = cv2.createCLAHE(clipLimit=p["clip_limit"], tileGridSize=(tiles, tiles))
    lab[..., 0] = clahe.apply(light).astype(np.float32) / 655.35
    return from_lab(lab)



def _sharpen(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return rgb + p["amount"] * (rgb - sigma_blur(rgb, p["radius"]))


def _blur(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return sigma_blur(rgb, p["radius"])


_IMMERKAER = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float32)


def estimate_noise(rgb: np.ndarray) -> float:
    """Noise standard deviation in grey levels (0–255), Immerkær's fast estimator.

    Args:
        rgb: uint8 RGB image (or float in [0, 1]).

    Returns:
        The estimated σ of additive Gaussian noise on the luma, in 0–255 units.
    """
    scale = 1.0 if rgb.dtype == np.uint8 else 255.0
    grey = luma(rgb[..., :3].astype(np.float32) * scale)
    h, w = grey.shape
    if min(h, w) < 3:
        return 0.0
    response = cv2.filter2D(grey, -1, _IMMERKAER)[1:-1, 1:-1]
    return float(math.sqrt(math.pi / 2) * np.abs(response).sum() / (6.0 * (w - 2) * (h - 2)))


#: above this many pixels non-local means takes the faster luma + half-size chroma path
DENOISE_FULL_SEARCH_PIXELS = 4_000_000


def _denoise8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Non-local means with a strength scaled to the measured noise.

    Up to ``DENOISE_FULL_SEARCH_PIXELS`` the colour version runs as is; above, the luma
    gets a smaller search window and the chroma is denoised at half size (chroma noise
    is coarse), which keeps a 20-MP frame to a fraction of the time.
    """
    if p["strength"] <= 0 or min(rgb8.shape[:2]) < 3:
        return rgb8
    h = p["strength"] * (1.0 + 1.6 * estimate_noise(rgb8))   # ≈ 0.8 σ at the default
    if rgb8.shape[0] * rgb8.shape[1] <= DENOISE_FULL_SEARCH_PIXELS:
        return cv2.fastNlMeansDenoisingColored(rgb8, None, h=h, hColor=h,
                                               templateWindowSize=7, searchWindowSize=21)
    ycc = cv2.cvtColor(rgb8, cv2.COLOR_RGB2YCrCb)
    luma8 = cv2.fastNlMeansDenoising(np.ascontiguousarray(ycc[..., 0]), None, h=h,
                                     templateWindowSize=5, searchWindowSize=11)
    height, width = rgb8.shape[:2]
    half = cv2.resize(ycc[..., 1:], (width // 2, height // 2), interpolation=cv2.INTER_AREA)
    chroma = np.dstack([cv2.fastNlMeansDenoising(np.ascontiguousarray(half[..., c]), None,
                                                 h=h, templateWindowSize=5,
                                                 searchWindowSize=11) for c in range(2)])
    chroma = cv2.resize(chroma, (width, height), interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(np.dstack([luma8, chroma]), cv2.COLOR_YCrCb2RGB)

# ------------------------------------------------------------------------------ checks


def _greys(m: Measured) -> tuple[np.ndarray, np.ndarray]:
    gb = cv2.cvtColor(np.ascontiguousarray(m.before[..., :3]), cv2.COLOR_RGB2GRAY)
    ga = cv2.cvtColor(np.ascontiguousarray(m.after[..., :3]), cv2.COLOR_RGB2GRAY)
    return gb, ga


def check_detail_ratio(op: Operation, m: Measured, sharper: bool, name: str, more: float,
                       words: tuple[str, str]) -> Verdict:
    """Fine-detail energy up (``sharper``) or down, with a retry of ``name`` = ``more``."""
    gb, ga = _greys(m)
    db = detail(gb.astype(np.float32), m.inside)
    da = detail(ga.astype(np.float32), m.inside)
    if db < 0.5:
        return Verdict(0.8, keep=["the target has almost no detail to change"])
    ratio = da / db
    measures = {"detail_ratio": round(ratio, 3)}
    ok = ratio > 1.05 if sharper else ratio < 0.8
    if ok:
        return Verdict(1.0, keep=[words[0]], measures=measures)
    return Verdict(0.2, fix=[words[1]], retry={name: op.clamp(name, more, digits=3)},
                   measures=measures)


# ------------------------------------------------------------------------- operations


@family
class Sharpen(FloatOp):
    name = "sharpen"
    description = "Unsharp mask."
    params = (ParamSpec("amount", "float", 0.6, "strength", 0.0, 3.0),
              ParamSpec("radius", "float", 1.5, "radius in pixels", 0.3, 10.0))
    flags = frozenset({"strong", "fine_detail"})
    words = ("sharpen", "sharper", "crisper", "crisp", "more detail", "more detailed",
             "bring out the details", "unblur", "deblur", "in focus")
    grammar = "filter"
    reading_order = 7
    base = 0.6
    pattern = (r"\bsharpen\b|\bsharper\b|\bcrisper\b|\bcrisp\b|\bmore detail(?:ed)?\b|"
               r"\bbring out (?:the |more )?details?\b|"
               r"\bunblur\b|\bde-?blur\b|\bin focus\b")
    wording = "sharpen {where}"
    asks = (asks("sharpen", {"amount": 0.6}, "Sharpen",
                 "sharpen it|make it sharper|crisper details|it is blurry|less blurry|bring "
                 "out the details|more detail|it looks soft|unblur", "detail"),)
    proposals = (Proposal("need:soft", {"amount": 0.8, "radius": 1.5}),
                 Proposal("polish", {"amount": 0.3, "radius": 1.0}, "crisper detail", 3),
                 Proposal("pop", {"amount": 0.6}, "", 4))
    #: Autopilot: never on a noisy photo (sharpening re-grows the noise a denoise removed)
    gate = "noise"

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _sharpen(rgb, mask, p)

    def check(self, m: Measured) -> Verdict:
        return check_detail_ratio(self, m, True, "amount", m.params["amount"] * 1.8,
                                  ("the target is crisper", "the target is not visibly sharper"))


@family
class Denoise(Operation):
    name = "denoise"
    description = "Edge-preserving noise reduction."
    params = (ParamSpec("strength", "float", 0.5, "0 none … 1 strong", 0.0, 1.0),)
    main = "strength"
    flags = frozenset({"strong", "fine_detail"})
    words = ("denoise", "de-noise", "noise", "grain", "grainy", "graininess", "noisy",
             "speckles", "smooth the skin", "smoother")
    grammar = "filter"
    reading_order = 8
    base = 0.5
    pattern = (r"\bdenoise\b|\bde-?noise\b|\bnoise\b|\bgrain(?:y|iness)?\b|\bnoisy\b|"
               r"\bspeckles?\b|\bsmooth(?:en)? (?:out )?the skin\b|\bsmoother\b")
    wording = "reduce the noise in {where}"
    proposals = (Proposal("need:noise", {}),)
    asks = (asks("denoise", {"strength": 0.5}, "Reduce noise",
                 "reduce noise|denoise|it is grainy|remove the grain|too noisy|less noise|"
                 "clean up the noise|smooth out the grain", "detail"),)

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return _denoise8(rgb8, mask, params)

    def check(self, m: Measured) -> Verdict:
        gb, ga = _greys(m)
        nb, na = noise_sigma(gb, m.inside), noise_sigma(ga, m.inside)
        measures = {"noise_before": round(nb, 3), "noise_after": round(na, 3)}
        if nb < 1.5:
            return Verdict(0.9, keep=["there was little noise to remove"], measures=measures)
        if na < 0.85 * nb:
            return Verdict(1.0, keep=[f"noise reduced by {1 - na / nb:.0%}"],
                           measures=measures)
        return Verdict(0.2, fix=["the noise is not visibly reduced"],
                       retry={"strength": self.clamp("strength", m.params["strength"] + 0.3,
                                                     digits=3)},
                       measures=measures)


@family
class Blur(FloatOp):
    name = "blur"
    description = "Gaussian blur (background blur, softening)."
    params = (ParamSpec("radius", "float", 4.0, "radius in pixels", 0.0, 50.0),)
    main = "radius"
    flags = frozenset({"fine_detail"})
    words = ("blur", "blurred", "blurry", "bokeh", "out of focus", "soften", "softer",
             "defocus")
    grammar = "filter"
    reading_order = 9
    base = 4.0
    pattern = (r"\bblur(?:red|ry)?\b|\bbokeh\b|\bout of focus\b|\bsoften\b|\bsofter\b|"
               r"\bdefocus\b")
    wording = "blur {where}"
    complaint = r"blurry|blurred|out of focus"
    remedy = "sharpen"
    asks = (asks("blur", {"radius": 4.0}, "Blur",
                 "blur it|soften the image|make it blurry|dreamy soft focus|gaussian blur",
                 "detail"),)

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _blur(rgb, mask, p)

    def explicit_value(self, clause: str) -> float | None:
        return number(clause, r"px|pixels?")

    def check(self, m: Measured) -> Verdict:
        return check_detail_ratio(self, m, False, "radius", m.params["radius"] * 2,
                                  ("the target is softer", "the target is not visibly blurred"))


@family
class Clahe(FloatOp):
    name = "clahe"
    description = "Local contrast (CLAHE on lightness)."
    params = (ParamSpec("clip_limit", "float", 2.0, "contrast limit", 0.5, 10.0),
              ParamSpec("tile", "int", 8, "tiles per side", 2, 32))
    main = "clip_limit"
    flags = frozenset({"strong", "frame_filter", "tonal"})
    words = ("local contrast", "clarity", "clahe", "hdr", "micro-contrast", "micro contrast")
    grammar = "filter"
    reading_order = 6
    base = 2.0
    pattern = r"\blocal contrast\b|\bclarity\b|\bclahe\b|\bhdr\b|\bmicro[- ]?contrast\b"
    wording = "bring out local detail in {where}"
    bolder_off_faces = True
    asks = (asks("clarity", {"clip_limit": 2.0}, "More clarity",
                 "more clarity|local contrast|bring out texture|hdr look|micro contrast",
                 "detail"),)
    proposals = (Proposal("correction", {"clip_limit": 1.5, "tile": 8}, "local contrast", 10),
                 Proposal("polish", {"clip_limit": 1.5, "tile": 8}, "local contrast", 2),
                 Proposal("pop", {"clip_limit": 2.0}, "", 2))

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _clahe(rgb, mask, p)

    def check(self, m: Measured) -> Verdict:
        lb, la, inside = m.lb, m.la, m.inside

        def local(light: np.ndarray) -> float:
            mean = cv2.blur(light, (15, 15))
            sq = cv2.blur(light * light, (15, 15))
            return float(np.sqrt(np.maximum(sq - mean * mean, 0))[inside].mean())

        sb, sa = local(lb[..., 0]), local(la[..., 0])
        ok = sa > sb * 1.02
        return Verdict(1.0 if ok else 0.3, keep=["local contrast increased"] if ok else [],
                       fix=[] if ok else ["local contrast did not increase"],
                       retry={} if ok else {"clip_limit": self.clamp(
                           "clip_limit", m.params["clip_limit"] * 2, digits=3)},
                       measures={"local_std_before": sb, "local_std_after": sa})


# ------------------------------------------------------------------------------ dehaze


def dark_channel(rgb: np.ndarray, patch: int) -> np.ndarray:
    """The dark channel: each pixel's darkest channel, then the darkest over a ``patch``²
    window (haze lifts it; a clear, colourful scene keeps it near black)."""
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (patch, patch))
    return cv2.erode(np.min(rgb, axis=2), kernel, borderType=cv2.BORDER_REFLECT)


def _guided(guide: np.ndarray, src: np.ndarray, radius: int, eps: float) -> np.ndarray:
    """Edge-preserving smoothing of ``src`` steered by ``guide`` (a guided filter)."""
    size = (2 * radius + 1, 2 * radius + 1)

    def box(x: np.ndarray) -> np.ndarray:
        return cv2.blur(x, size, borderType=cv2.BORDER_REFLECT)

    mean_g, mean_s = box(guide), box(src)
    var_g = box(guide * guide) - mean_g * mean_g
    a = (box(guide * src) - mean_g * mean_s) / (var_g + eps)
    b = mean_s - a * mean_g
    return box(a) * guide + box(b)


def _dehaze(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Dark-channel-prior dehazing: estimate the haze's colour (the airlight, from the
    haziest pixels) and how much of it each pixel holds (the transmission, smoothed along
    edges), then take that share of airlight back out."""
    strength = p["amount"]
    h, w = rgb.shape[:2]
    if strength <= 0 or min(h, w) < 3:
        return rgb
    patch = int(np.clip(min(h, w) // 40, 3, 31)) | 1
    dark = dark_channel(rgb, patch)
    region = mask if mask.any() else np.ones(mask.shape, bool)
    values = dark[region]
    top = region & (dark >= np.quantile(values, 0.999))
    air = np.maximum(rgb[top].max(axis=0), 0.05).astype(np.float32)
    transmission = 1.0 - 0.95 * strength * dark_channel(rgb / air, patch)
    grey = cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2GRAY)
    transmission = _guided(grey, transmission.astype(np.float32), 4 * patch, 1e-3)
    transmission = np.clip(transmission, 0.1, 1.0)[..., None]
    return (rgb - air) / transmission + air


@family
class Dehaze(FloatOp):
    name = "dehaze"
    description = ("Remove haze: the airlight a hazy scene holds is taken back out (dark "
                   "channel prior), restoring contrast and colour in the distance.")
    params = (ParamSpec("amount", "float", 0.6, "0 none … 1 all the haze the prior finds",
                        0.0, 1.0),)
    flags = frozenset({"strong", "frame_filter", "tonal"})
    words = ("dehaze", "de-haze", "haze", "hazy", "haziness")
    grammar = "filter"
    reading_order = 10
    base = 0.6
    capped = True
    pattern = r"\bde-?haze\b|\bhaz(?:e|y|iness)\b"
    filler = r"\b(?:cut through|clear up|clear|less|too much)\b"
    wording = "clear the haze from {where}"
    asks = (asks("dehaze", {"amount": 0.6}, "Remove the haze",
                 "remove the haze|dehaze the photo|it looks hazy|cut through the haze|clear "
                 "the haze|less hazy|too much haze in the distance", "detail"),)

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _dehaze(rgb, mask, p)

    def check(self, m: Measured) -> Verdict:
        """Haze lifts the dark channel: it must come down inside the target."""
        patch = int(np.clip(min(m.inside.shape) // 40, 3, 31)) | 1
        before = m.before[..., :3].astype(np.float32) / 255.0
        after = m.after[..., :3].astype(np.float32) / 255.0
        db = float(dark_channel(before, patch)[m.inside].mean())
        da = float(dark_channel(after, patch)[m.inside].mean())
        measures = {"dark_channel_before": round(db, 4), "dark_channel_after": round(da, 4)}
        if db < 0.04:
            return Verdict(0.9, keep=["there was little haze to remove"], measures=measures)
        if da <= 0.85 * db:
            return Verdict(1.0, keep=[f"haze reduced (dark channel {db:.2f} → {da:.2f})"],
                           measures=measures)
        return Verdict(0.3, fix=["the haze is not visibly reduced"],
                       retry={"amount": self.clamp("amount", m.params["amount"] + 0.3,
                                                   digits=3)}, measures=measures)
