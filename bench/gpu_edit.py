"""GPU cost of a generative edit: the layer path vs a full-frame edit at 12 and 20 MP.

For a lent GPU machine. Builds the real diffusers pipelines — FLUX.1 Kontext [dev]
(12B transformer, T5-XXL and CLIP-L text encoders, FLUX VAE) and Qwen-Image-Edit (20B
transformer, Qwen2.5-VL-7B text encoder, Qwen VAE) — from their published configurations
with random weights (nothing is downloaded; timings do not depend on the weights; the
tokenizers are small stand-ins, the text encoders are full size), in bf16 and in NF4, and
runs them through Loupe's own GPU entry point (``run_pipeline``: the model card's steps
and guidance, true CFG with its negative pass for Qwen, the enhancer back to native size).

* ``layer``: the target's crop (a ~1.5 % ellipse of the frame, with DLEBench's context)
  edited at the model's native size (~1 MP) and restored into its native box; the frame
  outside is untouched.
* ``fullframe``: the whole frame edited at native resolution, as tiles of the model's native
  size (the only way a 1-MP model edits a 12/20-MP frame without resampling it):
  ``tiles`` × the per-tile cost, measured on ``--tiles`` of them and extrapolated.

Per model, quantization and frame size: seconds per edit and the peak GPU memory of each
path (the peak is reset after loading, so the NF4 figure never includes the bf16 build the
random weights start from: they are built on the GPU and quantized layer by layer in
place), plus the weights' memory and
the load time. Without CUDA it stops at once with a clear message (exit code 2); ``--tiny``
runs the same code with toy configurations on any device (a smoke test; its numbers mean
nothing).

Run (one model and quantization per command keeps each under 10 minutes):
``.venv/bin/python bench/gpu_edit.py --models kontext --quant bf16``. The last printed line
is one JSON object: ``{"device", "frames", "results": [{"model", "quant", "params_b",
"weights_gb", "load_s", "steps", "frame", "layer_s", "layer_peak_gb", "fullframe_s",
"fullframe_peak_gb", "tiles", "tiles_run"}], "errors"}``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.editors.base import EditRequest  # noqa: E402
from pipelines.editors.diffusion import (  # noqa: E402
    FluxKontextEditor,
    PipelineCall,
    QwenImageEditor,
    run_pipeline,
    working_dims,
)
from pipelines.layers import compose, decompose  # noqa: E402
from pipelines.model_cards import card_for  # noqa: E402
from pipelines.models import LoadedModel, get_manager, module_nbytes  # noqa: E402
from pipelines.tiling import iter_tiles  # noqa: E402

FRAMES = {"12mp": (4240, 2832), "20mp": (5472, 3648)}
TINY_FRAMES = {"12mp": (424, 283), "20mp": (547, 365)}
PIPELINES = {"kontext": "FluxKontextPipeline", "qwen": "QwenImageEditPipeline"}
EDITORS = {"kontext": FluxKontextEditor, "qwen": QwenImageEditor}
TILE_OVERLAP = 64

KONTEXT = dict(patch_size=1, in_channels=64, num_layers=19, num_single_layers=38,
               attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
               pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))
FLUX_VAE = dict(in_channels=3, out_channels=3, latent_channels=16,
                block_out_channels=(128, 256, 512, 512), layers_per_block=2,
                down_block_types=("DownEncoderBlock2D",) * 4,
                up_block_types=("UpDecoderBlock2D",) * 4, use_quant_conv=False,
                use_post_quant_conv=False, scaling_factor=0.3611, shift_factor=0.1159)
CLIP_L = dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12,
              num_hidden_layers=12, projection_dim=768, max_position_embeddings=77)
T5_XXL = dict(d_model=4096, d_kv=64, d_ff=10240, num_layers=24, num_heads=64,
              feed_forward_proj="gated-gelu", vocab_size=32128)
QWEN = dict(patch_size=2, in_channels=64, out_channels=16, num_layers=60, attention_head_dim=128,
            num_attention_heads=24, joint_attention_dim=3584, guidance_embeds=False,
            axes_dims_rope=(16, 56, 56))
QWEN_VL_7B = dict(
    text=dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
              num_attention_heads=28, num_key_value_heads=4, vocab_size=152064),
    vision=dict(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16,
                out_hidden_size=3584))
TINY = {
    "kontext": dict(KONTEXT, in_channels=4, num_layers=1, num_single_layers=1,
                    attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
                    pooled_projection_dim=32, axes_dims_rope=(4, 4, 8)),
    "flux_vae": dict(FLUX_VAE, latent_channels=1, block_out_channels=(4,), layers_per_block=1,
                     norm_num_groups=1, down_block_types=("DownEncoderBlock2D",),
                     up_block_types=("UpDecoderBlock2D",)),
    "clip": dict(CLIP_L, hidden_size=32, intermediate_size=37, num_attention_heads=4,
                 num_hidden_layers=2, projection_dim=32),
    "t5": dict(T5_XXL, d_model=32, d_kv=8, d_ff=37, num_layers=1, num_heads=4),
    "qwen": dict(QWEN, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16,
                 num_attention_heads=3, joint_attention_dim=16, axes_dims_rope=(8, 4, 4)),
    "qwen_vae": dict(base_dim=24, z_dim=4, dim_mult=[1, 2, 4], num_res_blocks=1,
                     temperal_downsample=[False, True], latents_mean=[0.0] * 4,
                     latents_std=[1.0] * 4),
    "qwen_vl": dict(text=dict(hidden_size=16, intermediate_size=16, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=2),
                    vision=dict(depth=2, hidden_size=16, intermediate_size=16, num_heads=2,
                                out_hidden_size=16)),
}
#: components quantized to NF4 (what PipelineQuantizationConfig would quantize)
HEAVY = {"kontext": ("transformer", "text_encoder_2"), "qwen": ("transformer", "text_encoder")}


def require_cuda(tiny: bool) -> str:
    """The device to run on; exits with a clear message when CUDA is missing."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if tiny:
        return "cpu"
    message = ("bench/gpu_edit.py needs a CUDA GPU (torch.cuda.is_available() is False); "
               "run it on a GPU machine, or pass --tiny for a CPU smoke test")
    print(message, file=sys.stderr)
    print(json.dumps({"error": message, "device": "cpu"}))
    raise SystemExit(2)


# --------------------------------------------------------------------------- building


def _tokenizers(family: str, folder: Path) -> dict[str, Any]:
    from tests.tiny_models import clip_tokenizer, qwen_tokenizer, t5_tokenizer

    if family == "kontext":
        return {"tokenizer": clip_tokenizer(folder / "clip"), "tokenizer_2": t5_tokenizer()[0]}
    tokenizer, processor, vocab = qwen_tokenizer(folder / "qwen")
    return {"tokenizer": tokenizer, "processor": processor, "vocab": vocab}


def build_pipeline(family: str, tiny: bool, folder: Path, device: str = "cpu") -> Any:
    """The ``family`` pipeline with random weights (bf16; fp32 with --tiny), built on
    ``device``: random initialisation of 17–28 B parameters takes over eight minutes on a
    CPU and seconds on the GPU."""
    import torch
    from diffusers import (
        AutoencoderKL,
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        FluxKontextPipeline,
        FluxTransformer2DModel,
        QwenImageEditPipeline,
        QwenImageTransformer2DModel,
    )
    from transformers import (
        CLIPTextConfig,
        CLIPTextModel,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        T5Config,
        T5EncoderModel,
    )

    dtype = torch.float32 if tiny else torch.bfloat16
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    torch.manual_seed(0)
    toks = _tokenizers(family, folder)
    try:
        with torch.device(device):   # random weights are made where they will run
            if family == "kontext":
                n = len(toks["tokenizer"])
                clip = CLIPTextModel(CLIPTextConfig(  # CLIP-L's own vocabulary size when full
                    **(TINY["clip"] if tiny else CLIP_L), vocab_size=n if tiny else 49408,
                    bos_token_id=n - 2, eos_token_id=n - 1, pad_token_id=n - 1))
                t5 = T5EncoderModel(T5Config(**(TINY["t5"] if tiny else T5_XXL), pad_token_id=0,
                                             eos_token_id=1, decoder_start_token_id=0))
                return FluxKontextPipeline(
                    scheduler=FlowMatchEulerDiscreteScheduler(),
                    vae=AutoencoderKL(**(TINY["flux_vae"] if tiny else FLUX_VAE)),
                    text_encoder=clip, tokenizer=toks["tokenizer"], text_encoder_2=t5,
                    tokenizer_2=toks["tokenizer_2"],
                    transformer=FluxTransformer2DModel(**(TINY["kontext"] if tiny else KONTEXT)))
            vocab = toks["vocab"]
            sizes = TINY["qwen_vl"] if tiny else QWEN_VL_7B
            text = dict(sizes["text"], rope_scaling={"mrope_section": [1, 1, 2] if tiny else
                                                     [16, 24, 24], "rope_type": "default",
                                                     "type": "default"}, rope_theta=1e6,
                        bos_token_id=vocab["<|endoftext|>"], eos_token_id=vocab["<|im_end|>"])
            if tiny:
                text["vocab_size"] = len(vocab)
            config = Qwen2_5_VLConfig(
                text_config=text, vision_config=sizes["vision"],
                hidden_size=text["hidden_size"], vocab_size=text.get("vocab_size", len(vocab)),
                image_token_id=vocab["<|image_pad|>"], video_token_id=vocab["<|video_pad|>"],
                vision_start_token_id=vocab["<|vision_start|>"],
                vision_end_token_id=vocab["<|vision_end|>"])
            return QwenImageEditPipeline(
                scheduler=FlowMatchEulerDiscreteScheduler(),
                vae=AutoencoderKLQwenImage(**(TINY["qwen_vae"] if tiny else {})),
                text_encoder=Qwen2_5_VLForConditionalGeneration(config),
                tokenizer=toks["tokenizer"], processor=toks["processor"],
                transformer=QwenImageTransformer2DModel(**(TINY["qwen"] if tiny else QWEN)))
    finally:
        torch.set_default_dtype(previous)


def to_nf4(module: Any, compute_dtype: Any, device: str) -> Any:
    """Move ``module`` to ``device`` with every ``nn.Linear`` as a bitsandbytes NF4
    ``Linear4bit``, one layer at a time (a layer already on the GPU is quantized in place;
    the peak memory is reset after loading, so the bf16 build never counts in a figure)."""
    import bitsandbytes as bnb
    import torch

    # what from_pretrained keeps unquantized (T5's ``wo``: its forward casts the activations
    # to the weight's dtype, which for a 4-bit weight is uint8)
    keep = set(getattr(module, "_keep_in_fp32_modules", None) or ())
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            if not isinstance(child, torch.nn.Linear) or name in keep:
                continue
            q = bnb.nn.Linear4bit(child.in_features, child.out_features,
                                  bias=child.bias is not None, compute_dtype=compute_dtype,
                                  quant_type="nf4", device="meta")
            q.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False,
                                         quant_type="nf4")
            if child.bias is not None:
                q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(parent, name, q.to(device))  # quantized as it lands on the GPU
    return module.to(device)


def load(family: str, quant: str, device: str, tiny: bool, folder: Path) -> LoadedModel:
    """Build, quantize and place the pipeline; returns it as the manager holds models."""
    import torch

    pipe = build_pipeline(family, tiny, folder, device)
    for component in pipe.components.values():
        if isinstance(component, torch.nn.Module):
            component.eval()   # as from_pretrained leaves them: no dropout
    if quant == "nf4":
        for name in HEAVY[family]:
            to_nf4(getattr(pipe, name), torch.bfloat16, device)
    pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    return LoadedModel("editor", f"bench/{family}", pipe, None, device,
                       torch.float32 if tiny else torch.bfloat16, quant, module_nbytes(pipe))


# --------------------------------------------------------------------------- measuring


def scene(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A frame of ``size`` (w, h) and a target ellipse covering ~1.5 % of it."""
    width, height = size
    rng = np.random.default_rng(0)
    frame = cv2.resize(rng.integers(0, 256, (91, 137, 3), dtype=np.uint8), size,
                       interpolation=cv2.INTER_CUBIC)
    mask = np.zeros((height, width), np.uint8)
    cv2.ellipse(mask, (int(0.6 * width), int(0.55 * height)),
                (int(0.06 * width), int(0.08 * height)), 0, 0, 360, 1, -1)
    return frame, mask.astype(bool)


def edit_call(family: str, patch: np.ndarray, mask: np.ndarray, area: int,
              steps: int | None) -> PipelineCall:
    """The ``PipelineCall`` Loupe's editor makes for this patch (card defaults)."""
    card = card_for(PIPELINES[family])
    editor = EDITORS[family]()
    request = EditRequest("replace", "generate", {"prompt": "a red vintage car"},
                          "turn it into a red vintage car", target="the car", seed=0,
                          steps=steps)
    size = working_dims(patch.shape[1], patch.shape[0], area, card.multiple)
    rgb = cv2.resize(patch[..., :3], size, interpolation=cv2.INTER_AREA)
    small = cv2.resize(mask.astype(np.uint8) * 255, size, interpolation=cv2.INTER_NEAREST)
    kwargs = editor._pipeline_kwargs(small, request, {"prompt": "a red vintage car"}, card)
    return PipelineCall("editor", f"bench/{family}", PIPELINES[family], rgb, small, kwargs, 0,
                        (patch.shape[1], patch.shape[0]))


def timed(device: str, fn: Any) -> tuple[Any, float, float]:
    """``fn()``'s result, its seconds and the peak GPU memory (GB) during it."""
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    out = fn()
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    peak = torch.cuda.max_memory_allocated() / 1024**3 if device == "cuda" else 0.0
    return out, seconds, peak


def measure_frame(family: str, device: str, frame_name: str, size: tuple[int, int],
                  area: int, steps: int | None, tiles_run: int) -> dict[str, Any]:
    """Layer path and tiled full-frame path on one frame size."""
    frame, mask = scene(size)
    row: dict[str, Any] = {"frame": frame_name, "frame_size": f"{size[0]}x{size[1]}"}

    def layer_edit() -> np.ndarray:
        layer = decompose(frame, mask, multiple=16)
        patch = run_pipeline(edit_call(family, layer.patch, layer.mask, area, steps))
        return compose(frame, layer, patch)

    composed, row["layer_s"], row["layer_peak_gb"] = timed(device, layer_edit)
    assert composed.shape == frame.shape
    side = round(math.sqrt(area))
    overlap = min(TILE_OVERLAP, side // 8)  # padded tiles are the model's native size
    tiles = list(iter_tiles(frame.shape[:2], side - 2 * overlap, overlap))
    seconds, peak = [], 0.0
    for box in tiles[:max(1, tiles_run)]:
        tile = np.ascontiguousarray(frame[box.padded_slices])
        whole = np.ones(tile.shape[:2], bool)
        _, s, p = timed(device, lambda t=tile, m=whole: run_pipeline(
            edit_call(family, t, m, area, steps)))
        seconds.append(s)
        peak = max(peak, p)
    row.update(tiles=len(tiles), tiles_run=len(seconds),
               fullframe_s=float(np.mean(seconds)) * len(tiles), fullframe_peak_gb=peak,
               tile_s=float(np.mean(seconds)))
    return row


def measure(family: str, quant: str, device: str, tiny: bool, steps: int | None,
            frames: list[str], tiles_run: int) -> list[dict[str, Any]]:
    """Load one model/quantization and measure every frame size."""
    import torch

    manager = get_manager()
    if device == "cuda":
        torch.cuda.empty_cache()
    with tempfile.TemporaryDirectory() as tmp:
        loaded, load_s, load_peak = timed(device, lambda: load(family, quant, device, tiny,
                                                               Path(tmp)))
    manager.adopt("editor", f"bench/{family}", loaded)
    pipe = loaded.model
    base = {"model": family, "quant": quant, "dtype": str(loaded.dtype).replace("torch.", ""),
            "load_s": load_s, "load_peak_gb": load_peak,
            "params_b": sum(p.numel() for c in pipe.components.values()
                            if isinstance(c, torch.nn.Module) for p in c.parameters()) / 1e9,
            "weights_gb": (torch.cuda.memory_allocated() / 1024**3 if device == "cuda"
                           else loaded.nbytes / 1024**3),
            "steps": steps or card_for(PIPELINES[family]).steps}
    area = 64 * 64 if tiny else card_for(PIPELINES[family]).area
    rows = []
    try:
        for name in frames:
            size = (TINY_FRAMES if tiny else FRAMES)[name]
            row = {**base, **measure_frame(family, device, name, size, area, steps, tiles_run)}
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    finally:
        manager.unload("editor")
        del pipe, loaded
        gc.collect()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["kontext", "qwen"], choices=PIPELINES)
    parser.add_argument("--quant", nargs="+", default=["bf16", "nf4"], choices=["bf16", "nf4"])
    parser.add_argument("--frames", nargs="+", default=list(FRAMES), choices=list(FRAMES))
    parser.add_argument("--steps", type=int, default=None,
                        help="override the model cards' step counts")
    parser.add_argument("--tiles", type=int, default=2,
                        help="full-frame tiles actually run (the rest is extrapolated)")
    parser.add_argument("--tiny", action="store_true", help="toy configs: a smoke test")
    args = parser.parse_args(argv)
    device = require_cuda(args.tiny)
    import torch

    name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
    frames = {f: "x".join(map(str, (TINY_FRAMES if args.tiny else FRAMES)[f]))
              for f in args.frames}
    report: dict[str, Any] = {"device": name, "frames": frames, "tiny": args.tiny,
                              "results": [], "errors": []}
    for family in args.models:
        for quant in args.quant:
            if quant == "nf4" and device != "cuda":
                report["errors"].append(f"{family}/nf4: bitsandbytes NF4 needs CUDA")
                continue
            try:
                report["results"] += measure(family, quant, device, args.tiny, args.steps,
                                             args.frames, args.tiles)
            except Exception as exc:  # noqa: BLE001 - one failing config must not hide others
                traceback.print_exc()
                report["errors"].append(f"{family}/{quant}: {type(exc).__name__}: {exc}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
