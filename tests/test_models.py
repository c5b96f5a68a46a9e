"""Model manager: offline availability, fallbacks, loading through the real code path,
int8 quantization, unloading under a memory budget, and the ``models`` CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipelines.models import ModelUnavailable, get_manager, locate_weights, main
from tests.tiny_models import tiny_model_dir


@pytest.fixture()
def manager():
    m = get_manager()
    yield m
    m.unload_all()


def test_unknown_hub_id_is_unavailable_offline(manager, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("LOUPE_MODEL_DETECTOR", "nobody-here/no-such-model-xyz")
    status = manager.role_status("detector")
    assert not status.available
    assert "nobody-here/no-such-model-xyz" in status.reason and "cache" in status.reason
    assert status.backend == "embedded"
    with pytest.raises(ModelUnavailable, match="not in the local Hugging Face cache") as err:
        manager.load("detector")
    assert err.value.role == "detector"


@pytest.mark.parametrize("value, reason", [
    ("", "no model configured"),
    ("./definitely/missing/folder", "does not exist"),
])
def test_missing_or_empty_configuration(manager, monkeypatch, value, reason):
    monkeypatch.setenv("LOUPE_MODEL_AESTHETIC", value)
    status = manager.role_status("aesthetic")
    assert not status.available and reason in status.reason
    assert status.backend == "heuristic"


def test_folder_without_weights(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    folder, reason = locate_weights(str(tmp_path))
    assert folder is None and "no weight files" in reason


def test_local_folder_loads_once_and_unloads(manager, monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    status = manager.role_status("dino")
    assert status.available and status.reason == "" and status.backend == "Dinov2Model"
    first = manager.load("dino")
    assert manager.load("dino") is first
    assert first.device == "cpu" and first.nbytes > 0
    assert manager.status()["dino"]["loaded"] is True
    assert manager.unload("dino") is True
    assert manager.status()["dino"]["loaded"] is False
    assert manager.unload("dino") is False


def test_nf4_without_cuda_is_refused_clearly(manager, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    monkeypatch.setenv("LOUPE_QUANT_DINO", "nf4")
    status = manager.role_status("dino")
    assert not status.available and "CUDA" in status.reason
    with pytest.raises(ModelUnavailable, match="NF4"):
        manager.load("dino")


def test_int8_weight_only_on_cpu_keeps_features(manager, monkeypatch, astronaut, coffee):
    from pipelines.embeddings import dino_features

    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    plain = dino_features([astronaut, coffee])
    monkeypatch.setenv("LOUPE_QUANT_DINO", "int8")
    quantized = manager.load("dino")
    assert quantized.quant == "int8"
    linear = quantized.model.encoder.layer[0].mlp.fc1
    assert type(linear.weight).__name__ == "Int8Tensor"
    int8 = dino_features([astronaut, coffee])
    assert int8.shape == plain.shape
    assert np.all(np.sum(int8 * plain, axis=1) > 0.99)  # same direction, within int8 error


def test_memory_budget_unloads_least_recently_used(manager, monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    monkeypatch.setenv("LOUPE_MODEL_AESTHETIC", str(tiny_model_dir("aesthetic")))
    manager.load("dino")
    budget = manager.loaded_bytes() / 1024**3  # full already: the next load must evict
    monkeypatch.setenv("LOUPE_MEMORY_BUDGET_GB", f"{budget:.12f}")
    manager.load("aesthetic")
    assert manager.loaded_roles() == ["aesthetic"]


def test_models_cli_prints_one_json_object(monkeypatch, capsys):
    monkeypatch.setenv("LOUPE_MODEL_CLIP", str(tiny_model_dir("clip")))
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", "nobody-here/no-such-editor")
    from pipelines.__main__ import main as cli

    assert cli(["models"]) == 0
    report = json.loads(capsys.readouterr().out)
    from pipelines.config import ROLES

    assert set(report) == set(ROLES) | {k for k in report if k.startswith("perception:")}
    assert report["perception:objects"]["license"].startswith("Apache-2.0")
    for entry in report.values():
        assert {"id", "available", "reason", "backend"} <= set(entry)
    assert report["clip"]["available"] is True and report["clip"]["backend"] == "CLIPModel"
    assert report["editor"] == {**report["editor"], "available": False, "backend": "classical"}
    assert main(["--role", "vlm"], write=lambda s: None) == 0


def test_gpu_task_is_a_plain_call_off_zerogpu(monkeypatch):
    from pipelines.gpu import gpu_task, on_zerogpu

    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    assert not on_zerogpu()

    @gpu_task(duration=30)
    def double(x: int) -> int:
        """Doubles."""
        return 2 * x

    assert double(21) == 42 and double.__name__ == "double" and double.gpu_duration == 30
    with pytest.raises(ValueError, match="duration"):
        gpu_task(duration=0)
