"""Settings: which model serves each role, where sessions live, limits.

Every value comes from an environment variable (``LOUPE_*``) with a documented default,
so a Space, a workstation and CI differ only by their environment.

Each role's model id comes from ``LOUPE_MODEL_<ROLE>`` (``LOUPE_MODEL_EDITOR``, …); the
defaults are ``DEFAULT_MODEL_IDS`` below (the aesthetic scorer has none).

``LOUPE_QUANT_<ROLE>`` is ``auto`` (the default: NF4 on CUDA, torchao int8 on CPU, only
when the model would not fit the memory budget otherwise), ``nf4`` (bitsandbytes, CUDA
only), ``int8`` (torchao weight-only) or ``none``. ``LOUPE_DOWNLOADS`` decides whether a
model missing from the local Hugging Face cache may be downloaded: ``auto`` (the default:
yes on a Space, no elsewhere), ``on`` or ``off``; ``HF_HUB_OFFLINE=1`` always means no.
``LOUPE_LLM_BASE_URL`` / ``LOUPE_LLM_MODEL`` / ``LOUPE_LLM_API_KEY`` select an
OpenAI-compatible endpoint for the planner and critic.
Every other variable is listed in the README's settings table; this module is the only
place that reads them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("editor", "inpainter", "detector", "segmenter", "vlm", "clip", "dino", "lpips",
         "aesthetic", "upscaler")

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
    "upscaler": "lanczos",
}

DEFAULT_MAX_PIXELS = 100_000_000
#: where the install step puts the embedded perception's model files (``LOUPE_WEIGHTS_DIR``)
DEFAULT_WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "weights"


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default).strip()


def _flag(name: str) -> bool:
    return _env(name, "").lower() in ("1", "true", "yes", "on")


@dataclass
class Settings:
    """A snapshot of the configuration (read from the environment by ``get_settings``).

    Secrets (``llm_api_key``, ``session_secret``, and ``llm_base_url``, which may carry
    credentials) are left out of ``repr`` so that a logged or printed settings object never
    shows them; ``pipelines.redact`` scrubs them from any other text.
    """

    models: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_MODEL_IDS))
    quantization: dict[str, str] = field(default_factory=dict)
    device: str = "auto"
    dtype: str = "auto"
    offload: str = "none"
    memory_budget_gb: float | None = None
    max_pixels: int = DEFAULT_MAX_PIXELS
    data_dir: Path = Path("~/.cache/loupe").expanduser()
    session_ttl_hours: float = 72.0
    session_quota_mb: float = 1024.0
    cache_ttl_hours: float = 12.0
    weights_dir: Path = DEFAULT_WEIGHTS_DIR
    #: real photographs fetched from Debian packages (eval.realphotos); empty: data_dir/photos
    photos_dir: Path | None = None
    max_open_sessions: int = 8
    session_secret: str = field(default="", repr=False)
    max_archive_mb: float = 2048.0
    max_dataset_mb: float = 512.0
    preview_side: int = 1024
    review_comment_chars: int = 4000
    review_rate_per_min: int = 10
    review_max_comments: int = 500
    llm_base_url: str = field(default="", repr=False)
    llm_model: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_timeout_s: float = 60.0
    llm_connect_timeout_s: float = 3.0
    llm_cooldown_s: float = 300.0
    edit_systems: tuple[str, ...] = ("agent.systems",)
    gpu_seconds: int = 300
    downloads: str = "auto"
    hf_offline: bool = False
    hf_cache: str = ""
    host: str = ""
    port: int = 7860
    max_upload_mb: int = 500
    app_concurrency: int = 2
    queue_size: int = 64
    log_level: str = "INFO"
    debug: bool = False
    share: bool = False
    space_id: str = ""
    zero_gpu: bool = False
    batch_max_photos: int = 100
    batch_max_mb: float = 1024.0
    batch_max_megapixels: float = 2000.0
    batch_max_jobs: int = 2
    batch_workers: int = 0
    batch_ray: str = ""

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"


def get_settings() -> Settings:
    """Read the settings from ``LOUPE_*`` environment variables (see the module doc and
    the README's settings table). Read anew on each call, so a changed variable applies
    to the next request."""
    models = {role: _env(f"LOUPE_MODEL_{role.upper()}", default)
              for role, default in DEFAULT_MODEL_IDS.items()}
    quant = {role: _env(f"LOUPE_QUANT_{role.upper()}", "auto").lower() for role in ROLES}
    budget = _env("LOUPE_MEMORY_BUDGET_GB", "")
    systems = tuple(m.strip() for m in _env("LOUPE_EDIT_SYSTEMS", "agent.systems").split(",")
                    if m.strip())
    return Settings(
        models=models,
        quantization=quant,
        device=_env("LOUPE_DEVICE", "auto"),
        dtype=_env("LOUPE_DTYPE", "auto").lower(),
        offload=_env("LOUPE_OFFLOAD", "none").lower(),
        memory_budget_gb=float(budget) if budget else None,
        max_pixels=int(_env("LOUPE_MAX_PIXELS", str(DEFAULT_MAX_PIXELS))),
        data_dir=Path(_env("LOUPE_DATA_DIR", "~/.cache/loupe")).expanduser(),
        session_ttl_hours=float(_env("LOUPE_SESSION_TTL_HOURS", "72")),
        session_quota_mb=float(_env("LOUPE_SESSION_QUOTA_MB", "1024")),
        cache_ttl_hours=float(_env("LOUPE_CACHE_TTL_HOURS", "12")),
        weights_dir=Path(_env("LOUPE_WEIGHTS_DIR", str(DEFAULT_WEIGHTS_DIR))).expanduser(),
        photos_dir=Path(_env("LOUPE_PHOTOS_DIR", "")).expanduser()
        if _env("LOUPE_PHOTOS_DIR", "") else None,
        max_open_sessions=max(1, int(_env("LOUPE_MAX_OPEN_SESSIONS", "8"))),
        session_secret=_env("LOUPE_SESSION_SECRET", ""),
        max_archive_mb=float(_env("LOUPE_MAX_ARCHIVE_MB", "2048")),
        max_dataset_mb=float(_env("LOUPE_MAX_DATASET_MB", "512")),
        preview_side=max(64, int(_env("LOUPE_PREVIEW_SIDE", "1024"))),
        review_comment_chars=max(1, int(_env("LOUPE_REVIEW_COMMENT_CHARS", "4000"))),
        review_rate_per_min=max(1, int(_env("LOUPE_REVIEW_RATE_PER_MIN", "10"))),
        review_max_comments=max(1, int(_env("LOUPE_REVIEW_MAX_COMMENTS", "500"))),
        llm_base_url=_env("LOUPE_LLM_BASE_URL", ""),
        llm_model=_env("LOUPE_LLM_MODEL", ""),
        llm_api_key=_env("LOUPE_LLM_API_KEY", ""),
        llm_timeout_s=float(_env("LOUPE_LLM_TIMEOUT_S", "60")),
        llm_connect_timeout_s=float(_env("LOUPE_LLM_CONNECT_TIMEOUT_S", "3")),
        llm_cooldown_s=float(_env("LOUPE_LLM_COOLDOWN_S", "300")),
        edit_systems=systems,
        gpu_seconds=max(10, int(_env("LOUPE_GPU_SECONDS", "300"))),
        downloads=_env("LOUPE_DOWNLOADS", "auto").lower(),
        hf_offline=_flag("HF_HUB_OFFLINE") or _flag("TRANSFORMERS_OFFLINE"),
        hf_cache=_env("LOUPE_HF_CACHE", ""),
        host=_env("LOUPE_HOST", "") or _env("GRADIO_SERVER_NAME", ""),
        port=int(_env("LOUPE_PORT", "") or _env("GRADIO_SERVER_PORT", "") or "7860"),
        max_upload_mb=int(_env("LOUPE_MAX_UPLOAD_MB", "500")),
        app_concurrency=int(_env("LOUPE_APP_CONCURRENCY", "2")),
        queue_size=int(_env("LOUPE_QUEUE_SIZE", "64")),
        log_level=_env("LOUPE_LOG_LEVEL", "INFO").upper(),
        debug=_flag("LOUPE_DEBUG"),
        share=_flag("LOUPE_SHARE"),
        space_id=_env("SPACE_ID", ""),
        zero_gpu=_flag("SPACES_ZERO_GPU"),
        batch_max_photos=max(1, int(_env("LOUPE_BATCH_MAX_PHOTOS", "100"))),
        batch_max_mb=float(_env("LOUPE_BATCH_MAX_MB", "1024")),
        batch_max_megapixels=float(_env("LOUPE_BATCH_MAX_MEGAPIXELS", "2000")),
        batch_max_jobs=max(1, int(_env("LOUPE_BATCH_MAX_JOBS", "2"))),
        batch_workers=max(0, int(_env("LOUPE_BATCH_WORKERS", "0"))),
        batch_ray=_env("LOUPE_BATCH_RAY", ""),
    )
