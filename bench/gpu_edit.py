"""GPU cost of a generative edit: a 1-MP layer patch inside a 20-MP photo vs a full-frame edit.

For a lent GPU machine. Builds the full-size FLUX.1 Kontext transformer (12B) and the
Qwen-Image-Edit transformer (20B) from their published configurations with random weights
(nothing is downloaded; the timings do not depend on the weights), in bf16 and in NF4
(bitsandbytes), each with a random VAE of its family's architecture. It then times:

* ``layer``: decompose a target's layer out of a 5460×3640 frame, resize the patch to the
  model's ~1-MP working size, VAE-encode, run the denoising loop (Kontext: 28 steps, one
  forward each; Qwen: 30 steps, two forwards each for true CFG), VAE-decode, compose the
  patch back at native resolution;
* ``fullframe``: resize the whole frame to ~1 MP, the same model work, upscale the result
  back to 5460×3640 (plus, for reference, ``transfer_edit``'s time).

and the peak GPU memory of each configuration. Without CUDA it stops at once with a
clear message (exit code 2). ``--tiny`` runs the same code with toy configurations on
any device (a smoke test of this script; its numbers mean nothing).

Run: ``.venv/bin/python bench/gpu_edit.py`` (``--models kontext qwen``, ``--quant bf16
nf4``, ``--steps N`` to override the step counts). The last printed line is one JSON
object: ``{"device", "results": [{"model", "quant", "params_b", "load_s", "peak_gb",
"layer_s", "fullframe_s", "step_s", ...}], "errors"}``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.editors.diffusion import working_dims  # noqa: E402
from pipelines.layers import compose, decompose  # noqa: E402
from pipelines.wholeframe import transfer_edit, working_copy  # noqa: E402

FRAME = (5460, 3640)  # width, height of the native photo

KONTEXT = dict(patch_size=1, in_channels=64, num_layers=19, num_single_layers=38,
               attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
               pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))
QWEN = dict(patch_size=2, in_channels=64, out_channels=16, num_layers=60, attention_head_dim=128,
            num_attention_heads=24, joint_attention_dim=3584, guidance_embeds=False,
            axes_dims_rope=(16, 56, 56))
FLUX_VAE = dict(in_channels=3, out_channels=3, latent_channels=16,
                block_out_channels=(128, 256, 512, 512), layers_per_block=2,
                down_block_types=("DownEncoderBlock2D",) * 4,
                up_block_types=("UpDecoderBlock2D",) * 4, use_quant_conv=False,
                use_post_quant_conv=False)
TINY = {
    "kontext": dict(KONTEXT, num_layers=1, num_single_layers=1, attention_head_dim=16,
                    num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32,
                    axes_dims_rope=(4, 6, 6)),
    "qwen": dict(QWEN, num_layers=1, attention_head_dim=16, num_attention_heads=2,
                 joint_attention_dim=32, axes_dims_rope=(4, 6, 6)),
    "flux_vae": dict(FLUX_VAE, block_out_channels=(32, 32, 32, 32), layers_per_block=1),
    "qwen_vae": dict(base_dim=16),
}
STEPS = {"kontext": 28, "qwen": 30}
TEXT_TOKENS = 512


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


def to_nf4(model: Any, compute_dtype: Any) -> Any:
    """Replace every ``nn.Linear`` by a bitsandbytes NF4 ``Linear4bit`` (quantized on GPU)."""
    import bitsandbytes as bnb
    import torch

    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if not isinstance(child, torch.nn.Linear):
                continue
            q = bnb.nn.Linear4bit(child.in_features, child.out_features,
                                  bias=child.bias is not None, compute_dtype=compute_dtype,
                                  quant_type="nf4", device="meta")
            q.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False,
                                         quant_type="nf4")
            if child.bias is not None:
                q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(module, name, q.to(child.weight.device))
            del child
    gc.collect()
    torch.cuda.empty_cache()
    return model


def build(family: str, quant: str, device: str, tiny: bool) -> tuple[Any, Any]:
    """The transformer and VAE of ``family`` with random weights, on ``device``."""
    import torch
    from diffusers import (
        AutoencoderKL,
        AutoencoderKLQwenImage,
        FluxTransformer2DModel,
        QwenImageTransformer2DModel,
    )

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device), torch.no_grad():
            if family == "kontext":
                transformer = FluxTransformer2DModel(**(TINY["kontext"] if tiny else KONTEXT))
                vae = AutoencoderKL(**(TINY["flux_vae"] if tiny else FLUX_VAE))
            else:
                transformer = QwenImageTransformer2DModel(**(TINY["qwen"] if tiny else QWEN))
                vae = AutoencoderKLQwenImage(**(TINY["qwen_vae"] if tiny else {}))
    finally:
        torch.set_default_dtype(previous)
    if quant == "nf4":
        transformer = to_nf4(transformer, dtype)
    return transformer.eval(), vae.eval()


def _pack(latents: Any) -> Any:
    """(B, C, H, W) latents → (B, H/2·W/2, 4C) tokens, as the FLUX/Qwen pipelines pack them."""
    b, c, h, w = latents.shape
    x = latents.view(b, c, h // 2, 2, w // 2, 2).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, (h // 2) * (w // 2), c * 4)


def _ids(h: int, w: int, first: float, device: str) -> Any:
    import torch

    ids = torch.zeros(h, w, 3, device=device)
    ids[..., 0] = first
    ids[..., 1] = torch.arange(h, device=device)[:, None]
    ids[..., 2] = torch.arange(w, device=device)[None, :]
    return ids.reshape(h * w, 3)


def vae_encode(vae: Any, image: np.ndarray, family: str) -> Any:
    import torch

    dtype = next(vae.parameters()).dtype
    x = torch.from_numpy(image).to(vae.device, dtype).permute(2, 0, 1)[None] / 127.5 - 1
    if family == "qwen":
        return vae.encode(x[:, :, None]).latent_dist.mode()[:, :, 0]
    return vae.encode(x).latent_dist.mode()


def vae_decode(vae: Any, latents: Any, family: str) -> np.ndarray:
    if family == "qwen":
        image = vae.decode(latents[:, :, None]).sample[:, :, 0]
    else:
        image = vae.decode(latents).sample
    image = ((image[0].float().clamp(-1, 1) + 1) * 127.5).permute(1, 2, 0)
    return image.round().byte().cpu().numpy()


def denoise(transformer: Any, family: str, cond: Any, steps: int) -> Any:
    """The denoising loop on random text embeddings (Euler steps of a flow model)."""
    import torch

    b, c, h, w = cond.shape
    dtype, device = cond.dtype, cond.device
    cfg = transformer.config
    text = torch.randn(b, TEXT_TOKENS, cfg.joint_attention_dim, device=device, dtype=dtype)
    latents = torch.randn_like(cond)
    sigmas = torch.linspace(1.0, 0.0, steps + 1, device=device)
    for i in range(steps):
        tokens = torch.cat([_pack(latents), _pack(cond)], dim=1)
        t = sigmas[i].expand(b).to(dtype)
        if family == "kontext":
            img_ids = torch.cat([_ids(h // 2, w // 2, 0, device),
                                 _ids(h // 2, w // 2, 1, device)]).to(dtype)
            pred = transformer(
                hidden_states=tokens, encoder_hidden_states=text,
                pooled_projections=torch.randn(b, cfg.pooled_projection_dim, device=device,
                                               dtype=dtype),
                timestep=t, img_ids=img_ids,
                txt_ids=torch.zeros(TEXT_TOKENS, 3, device=device, dtype=dtype),
                guidance=torch.full((b,), 2.5, device=device, dtype=dtype), return_dict=False)[0]
        else:
            mask = torch.ones(b, TEXT_TOKENS, device=device, dtype=torch.long)
            shapes = [[(1, h // 2, w // 2), (1, h // 2, w // 2)]] * b
            kwargs = dict(hidden_states=tokens, encoder_hidden_states=text,
                          encoder_hidden_states_mask=mask, timestep=t, img_shapes=shapes,
                          return_dict=False)
            cond_pred = transformer(**kwargs)[0]
            uncond = transformer(**kwargs)[0]  # true CFG: a second forward per step
            pred = uncond + 4.0 * (cond_pred - uncond)
        pred = pred[:, : (h // 2) * (w // 2)]
        latents = latents + (sigmas[i + 1] - sigmas[i]) * _unpack(pred, c, h, w)
    return latents


def _unpack(tokens: Any, c: int, h: int, w: int) -> Any:
    b = tokens.shape[0]
    x = tokens.view(b, h // 2, w // 2, c, 2, 2).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, c, h, w)


def edit_at(transformer: Any, vae: Any, family: str, image: np.ndarray, steps: int,
            device: str) -> tuple[np.ndarray, float]:
    """One model edit of ``image`` (already at working size); returns it and the step time."""
    import torch

    with torch.inference_mode():
        cond = vae_encode(vae, image, family)
        sync(device)
        started = time.perf_counter()
        latents = denoise(transformer, family, cond, steps)
        sync(device)
        step_s = (time.perf_counter() - started) / steps
        out = vae_decode(vae, latents, family)
    return out, step_s


def sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def scene(tiny: bool) -> tuple[np.ndarray, np.ndarray]:
    """A 5460×3640 frame (a smaller one with --tiny) and a target mask inside it."""
    width, height = (546, 364) if tiny else FRAME
    rng = np.random.default_rng(0)
    frame = cv2.resize(rng.integers(0, 256, (91, 137, 3), dtype=np.uint8), (width, height),
                       interpolation=cv2.INTER_CUBIC)
    mask = np.zeros((height, width), bool)
    cv2.ellipse(mask.view(np.uint8), (int(0.6 * width), int(0.55 * height)),
                (int(0.09 * width), int(0.12 * height)), 0, 0, 360, 1, -1)
    return frame, mask


def measure(family: str, quant: str, device: str, tiny: bool, steps: int) -> dict[str, Any]:
    import torch

    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    transformer, vae = build(family, quant, device, tiny)
    load_s = time.perf_counter() - started
    area = 128 * 128 if tiny else 1024 * 1024
    frame, mask = scene(tiny)
    result: dict[str, Any] = {"model": family, "quant": quant, "steps": steps,
                              "dtype": str(next(vae.parameters()).dtype).replace("torch.", ""),
                              "params_b": sum(p.numel() for p in transformer.parameters()) / 1e9,
                              "load_s": load_s}
    # layer path
    started = time.perf_counter()
    layer = decompose(frame, mask, multiple=16)
    size = working_dims(layer.width, layer.height, area, 16)
    patch = cv2.resize(layer.patch, size, interpolation=cv2.INTER_CUBIC)
    edited, step_s = edit_at(transformer, vae, family, patch, steps, device)
    composed = compose(frame, layer, edited)
    result["layer_s"] = time.perf_counter() - started
    result["layer_patch"] = f"{layer.width}x{layer.height} -> {size[0]}x{size[1]}"
    result["step_s"] = step_s
    # full-frame path
    started = time.perf_counter()
    size = working_dims(frame.shape[1], frame.shape[0], area, 16)
    small = working_copy(frame, size)
    edited, _ = edit_at(transformer, vae, family, small, steps, device)
    upscaled = cv2.resize(edited, frame.shape[1::-1], interpolation=cv2.INTER_CUBIC)
    result["fullframe_s"] = time.perf_counter() - started
    started = time.perf_counter()
    transfer_edit(frame, small, edited)
    result["transfer_s"] = time.perf_counter() - started
    result["fullframe_size"] = f"{size[0]}x{size[1]}"
    assert composed.shape == upscaled.shape == frame.shape
    if device == "cuda":
        result["peak_gb"] = torch.cuda.max_memory_allocated() / 1024**3
    del transformer, vae
    gc.collect()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["kontext", "qwen"],
                        choices=["kontext", "qwen"])
    parser.add_argument("--quant", nargs="+", default=["bf16", "nf4"], choices=["bf16", "nf4"])
    parser.add_argument("--steps", type=int, default=None, help="override the step counts")
    parser.add_argument("--tiny", action="store_true", help="toy configs: a smoke test")
    args = parser.parse_args(argv)
    device = require_cuda(args.tiny)
    import torch

    name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
    frame = "546x364" if args.tiny else f"{FRAME[0]}x{FRAME[1]}"
    report: dict[str, Any] = {"device": name, "frame": frame,
                              "tiny": args.tiny, "results": [], "errors": []}
    for family in args.models:
        for quant in args.quant:
            if quant == "nf4" and device != "cuda":
                report["errors"].append(f"{family}/nf4: bitsandbytes NF4 needs CUDA")
                continue
            steps = args.steps or STEPS[family]
            try:
                row = measure(family, quant, device, args.tiny, steps)
            except Exception as exc:  # noqa: BLE001 - one failing config must not hide others
                report["errors"].append(f"{family}/{quant}: {type(exc).__name__}: {exc}")
                continue
            print(json.dumps(row), file=sys.stderr)
            report["results"].append(row)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
