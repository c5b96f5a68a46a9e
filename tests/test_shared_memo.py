"""The nets' answers kept in a shared folder (``pipelines.perception.shared_memo``): another
net of the same model (as in another process) gives the same bytes without running, a
damaged or forgotten entry is run again, and nothing is kept when no folder is set."""

from __future__ import annotations

import numpy as np

from pipelines.perception import detectors, shared_memo
from pipelines.perception.detectors import SalientSegmenter, forget_memos


class _Counting:
    """A loaded net whose forwards are counted."""

    def __init__(self, net, runs: list[int]) -> None:
        self.net, self.runs = net, runs

    def setInput(self, blob) -> None:  # noqa: N802 - OpenCV's name
        self.net.setInput(blob)

    def forward(self, *names):
        self.runs.append(1)
        return self.net.forward(*names)


def _counted(runs: list[int]) -> SalientSegmenter:
    """A fresh net (an empty memory memo, as in a new process), loaded and counted."""
    net = SalientSegmenter()
    net.saliency(np.zeros((8, 8, 3), np.uint8))          # loads the model file
    net._net = _Counting(net._net, runs)
    return net


def test_a_net_of_another_process_reads_the_answer_and_does_not_run(tmp_path, monkeypatch,
                                                                      coffee) -> None:
    monkeypatch.setattr(shared_memo, "FOLDER", tmp_path)
    monkeypatch.setattr(detectors, "_FORGOTTEN", set())  # put back after the test
    first_runs: list[int] = []
    first = _counted(first_runs).saliency(coffee)
    assert first_runs == [1] and list(tmp_path.glob("*.npz"))
    runs: list[int] = []
    other = _counted(runs)
    assert np.array_equal(other.saliency(coffee), first) and not runs
    forget_memos()                        # a bench's repeat: the net runs again
    again = _counted(runs)
    assert np.array_equal(again.saliency(coffee), first) and runs == [1]


def test_a_damaged_entry_is_run_again_and_no_folder_keeps_nothing(tmp_path, monkeypatch,
                                                                  coffee) -> None:
    monkeypatch.setattr(shared_memo, "FOLDER", tmp_path)
    runs: list[int] = []
    want = _counted(runs).saliency(coffee)
    for kept in tmp_path.glob("*.npz"):
        kept.write_bytes(kept.read_bytes()[:100])        # cut short
    assert np.array_equal(_counted(runs).saliency(coffee), want) and runs == [1, 1]
    monkeypatch.setattr(shared_memo, "FOLDER", None)
    for kept in tmp_path.glob("*.npz"):
        kept.unlink()
    assert np.array_equal(_counted(runs).saliency(coffee), want) and len(runs) == 3
    assert not list(tmp_path.iterdir())
