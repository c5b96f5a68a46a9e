"""ZeroGPU runs every ``spaces.GPU`` function in a worker *forked* from the app: arguments
and the result travel pickled through queues, and whatever the function changes in the
worker's memory is lost. These tests run Loupe's GPU entry points exactly that way (a
'fork' multiprocessing context, pickled arguments in, pickled result out) and check that
the session, updated in the parent from the returned pixels, keeps every change."""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from agent.session import EditSession
from pipelines.editors.base import EditRequest
from pipelines.editors.diffusion import InstructPix2PixEditor, PipelineCall, run_pipeline
from pipelines.layers import compose, decompose, feather_alpha
from pipelines.models import get_manager
from tests.tiny_models import tiny_model_dir


def in_forked_worker(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run as ZeroGPU runs a GPU function: in a forked child, arguments and result
    pickled through queues, the child's memory thrown away afterwards."""

    def call(*args: Any, **kwargs: Any) -> Any:
        ctx = multiprocessing.get_context("fork")
        inbox, outbox = ctx.SimpleQueue(), ctx.SimpleQueue()
        inbox.put(pickle.dumps((args, kwargs)))

        def worker() -> None:
            import torch

            torch.set_num_threads(1)  # the parent's thread pool does not survive a fork
            a, k = pickle.loads(inbox.get())
            try:
                outbox.put(("ok", fn(*a, **k)))
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                outbox.put(("error", f"{type(exc).__name__}: {exc}"))

        process = ctx.Process(target=worker)
        process.start()
        status, value = outbox.get()
        process.join(timeout=60)
        if status == "error":
            raise RuntimeError(value)
        return value

    return call


@pytest.fixture()
def tiny_ip2p(monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("ip2p")))
    monkeypatch.setattr(InstructPix2PixEditor, "working_area", 64 * 64)
    yield
    get_manager().unload_all()


def test_the_gpu_entry_point_is_pure_and_its_result_lands_in_the_session(tiny_ip2p, chelsea,
                                                                          tmp_path):
    session = EditSession.create(chelsea, tmp_path / "s")
    root, before = session.head, session.current_image().copy()
    mask = np.zeros(before.shape[:2], bool)
    mask[90:170, 150:260] = True
    layer = decompose(before, mask)
    editor = InstructPix2PixEditor()
    call = editor.prepare(layer.patch, layer.mask, EditRequest(
        "adjust", "generate", {}, "make it snowy", steps=2, seed=5))
    assert isinstance(pickle.loads(pickle.dumps(call)), PipelineCall)  # travels to a worker
    assert run_pipeline.gpu_seconds(call) >= 10  # a slice sized from the call

    patch = in_forked_worker(run_pipeline)(call)  # the model runs in the forked child
    assert patch.shape == layer.patch.shape and patch.dtype == np.uint8
    again = run_pipeline(call)  # pure: same inputs, same pixels (thread counts differ: ±2)
    assert np.abs(patch.astype(int) - again).max() <= 2

    node = session.commit(compose(before, layer, patch, feather=3), {"operation": "generate"},
                          "snowy cat")  # the session changes here, in the parent
    assert session.head == node.id != root and len(session.graph.nodes) == 2
    after = session.current_image()
    rows, cols = layer.slices
    assert not np.array_equal(after[rows, cols][layer.mask], before[rows, cols][layer.mask])
    far = feather_alpha(layer.mask, 3) == 0
    assert np.array_equal(after[rows, cols][far], before[rows, cols][far])
    reopened = EditSession.open(tmp_path / "s")
    assert reopened.head == node.id and np.array_equal(reopened.current_image(), after)


def test_a_session_changed_inside_the_worker_is_lost(chelsea, tmp_path):
    """Why UI callbacks must not be GPU functions: their session changes vanish."""
    session = EditSession.create(chelsea, tmp_path / "s")

    def edit_inside_the_worker() -> int:
        brighter = np.clip(session.current_image().astype(int) + 30, 0, 255).astype(np.uint8)
        session.commit(brighter, {"operation": "exposure"}, "brighter")
        return len(session.graph.nodes)

    assert in_forked_worker(edit_inside_the_worker)() == 2  # it changed in the child…
    assert len(session.graph.nodes) == 1  # …and the parent never saw it


def test_a_whole_turn_with_the_model_in_a_forked_worker_keeps_every_change(
        tiny_ip2p, monkeypatch, chelsea, tmp_path):
    import pipelines.editors.diffusion as diffusion

    monkeypatch.setattr(diffusion, "run_pipeline", in_forked_worker(run_pipeline))
    session = EditSession.create(chelsea, tmp_path / "s")
    before = session.current_image().copy()
    result = session.turn("make it look like a watercolor painting")
    attempts = [a for step in result.steps for a in step.attempts]
    assert attempts and all(a.editor == "instruct-pix2pix" for a in attempts), result.to_dict()
    assert result.ok, result.message
    assert len(session.graph.nodes) == 2 and session.head != session.graph.root
    assert not np.array_equal(session.current_image(), before)


def test_the_gpu_slice_follows_image_size_and_steps(monkeypatch):
    from pipelines.editors.diffusion import call_seconds
    from pipelines.gpu import gpu_task

    def call(side: int, steps: int) -> PipelineCall:
        image = np.zeros((side, side, 3), np.uint8)
        return PipelineCall("editor", "m", "QwenImageEditPipeline", image, image[..., 0],
                            {"num_inference_steps": steps}, 0, (side, side))

    monkeypatch.setenv("LOUPE_GPU_SECONDS", "100000")
    small, big = call_seconds(call(512, 50)), call_seconds(call(1024, 50))
    assert small < big < call_seconds(call(1024, 100))
    assert big > 120  # Qwen-Image-Edit at 1 MP needs more than the old fixed 120 s
    monkeypatch.setenv("LOUPE_GPU_SECONDS", "300")
    assert call_seconds(call(1024, 100)) == 300  # capped by the setting

    @gpu_task(duration=lambda n: 3 * n)
    def work(n: int) -> int:
        """Doubles (a stand-in GPU function)."""
        return 2 * n

    assert work(21) == 42 and work.gpu_seconds(20) == 60 and work.gpu_seconds(1) == 10
    with pytest.raises(ValueError, match="positive"):
        work.gpu_seconds(-1)
