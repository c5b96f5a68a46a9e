"""Autopilot MCTS: improves degraded photos, deterministic, cancellable, lands in a session."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from agent.brain.perceiver import propose
from agent.search.autopilot_memory import AutopilotMemory
from agent.search.mcts import apply_candidate, autopilot, mean_delta_e, required_gain
from agent.search.suggestions import FULL_STRENGTH, accept_full_strength


@pytest.fixture(scope="module")
def dark_small() -> np.ndarray:
    from skimage import data

    img = cv2.resize(data.coffee(), (192, 128), interpolation=cv2.INTER_AREA)
    return (img * 0.35).astype(np.uint8)


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    return float(cv2.PSNR(a, b))


def test_autopilot_fixes_an_underexposed_photo(dark_small: np.ndarray) -> None:
    """Issue 28 changed this requirement: the photo used to be brought 3 dB closer; a
    correction the evaluator is not confident of (its predicted gain below the margin
    calibrated on untouched photos) is now scaled down to ``HARM_BOUND`` grey levels, which
    still brings the photo closer, and the run says so."""
    from skimage import data

    truth = cv2.resize(data.coffee(), (192, 128), interpolation=cv2.INTER_AREA)
    calls: list[tuple[int, int]] = []
    result = autopilot(dark_small, iterations=2, simulations=6, depth=2, top_k=2, seed=1,
                       memory=AutopilotMemory(), progress=lambda d, t, m: calls.append((d, t)))
    assert result.score_after > result.score_before
    assert _psnr(result.image, truth) > _psnr(dark_small, truth) + 0.2
    kept = [c for c in result.considered if str(c.get("decision", "")).startswith("kept")]
    assert kept and all(c["moves"] > 0 for c in kept if "moves" in c)
    if _psnr(result.image, truth) < _psnr(dark_small, truth) + 3:
        assert "do-no-harm" in result.reason
        # nothing useful is hidden: the whole correction is offered, and accepting it
        # brings the photo the 3 dB closer the run used to
        (held,) = [s for s in result.suggestions if s["operation"] == FULL_STRENGTH]
        assert held["reason"].startswith("held back:") and "stronger fix" in held["reason"]
        accepted = accept_full_strength(dark_small, json.loads(json.dumps(held)))
        assert _psnr(accepted[-1][0], truth) > _psnr(dark_small, truth) + 3
    assert result.image.shape == dark_small.shape and result.image.dtype == np.uint8
    assert result.steps and result.steps[0].score_after > result.steps[0].score_before
    assert calls[-1] == (12, 12) or calls[-1][0] == len(calls)
    tree = json.loads(json.dumps(result.to_dict()))["tree"]
    root = tree["iterations"][0]["root"]
    assert root["visits"] == 6 and sum(c["visits"] for c in root["children"]) == 6


def test_same_seed_same_result(dark_small: np.ndarray) -> None:
    runs = [autopilot(dark_small, iterations=1, simulations=5, depth=2, top_k=2, seed=3,
                      memory=AutopilotMemory()) for _ in range(2)]
    assert np.array_equal(runs[0].image, runs[1].image)
    assert runs[0].tree == runs[1].tree


def test_cancel_returns_the_best_so_far(dark_small: np.ndarray, tmp_path) -> None:
    """Issue 15 changed this requirement: a cancelled run used to return its input; it now
    returns (and commits) the best state its search had found when it stopped. Issue 28:
    through the same do-no-harm rule as a finished run (held within the bound when the
    evaluator is not confident), so it is closer, not necessarily 3 dB closer."""
    from skimage import data

    from agent.session import EditSession

    truth = cv2.resize(data.coffee(), (192, 128), interpolation=cv2.INTER_AREA)
    session = EditSession.create(dark_small, tmp_path / "s")
    done: list[int] = []
    result = autopilot(dark_small, iterations=3, simulations=10, depth=2, seed=0,
                       memory=AutopilotMemory(), session=session,
                       progress=lambda d, t, m: done.append(d), cancel=lambda: len(done) >= 3)
    assert result.cancelled and len(done) == 3
    assert result.steps and result.score_after > result.score_before
    assert _psnr(result.image, truth) > _psnr(dark_small, truth) + 0.2
    tree = result.tree["iterations"][0]
    on_cancel = [c for c in result.considered if c.get("on_cancel")]
    # issue 33: a photo the estimate is sure of gets its inverse first, before the search;
    # after it, a step the evaluator is not confident of is skipped, on cancel too
    sure = [c for c in result.considered if c.get("iteration") == 0]
    assert tree["kept_on_cancel"] or (sure and all(
        "the estimated fix was applied in full" in c["decision"] for c in on_cancel
        if c["decision"].startswith("skipped")))
    assert on_cancel and all(c["decision"].startswith("kept") for c in on_cancel
                             [: len(result.steps) - len(sure)])
    full = [c for c in on_cancel if not c["decision"].startswith("kept at")]
    if not full and not sure:     # held back: within the bound of the input
        assert float(np.sqrt(np.mean((result.image.astype(float) - dark_small) ** 2))) < 4.5
    # and it landed in the session, one undoable node per step
    assert np.array_equal(session.current_image(), result.image)
    for _ in result.steps:
        session.undo()
    assert np.array_equal(session.current_image(), dark_small)


def test_good_photo_changes_little(astronaut: np.ndarray) -> None:
    small = cv2.resize(astronaut, (160, 160), interpolation=cv2.INTER_AREA)
    result = autopilot(small, iterations=1, simulations=5, depth=2, top_k=2,
                       memory=AutopilotMemory())
    assert _psnr(result.image, small) > 22 or not result.steps


def test_an_untouched_photo_is_not_stretched_by_an_edit_the_model_cannot_judge(
        chelsea: np.ndarray) -> None:
    """The cat's fur never reaches white; a contrast stretch read off its own result looked
    "more natural" to the learned model and cost the untouched photo 19 dB. A tone edit
    without its own head may not look better than the best the model expects from the
    photo as it came (here: leaving it alone)."""
    result = autopilot(chelsea, iterations=1, simulations=10, depth=2, top_k=2,
                       memory=AutopilotMemory())
    assert _psnr(result.image, chelsea) >= 40, [s.description for s in result.steps]


def test_steps_land_in_the_session_and_undo(dark_small: np.ndarray, tmp_path) -> None:
    from agent.session import EditSession

    session = EditSession.create(dark_small, tmp_path / "s")
    result = autopilot(dark_small, iterations=1, simulations=4, depth=2, top_k=2,
                       session=session, memory=AutopilotMemory())
    assert result.steps and result.steps[0].node_id
    assert np.array_equal(session.current_image(), result.image)
    session.undo()
    assert np.array_equal(session.current_image(), dark_small)


def test_fast_full_resolution_path_matches_the_editor(coffee: np.ndarray) -> None:
    big = cv2.resize(coffee, (1200, 800), interpolation=cv2.INTER_CUBIC)
    for cand in propose((big * 0.5).astype(np.uint8), k=8):
        if cand.family not in ("exposure", "auto_white_balance", "auto_levels", "contrast"):
            continue
        fast = apply_candidate(big, cand, fast=True)
        slow = apply_candidate(big, cand, fast=False)
        diff = np.abs(fast.astype(int) - slow.astype(int))
        assert diff.mean() < 1.0 and np.percentile(diff, 99.9) <= 3, cand.key


@pytest.mark.parametrize("bad", [dict(iterations=0), dict(simulations=10_000), dict(depth=0)])
def test_bad_arguments_are_refused(dark_small: np.ndarray, bad: dict) -> None:
    with pytest.raises(ValueError):
        autopilot(dark_small, memory=AutopilotMemory(), **bad)
    with pytest.raises(ValueError, match="uint8"):
        autopilot(dark_small.astype(np.float32), memory=AutopilotMemory())


def test_rgba_keeps_its_alpha(dark_small: np.ndarray) -> None:
    alpha = np.full(dark_small.shape[:2] + (1,), 200, np.uint8)
    rgba = np.concatenate([dark_small, alpha], axis=2)
    result = autopilot(rgba, iterations=1, simulations=3, depth=1, top_k=1,
                       memory=AutopilotMemory())
    assert result.image.shape == rgba.shape
    assert np.array_equal(result.image[..., 3], rgba[..., 3])


def _sharpness(image: np.ndarray) -> float:
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    return float(cv2.Laplacian(grey, cv2.CV_32F).std())


def test_mood_steers_the_result_warmer(coffee: np.ndarray) -> None:
    from agent.brain.checklist import image_stats

    small = cv2.resize(coffee, (150, 100), interpolation=cv2.INTER_AREA)
    result = autopilot(small, mood="warmer and cosy", iterations=1, simulations=6, depth=2,
                       top_k=3, memory=AutopilotMemory())
    assert result.tree["style"] == "warm" and result.steps
    assert image_stats(result.image)["warmth"] > image_stats(small)["warmth"] + 1


def test_two_moods_give_measurably_different_results(chelsea: np.ndarray) -> None:
    from agent.brain.checklist import image_stats

    small = cv2.resize(chelsea, (240, 160), interpolation=cv2.INTER_AREA)
    budget = dict(iterations=2, simulations=10, depth=2, top_k=3)
    warm = autopilot(small, mood="warm and cosy", memory=AutopilotMemory(), **budget)
    cool = autopilot(small, mood="crisp and cool", memory=AutopilotMemory(), **budget)
    assert warm.tree["style"] == "warm" and set(cool.tree["style"].split("+")) == {"pop",
                                                                                  "cool"}
    w, c = image_stats(warm.image), image_stats(cool.image)
    assert w["warmth"] > c["warmth"] + 4                     # warmer …
    assert w["contrast"] < c["contrast"]                    # … and softer
    assert _sharpness(warm.image) < _sharpness(cool.image)


def test_results_do_not_depend_on_the_photos_before(tmp_path, coffee: np.ndarray,
                                                     chelsea: np.ndarray,
                                                     astronaut: np.ndarray) -> None:
    from eval.photos import linear_gains

    def small(img: np.ndarray) -> np.ndarray:
        return cv2.resize(img, (160, 120), interpolation=cv2.INTER_AREA)

    photos = {"dark coffee": linear_gains(small(coffee), (0.5, 0.5, 0.5)),
              "cool cat": linear_gains(small(chelsea), (0.75, 0.9, 1.0)),
              "astronaut": small(astronaut)}

    def run_all(order: list[str], memory_file) -> dict:
        out = {}
        for name in order:
            out[name] = autopilot(photos[name], iterations=2, simulations=8, depth=2,
                                  memory=AutopilotMemory.load(memory_file))
        return out

    forward = run_all(list(photos), tmp_path / "a.json")
    backward = run_all(list(photos)[::-1], tmp_path / "b.json")
    for name in photos:
        assert np.array_equal(forward[name].image, backward[name].image), name
        assert [s.description for s in forward[name].steps] == \
            [s.description for s in backward[name].steps]
    assert AutopilotMemory.load(tmp_path / "a.json").scenes   # the memory did learn


def test_memory_changes_where_the_search_starts_not_the_result(tmp_path,
                                                               dark_small: np.ndarray) -> None:
    plain = autopilot(dark_small, iterations=1, simulations=8, depth=2,
                      memory=AutopilotMemory())
    children = plain.tree["iterations"][0]["root"]["children"]
    last = children[-1]["action"]["operation"]
    primed = AutopilotMemory(path=tmp_path / "m.json")
    for scene in ("general", "portrait", "low_light", "landscape"):
        for _ in range(5):
            primed.record(scene, last, kept=True, gain=0.2)
    steered = autopilot(dark_small, iterations=1, simulations=8, depth=2, memory=primed)
    first = steered.tree["iterations"][0]["first_visits"][0]
    assert first.startswith(last) and not plain.tree["iterations"][0][
        "first_visits"][0].startswith(last)
    assert np.array_equal(plain.image, steered.image)


def test_later_steps_must_clear_a_growing_margin() -> None:
    first = required_gain(0, 30.0)
    assert first == required_gain(0, 0.0)              # the main fix pays no fidelity cost
    assert required_gain(1, 0.0) > first
    assert required_gain(2, 0.0) > required_gain(1, 0.0)
    assert required_gain(1, 20.0) > required_gain(1, 2.0)   # big late moves cost more


def test_delta_e_is_zero_for_the_same_photo_and_grows_with_a_cast(coffee: np.ndarray) -> None:
    assert mean_delta_e(coffee, coffee.copy()) == 0.0
    mild = np.clip(coffee * np.array([1.05, 1.0, 0.95]), 0, 255).astype(np.uint8)
    strong = np.clip(coffee * np.array([1.2, 1.0, 0.75]), 0, 255).astype(np.uint8)
    assert 0 < mean_delta_e(coffee, mild) < mean_delta_e(coffee, strong)


def test_noisy_photo_without_a_cast_gets_no_white_balance(coffee: np.ndarray) -> None:
    small = cv2.resize(coffee, (192, 128), interpolation=cv2.INTER_AREA)
    noisy = np.clip(small + np.random.default_rng(0).normal(0, 12, small.shape), 0, 255)
    result = autopilot(noisy.astype(np.uint8), iterations=2, simulations=8, depth=2,
                       memory=AutopilotMemory())
    ops = [s.action["operation"] for s in result.steps]
    assert "denoise" in ops and "auto_white_balance" not in ops
    assert _psnr(result.image, small) > _psnr(noisy.astype(np.uint8), small)


def test_tilt_and_cast_are_carried_through_the_right_edits(coffee: np.ndarray) -> None:
    from agent.search.mcts import Carried, evaluate

    idx = {"tilt_deg": 4.0, "tilt_confidence": 10, "cast": 35.0, "cast_score": 0.2}
    start = Carried.of(idx)
    cands = {c.family: c for c in propose(coffee, k=12)}
    tone = cands.get("shadows") or cands["vibrance"]
    assert start.after(tone).level_score() == start.level_score() < 0.5
    assert start.after(tone).apply({"cast": 1.0, "cast_score": 1.0})["cast_score"] == 0.2
    straighten = tone.__class__(tone.action.model_copy(update={
        "operation": "straighten", "params": {"angle": -4.0}}), "straighten", "level", 1.0)
    assert start.after(straighten).level_score() == 1.0
    wb = tone.__class__(tone.action.model_copy(update={
        "operation": "auto_white_balance", "params": {"amount": 1.0}}),
        "auto_white_balance", "cast", 1.0)
    assert start.after(wb).apply({"cast": 1.0, "cast_score": 1.0})["cast_score"] == 1.0
    # the carried level term is what the reward uses, whatever the image's edges say
    assert evaluate(coffee, coffee, None, start) < evaluate(coffee, coffee, None,
                                                            start.after(straighten))
