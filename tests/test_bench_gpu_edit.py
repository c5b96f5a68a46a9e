"""``bench/gpu_edit.py --tiny``: the GPU bench's own code path runs on CPU with toy models
(its numbers mean nothing; the test checks that the script is ready for a GPU machine)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pipelines.models import get_manager

BENCH = Path(__file__).resolve().parents[1] / "bench" / "gpu_edit.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gpu_edit_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_reports_layer_and_fullframe_paths(bench, capsys):
    try:
        assert bench.main(["--tiny", "--models", "kontext", "--frames", "12mp", "--steps",
                           "1", "--tiles", "1"]) == 0
    finally:
        get_manager().unload_all()
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["device"] == "cpu" and report["frames"] == {"12mp": "424x283"}
    (row,) = report["results"]
    assert {"layer_s", "layer_peak_gb", "fullframe_s", "fullframe_peak_gb", "tiles",
            "weights_gb", "load_s", "params_b"} <= set(row)
    assert row["tiles"] > 1 and row["tiles_run"] == 1
    assert row["fullframe_s"] > row["layer_s"]  # every tile is a model edit
    assert report["errors"] == ["kontext/nf4: bitsandbytes NF4 needs CUDA"]


def test_without_cuda_the_full_bench_stops_clearly(bench, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(SystemExit) as stop:
        bench.main(["--models", "qwen"])
    assert stop.value.code == 2
    assert "needs a CUDA GPU" in json.loads(capsys.readouterr().out)["error"]
