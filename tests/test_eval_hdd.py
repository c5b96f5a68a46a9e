"""HDD engine: transitions, paraphrases, renders, perception, IF/IC and the dataset CLI."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eval import hdd
from eval.hdd import Command, Dialogue, SceneObject, SceneState

SIZE = (480, 270)


def _scene() -> SceneState:
    objects = (
        SceneObject("o0", "red", "large", "matte", "circle", (0.1, 0.5)),
        SceneObject("o1", "blue", "medium", "glossy", "square", (0.5, 0.17)),
        SceneObject("o2", "yellow", "small", "matte", "star", (0.9, 0.83)),
        SceneObject("o3", "green", "medium", "glossy", "triangle", (0.7, 0.5)),
    )
    return SceneState(objects=objects, background=7, next_id=4)


def test_transitions_change_only_the_target_and_undo_restores():
    s0 = _scene()
    s1 = hdd.apply(s0, Command("adjust", "o1", {"color": "pink"}))
    assert s1.get("o1").color == "pink"
    assert [o for o in s1.objects if o.id != "o1"] == [o for o in s0.objects if o.id != "o1"]
    s2 = hdd.apply_turn(s1, [Command("remove", "o0"),
                             Command("add", attrs={"color": "cyan", "size": "small",
                                                   "material": "matte", "shape": "circle",
                                                   "position": (0.3, 0.8)})])
    assert s2.ids() == {"o1", "o2", "o3", "o4"}
    assert hdd.apply(s2, Command("undo"), [s0, s1]) == s1
    assert s0.get("o1").color == "blue"  # inputs are never modified
    with pytest.raises(hdd.HDDError):
        hdd.apply(s0, Command("undo"))
    with pytest.raises(hdd.HDDError):
        hdd.apply(s0, Command("adjust", "o9", {"color": "red"}))
    with pytest.raises(hdd.HDDError):
        hdd.apply(s0, Command("adjust", "o1", {"color": "plaid"}))
    with pytest.raises(hdd.HDDError):
        hdd.apply(s0, Command("adjust", "o1", {"position": (0, 0)}))


def test_paraphrase_mixes_intents_and_refers_back():
    s0 = _scene()
    text = hdd.paraphrase([Command("adjust", "o1", {"color": "pink"}), Command("remove", "o0")],
                          random.Random(1), Dialogue(s0))
    assert "blue box" in text and "pink" in text and "red ball" in text
    again = hdd.paraphrase([Command("adjust", "o1", {"size": "large"})], random.Random(2),
                           Dialogue(s0, mentioned=["o1"]))
    assert "bigger" in again
    assert any(w in again for w in ("that blue box", "same", "from before"))
    undo = hdd.paraphrase([Command("undo")], random.Random(0), Dialogue(s0)).lower()
    assert any(w in undo for w in ("undo", "revert", "go back"))


def test_render_is_deterministic_muted_and_objects_keep_their_colour():
    state = _scene()
    a = hdd.render(state, SIZE)
    assert a.shape == (270, 480, 3) and a.dtype == np.uint8
    assert np.array_equal(a, hdd.render(state, SIZE))
    assert not np.array_equal(a, hdd.render(state, SIZE, seed=1))
    empty = hdd.render(SceneState(background=7), SIZE)
    import cv2

    sat = cv2.cvtColor(empty, cv2.COLOR_RGB2HSV)[..., 1]
    assert np.percentile(sat, 99) < 60  # muted background
    red = state.get("o0")
    x, y = int(red.position[0] * 480), int(red.position[1] * 270)
    assert a[y, x, 0] > 150 and a[y, x, 1] < 80  # the red ball is red
    changed = np.any(a != empty, axis=2)
    assert 0.02 < changed.mean() < 0.3  # objects change only their own pixels


def test_perception_recovers_generated_states():
    failures = 0
    total = 0
    for index in range(12):
        session = hdd.make_session(f"s{index}", random.Random(index), turns=2)
        for state in session.states:
            size = (640, 360) if index % 2 else (600, 400)
            predicted = hdd.perceive(hdd.render(state, size))
            aspect = size[0] / size[1]
            prev = SceneState(background=state.background)
            total += 1
            if hdd.instruction_following(predicted, state, prev, aspect) != 1.0 or \
                    len(predicted.objects) != len(state.objects):
                failures += 1
    assert failures == 0, f"{failures}/{total} scenes misperceived"


def test_if_ic_score_targets_and_untouched_objects():
    s0 = _scene()
    s1 = hdd.apply_turn(s0, [Command("adjust", "o1", {"color": "pink"}), Command("remove", "o2")])
    aspect = SIZE[0] / SIZE[1]
    perfect = hdd.perceive(hdd.render(s1, SIZE))
    assert hdd.instruction_following(perfect, s1, s0, aspect) == 1.0
    assert hdd.image_consistency(perfect, s1, s0, aspect) == 1.0
    nothing = hdd.perceive(hdd.render(s0, SIZE))  # the editor did nothing
    assert hdd.instruction_following(nothing, s1, s0, aspect) == pytest.approx((0.75 + 0) / 2)
    assert hdd.image_consistency(nothing, s1, s0, aspect) == 1.0
    # an editor that also recoloured an untouched object loses consistency
    wrong = hdd.apply(s1, Command("adjust", "o3", {"color": "orange"}))
    broken = hdd.perceive(hdd.render(wrong, SIZE))
    assert hdd.image_consistency(broken, s1, s0, aspect) == pytest.approx((1 + 0.75) / 2)
    assert hdd.instruction_following(SceneState(), s0, s0) is None


def test_perceive_rejects_bad_input():
    with pytest.raises(hdd.HDDError):
        hdd.perceive(np.zeros((10, 10), np.float32))
    with pytest.raises(hdd.HDDError):
        SceneState.from_json({"objects": [{"id": "a"}]})


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def test_make_hdd_cli_same_seed_same_bytes(tmp_path):
    cmd = [sys.executable, "-m", "eval", "make-hdd", "--sessions", "2", "--turns", "3",
           "--size", "320x180", "--seed", "4"]
    for name in ("a", "b"):
        done = subprocess.run([*cmd, str(tmp_path / name)], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[1], timeout=120)
        assert done.returncode == 0, done.stderr
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    hdd.make_dataset(tmp_path / "c", sessions=2, turns=3, size=(320, 180), seed=5)
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["sessions"] == ["s0000", "s0001"]
    session = hdd.load_session(tmp_path / "a" / "s0000")
    assert len(session.states) == 4 and len(session.instructions) == 3
    for t in range(4):
        assert (tmp_path / "a" / "s0000" / f"turn_{t}.png").is_file()
    # states in the file replay from the commands
    for t, commands in enumerate(session.commands):
        assert hdd.apply_turn(session.states[t], commands, session.states[:t]) == \
            session.states[t + 1]
