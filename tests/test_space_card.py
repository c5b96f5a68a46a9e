"""The Space card (README's YAML header): it preloads every default Hub model, and the
preloaded SDXL inpainting files are the fp16 variant the model manager loads."""

from __future__ import annotations

from pathlib import Path

import yaml

from pipelines.config import DEFAULT_MODEL_IDS
from pipelines.model_cards import CARDS
from pipelines.weights import looks_like_path

README = Path(__file__).resolve().parents[1] / "README.md"


def _card() -> dict:
    text = README.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_the_space_card_preloads_every_default_hub_model():
    card = _card()
    assert card["sdk"] == "gradio" and card["app_file"] == "app.py"
    preload = {entry.split()[0]: entry.split()[1:] for entry in card["preload_from_hub"]}
    hub_ids = {model_id for model_id in DEFAULT_MODEL_IDS.values()
               if "/" in model_id and not looks_like_path(model_id)}
    assert hub_ids == set(preload)


def test_preloaded_sdxl_files_are_the_fp16_variant():
    entry = {e.split()[0]: e.split()[1:] for e in _card()["preload_from_hub"]}
    files = entry[DEFAULT_MODEL_IDS["inpainter"]][0].split(",")
    weights = [f for f in files if f.endswith(".safetensors")]
    variant = CARDS["StableDiffusionXLInpaintPipeline"].variant
    assert weights and all(f".{variant}." in f for f in weights)
    assert {f.split("/")[0] for f in weights} == {"unet", "vae", "text_encoder",
                                                   "text_encoder_2"}
    assert "model_index.json" in files
