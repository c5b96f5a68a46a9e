"""Dataset loaders on small fixture datasets written here, and path-escape rejection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eval import hdd
from eval.datasets import DatasetError, detect_format, inside, load_dataset


def _png(path: Path, value: int = 100) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((16, 24, 3), value, np.uint8)).save(path)
    return path


def test_magicbrush(tmp_path):
    folder = tmp_path / "images" / "327726"
    for name in ("327726-input.png", "327726-output1.png", "327726-mask1.png",
                 "327726-output2.png", "327726-mask2.png"):
        _png(folder / name)
    sessions = {"327726": [
        {"input": "327726-input.png", "mask": "327726-mask1.png",
         "output": "327726-output1.png", "instruction": "put a hat on the dog"},
        {"input": "327726-output1.png", "mask": "327726-mask2.png",
         "output": "327726-output2.png", "instruction": "make the hat red"}]}
    (tmp_path / "edit_sessions.json").write_text(json.dumps(sessions))
    assert detect_format(tmp_path) == "magicbrush"
    [sample] = load_dataset(tmp_path)
    assert sample.id == "327726" and sample.source.name == "327726-input.png"
    assert [t.instruction for t in sample.turns] == ["put a hat on the dog", "make the hat red"]
    assert sample.turns[1].target.name == "327726-output2.png"
    assert sample.turns[0].mask.is_file()


def test_imgedit_and_complex_edit(tmp_path):
    _png(tmp_path / "a" / "img1.jpg")
    _png(tmp_path / "img2.png")
    (tmp_path / "a" / "imgedit.json").write_text(json.dumps({
        "k1": {"id": "img1", "prompt": "remove the cup", "edit_type": "remove",
               "image": "img1.jpg"}}))
    [s] = load_dataset(tmp_path / "a")
    assert (s.id, s.type, s.turns[0].instruction) == ("img1", "remove", "remove the cup")
    (tmp_path / "complex_edit.json").write_text(json.dumps([
        {"id": "img2", "image": "img2.png",
         "levels": {"1": "make it warmer", "3": "make it warmer, remove the car and add snow"}}]))
    samples = load_dataset(tmp_path / "complex_edit.json", "complex-edit")
    assert [s.type for s in samples] == ["C1", "C3"]
    assert samples[1].turns[0].instruction.startswith("make it warmer, remove")


def test_dle_and_folder(tmp_path):
    _png(tmp_path / "d" / "src.png")
    _png(tmp_path / "d" / "ref.png", 30)
    (tmp_path / "d" / "dlebench.json").write_text(json.dumps([
        {"id": "x1", "source": "src.png", "reference": "ref.png", "type": "color",
         "instruction": "make the tiny sign red", "boxes": [[1, 2, 5, 6]]}]))
    [s] = load_dataset(tmp_path / "d")
    assert s.type == "color" and s.meta["boxes"] == [[1, 2, 5, 6]]
    assert s.turns[0].target.name == "ref.png"
    plain = tmp_path / "plain"
    _png(plain / "cat_source.png")
    _png(plain / "cat_edited.png")
    (plain / "cat.txt").write_text("make the cat grey\n")
    _png(plain / "source" / "dog.jpg")
    (plain / "dog.txt").write_text("remove the dog")
    samples = load_dataset(plain)
    assert [(s.id, s.source.name) for s in samples] == [("cat", "cat_source.png"),
                                                        ("dog", "dog.jpg")]
    assert samples[0].turns[0].target.name == "cat_edited.png"
    assert samples[1].turns[0].target is None


def test_hdd_folder(tmp_path):
    hdd.make_dataset(tmp_path / "h", sessions=2, turns=2, size=(160, 90), seed=1)
    samples = load_dataset(tmp_path / "h")
    assert [s.id for s in samples] == ["s0000", "s0001"]
    assert len(samples[0].turns) == 2 and samples[0].turns[0].state is not None
    assert samples[0].turns[1].target.name == "turn_2.png"
    assert len(samples[0].meta["states"]) == 3


def test_paths_escaping_the_dataset_are_rejected(tmp_path):
    root = tmp_path / "ds"
    _png(tmp_path / "secret.png")
    _png(root / "ok.png")
    for bad in ("../secret.png", str(tmp_path / "secret.png"), "a/../../secret.png"):
        (root / "imgedit.json").write_text(json.dumps([
            {"id": "1", "prompt": "x", "edit_type": "y", "image": bad}]))
        with pytest.raises(DatasetError, match="escapes"):
            load_dataset(root, "imgedit")
    os.symlink(tmp_path / "secret.png", root / "link.png")
    with pytest.raises(DatasetError, match="escapes"):
        inside(root, "link.png")
    assert inside(root, "ok.png") == (root / "ok.png").resolve()


def test_bad_datasets_give_clear_errors(tmp_path):
    with pytest.raises(DatasetError, match="no dataset"):
        load_dataset(tmp_path / "missing")
    (tmp_path / "edit_sessions.json").write_text("{not json")
    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path)
    (tmp_path / "edit_sessions.json").write_text(json.dumps({"1": [{"input": "nope.png",
                                                                    "instruction": "x"}]}))
    with pytest.raises(DatasetError, match="missing file"):
        load_dataset(tmp_path)
    with pytest.raises(DatasetError, match="unknown dataset format"):
        load_dataset(tmp_path, "coco")
