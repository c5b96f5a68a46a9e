"""The critic's checks that do not trust the mask, and the offline instruction-following
score, on labelled real-photo pairs (issue 24; pairs from ``tests/critic_pairs.py``).

The perception files are installed by ``make install``; these tests need them and never
skip (as ``tests/test_perception.py``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.actions import Action, Region, RegionType
from agent.brain.critic import MeasuredCritic, Scene
from agent.brain.judge import critique_images
from eval.metrics import CANNOT_DECIDE, score_pair
from eval.systems import get_judge
from tests.critic_pairs import _cups_pairs, _neighbour_pairs, _text_pairs, pairs


def _by_kind(found, kind):
    return [p for p in found if p.kind == kind]


@pytest.fixture(scope="module")
def cups():
    """The held-out two-cup scene's recolour pairs (the removals are left to the bench)."""
    return [p for p in _cups_pairs("held_out", "chelsea", ("make the {} cup blue",))]


def test_a_wrong_instance_edit_with_the_agents_own_mask_fails_and_the_right_one_passes(cups):
    good = next(p for p in _by_kind(cups, "good") if "blue" in p.instruction)
    wrong = next(p for p in _by_kind(cups, "wrong instance") if p.instruction ==
                 good.instruction)
    ok = critique_images(good.before, good.after, good.instruction, good.used_mask)
    bad = critique_images(wrong.before, wrong.after, wrong.instruction, wrong.used_mask)
    assert ok["passed"] and ok["score"] >= 7
    assert not bad["passed"] and bad["score"] <= 3
    checks = bad["steps"][0]["checks"]
    assert checks["qualifiers"] is False           # not the left/right one the words name
    assert checks["colour_hit"] is True            # the operation's own check was fooled
    assert any("not the" in r for r in bad["reasons"])


def test_every_text_region_edited_when_one_was_named_fails():
    found = list(_text_pairs("held_out", "coffee"))
    for pair in found:
        verdict = critique_images(pair.before, pair.after, pair.instruction, pair.used_mask)
        assert verdict["passed"] is pair.good, (pair.instruction, pair.kind, verdict)
        if not pair.good:
            assert verdict["steps"][0]["checks"]["others_unchanged"] is False


def test_paint_spilling_onto_a_touching_neighbour_fails():
    for pair in _neighbour_pairs("held_out"):
        verdict = critique_images(pair.before, pair.after, pair.instruction, pair.used_mask)
        assert verdict["passed"] is pair.good, (pair.instruction, pair.kind, verdict)
        if not pair.good:
            assert any("person" in r for r in verdict["reasons"])


def test_a_check_that_cannot_decide_says_so_and_adds_nothing(cups):
    pair = _by_kind(cups, "good")[0]
    action = Action(kind="adjust", operation="brightness", target="the zorblat",
                    region=Region(type=RegionType.phrase, phrase="the zorblat"),
                    params={"amount": 0.2})
    critic = MeasuredCritic(localizer=False)
    mask = pair.used_mask
    plain = critic.critique(pair.before, pair.after, action, mask)
    seen = critic.critique(pair.before, pair.after, action, mask, scene=Scene(pair.before))
    assert "second_route" in seen.undecided and "second_route" not in seen.checks
    assert seen.score <= plain.score
    assert seen.to_dict()["undecided"]["second_route"]


def test_the_critic_sees_beyond_its_patch_in_the_turn_loop(cups):
    """The turn loop hands a patch and its offset: the frame around it is judged too."""
    wrong = next(p for p in _by_kind(cups, "wrong instance") if "blue" in p.instruction)
    ys, xs = np.nonzero(wrong.used_mask)
    y0, y1, x0, x1 = ys.min() - 30, ys.max() + 30, xs.min() - 30, xs.max() + 30
    target = wrong.instruction.split("make ")[1].split(" blue")[0]
    action = Action(kind="adjust", operation="recolor", target=target,
                    region=Region(type=RegionType.phrase, phrase=target), params={"color": "blue"})
    verdict = MeasuredCritic(localizer=False).critique(
        wrong.before[y0:y1, x0:x1], wrong.after[y0:y1, x0:x1], action,
        wrong.used_mask[y0:y1, x0:x1], scene=Scene(wrong.before, (int(x0), int(y0))))
    assert not verdict.passed and verdict.checks["qualifiers"] is False


@pytest.mark.slow
def test_the_offline_if_score_separates_good_from_bad_real_pairs():
    """No mask (as pair scoring has): the critic finds the target itself. Whole-photo
    edits are included; an unchanged pair for a change request scores below 0.5."""
    judge = get_judge()
    assert judge is not None
    found = list(pairs("held_out"))
    assert sum(p.good for p in found) >= 10 and sum(not p.good for p in found) >= 10
    assert any(p.used_mask is None for p in found)
    right, unchanged = 0, []
    for pair in found:
        scores = score_pair(pair.before, pair.after, instruction=pair.instruction,
                            lpips_side=0, models=False, judge=judge)
        assert scores["if_score"] != CANNOT_DECIDE, pair.instruction
        right += scores["if_followed"] is pair.good
        if pair.kind == "nothing changed":
            unchanged.append(scores["if_score"])
    assert right / len(found) >= 0.9
    assert unchanged and max(unchanged) < 0.5


def test_pair_scoring_says_cannot_decide_and_never_counts_it_as_followed(cups):
    pair = cups[0]
    scores = score_pair(pair.before, pair.before, instruction="make the giraffe blue",
                        lpips_side=0, models=False, judge=get_judge())
    assert scores["if_score"] == CANNOT_DECIDE and scores["if_followed"] is False
    assert any("cannot decide" in r for r in scores["if_reasons"])


def test_eval_score_cli_reports_the_if_score_beside_fidelity(tmp_path, capsys, cups):
    from eval.__main__ import main
    from pipelines.images import save_image

    pair = next(p for p in cups if p.kind == "nothing changed")
    save_image(pair.before, str(tmp_path / "a.png"))
    save_image(pair.after, str(tmp_path / "b.png"))
    assert main(["score", str(tmp_path / "a.png"), str(tmp_path / "b.png"),
                 "--instruction", pair.instruction]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["psnr"] == "inf"                  # fidelity alone calls it perfect
    assert out["if_score"] < 0.5 and out["if_followed"] is False


def test_the_benchmark_tabs_pair_scoring_shows_the_if_score_beside_fidelity(cups):
    import web

    pair = next(p for p in cups if p.kind == "nothing changed")
    scores = web.score_files(pair.before, pair.after, instruction=pair.instruction)
    assert scores["psnr"] is None                 # identical pixels: PSNR ∞ …
    assert scores["if_score"] < 0.5 and scores["if_followed"] is False   # … but not followed
    rows = dict(web.score_rows(scores))
    assert rows["PSNR (dB)"] == "∞" and rows["Followed the words"] == "no"
    assert "nothing visibly changed" in rows["Why (critic)"]


def test_a_benchmark_run_can_score_instruction_following_with_the_critic(tmp_path):
    """``eval run --judge critic``: each turn also gets the offline IF score (no VLM)."""
    from eval.hdd import make_dataset
    from eval.runner import read_results, run

    data = make_dataset(tmp_path / "hdd", sessions=1, turns=1, size=(320, 180), seed=0)
    run(data, tmp_path / "out", agent="embedded", lpips_side=0, judge="critic")
    turns = [t for r in read_results(tmp_path / "out") for t in r["turns"]]
    assert turns and all(isinstance(t["critic_followed"], bool) for t in turns)
    assert all(t["critic_if"] == "cannot decide" or 0 <= t["critic_if"] <= 1 for t in turns)
    with pytest.raises(ValueError, match="no judge"):
        run(data, tmp_path / "out2", agent="embedded", lpips_side=0, judge="nobody")


@pytest.mark.parametrize("x,y", [(float("nan"), 3), (float("inf"), 3), ("left", 3), (-1, 3)])
def test_select_refuses_a_point_that_is_not_in_the_photo(cups, x, y):
    from pipelines.localizers.point import SelectionError, select_at

    with pytest.raises(SelectionError, match="point"):
        select_at(cups[0].before, x, y)
