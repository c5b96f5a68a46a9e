"""Where weights come from: a Hugging Face cache loaded back by repo id, the download
policy, gated/missing repos reported in words a person can act on (through a local stub of
the Hub's HTTP answers), the memory estimate, and every role in ``python -m pipelines
models``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from pipelines.config import ROLES
from pipelines.models import get_manager, module_nbytes
from pipelines.weights import estimate_bytes, explain_hub_error, loaded_files
from tests.tiny_models import tiny_model_dir, write_hf_cache

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def manager():
    m = get_manager()
    m.unload_all()
    yield m
    m.unload_all()


@pytest.fixture()
def hf_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    monkeypatch.setenv("LOUPE_HF_CACHE", str(cache))
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("LOUPE_DOWNLOADS", raising=False)
    return cache


def test_a_model_in_the_hf_cache_loads_by_repo_id(manager, hf_cache, monkeypatch, astronaut):
    from pipelines.embeddings import dino_features

    folder = tiny_model_dir("dino")
    snapshot = write_hf_cache(folder, hf_cache, "loupe-test/tiny-dino")
    assert (snapshot / "model.safetensors").is_symlink()  # the real cache layout
    monkeypatch.setenv("LOUPE_MODEL_DINO", "loupe-test/tiny-dino")
    status = manager.role_status("dino")
    assert (status.available, status.source, status.backend) == (True, "cache", "Dinov2Model")
    by_id = dino_features([astronaut])
    manager.unload_all()
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(folder))
    assert manager.role_status("dino").source == "folder"
    assert np.allclose(by_id, dino_features([astronaut]), atol=1e-6)  # the same weights


def test_a_pipeline_in_the_hf_cache_edits_by_repo_id(manager, hf_cache, monkeypatch, chelsea):
    from pipelines.editors.base import EditRequest
    from pipelines.editors.diffusion import InstructPix2PixEditor

    write_hf_cache(tiny_model_dir("ip2p"), hf_cache, "loupe-test/tiny-ip2p")
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", "loupe-test/tiny-ip2p")
    monkeypatch.setattr(InstructPix2PixEditor, "working_area", 64 * 64)
    assert InstructPix2PixEditor.is_available() == (True, "")
    patch = np.ascontiguousarray(chelsea[100:196, 150:278])
    out = InstructPix2PixEditor().edit(patch, np.ones(patch.shape[:2], bool), EditRequest(
        "adjust", "generate", {}, "make it snowy", steps=1))
    assert out.shape == patch.shape and not np.array_equal(out, patch)


@pytest.mark.parametrize("env, expected", [
    ({}, "LOUPE_DOWNLOADS=on allows them"),
    ({"SPACE_ID": "someone/loupe", "HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE is set"),
    ({"LOUPE_DOWNLOADS": "off", "SPACE_ID": "someone/loupe"}, "downloads are off"),
])
def test_a_missing_model_says_why_it_is_not_downloaded(manager, hf_cache, monkeypatch, env,
                                                       expected):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # the test suite sets it
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("LOUPE_MODEL_CLIP", "loupe-test/not-cached")
    status = manager.role_status("clip")
    assert not status.available and status.source == ""
    assert expected in status.reason and "loupe-test/not-cached" in status.reason
    assert str(hf_cache) not in status.reason  # no server path in a message


class _Hub(BaseHTTPRequestHandler):
    """Answers like the Hub for a gated repo and a missing one."""

    def _answer(self) -> None:
        if "/gated-editor/" in self.path:
            code, error = 401, "GatedRepo"
        else:
            code, error = 404, "RepoNotFound"
        self.send_response(code)
        self.send_header("X-Error-Code", error)
        self.send_header("X-Error-Message", "Access to this repo is restricted" if code == 401
                         else "Repository not found")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _answer  # noqa: N815 - http.server's method names

    def log_message(self, *args: object) -> None:
        pass


def test_gated_and_missing_repos_are_reported_clearly(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    skip = ("LOUPE_", "HF_", "TRANSFORMERS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{server.server_address[1]}",
               LOUPE_DOWNLOADS="on", LOUPE_HF_CACHE=str(tmp_path / "hub"),
               LOUPE_MODEL_EDITOR="someone/gated-editor",
               LOUPE_MODEL_INPAINTER="someone/no-such-inpainter", HF_HUB_ETAG_TIMEOUT="5")
    try:
        run = subprocess.run([sys.executable, "-m", "pipelines", "models", "--role", "editor",
                              "--role", "inpainter"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    finally:
        server.shutdown()
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    editor, inpainter = report["editor"], report["inpainter"]
    assert editor["available"] is False and editor["backend"] == "classical"
    assert "is gated" in editor["reason"] and "HF_TOKEN" in editor["reason"]
    assert inpainter["available"] is False and "was not found on the Hub" in inpainter["reason"]


def test_hub_errors_become_actionable_messages():
    import httpx2
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    response = httpx2.Response(401, request=httpx2.Request("GET", "http://127.0.0.1/x"))
    gated = explain_hub_error("org/m", GatedRepoError("restricted", response=response))
    assert "accept its licence" in gated and "HF_TOKEN" in gated
    missing = explain_hub_error("org/m", RepositoryNotFoundError("no", response=response))
    assert "not found" in missing
    assert "could not download" in explain_hub_error("org/m", ConnectionError("down"))


def test_the_estimate_counts_only_what_loads(tmp_path):
    import shutil

    import torch
    from diffusers import DiffusionPipeline

    folder = tmp_path / "sd"
    shutil.copytree(tiny_model_dir("sd_inpaint"), folder)
    unet = folder / "unet" / "diffusion_pytorch_model.safetensors"
    shutil.copy(unet, folder / "unet" / "diffusion_pytorch_model.fp16.safetensors")
    shutil.copy(unet, folder / "unet" / "diffusion_pytorch_model.bin")
    shutil.copy(unet, folder / "single-file-checkpoint.safetensors")  # a root checkpoint
    files = loaded_files(folder)
    assert [p.name for p in files["unet"]] == ["diffusion_pytorch_model.safetensors"]
    assert [p.name for p in loaded_files(folder, "fp16")["unet"]] == [
        "diffusion_pytorch_model.fp16.safetensors"]
    pipe = DiffusionPipeline.from_pretrained(folder, dtype=torch.float32)
    estimate = estimate_bytes(folder, dtype_bytes=4)
    assert abs(estimate - module_nbytes(pipe)) <= 0.01 * module_nbytes(pipe)
    disk = sum(p.stat().st_size for p in folder.rglob("*") if p.suffix in (".safetensors",
                                                                            ".bin"))
    assert disk > 1.5 * estimate  # what the old budget counted
    half = estimate_bytes(folder, dtype_bytes=2)
    assert 0.45 * estimate < half < 0.55 * estimate
    nf4 = estimate_bytes(folder, dtype_bytes=2, quant="nf4", quantized=("unet",))
    assert nf4 < half


def test_auto_quantization_follows_the_budget(manager, monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    assert manager.role_status("dino").quant == "none"  # fits half the RAM: as published
    monkeypatch.setenv("LOUPE_MEMORY_BUDGET_GB", "0.000001")  # 1 KB: cannot fit
    status = manager.role_status("dino")
    assert status.available and status.quant == "int8"  # torchao int8 on CPU
    assert manager.load("dino").quant == "int8"


def test_models_cli_reports_every_role(monkeypatch, capsys):
    from pipelines.__main__ import main as cli

    monkeypatch.setenv("LOUPE_MODEL_UPSCALER", "realesrgan-x4plus")
    assert cli(["models"]) == 0
    report = json.loads(capsys.readouterr().out)
    perception = {k for k in report if k.startswith("perception:")}
    assert set(report) - perception == set(ROLES)
    # the embedded localiser's files come from registry packages, fetched at install
    assert {"perception:objects", "perception:salient", "perception:words"} <= perception
    assert all(report[k]["available"] for k in perception), report
    for role, entry in report.items():
        assert {"id", "available", "reason", "backend", "quant", "source"} <= set(entry), role
        assert entry["available"] or entry["reason"], role  # unavailable always says why
        assert "/root" not in entry["reason"] and "/tmp" not in entry["reason"], role
    assert report["lpips"]["available"] is True
    assert report["lpips"]["backend"] in ("lpips-alex", "st-lpips-alex")
    assert report["upscaler"] == {**report["upscaler"], "available": True,
                                  "backend": "realesrgan-x4plus", "source": "package"}


def test_a_brushed_edit_on_the_embedded_default_does_not_load_torch(tmp_path):
    """Checking which model serves a role must not import torch when none is present:
    that alone cost every session ~480 MB of memory (bench/session_memory.py)."""
    code = (
        "import sys, numpy as np\n"
        "from agent.session import EditSession\n"
        "img = np.full((300, 400, 3), 120, np.uint8)\n"
        f"s = EditSession.create(img, {str(tmp_path / 's')!r})\n"
        "m = np.zeros((300, 400), bool); m[50:150, 50:150] = True\n"
        "r = s.turn('brighten this area', m)\n"
        "print(r.steps[0].status, 'torch' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOUPE_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=str(Path(__file__).resolve().parents[1]))
    assert done.stdout.split() == ["applied", "False"], done.stderr[-2000:]
