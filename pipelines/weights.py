"""Where a model's weights are, whether they may be downloaded, and how big they load.

One place decides, for every role of the model manager:

* **local first** — a folder path, or a Hugging Face repo id found in the local cache
  (``snapshot_download(local_files_only=True)``; ``LOUPE_HF_CACHE`` overrides the cache
  folder, otherwise huggingface_hub's own ``HF_HUB_CACHE``/``HF_HOME`` apply);
* **downloads when allowed** — ``LOUPE_DOWNLOADS=auto`` (the default) allows them on a
  Hugging Face Space only, ``on``/``off`` force it; ``HF_HUB_OFFLINE=1`` always forbids them.
  A gated, private or missing repo gives a message that says what to do (accept the
  licence, set the ``HF_TOKEN`` secret, fix the id);
* **what loading will cost** — ``estimate_bytes`` reads the safetensors headers of the
  files that will really load (one weights format, one variant, no root checkpoints) and
  counts them at the dtype and quantization they will have.
"""

from __future__ import annotations

import json
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from pipelines.config import Settings

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf")
#: files a transformers model needs (configs, tokenizers, processors, safetensors weights)
TRANSFORMERS_PATTERNS = ["*.json", "*.txt", "*.model", "*.jinja", "*.tiktoken",
                         "*.safetensors"]
_FLOAT_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}
#: bytes per weight after quantization (NF4: 4 bits + one fp32 absmax per 64 weights)
QUANT_BYTES = {"nf4": 0.5 + 4 / 64, "int8": 1.0}


@dataclass(frozen=True)
class Located:
    """Where a model id resolved: ``folder`` (None when absent), ``source`` and why not.

    ``source`` is ``folder`` (a local path), ``cache`` (the local Hugging Face cache),
    ``download`` (absent here, will download on first load) or ``""`` (unusable).
    """

    folder: Path | None
    source: str
    reason: str = ""


class HubError(RuntimeError):
    """A download failed; the message says why in words a person can act on."""


# --------------------------------------------------------------------------- policy


def downloads_allowed(settings: Settings) -> bool:
    """Whether a model missing from the cache may be downloaded (see the module doc)."""
    if settings.hf_offline:
        return False
    mode = settings.downloads
    if mode in ("1", "on", "true", "yes"):
        return True
    if mode in ("0", "off", "false", "no"):
        return False
    return bool(settings.space_id)


def cache_dir(settings: Settings) -> str | None:
    """``LOUPE_HF_CACHE`` when set, else None (huggingface_hub's own default)."""
    return str(Path(settings.hf_cache).expanduser()) if settings.hf_cache else None


def looks_like_path(model_id: str) -> bool:
    """True for a folder (``./x``, ``/x``, ``~/x``, an existing path), False for a repo id."""
    return model_id.startswith((".", "/", "~")) or os.sep in model_id.strip("/").replace(
        "/", "", 1) or Path(model_id).expanduser().exists()


def has_weights(folder: Path) -> bool:
    """Whether ``folder`` (recursively) holds any weight file."""
    return any(p.suffix in WEIGHT_SUFFIXES for p in folder.rglob("*") if p.is_file())


def locate(model_id: str, settings: Settings) -> Located:
    """Find a model's files, downloading nothing.

    Args:
        model_id: a local folder, or a Hugging Face repo id looked up in the local cache.
        settings: the configuration (cache folder, download policy).

    Returns:
        A ``Located``: the folder when the weights are here; ``source="download"`` when
        they are not but may be downloaded; otherwise the reason.
    """
    if not model_id:
        return Located(None, "", "no model configured")
    if looks_like_path(model_id):
        folder = Path(model_id).expanduser()
        name = folder.name or model_id
        if not folder.is_dir():
            return Located(None, "", f"the model folder {name} does not exist")
        if not has_weights(folder):
            return Located(None, "", f"the model folder {name} holds no weight files")
        return Located(folder, "folder")
    try:
        if not _may_be_cached(model_id, settings):
            raise FileNotFoundError(f"no Hugging Face cache folder here holds {model_id}")
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(repo_id=model_id, local_files_only=True,
                                        cache_dir=cache_dir(settings)))
    except Exception as exc:  # noqa: BLE001 - any lookup failure means "not cached"
        log.debug("cache lookup of %s failed: %s", model_id, exc)
        if downloads_allowed(settings):
            return Located(None, "download")
        why = ("HF_HUB_OFFLINE is set" if settings.hf_offline else
               "downloads are off here: LOUPE_DOWNLOADS=on allows them, a Space allows "
               "them by default")
        return Located(None, "", f"{model_id} is not in the local Hugging Face cache ({why}; "
                                 f"or fetch it with `hf download {model_id}`)")
    if not has_weights(folder):
        if downloads_allowed(settings):
            return Located(None, "download")
        return Located(None, "", f"the cached copy of {model_id} holds no weight files")
    return Located(folder, "cache")


def _may_be_cached(model_id: str, settings: Settings) -> bool:
    """False only when no folder huggingface_hub could take for its cache holds the repo's
    ``models--<org>--<name>`` folder: the lookup then fails without importing it (a few
    hundred ms of a first turn). Every place it may look is tried (``LOUPE_HF_CACHE``, else
    ``HF_HUB_CACHE``, ``HUGGINGFACE_HUB_CACHE``, ``HF_HOME``, ``XDG_CACHE_HOME``, ``~``)."""
    name = "models--" + model_id.replace("/", "--")
    if cache_dir(settings):
        roots = [cache_dir(settings)]
    else:
        env = os.environ.get
        roots = [env("HF_HUB_CACHE"), env("HUGGINGFACE_HUB_CACHE"),
                 env("HF_HOME") and os.path.join(env("HF_HOME", ""), "hub"),
                 env("XDG_CACHE_HOME") and os.path.join(env("XDG_CACHE_HOME", ""),
                                                        "huggingface", "hub"),
                 os.path.join("~", ".cache", "huggingface", "hub")]
    return any((Path(os.path.expandvars(root)).expanduser() / name).exists()
               for root in roots if root)


# --------------------------------------------------------------------------- downloads


def explain_hub_error(model_id: str, exc: BaseException) -> str:
    """A message a person can act on for a failed Hub download of ``model_id``."""
    from huggingface_hub.errors import (
        GatedRepoError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(exc, GatedRepoError):
        return (f"{model_id} is gated: accept its licence on its Hub page with your account, "
                "then set the HF_TOKEN secret (a read token of that account) and restart")
    if isinstance(exc, RepositoryNotFoundError):
        return (f"{model_id} was not found on the Hub (check the id; a private repo needs the "
                "HF_TOKEN secret of an account that can read it)")
    if isinstance(exc, RevisionNotFoundError):
        return f"{model_id} has no such revision on the Hub"
    if isinstance(exc, OfflineModeIsEnabled):
        return f"{model_id} is not cached and HF_HUB_OFFLINE forbids downloading it"
    if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
        return f"could not download {model_id} from the Hub ({type(exc).__name__})"
    return f"downloading {model_id} failed ({type(exc).__name__})"


def remote_class_name(model_id: str, settings: Settings) -> str:
    """The class a Hub repo declares, fetching only its small index/config file.

    Raises:
        HubError: the repo is gated, missing or unreachable (the message says which).
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    last: BaseException | None = None
    for name in ("model_index.json", "config.json"):
        try:
            path = Path(hf_hub_download(model_id, name, cache_dir=cache_dir(settings)))
        except EntryNotFoundError as exc:
            last = exc
            continue
        except Exception as exc:  # noqa: BLE001 - turned into a message below
            raise HubError(explain_hub_error(model_id, exc)) from exc
        return class_name_of(path.parent)
    raise HubError(f"{model_id} has neither model_index.json nor config.json") from last


def download(model_id: str, settings: Settings, *, pipeline: bool,
             variant: str | None = None) -> Path:
    """Download ``model_id`` into the Hugging Face cache and return its snapshot folder.

    Diffusers pipelines go through ``DiffusionPipeline.download`` (one weights format, the
    card's variant, no root checkpoints); transformers models fetch configs, tokenizers and
    safetensors weights only (``.bin`` only when the repo has nothing else).

    Raises:
        HubError: gated, private, missing or unreachable (the message says which).
    """
    try:
        if pipeline:
            from diffusers import DiffusionPipeline

            return Path(DiffusionPipeline.download(model_id, variant=variant,
                                                   cache_dir=cache_dir(settings)))
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(model_id, cache_dir=cache_dir(settings),
                                        allow_patterns=TRANSFORMERS_PATTERNS))
        if not has_weights(folder):
            folder = Path(snapshot_download(model_id, cache_dir=cache_dir(settings),
                                            allow_patterns=["*.bin"]))
    except Exception as exc:  # noqa: BLE001 - turned into a message for people
        raise HubError(explain_hub_error(model_id, exc)) from exc
    if not has_weights(folder):
        raise HubError(f"{model_id} has no safetensors or .bin weights to load")
    return folder


# --------------------------------------------------------------------------- contents


def class_name_of(folder: Path) -> str:
    """The class a model folder declares (``model_index.json`` or ``config.json``), or ''."""
    for name, key in (("model_index.json", "_class_name"), ("config.json", "architectures")):
        path = folder / name
        if path.is_file():
            try:
                value = json.loads(path.read_text()).get(key, "")
            except (OSError, ValueError):
                return ""
            if isinstance(value, list):
                value = value[0] if value else ""
            return str(value)
    return ""


def pipeline_components(folder: Path) -> list[str]:
    """Names of a diffusers folder's model components (``model_index.json`` entries)."""
    try:
        index = json.loads((folder / "model_index.json").read_text())
    except (OSError, ValueError):
        return []
    return [name for name, value in index.items()
            if isinstance(value, list) and len(value) == 2 and value[0] and value[1]]


def has_variant(folder: Path, variant: str | None) -> bool:
    """Whether any weight file under ``folder`` is of ``variant`` (``*.fp16.safetensors``)."""
    return bool(variant) and any(f".{variant}." in p.name for p in folder.rglob("*")
                                 if p.suffix in (".safetensors", ".bin"))


def _is_variant_file(name: str) -> bool:
    parts = name.split(".")
    return len(parts) >= 3 and parts[-2] in ("fp16", "bf16", "fp32", "non_ema", "ema")


def loaded_files(folder: Path, variant: str | None = None) -> dict[str, list[Path]]:
    """The weight files ``from_pretrained`` reads, grouped by component ('' = the model).

    Per component folder: the variant's files when it has them, else the plain ones;
    safetensors when present, else ``.bin``. Root-level checkpoints of a diffusers repo
    (single-file copies) are not read and not counted.
    """
    components = pipeline_components(folder)
    groups = {name: folder / name for name in components} if components else {"": folder}
    out: dict[str, list[Path]] = {}
    for name, sub in groups.items():
        if not sub.is_dir():
            continue
        files = [p for p in sub.iterdir() if p.is_file() and p.suffix in (".safetensors", ".bin")]
        chosen = [p for p in files if variant and f".{variant}." in p.name]
        if not chosen:
            chosen = [p for p in files if not _is_variant_file(p.name)] or files
        safetensors = [p for p in chosen if p.suffix == ".safetensors"]
        out[name] = safetensors or chosen
    return out


def safetensors_numels(path: Path) -> dict[str, int]:
    """Element counts per dtype in a safetensors file, read from its header only."""
    with path.open("rb") as fh:
        head = fh.read(8)
        if len(head) != 8:
            raise ValueError(f"{path.name}: not a safetensors file (too short)")
        (length,) = struct.unpack("<Q", head)
        if length > 100_000_000:
            raise ValueError(f"{path.name}: implausible safetensors header")
        header = json.loads(fh.read(length))
    counts: dict[str, int] = {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        numel = 1
        for dim in entry["shape"]:
            numel *= int(dim)
        counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + numel
    return counts


def estimate_bytes(folder: Path, *, dtype_bytes: int, quant: str = "none",
                   variant: str | None = None,
                   quantized: tuple[str, ...] | None = None) -> int:
    """Bytes the weights of ``folder`` take once loaded.

    Args:
        folder: a diffusers pipeline or transformers model folder.
        dtype_bytes: bytes per floating weight at the load dtype (2 for bf16/fp16).
        quant: ``none``, ``nf4`` or ``int8``.
        variant: the weights variant that will load (``fp16``), if any.
        quantized: components the quantization applies to (None = all of them).

    Returns:
        The estimate: floating weights at ``dtype_bytes`` (or the quantized size in the
        quantized components), other tensors at their stored size. A ``.bin`` file counts as
        its size scaled from fp32.
    """
    total = 0.0
    for component, files in loaded_files(folder, variant).items():
        per_weight = float(dtype_bytes)
        if quant in QUANT_BYTES and (quantized is None or component in quantized):
            per_weight = QUANT_BYTES[quant]
        for path in files:
            if path.suffix == ".safetensors":
                try:
                    counts = safetensors_numels(path)
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    log.debug("cannot read %s: %s", path.name, exc)
                    total += path.stat().st_size
                    continue
                for dtype, numel in counts.items():
                    total += numel * (per_weight if dtype in _FLOAT_BYTES else
                                      _stored_bytes(dtype))
            else:
                total += path.stat().st_size / 4 * per_weight
    return int(total)


def _stored_bytes(dtype: str) -> float:
    return {"I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}.get(dtype, 4)
