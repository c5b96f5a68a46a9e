"""Settings: which model serves each role, where sessions live, limits.

Every value comes from an environment variable (``LOUPE_*``) with a documented default,
so a Space, a workstation and CI differ only by their environment.

Each role's model id comes from ``LOUPE_MODEL_<ROLE>`` (``LOUPE_MODEL_EDITOR``, …); the
defaults are ``DEFAULT_MODEL_IDS`` below (the aesthetic scorer has none).

``LOUPE_QUANT_<ROLE>`` is ``nf4`` (bitsandbytes, CUDA only), ``int8`` (torchao
weight-only) or ``none``. ``LOUPE_LLM_BASE_URL`` / ``LOUPE_LLM_MODEL`` /
``LOUPE_LLM_API_KEY`` select an OpenAI-compatible endpoint for the planner and critic.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("editor", "inpainter", "detector", "segmenter", "vlm", "clip", "dino", "lpips",
         "aesthetic")

DEFAULT_MODEL_IDS: dict[str, str] = {
    "editor": "timbrooks/instruct-pix2pix",
    "inpainter": "diffusers/stable-diffusion-xl-1.0-inpainting-0.1",
    "detector": "IDEA-Research/grounding-dino-tiny",
    "segmenter": "facebook/sam-vit-base",
    "vlm": "Qwen/Qwen2.5-VL-3B-Instruct",
    "clip": "openai/clip-vit-base-patch32",
    "dino": "facebook/dinov2-small",
    "lpips": "alex",
    "aesthetic": "",
}

DEFAULT_MAX_PIXELS = 100_000_000


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default).strip()


@dataclass
class Settings:
    """A snapshot of the configuration (read from the environment by ``get_settings``)."""

    models: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_MODEL_IDS))
    quantization: dict[str, str] = field(default_factory=dict)
    device: str = "auto"
    max_pixels: int = DEFAULT_MAX_PIXELS
    data_dir: Path = Path("~/.cache/loupe").expanduser()
    session_ttl_hours: float = 24.0
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"


def get_settings() -> Settings:
    """Read the settings from ``LOUPE_*`` environment variables (see the module doc)."""
    models = {role: _env(f"LOUPE_MODEL_{role.upper()}", default)
              for role, default in DEFAULT_MODEL_IDS.items()}
    quant = {role: _env(f"LOUPE_QUANT_{role.upper()}", "none").lower() for role in ROLES}
    return Settings(
        models=models,
        quantization=quant,
        device=_env("LOUPE_DEVICE", "auto"),
        max_pixels=int(_env("LOUPE_MAX_PIXELS", str(DEFAULT_MAX_PIXELS))),
        data_dir=Path(_env("LOUPE_DATA_DIR", "~/.cache/loupe")).expanduser(),
        session_ttl_hours=float(_env("LOUPE_SESSION_TTL_HOURS", "24")),
        llm_base_url=_env("LOUPE_LLM_BASE_URL", ""),
        llm_model=_env("LOUPE_LLM_MODEL", ""),
        llm_api_key=_env("LOUPE_LLM_API_KEY", ""),
    )
