"""The Space card (README's YAML header): it preloads every default Hub model, the
preloaded SDXL inpainting files are the fp16 variant the model manager loads, and the
Python and torch a Space runs are on the ZeroGPU lists the README records ("Spaces as
checked"), with the Space's pins (space/requirements.txt) equal to this machine's
(requirements.txt) in everything else."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pipelines.config import DEFAULT_MODEL_IDS
from pipelines.model_cards import CARDS
from pipelines.weights import looks_like_path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: torch → the torchvision built for it (a pair that does not match does not install)
TORCHVISION = {"2.8.0": "0.23.0", "2.9.1": "0.24.1", "2.10.0": "0.25.0", "2.11.0": "0.26.0",
               "2.14.1": "0.29.1"}


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


def _recorded(what: str) -> list[str]:
    """A version list the README records, e.g. "- ZeroGPU Python versions: 3.12.12, …"."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^- ZeroGPU {what} versions: (.+)$", text, re.MULTILINE)
    assert match, f"the README does not record the ZeroGPU {what} versions"
    return [v.strip() for v in match.group(1).split(",")]


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned"
            pins[name.strip().lower()] = version.strip()
    return pins


def test_the_space_runs_a_python_and_a_torch_zerogpu_supports():
    card = _card()
    python = str(card["python_version"])
    assert python in _recorded("Python"), python
    space = _pins(ROOT / "space" / "requirements.txt")
    assert space["torch"] in _recorded("PyTorch"), space["torch"]
    assert space["torchvision"] == TORCHVISION[space["torch"]]
    required = re.search(r'requires-python = ">=(\d+)\.(\d+)"',
                         (ROOT / "pyproject.toml").read_text()).groups()
    assert tuple(int(p) for p in python.split(".")[:2]) >= tuple(int(p) for p in required)
    assert space["gradio[mcp]"] == str(card["sdk_version"]) and "spaces" in space


def test_the_space_pins_differ_from_this_machines_only_in_torch():
    here, space = _pins(ROOT / "requirements.txt"), _pins(ROOT / "space" / "requirements.txt")
    assert here["torchvision"] == TORCHVISION[here["torch"]]
    differ = {name for name in here.keys() | space.keys() if here.get(name) != space.get(name)}
    assert differ <= {"torch", "torchvision"}, sorted(differ)

