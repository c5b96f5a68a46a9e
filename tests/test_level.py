"""Straighten only on strong evidence (issue 28): a horizon or agreeing plumb lines, with a
confidence; never lines converging in perspective or natural diagonals."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from agent.brain.perceiver import perceive, propose
from eval.level import APPLY_CONFIDENCE, LEVEL_TOLERANCE, level_evidence
from eval.photos import load_photo
from pipelines.editors.frame import straighten


def _straighten_proposals(img: np.ndarray) -> list[float]:
    cands = propose(perception=perceive(img), k=30)
    return [float(c.action.params["angle"]) for c in cands if c.family == "straighten"]


@pytest.mark.parametrize("name", ["tower", "china", "cheetah_run", "motorcycle", "astronaut",
                                  "chelsea", "rocket"])
def test_level_photos_with_strong_diagonals_are_not_rotated(name: str) -> None:
    """The Eiffel tower's converging edges, the pagoda's eaves over a lake, a garage shot at
    an angle, launch towers seen from below: level photos whose lines lean in perspective."""
    img = load_photo(name, 512)
    ev = level_evidence(img)
    assert not ev.apply or abs(ev.correction) < LEVEL_TOLERANCE, ev
    assert _straighten_proposals(img) == []


@pytest.mark.parametrize("degrees", [2, 3, 4, 5, 6, 7, 8, -2, -3, -4, -5, -6, -7, -8])
def test_photos_rotated_by_known_angles_are_measured_within_half_a_degree(degrees: int
                                                                          ) -> None:
    """A level photo (scikit-image's cameraman: a tripod pole and a building) rotated by a
    known angle, its empty corners cropped away (``straighten`` keeps the largest inner
    frame), so the frame's edges are no cue."""
    tilted = straighten(load_photo("camera", 512), degrees)
    ev = level_evidence(tilted)
    assert ev.cue == "verticals"
    assert abs(ev.correction + degrees) <= 0.5, ev
    angles = _straighten_proposals(tilted)
    if ev.confidence >= APPLY_CONFIDENCE:      # applied: the Autopilot proposes it
        assert len(angles) == 1 and abs(angles[0] + degrees) <= 0.5
    else:                                      # weaker evidence: offered, not proposed
        assert ev.suggest and angles == []


def test_a_confident_tilt_is_straightened_and_a_weak_one_only_suggested() -> None:
    from agent.search.autopilot_memory import AutopilotMemory
    from agent.search.mcts import autopilot
    from agent.search.suggestions import accept_suggestion

    photo = load_photo("camera", 384)
    confident = autopilot(straighten(photo, -3), iterations=1, simulations=4, depth=1,
                          memory=AutopilotMemory())
    ops = [s.action["operation"] for s in confident.steps]
    assert ops == ["straighten"] and abs(confident.steps[0].action["params"]["angle"] - 3) <= 0.5
    assert level_evidence(confident.image).correction == pytest.approx(0, abs=0.5)
    weak_input = straighten(photo, 6)
    weak = autopilot(weak_input, iterations=1, simulations=4, depth=1,
                     memory=AutopilotMemory())
    assert "straighten" not in [s.action["operation"] for s in weak.steps]
    out = json.loads(json.dumps(weak.to_dict()))
    (sugg,) = out["suggestions"]
    assert sugg["operation"] == "straighten" and abs(sugg["params"]["angle"] + 6) <= 0.5
    assert 0 < sugg["confidence"] < APPLY_CONFIDENCE and sugg["cue"] == "verticals"
    fixed, action = accept_suggestion(weak.image, sugg)
    assert action.operation == "straighten" and not np.array_equal(fixed, weak.image)
    assert abs(level_evidence(fixed).correction) <= 0.5


def test_a_horizon_over_water_is_a_cue() -> None:
    """A drawn seascape (smooth sky over a textured sea) tilted by 4°: the horizon path."""
    rng = np.random.default_rng(0)
    h, w = 600, 900
    sky = np.linspace(200, 150, h // 2)[:, None, None] * np.array([0.75, 0.85, 1.0])
    sea = 70 + rng.normal(0, 14, (h - h // 2, w, 1)) * np.array([1, 1, 1])
    sea = cv2.GaussianBlur(sea.astype(np.float32), (0, 0), 1.2) * np.array([0.5, 0.8, 1.0])
    scene = np.concatenate([np.broadcast_to(sky, (h // 2, w, 3)), sea], axis=0)
    scene = np.clip(scene, 0, 255).astype(np.uint8)
    ev = level_evidence(straighten(scene, 4.0))
    assert ev.cue.startswith("horizon") and ev.apply
    assert abs(ev.correction + 4.0) <= 0.5
    assert abs(level_evidence(scene).correction) < LEVEL_TOLERANCE


def test_converging_verticals_are_refused() -> None:
    """A drawn facade seen from below: plumb edges that lean apart towards the top, plus a
    roll of 3°. The lean says nothing sure about the roll, so nothing is applied."""
    h, w = 600, 800
    img = np.full((h, w, 3), 190, np.uint8)
    for x in np.linspace(120, 680, 8):
        lean = (x - w / 2) / (w / 2) * 6.0            # keystone: ±6° at the edges
        dx = np.tan(np.radians(lean)) * h
        cv2.line(img, (int(x - dx / 2), h - 20), (int(x + dx / 2), 20), (40, 40, 40), 5)
    ev = level_evidence(straighten(img, 3.0))
    assert not ev.apply
