"""The critics: measured checks on real ClassicalEditor edits of real photos and on
deliberately bad edits; the VLM panel against a real OpenAI-compatible server process."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from agent.actions import Action
from agent.brain.critic import (
    CRITIQUE_SCHEMA,
    Critique,
    MeasuredCritic,
    PanelCritic,
    combine_scores,
    get_critic,
)
from pipelines.config import Settings
from pipelines.editors.classical import ClassicalEditor
from pipelines.layers import compose, decompose, feather_alpha
from pipelines.llm import OpenAICompatible
from tests.openai_stub_server import running_stub

CRITIC = MeasuredCritic()


def _action(op: str, kind: str = "adjust", **params) -> Action:
    return Action(kind=kind, operation=op, params=params, target="target",
                  region={"type": "phrase", "phrase": "target"})


def _box_mask(image: np.ndarray, box=(60, 40, 200, 150)) -> np.ndarray:
    mask = np.zeros(image.shape[:2], bool)
    x0, y0, x1, y1 = box
    mask[y0:y1, x0:x1] = True
    return mask


def _classical(image: np.ndarray, mask: np.ndarray, action: Action, feather: int | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(before patch, composed after patch, patch mask) for a real ClassicalEditor edit."""
    layer = decompose(image, mask)
    edited = ClassicalEditor().edit(layer.patch, layer.mask, action.to_request())
    after = compose(image, layer, edited, feather=feather)[layer.slices]
    return layer.patch, after, layer.mask


def _soft_edit(image: np.ndarray, mask: np.ndarray, action: Action, width: int = 8
               ) -> np.ndarray:
    """The whole frame edited, blended through a wide feather (a well-feathered layer)."""
    full = ClassicalEditor().edit(image, np.ones(mask.shape, bool), action.to_request())
    alpha = feather_alpha(mask, width).astype(np.float32)[..., None] / 255.0
    return np.round(full * alpha + image * (1 - alpha)).astype(np.uint8)


@pytest.fixture(scope="module")
def coffee_small(coffee):
    return np.ascontiguousarray(coffee[::2, ::2])


@pytest.fixture(scope="module")
def astro_small(astronaut):
    return np.ascontiguousarray(astronaut[::2, ::2])


# --- good edits from the real editor pass ----------------------------------------------

@pytest.mark.parametrize("op, params", [
    ("brightness", {"amount": 0.2}), ("brightness", {"amount": -0.3}),
    ("exposure", {"stops": -0.5}), ("contrast", {"amount": -0.3}),
    ("saturation", {"amount": 0.25}), ("saturation", {"amount": -0.5}),
    ("vibrance", {"amount": 0.3}), ("temperature", {"amount": 0.2}),
    ("temperature", {"amount": -0.3}), ("tint", {"amount": 0.2}),
    ("shadows", {"amount": 0.3}), ("highlights", {"amount": -0.3}),
    ("gamma", {"gamma": 1.3}), ("hue", {"degrees": 40}),
    ("sharpen", {}), ("denoise", {}), ("blur", {}), ("grayscale", {}),
    ("auto_levels", {}), ("clahe", {}), ("vignette", {"amount": 0.4}),
])
def test_real_classical_edits_score_well(astro_small, op, params):
    image = astro_small
    mask = _box_mask(image)
    before, after, m = _classical(image, mask, _action(op, **params))
    crit = CRITIC.critique(before, after, _action(op, **params), m)
    assert crit.score >= 7, (crit.fix, crit.measures)
    assert "everything outside the target is untouched" in crit.keep
    assert 0 <= crit.score <= 10


@pytest.mark.parametrize("color", ["red", "blue", "#ff8800", "white"])
def test_real_recolor_reads_as_the_colour(coffee_small, color):
    action = _action("recolor", "replace", color=color)
    mask = _box_mask(coffee_small, (150, 20, 260, 120))
    after = _soft_edit(coffee_small, mask, action)
    crit = CRITIC.critique(coffee_small, after, action, mask)
    assert crit.score >= 7, (crit.fix, crit.measures)
    if color != "white":
        assert crit.measures["hue_distance_deg"] < 25


def test_real_inpaint_of_a_ball_blends_in(chelsea):
    image = chelsea.copy()
    cv2.circle(image, (330, 90), 22, (230, 20, 20), -1)
    mask = np.zeros(image.shape[:2], bool)
    cv2.circle(mask.view(np.uint8), (330, 90), 26, 1, -1)
    action = _action("inpaint", "remove")
    before, after, m = _classical(image, mask, action)
    crit = CRITIC.critique(before, after, action, m)
    assert crit.score >= 7, (crit.fix, crit.measures)
    assert crit.measures["rim_share"] <= 0.005 and crit.checks["no_rim"]


@pytest.mark.parametrize("k", [1, 4])
def test_a_rim_left_asks_to_grow_by_pixels_of_the_photo(chelsea, k):
    """A removal that leaves the object's colour along its old edge asks the next attempt
    to grow the area by the rim's width, in pixels of the photo: the rim is measured on a
    copy of at most ``WORK_PIXELS``, so on the photo enlarged 4 times (2.2 MP) the band is
    twice as wide in the photo's pixels (it asked for 8 px there, the copy's width)."""
    image = cv2.resize(chelsea, None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC)
    centre, r = (330 * k, 90 * k), 22 * k
    cv2.circle(image, centre, r, (230, 20, 20), -1)
    mask = np.zeros(image.shape[:2], bool)
    cv2.circle(mask.view(np.uint8), centre, r + 4 * k, 1, -1)
    action = _action("inpaint", "remove")
    layer = decompose(image, mask)    # judged on the whole frame, as the agent does
    after = compose(image, layer, ClassicalEditor().edit(layer.patch, layer.mask,
                                                         action.to_request()))
    cv2.circle(after, centre, r + 2 * k, (230, 20, 20), 3 * k)   # a red ring is left
    crit = CRITIC.critique(image, after, action, mask)
    assert not crit.checks["no_rim"], crit.measures
    h, w = mask.shape
    scale = min(1.0, (600_000 / (h * w)) ** 0.5)
    assert crit.grow == int(np.ceil(8 / scale))
    assert (crit.grow == 8) == (k == 1)


def test_real_text_is_detected(coffee_small):
    action = _action("text", "add", text="HELLO", color="white")
    mask = _box_mask(coffee_small, (20, 10, 280, 70))
    before, after, m = _classical(coffee_small, mask, action)
    crit = CRITIC.critique(before, after, action, m)
    assert crit.score >= 7 and "text is visible in the region" in crit.keep


def test_whole_image_edit_has_no_outside(coffee_small):
    action = _action("brightness", amount=0.3)
    after = ClassicalEditor().edit(coffee_small, np.ones(coffee_small.shape[:2], bool),
                                   action.to_request())
    crit = CRITIC.critique(coffee_small, after, action, None)
    assert crit.score >= 7 and "outside_changed_fraction" not in crit.measures


# --- bad edits are caught, in plain words, with concrete retries -------------------------

def test_wrong_direction_is_caught(astro_small):
    mask = _box_mask(astro_small)
    before, after, m = _classical(astro_small, mask, _action("brightness", amount=-0.3))
    crit = CRITIC.critique(before, after, _action("brightness", amount=0.3), m)
    assert crit.score < 4
    assert any("wrong way" in f for f in crit.fix)
    assert crit.retry_params["amount"] > 0


def test_shortfall_suggests_a_bigger_amount(astro_small):
    mask = _box_mask(astro_small)
    before, after, m = _classical(astro_small, mask, _action("brightness", amount=0.06))
    asked = _action("brightness", amount=0.5)
    crit = CRITIC.critique(before, after, asked, m)
    assert crit.score < 7 and any("stronger" in f or "barely" in f for f in crit.fix)
    assert 0.5 < crit.retry_params["amount"] <= 1.0


def test_second_shortfall_pushes_beyond_the_tried_value(astro_small):
    mask = _box_mask(astro_small)
    before, after, m = _classical(astro_small, mask, _action("brightness", amount=0.03))
    asked = _action("brightness", amount=0.1)
    first = CRITIC.critique(before, after, asked, m)
    second = CRITIC.critique(before, after, asked, m, params={"amount": 0.3})
    assert first.retry_params["amount"] > 0.1
    assert second.retry_params["amount"] > 0.3  # scales from what was tried


def test_wrong_colour_is_caught(coffee_small):
    mask = _box_mask(coffee_small, (150, 20, 260, 120))
    before, after, m = _classical(coffee_small, mask, _action("recolor", "replace",
                                                              color="red"))
    crit = CRITIC.critique(before, after, _action("recolor", "replace", color="blue"), m)
    assert crit.score < 4 and any("blue" in f for f in crit.fix)
    assert crit.retry_params == {"strength": 1.0}


def test_weak_recolor_suggests_more_strength(coffee_small):
    mask = _box_mask(coffee_small, (150, 20, 260, 120))
    weak = _action("recolor", "replace", color="blue", strength=0.25)
    before, after, m = _classical(coffee_small, mask, weak)
    crit = CRITIC.critique(before, after, weak, m)
    assert crit.score < 7 and crit.retry_params["strength"] > 0.25


def test_nothing_changed(astro_small):
    mask = _box_mask(astro_small)
    crit = CRITIC.critique(astro_small, astro_small.copy(), _action("saturation", amount=0.3),
                           mask)
    assert crit.score <= 1 and "nothing visibly changed in the target" in crit.fix
    assert crit.retry_params == {"amount": 0.6}


def test_edit_that_leaks_outside_the_target_is_penalised(astro_small):
    mask = _box_mask(astro_small, (100, 100, 150, 150))
    action = _action("brightness", amount=0.3)
    leaked = ClassicalEditor().edit(astro_small, np.ones(mask.shape, bool), action.to_request())
    crit = CRITIC.critique(astro_small, leaked, action, mask)
    assert crit.score <= 6
    assert any("outside the target" in f for f in crit.fix)
    assert crit.measures["outside_changed_fraction"] > 0.5


def test_hard_seam_is_caught_and_a_feathered_edge_is_not(astro_small):
    mask = _box_mask(astro_small, (60, 40, 200, 150))
    action = _action("brightness", amount=0.5)
    hard = CRITIC.critique(*_classical(astro_small, mask, action)[:2], action,
                           _classical(astro_small, mask, action)[2])
    assert any("seam" in f for f in hard.fix)
    soft = CRITIC.critique(astro_small, _soft_edit(astro_small, mask, action), action, mask)
    assert not any("seam" in f for f in soft.fix) and soft.score >= 9


def test_new_clipping_is_reported_with_a_softer_retry(coffee_small):
    mask = _box_mask(coffee_small, (0, 0, 300, 200))
    action = _action("exposure", stops=2.5)
    before, after, m = _classical(coffee_small, mask, action)
    crit = CRITIC.critique(before, after, action, m)
    assert any("clipped" in f for f in crit.fix)
    assert crit.retry_params["stops"] < 2.5


def _ball_scene() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    grass = np.clip(rng.normal(0, 12, (160, 200, 3)) + (60, 140, 50), 0, 255).astype(np.uint8)
    mask = np.zeros(grass.shape[:2], bool)
    cv2.circle(mask.view(np.uint8), (100, 80), 30, 1, -1)
    scene = grass.copy()
    scene[mask] = (220, 30, 30)
    return scene, mask


def test_leftover_of_a_removed_object_is_caught():
    scene, mask = _ball_scene()
    half = ClassicalEditor().edit(scene, mask & (np.arange(200)[None, :] < 100),
                                  _action("inpaint", "remove").to_request())
    crit = CRITIC.critique(scene, half, _action("inpaint", "remove"), mask)
    assert crit.score < 5 and any("traces" in f for f in crit.fix)
    assert crit.retry_params["method"] != "auto"
    good = ClassicalEditor().edit(scene, mask, _action("inpaint", "remove").to_request())
    assert CRITIC.critique(scene, good, _action("inpaint", "remove"), mask).score >= 7


def test_smeared_fill_is_caught():
    scene, mask = _ball_scene()
    flat = scene.copy()
    flat[mask] = scene[~mask].mean(axis=0).astype(np.uint8)  # right colour, no texture
    crit = CRITIC.critique(scene, flat, _action("inpaint", "remove"), mask)
    assert any("smeared" in f for f in crit.fix) and crit.score < 10


def test_denoise_is_measured_on_a_noisy_photo(chelsea):
    rng = np.random.default_rng(1)
    noisy = np.clip(chelsea + rng.normal(0, 12, chelsea.shape), 0, 255).astype(np.uint8)
    mask = np.ones(noisy.shape[:2], bool)
    action = _action("denoise", strength=0.6)
    cleaned = ClassicalEditor().edit(noisy, mask, action.to_request())
    good = CRITIC.critique(noisy, cleaned, action, mask)
    assert good.score >= 7 and good.measures["noise_after"] < good.measures["noise_before"]
    shifted = np.clip(noisy.astype(np.int16) + 6, 0, 255).astype(np.uint8)  # changed, same noise
    bad = CRITIC.critique(noisy, shifted, action, mask)
    assert bad.score < 5 and "the noise is not visibly reduced" in bad.fix
    assert bad.retry_params["strength"] > 0.6


def test_missing_text_is_caught(coffee_small):
    mask = _box_mask(coffee_small, (20, 10, 280, 70))
    blurred = coffee_small.copy()
    blurred[mask] = cv2.GaussianBlur(coffee_small, (5, 5), 0)[mask]
    crit = CRITIC.critique(coffee_small, blurred, _action("text", "add", text="Hi"), mask)
    assert crit.score < 5 and "no legible text appeared in the region" in crit.fix
    assert "scale" in crit.retry_params


@pytest.mark.parametrize("before, after, mask, words", [
    (np.zeros((10, 10, 3), np.uint8), np.zeros((12, 10, 3), np.uint8), None, "patch size"),
    (np.zeros((10, 10, 3), np.float32), np.zeros((10, 10, 3), np.uint8), None, "uint8"),
    (np.zeros((10, 10, 3), np.uint8), np.zeros((10, 10, 3), np.uint8),
     np.zeros((5, 5), bool), "mask"),
    (np.zeros((10, 10, 3), np.uint8), np.zeros((10, 10, 3), np.uint8),
     np.zeros((10, 10), bool), "empty"),
])
def test_bad_inputs_give_a_clear_zero(before, after, mask, words):
    crit = CRITIC.critique(before, after, _action("brightness", amount=0.2), mask)
    assert crit.score == 0 and words in crit.fix[0]


def test_rgba_patches_and_generative_actions(coffee_small):
    rgba = np.dstack([coffee_small, np.full(coffee_small.shape[:2], 200, np.uint8)])
    mask = _box_mask(coffee_small)
    changed = rgba.copy()
    changed[mask, :3] = 255 - changed[mask, :3]
    gen = Action(kind="add", operation="generate", params={"prompt": "a dog"})
    crit = CRITIC.critique(rgba, changed, gen, mask)
    assert 0 < crit.score <= 7 and any("not judged" in k for k in crit.keep)


def test_get_critic_picks_the_configured_one():
    assert isinstance(get_critic(Settings(models={"vlm": ""})), MeasuredCritic)
    critic = get_critic(Settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m"))
    assert isinstance(critic, PanelCritic) and critic.name.startswith("panel: openai")


# --- the VLM panel against a real HTTP server --------------------------------------------

@pytest.fixture(scope="module")
def stub():
    with running_stub() as client:
        yield client


def _panel(stub) -> PanelCritic:
    stub.reset()
    return PanelCritic(OpenAICompatible(stub.url, "vlm", timeout=2, backoff=0.01,
                                        http_retries=2, attempts=2))


def _review(score, keep=(), fix=(), retry=None, match=""):
    body = {"score": score, "keep": list(keep), "fix": list(fix)}
    if retry is not None:
        body["retry_params"] = retry
    return {"content": json.dumps(body), "match": match}


def test_panel_asks_three_focused_critics_and_an_aggregator(stub, astro_small):
    panel = _panel(stub)
    stub.script(_review(8, ["brighter"], match="requested change happened"),
                _review(9, ["rest kept"], match="should stay the same"),
                _review(5, fix=["halo"], retry={"amount": 0.25}, match="technical quality"),
                _review(6, ["brighter"], ["halo at the edge"],
                        {"amount": 0.25, "evil": "rm -rf", "stops": 99},
                        match="You combine reviews"))
    mask = _box_mask(astro_small)
    before, after, m = _classical(astro_small, mask, _action("brightness", amount=0.3))
    crit = panel.critique(before, after, _action("brightness", amount=0.3), m)
    assert isinstance(crit, Critique)
    measured = panel.fallback.critique(before, after, _action("brightness", amount=0.3), m)
    # the aggregator (6) adjusts the experts' mean (7.33) within ±2; then the measured score
    want = 0.5 * (6.0 + measured.score)
    assert crit.score == pytest.approx(want, abs=0.01)
    assert (crit.keep, crit.fix) == (["brighter"], ["halo at the edge"])
    assert crit.retry_params == {"amount": 0.25}  # unknown names dropped, never executed
    requests = stub.requests()
    assert len(requests) == 4
    critic_msgs = [r["body"]["messages"] for r in requests[:3]]
    for msgs in critic_msgs:
        parts = msgs[-1]["content"]
        assert sum(p["type"] == "image_url" for p in parts) == 3  # before, after, mask
        assert "Measurements (from pixels)" in parts[0]["text"]
    aggregator = requests[3]["body"]["messages"]
    assert "halo" in aggregator[-1]["content"] and isinstance(aggregator[-1]["content"], str)


def test_panel_survives_one_bad_critic_and_a_broken_aggregator(stub, astro_small):
    panel = _panel(stub)
    stub.script(_review(7, ["ok"], match="requested change happened"),
                {"content": "not json", "match": "should stay the same"},
                {"content": "still not json", "match": "should stay the same"},
                _review(4, fix=["seam"], match="technical quality"),
                *[{"status": 500, "match": "You combine reviews"}] * 4)
    mask = _box_mask(astro_small)
    before, after, m = _classical(astro_small, mask, _action("brightness", amount=0.3))
    crit = panel.critique(before, after, _action("brightness", amount=0.3), m)
    measured = panel.fallback.critique(before, after, _action("brightness", amount=0.3), m)
    # no aggregator: the lowest review (4) stands for it, within 2 of the mean (5.5)
    assert crit.score == pytest.approx(0.5 * (4.0 + measured.score), abs=0.01)
    assert "seam" in crit.fix and "ok" in crit.keep


def test_the_aggregator_adjusts_the_experts_mean_and_never_overwrites_it():
    good = Critique(9.0, checks={"changed": True})
    # experts 2, 8, 8 (mean 6) and an aggregator saying 9: at most 6 + 2 before measuring
    assert combine_scores([2, 8, 8], 9.0, good) == pytest.approx(0.5 * (8.0 + 9.0))
    # a failed measured check caps the panel at the measured score
    bad = Critique(3.0, checks={"no_rim": False})
    assert combine_scores([9, 9, 9], 9.0, bad) == pytest.approx(3.0)


def test_panel_falls_back_to_measurements_when_the_model_is_down(astro_small):
    panel = PanelCritic(OpenAICompatible("http://127.0.0.1:9/v1", "m", timeout=0.3,
                                         http_retries=1, attempts=1))
    mask = _box_mask(astro_small)
    before, after, m = _classical(astro_small, mask, _action("brightness", amount=0.3))
    crit = panel.critique(before, after, _action("brightness", amount=0.3), m)
    measured = CRITIC.critique(before, after, _action("brightness", amount=0.3), m)
    assert crit.score == measured.score
    assert any("measured only" in f for f in crit.fix)


def test_critique_schema_rejects_out_of_range_scores():
    from pipelines.llm import AnswerError, validate_answer

    with pytest.raises(AnswerError, match="score"):
        validate_answer({"score": 11, "keep": [], "fix": []}, CRITIQUE_SCHEMA)


OPS_FOR_FUZZ = ["brightness", "contrast", "saturation", "temperature", "recolor", "inpaint",
                "text", "sharpen", "denoise", "blur", "grayscale", "sepia", "vignette",
                "auto_levels", "auto_white_balance", "clahe", "hue", "exposure", "shadows"]


@pytest.mark.parametrize("seed", range(12))
def test_any_pair_gives_a_bounded_critique(seed):
    rng = np.random.default_rng(seed)
    h, w = rng.integers(1, 90, size=2)
    channels = int(rng.choice([3, 4]))
    before = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
    after = before.copy() if seed % 3 == 0 else rng.integers(0, 256, (h, w, channels),
                                                              dtype=np.uint8)
    mask = rng.random((h, w)) < rng.random()
    op = OPS_FOR_FUZZ[seed % len(OPS_FOR_FUZZ)]
    spec_params = {"recolor": {"color": "teal"}, "text": {"text": "x"}}.get(op, {})
    kind = {"recolor": "replace", "inpaint": "remove", "text": "add"}.get(op, "adjust")
    crit = CRITIC.critique(before, after, _action(op, kind, **spec_params), mask)
    assert 0 <= crit.score <= 10 and isinstance(crit.fix, list)
    assert all(isinstance(v, float) for v in crit.measures.values())
