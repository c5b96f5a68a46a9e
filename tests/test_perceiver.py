"""Perceiver: measured deficits become diverse, parameterised, scene-aware proposals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.brain.perceiver import match_mood, perceive, propose, run_gates
from agent.search.autopilot_memory import AutopilotMemory


def _families(cands: list) -> list[str]:
    return [c.family for c in cands]


def test_portrait_is_seen_and_faces_are_protected(astronaut: np.ndarray) -> None:
    p = perceive(astronaut)
    assert p.scene == "portrait" and p.faces
    x0, y0, x1, y1 = p.faces[0]
    assert 150 < (x0 + x1) / 2 < 260 and 40 < (y0 + y1) / 2 < 150   # the astronaut's face
    cands = propose(perception=p, k=8)
    local = [c for c in cands if c.family in ("clahe", "vibrance", "sharpen", "contrast")]
    assert local and all(c.protect for c in local)
    json.dumps([c.to_dict() for c in cands] + [p.to_dict()])


def test_each_degradation_gets_its_remedy_first(coffee: np.ndarray) -> None:
    dark = propose((coffee * 0.3).astype(np.uint8), k=4)
    exposure = [c for c in dark[:3] if c.family == "exposure"]
    assert exposure and exposure[0].action.params["stops"] > 0.5
    cast = propose(np.clip(coffee * np.array([1.25, 1.0, 0.7]), 0, 255).astype(np.uint8), k=4)
    assert "auto_white_balance" in _families(cast)[:2]
    flat = propose((coffee * 0.35 + 83).astype(np.uint8), k=4)
    assert {"auto_levels", "contrast"} & set(_families(flat)[:2])
    noisy = np.clip(coffee + np.random.default_rng(0).normal(0, 14, coffee.shape), 0, 255)
    assert "denoise" in _families(propose(noisy.astype(np.uint8), k=6))


def test_proposals_are_diverse_valid_and_respect_exclusions(chelsea: np.ndarray) -> None:
    cands = propose(chelsea, k=6)
    assert len(cands) == 6 and len({c.key for c in cands}) == 6
    assert len(set(_families(cands))) >= 5
    for cand in cands:
        assert cand.reason and cand.action.operation == cand.family
    again = propose(chelsea, k=6, exclude={cands[0].family})
    assert cands[0].family not in _families(again)


@pytest.mark.parametrize(("mood", "style"), [("warmer and cosy", "warm"),
                                             ("cinematic", "cinematic"),
                                             ("airy", "airy"), ("make it pop", "pop")])
def test_moods_map_to_styles(mood: str, style: str) -> None:
    assert match_mood(mood) == style


def test_mood_steers_the_proposals(chelsea: np.ndarray) -> None:
    plain = propose(chelsea, k=4)
    warm = propose(chelsea, k=4, mood="warmer and cosy")
    temps = [c for c in warm if c.family == "temperature"]
    assert temps and temps[0].action.params["amount"] > 0
    assert _families(plain) != _families(warm)


def test_memory_prior_reorders_and_persists(tmp_path, coffee: np.ndarray) -> None:
    path = tmp_path / "mem.json"
    memory = AutopilotMemory.load(path)
    base = propose(coffee, k=6, memory=memory)
    last = base[-1].family
    for _ in range(5):
        memory.record("general", last, kept=True, gain=0.05)
    memory.save()
    reloaded = AutopilotMemory.load(path)
    assert reloaded.prior("general", last) > 0
    boosted = propose(coffee, k=6, memory=reloaded)
    assert _families(boosted).index(last) < _families(base).index(last)


def test_corrupt_memory_file_starts_afresh(tmp_path) -> None:
    path = tmp_path / "mem.json"
    path.write_text("{not json")
    memory = AutopilotMemory.load(path)
    assert memory.scenes == {} and memory.prior("portrait", "exposure") == 0.0
    memory.record("portrait", "exposure", kept=False, gain=0.0)
    memory.save()
    assert json.loads(path.read_text())["scenes"]["portrait"]["exposure"]["tries"] == 1


def test_exposure_push_needs_an_under_used_histogram(coffee: np.ndarray) -> None:
    x = coffee.astype(np.float32) / 255
    low_key = (255 * x ** 2.2).astype(np.uint8)      # dark, but highlights reach white
    under = (coffee * 0.6).astype(np.uint8)          # same mean, highlights squeezed
    assert "exposure" not in _families(propose(low_key, k=8))
    pushed = [c for c in propose(under, k=8) if c.family == "exposure"]
    assert pushed and pushed[0].action.params["stops"] > 0.5


def test_white_balance_is_gated_on_the_input_cast(coffee: np.ndarray) -> None:
    cast = np.clip(coffee * np.array([1.25, 1.0, 0.7]), 0, 255).astype(np.uint8)
    assert "auto_white_balance" not in run_gates(perceive(cast).indices)
    assert "auto_white_balance" in run_gates(perceive(coffee).indices)
    gated = propose(cast, k=8, exclude=run_gates(perceive(coffee).indices))
    assert "auto_white_balance" not in _families(gated)


def test_noisy_input_is_never_sharpened_and_polish_is_marked(coffee: np.ndarray) -> None:
    noisy = np.clip(coffee + np.random.default_rng(0).normal(0, 12, coffee.shape), 0, 255)
    assert "sharpen" in run_gates(perceive(noisy.astype(np.uint8)).indices)
    assert "sharpen" not in run_gates(perceive(coffee).indices)
    cands = propose(coffee, k=40)
    polish = [c for c in cands if not c.diagnosed]
    assert polish and all(c.priority < 0.3 for c in polish)
    assert all(c.diagnosed for c in propose(coffee, k=40, polish=False))
