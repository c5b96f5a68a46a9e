"""Tiny randomly initialised models, built from configs and saved to temp folders.

Every model backend is tested by pointing ``LOUPE_MODEL_<ROLE>`` at one of these folders:
the loading code is the one a real model id goes through (``from_pretrained``), only the
weights are random and small. Nothing is downloaded; tokenizers are written from small
vocabularies. Each builder runs once per process (``tiny_model_dir`` caches the folder).

Usage from any test::

    from tests.tiny_models import tiny_model_dir
    monkeypatch.setenv("LOUPE_MODEL_CLIP", str(tiny_model_dir("clip")))
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch

_ROOT: Path | None = None

#: words of the tiny BERT vocabulary (GroundingDINO's text side)
BERT_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "the", "red", "car", "cat",
              "cup", "person", "dog", "sky", "tree"] + [chr(c) for c in range(97, 123)]


def _root() -> Path:
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="loupe-tiny-"))
        atexit.register(shutil.rmtree, _ROOT, True)
    return _ROOT


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP's reversible byte → printable character table."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    codes = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(printable, [chr(c) for c in codes], strict=True))


def clip_tokenizer(folder: Path):
    """A CLIP tokenizer whose vocabulary is every byte (plus end-of-word forms), no merges."""
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    chars = list(_bytes_to_unicode().values())
    vocab = {c: i for i, c in enumerate(chars + [c + "</w>" for c in chars])}
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"),
                         model_max_length=77)


def _clip_text_encoder(vocab_size: int):
    from transformers import CLIPTextConfig, CLIPTextModel

    return CLIPTextModel(CLIPTextConfig(
        bos_token_id=vocab_size - 2, eos_token_id=vocab_size - 1, pad_token_id=vocab_size - 1,
        hidden_size=32, intermediate_size=37, num_attention_heads=4, num_hidden_layers=2,
        vocab_size=vocab_size))


def _unet(in_channels: int):
    from diffusers import UNet2DConditionModel

    return UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=32,
        in_channels=in_channels, out_channels=4, cross_attention_dim=32,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"))


def _vae():
    from diffusers import AutoencoderKL

    return AutoencoderKL(block_out_channels=[32, 64], in_channels=3, out_channels=3,
                         down_block_types=["DownEncoderBlock2D"] * 2,
                         up_block_types=["UpDecoderBlock2D"] * 2, latent_channels=4)


def build_ip2p(folder: Path) -> None:
    """Tiny ``StableDiffusionInstructPix2PixPipeline`` (UNet with 8 input channels)."""
    from diffusers import EulerAncestralDiscreteScheduler, StableDiffusionInstructPix2PixPipeline

    tokenizer = clip_tokenizer(folder / "_tok")
    pipe = StableDiffusionInstructPix2PixPipeline(
        vae=_vae(), text_encoder=_clip_text_encoder(len(tokenizer)), tokenizer=tokenizer,
        unet=_unet(8), scheduler=EulerAncestralDiscreteScheduler(), safety_checker=None,
        feature_extractor=None, requires_safety_checker=False)
    pipe.save_pretrained(folder)


def build_sd_inpaint(folder: Path) -> None:
    """Tiny ``StableDiffusionInpaintPipeline`` (UNet with 9 input channels)."""
    from diffusers import DDIMScheduler, StableDiffusionInpaintPipeline

    tokenizer = clip_tokenizer(folder / "_tok")
    pipe = StableDiffusionInpaintPipeline(
        vae=_vae(), text_encoder=_clip_text_encoder(len(tokenizer)), tokenizer=tokenizer,
        unet=_unet(9), scheduler=DDIMScheduler(steps_offset=1), safety_checker=None,
        feature_extractor=None, requires_safety_checker=False)
    pipe.save_pretrained(folder)


def build_sdxl_inpaint(folder: Path) -> None:
    """Tiny ``StableDiffusionXLInpaintPipeline`` saved as the ``fp16`` variant only (as the
    SDXL inpainting repo publishes it): loading it needs ``variant="fp16"``."""
    from diffusers import (
        EulerDiscreteScheduler,
        StableDiffusionXLInpaintPipeline,
        UNet2DConditionModel,
    )
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection

    tokenizer = clip_tokenizer(folder / "_tok")
    vocab = len(tokenizer)
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=32, in_channels=9,
        out_channels=4, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), attention_head_dim=(2, 4),
        use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=8,
        transformer_layers_per_block=(1, 1), projection_class_embeddings_input_dim=80,
        cross_attention_dim=64)
    text_2 = CLIPTextModelWithProjection(CLIPTextConfig(
        bos_token_id=vocab - 2, eos_token_id=vocab - 1, pad_token_id=vocab - 1, hidden_size=32,
        intermediate_size=37, num_attention_heads=4, num_hidden_layers=2, vocab_size=vocab,
        projection_dim=32))
    pipe = StableDiffusionXLInpaintPipeline(
        vae=_vae(), text_encoder=_clip_text_encoder(vocab), text_encoder_2=text_2,
        tokenizer=tokenizer, tokenizer_2=tokenizer, unet=unet,
        scheduler=EulerDiscreteScheduler(steps_offset=1), requires_aesthetics_score=False,
        force_zeros_for_empty_prompt=True)
    pipe.to(torch.float16).save_pretrained(folder, variant="fp16")


def write_hf_cache(source: Path, cache: Path, repo_id: str) -> Path:
    """Copy a model folder into a Hugging Face hub cache as ``repo_id`` (the real layout:
    content-addressed ``blobs/``, ``snapshots/<commit>/`` links, ``refs/main``).

    Args:
        source: a saved model folder.
        cache: the cache root (what ``HF_HUB_CACHE`` / ``LOUPE_HF_CACHE`` point at).
        repo_id: ``owner/name``.

    Returns:
        The snapshot folder.
    """
    import hashlib

    repo = cache / ("models--" + repo_id.replace("/", "--"))
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        data = path.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = snapshot / path.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../" * (len(link.relative_to(repo).parts) - 1)) / "blobs" / blob.name)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def t5_tokenizer():
    """A T5 tokenizer (Unigram, Metaspace) over a few words and the letters."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import T5TokenizerFast

    words = ["<pad>", "</s>", "<unk>"] + [chr(c) for c in range(97, 123)] + [
        "▁make", "▁the", "▁red", "▁car", "▁it", "▁a", "▁"]
    backend = Tokenizer(models.Unigram([(w, -1.0) for w in words], unk_id=2))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    return T5TokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="</s>",
                           unk_token="<unk>", extra_ids=0), len(words)


def build_flux_kontext(folder: Path) -> None:
    """Tiny ``FluxKontextPipeline`` (1+1-block transformer, 1-channel VAE, CLIP + T5)."""
    from diffusers import (
        AutoencoderKL,
        FlowMatchEulerDiscreteScheduler,
        FluxKontextPipeline,
        FluxTransformer2DModel,
    )
    from transformers import T5Config, T5EncoderModel

    tokenizer = clip_tokenizer(folder / "_tok")
    t5_tok, t5_vocab = t5_tokenizer()
    t5 = T5EncoderModel(T5Config(vocab_size=t5_vocab, d_model=32, d_kv=8, d_ff=37,
                                 num_layers=1, num_heads=4, pad_token_id=0, eos_token_id=1,
                                 decoder_start_token_id=0))
    transformer = FluxTransformer2DModel(
        patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
        num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32,
        axes_dims_rope=[4, 4, 8], guidance_embeds=True)
    vae = AutoencoderKL(in_channels=3, out_channels=3, block_out_channels=(4,),
                        layers_per_block=1, latent_channels=1, norm_num_groups=1,
                        use_quant_conv=False, use_post_quant_conv=False, shift_factor=0.0609,
                        scaling_factor=1.5035, down_block_types=("DownEncoderBlock2D",),
                        up_block_types=("UpDecoderBlock2D",))
    FluxKontextPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae,
        text_encoder=_clip_text_encoder(len(tokenizer)), tokenizer=tokenizer,
        text_encoder_2=t5, tokenizer_2=t5_tok, transformer=transformer).save_pretrained(folder)


QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                 "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]


def qwen_tokenizer(folder: Path, *, max_pixels: int | None = None):
    """A byte-level Qwen2 tokenizer with Qwen-VL's special tokens, and its VL processor.

    Args:
        folder: where the vocabulary files are written.
        max_pixels: the image processor's pixel cap (None: the library default).

    Returns:
        ``(tokenizer, processor, vocab)``.
    """
    from transformers import (
        Qwen2Tokenizer,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {c: i for i, c in enumerate(_bytes_to_unicode().values())}
    for token in QWEN_SPECIALS:
        vocab[token] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = Qwen2Tokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"),
                               unk_token="<|endoftext|>", pad_token="<|endoftext|>",
                               additional_special_tokens=QWEN_SPECIALS[1:])
    images = (Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=max_pixels) if max_pixels
              else Qwen2VLImageProcessor())
    processor = Qwen2VLProcessor(image_processor=images, tokenizer=tokenizer,
                                 video_processor=Qwen2VLVideoProcessor())
    return tokenizer, processor, vocab


def build_qwen_image_edit(folder: Path) -> None:
    """Tiny ``QwenImageEditPipeline``: 2-layer Qwen2.5-VL text encoder with a byte-level
    tokenizer, a 4-channel Qwen VAE and a 2-layer transformer.

    The pipeline conditions on the input resized to 1 MP whatever the output size, so one
    call takes tens of seconds on CPU even with these sizes.
    """
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImageEditPipeline,
        QwenImageTransformer2DModel,
    )
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
    )

    tokenizer, processor, vocab = qwen_tokenizer(folder / "_tok", max_pixels=128 * 128)
    config = Qwen2_5_VLConfig(
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": len(vocab),
                     "rope_scaling": {"mrope_section": [1, 1, 2], "rope_type": "default",
                                      "type": "default"}, "rope_theta": 1e6,
                     "bos_token_id": vocab["<|endoftext|>"],
                     "eos_token_id": vocab["<|im_end|>"]},
        vision_config={"depth": 2, "hidden_size": 16, "intermediate_size": 16, "num_heads": 2,
                       "out_hidden_size": 16},
        hidden_size=16, vocab_size=len(vocab), image_token_id=vocab["<|image_pad|>"],
        video_token_id=vocab["<|video_pad|>"], vision_start_token_id=vocab["<|vision_start|>"],
        vision_end_token_id=vocab["<|vision_end|>"])
    vae = AutoencoderKLQwenImage(base_dim=24, z_dim=4, dim_mult=[1, 2, 4], num_res_blocks=1,
                                 temperal_downsample=[False, True], latents_mean=[0.0] * 4,
                                 latents_std=[1.0] * 4)
    transformer = QwenImageTransformer2DModel(
        patch_size=2, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16,
        num_attention_heads=3, joint_attention_dim=16, guidance_embeds=False,
        axes_dims_rope=(8, 4, 4))
    QwenImageEditPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae,
        text_encoder=Qwen2_5_VLForConditionalGeneration(config), tokenizer=tokenizer,
        processor=processor, transformer=transformer).save_pretrained(folder)


def build_clip(folder: Path) -> None:
    """Tiny ``CLIPModel`` + ``CLIPProcessor`` (32-px images)."""
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPProcessor,
        CLIPTextConfig,
        CLIPVisionConfig,
    )

    tokenizer = clip_tokenizer(folder / "_tok")
    n = len(tokenizer)
    text = CLIPTextConfig(vocab_size=n, bos_token_id=n - 2, eos_token_id=n - 1,
                          pad_token_id=n - 1, hidden_size=32, intermediate_size=37,
                          num_attention_heads=4, num_hidden_layers=2)
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=37, num_attention_heads=4,
                              num_hidden_layers=2, image_size=32, patch_size=8)
    model = CLIPModel(CLIPConfig(text_config=text.to_dict(), vision_config=vision.to_dict(),
                                 projection_dim=16))
    images = CLIPImageProcessor(size={"shortest_edge": 32},
                                crop_size={"height": 32, "width": 32})
    model.save_pretrained(folder)
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)


def build_dino(folder: Path) -> None:
    """Tiny ``Dinov2Model`` + its image processor (28-px crops, 14-px patches)."""
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    model = Dinov2Model(Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     mlp_ratio=2, image_size=28, patch_size=14))
    model.save_pretrained(folder)
    BitImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 28, "width": 28},
                      do_convert_rgb=True).save_pretrained(folder)


def build_aesthetic(folder: Path) -> None:
    """Tiny single-output ``ViTForImageClassification`` (an aesthetic regressor's shape)."""
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    model = ViTForImageClassification(ViTConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        image_size=32, patch_size=8, num_labels=1, problem_type="regression"))
    model.save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)


def build_grounding_dino(folder: Path) -> None:
    """Tiny GroundingDINO (Swin backbone, 1-layer BERT) + processor with a small vocab."""
    from transformers import (
        BertConfig,
        BertTokenizer,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(BERT_WORDS) + "\n")
    tokenizer = BertTokenizer(str(folder / "vocab.txt"))
    backbone = SwinConfig(embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                          window_size=4, image_size=64,
                          out_features=["stage2", "stage3", "stage4"])
    text = BertConfig(vocab_size=len(BERT_WORDS), hidden_size=16, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=16, max_position_embeddings=64)
    config = GroundingDinoConfig(
        backbone_config=backbone, text_config=text, d_model=32, encoder_layers=1,
        decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32, encoder_attention_heads=2,
        decoder_attention_heads=2, num_queries=10, num_feature_levels=3, encoder_n_points=2,
        decoder_n_points=2, max_text_len=32, use_timm_backbone=False)
    GroundingDinoForObjectDetection(config).save_pretrained(folder)
    images = GroundingDinoImageProcessor(size={"shortest_edge": 128, "longest_edge": 192})
    GroundingDinoProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)


def build_sam(folder: Path) -> None:
    """Tiny ``SamModel`` + ``SamProcessor`` working at 128 px."""
    from transformers import (
        SamConfig,
        SamImageProcessor,
        SamMaskDecoderConfig,
        SamModel,
        SamProcessor,
        SamPromptEncoderConfig,
        SamVisionConfig,
    )

    config = SamConfig(
        vision_config=SamVisionConfig(
            hidden_size=16, num_hidden_layers=1, num_attention_heads=2, mlp_dim=16,
            image_size=128, patch_size=16, output_channels=16, global_attn_indexes=[0],
            window_size=4, num_pos_feats=8),
        prompt_encoder_config=SamPromptEncoderConfig(hidden_size=16, image_size=128,
                                                     patch_size=16, mask_input_channels=4),
        mask_decoder_config=SamMaskDecoderConfig(hidden_size=16, num_hidden_layers=1,
                                                 num_attention_heads=2, mlp_dim=16,
                                                 iou_head_hidden_dim=16))
    SamModel(config).save_pretrained(folder)
    images = SamImageProcessor(size={"longest_edge": 128}, pad_size={"height": 128, "width": 128},
                               mask_size={"longest_edge": 32},
                               mask_pad_size={"height": 32, "width": 32})
    SamProcessor(image_processor=images).save_pretrained(folder)


BUILDERS: dict[str, Callable[[Path], None]] = {
    "ip2p": build_ip2p,
    "sd_inpaint": build_sd_inpaint,
    "sdxl_inpaint": build_sdxl_inpaint,
    "flux_kontext": build_flux_kontext,
    "qwen_image_edit": build_qwen_image_edit,
    "clip": build_clip,
    "dino": build_dino,
    "aesthetic": build_aesthetic,
    "grounding_dino": build_grounding_dino,
    "sam": build_sam,
}


@functools.cache
def tiny_model_dir(kind: str) -> Path:
    """Folder holding the tiny ``kind`` model (built on first use, once per process).

    Args:
        kind: one of ``BUILDERS`` (ip2p, sd_inpaint, sdxl_inpaint, flux_kontext,
            qwen_image_edit, clip, dino, aesthetic, grounding_dino, sam).

    Returns:
        The folder, loadable with ``from_pretrained``.
    """
    if kind not in BUILDERS:
        raise KeyError(f"unknown tiny model {kind!r}; known: {', '.join(BUILDERS)}")
    folder = _root() / kind
    torch.manual_seed(0)
    BUILDERS[kind](folder)
    return folder
