"""Issue 23 on the labelled real-photo set (``eval/data/localization``, 12–20 MP): every
failure class has cases, refusals are honest, held-out masks match the exact answers,
and an edit through a real session changes nothing beyond the target's feather.

The localiser runs once per case for the whole module (``outcomes``); the set is split by
photo, and the thresholds were chosen on ``tune`` only."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from eval.localization import beyond_reach, evaluate, load_cases, mask_iou, offered, render
from pipelines.localizers import get_localizer
from pipelines.localizers.base import Candidate, Localization
from tests.guesses import confirmed, turn_confirmed

CASES = load_cases()
CASES_BY_ID = {c.id: c for c in CASES}
KINDS = {"low_score", "non_coco", "not_found", "sky", "no_sky", "background", "text",
         "touching", "qualifier"}


@pytest.fixture(scope="module", autouse=True)
def _nets_remember_the_whole_set():
    """Each net keeps every answer of this module (as ``conftest`` keeps 32: the same bytes
    the net gives, only more of them kept): the tests below edit and locate again photos
    the ``outcomes`` fixture located, and their views repeat its forwards (63 of 350 were
    found again with 32 kept). Emptied after the module."""
    from pipelines.perception import detectors

    saved = detectors.FORWARD_MEMO
    detectors.FORWARD_MEMO = 4096
    yield
    detectors.FORWARD_MEMO = saved
    detectors.forget_memos()


@pytest.fixture(scope="module")
def answers() -> dict[str, tuple[object, Localization]]:
    """Each case's outcome (the user clicks the guess an unsure answer offers) beside the
    localiser's own answer before that click, from one ``locate`` per case."""
    localizer = get_localizer()
    raw: list[Localization] = []

    def locate(image: np.ndarray, phrase: str) -> Localization:
        raw.append(localizer.locate(image, phrase))
        return confirmed(raw[-1])

    found = evaluate(locate, CASES)              # one call per case, in order
    assert len(raw) == len(found) == len(CASES)
    return {o.case.id: (o, answer) for o, answer in zip(found, raw)}


@pytest.fixture(scope="module")
def outcomes(answers) -> dict[str, object]:
    return {case_id: outcome for case_id, (outcome, _) in answers.items()}


def test_the_set_covers_every_failure_class_at_12_to_20_mp_split_by_photo() -> None:
    assert len(CASES) >= 20
    for split in ("tune", "held_out"):
        assert KINDS <= {c.kind for c in CASES if c.split == split}, split
    tune = set().union(*(c.photos for c in CASES if c.split == "tune"))
    held = set().union(*(c.photos for c in CASES if c.split == "held_out"))
    assert not tune & held
    for case in CASES[::7]:            # a sample: rendering all costs seconds
        h, w = render(case).image.shape[:2]
        assert 12e6 <= h * w <= 20.5e6, case.id


def test_things_not_in_the_photo_are_not_found(outcomes) -> None:
    for case in CASES:
        if case.expect == "refused":
            got = outcomes[case.id]
            assert got.status != "resolved", (case.id, got.reason)
            assert "not found" in got.reason or "no " in got.reason, got.reason


def test_named_things_are_found_with_the_evidence_in_the_reason(outcomes) -> None:
    for case in CASES:
        if case.expect == "resolved":
            got = outcomes[case.id]
            assert got.status == "resolved", (case.id, got.reason)
    reasons = {o.case.kind: o.reason for o in outcomes.values() if o.status == "resolved"}
    assert "took the photo's main subject as" in reasons["non_coco"]
    assert "confidence" in reasons["low_score"] and "detector" in reasons["low_score"]
    assert "sky" in reasons["sky"] and "horizon" in reasons["sky"]


def test_held_out_masks_match_the_exact_answers(outcomes) -> None:
    """Mean mask IoU ≥ 0.8 on the held-out part (and ≥ 0.85 on tune); nine in ten held-out
    answers are the right target (IoU ≥ 0.5)."""
    for split, floor in (("held_out", 0.8), ("tune", 0.85)):
        got = [outcomes[c.id] for c in CASES if c.split == split and c.expect == "resolved"]
        mean = float(np.mean([o.iou for o in got]))
        assert mean >= floor, (split, mean, {o.case.id: o.iou for o in got})
    held = [outcomes[c.id] for c in CASES if c.split == "held_out"]
    assert sum(o.right for o in held) >= 0.85 * len(held), \
        [o.case.id for o in held if not o.right]


def test_the_sky_is_found_anywhere_and_water_below_the_shore_is_not_sky(outcomes) -> None:
    for case in CASES:
        if case.kind == "sky":
            assert outcomes[case.id].iou >= 0.9, (case.id, outcomes[case.id].reason)


# The background behind the cup turned grey and the left of two touching cups recoloured
# are checked the same way, and more, through the command line in a fresh process
# (tests/test_cli_edits_real.py; the background behind the flower and the horse darkened
# there too in bench/cli_edits_real.py): not twice here.
@pytest.mark.parametrize("case_id,instruction", [
    ("flower_non_coco", "make the flower darker"),
    ("sky_dusk_under_canopy", "brighten the sky"),
])
def test_an_edit_changes_nothing_beyond_the_targets_feather(tmp_path, case_id,
                                                            instruction) -> None:
    """Through a real session turn: every pixel farther from the true object than its
    feather plus the most an edge may grow is bit-identical; the object changed."""
    from agent.session import EditSession

    case = next(c for c in CASES if c.id == case_id)
    shot = render(case)
    session = EditSession.create(shot.image, tmp_path / "s")
    result = turn_confirmed(session, instruction)   # the user clicks a guess offered
    assert result.steps and result.steps[0].status == "applied", result.to_dict()
    after = session.current_image()
    truth = shot.truth
    far = beyond_reach(truth)
    assert np.array_equal(after[far], shot.image[far])
    changed = np.abs(after.astype(int) - shot.image.astype(int)).max(axis=2) > 2
    assert changed[truth].mean() > 0.3


def test_a_mask_grows_over_its_edge_but_never_into_a_touching_neighbour() -> None:
    """Two touching discs of the same grey on a plain surface, the left one's mask cut
    short of its edge: grown alone it spreads into the right disc; told of the neighbour
    it takes its own edge and no pixel of the neighbour or of the bare surface far out."""
    from pipelines.editors.objects import grow_object_mask

    image = np.full((400, 600, 3), 200, np.uint8)
    left, right = np.zeros((400, 600), np.uint8), np.zeros((400, 600), np.uint8)
    cv2.circle(left, (200, 200), 100, 1, -1, lineType=cv2.LINE_8)
    cv2.circle(right, (399, 200), 100, 1, -1, lineType=cv2.LINE_8)
    left, right = left > 0, (right > 0) & ~(left > 0)
    image[left | right] = (60, 60, 70)
    image = cv2.GaussianBlur(image, (0, 0), 1.5)          # anti-aliased edges
    short = cv2.erode(left.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    alone, _ = grow_object_mask(image, short)
    assert (alone & right).sum() > 50                     # the failure this guards against
    grown, _ = grow_object_mask(image, short, avoid=right)
    assert not (grown & right).any()
    assert (left & ~grown).sum() < 0.01 * left.sum()       # its own edge is taken
    far = cv2.distanceTransform((~left).astype(np.uint8), cv2.DIST_L2, 5) > 6
    assert not (grown & far).any()


def test_an_over_large_target_mask_is_caught_and_shrunk_before_editing() -> None:
    """A mask of "the left cup" that swallowed its touching neighbour and the table under
    both is compared with the left cup's own box and the neighbour's: it comes back as
    the left cup, with a note saying what was caught."""
    from pipelines.localizers.base import mask_box
    from pipelines.localizers.fusion import check_extent

    shot = render(next(c for c in CASES if c.id == "left_of_two_touching_cups"))
    (right,) = shot.others
    table = np.zeros_like(right)
    table[int(0.8 * table.shape[0]):] = True
    swallowed = shot.truth | right | table
    mask, note = check_extent(swallowed, mask_box(shot.truth), [mask_box(right)])
    assert "over-large" in note and "another object" in note, note
    assert mask_iou(mask, shot.truth) >= 0.8
    assert (mask & right).sum() < 0.01 * right.sum()     # only where the two boxes meet
    same, none = check_extent(shot.truth, mask_box(shot.truth), [mask_box(right)])
    assert none == "" and same is shot.truth


def test_a_studio_backdrop_around_a_portraits_head_is_not_taken_for_the_sky(tmp_path) -> None:
    """Grace Hopper's blue backdrop (the tune split's portrait, at 12 MP) is smooth, blue
    and touches the top: it is offered as a possible backdrop, never edited as the sky
    without the user's click."""
    from agent.session import EditSession

    shot = render(next(c for c in CASES if c.id == "unicorn_is_a_person"))
    found = get_localizer().locate(shot.image, "the sky")
    assert found.status == "ambiguous" and "backdrop" in found.reason, found.reason
    session = EditSession.create(shot.image, tmp_path / "s")
    result = session.turn("brighten the sky")
    assert not result.changed and session.head == "n0"
    assert len(result.candidates) == 1 and "nothing was changed" in result.message.lower()


def test_the_background_leaves_out_every_instance_of_the_subject_at_its_edge() -> None:
    """Two horses (the held-out split's photo, 12 MP): "the background" is everything but
    both, their outlines decided at full resolution (the upscaled map took 1.2 % of a
    horse)."""
    from dataclasses import replace

    case = next(c for c in CASES if c.id == "all_horses")
    shot = render(replace(case, spec=dict(case.spec, truth="background")))
    found = get_localizer().locate(shot.image, "the background")
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert mask_iou(mask, shot.truth) >= 0.9
    for horse in shot.others:
        assert (mask & horse).sum() < 0.005 * horse.sum()


def test_the_cup_between_twin_cups_is_a_question_with_both_offered(answers) -> None:
    """Two touching cups alike in colour, size and shape (tune photos, 12 MP): the
    detector and the salient map favour one only for where it stands, so "the cup" asks
    which and offers both; "the left cup" still picks (the set's own case
    ``left_of_two_touching_cups``, "the left cup" on the same photo: its answer as
    ``answers`` located it, not a second locate of the same 12 MP)."""
    left = render(next(c for c in CASES if c.id == "left_of_two_touching_cups"))
    right = render(next(c for c in CASES if c.id == "right_of_two_touching_cups"))
    found = get_localizer().locate(left.image, "the cup")
    assert found.status == "ambiguous" and "look alike" in found.reason, found.reason
    assert len(found.masks) == 2
    for truth in (left.truth, right.truth):
        assert max(mask_iou(m.mask, truth) for m in found.masks) >= 0.8
    _, picked = answers["left_of_two_touching_cups"]
    assert CASES_BY_ID["left_of_two_touching_cups"].phrase == "the left cup"
    assert picked.status == "resolved" and mask_iou(picked.masks[0].mask, left.truth) >= 0.8


def test_a_question_is_scored_beside_the_guess_it_offers_to_click(answers) -> None:
    """The composite's emblem (tune, 12 MP) is the salient subject taken for a word no
    model knows: a question (issue 32), IoU 0 as an answer, and its offered guess is the
    emblem once clicked (``clicked_iou``, bench/perception.py's ``set_clicked_*``); a
    thing that is not there stays judged by the refusal alone. ``evaluate`` scores the
    localiser's own answers to both cases (before any click) as ``answers`` located
    them: the same photos and phrases, not located a second time."""
    emblem, giraffe = CASES_BY_ID["emblem_non_coco"], CASES_BY_ID["giraffe_not_there"]
    located = iter([answers[emblem.id][1], answers[giraffe.id][1]])

    def locate(image: np.ndarray, phrase: str) -> Localization:
        return next(located)

    asked, absent = evaluate(locate, [emblem, giraffe])
    assert asked.status == "ambiguous" and asked.iou == 0.0 and not asked.right
    assert asked.asked_with_guess and asked.clicked_iou >= 0.9 and asked.clicked_right
    assert absent.status != "resolved" and absent.right and absent.clicked_right
    assert not absent.asked_with_guess


def test_only_a_question_with_a_guess_offers_one() -> None:
    mask = np.zeros((4, 4), bool)
    mask[1:3, 1:3] = True
    cand = Candidate(mask, 0.5, "cup", "test")
    assert offered(Localization([cand], "resolved", "found")) is None
    assert offered(Localization([cand], "ambiguous", "which cup?")) is None
    assert offered(Localization([], "unresolved", "no cup")) is None
    guess = offered(Localization([cand], "ambiguous", "click it to confirm", guess=1))
    assert guess is not None and (guess == mask).all()


# The two tests below read the answers ``outcomes`` located (they were a second ``locate``
# of the same case in tests/test_localization_quality.py, ~4 s each at 12 MP).
def test_a_real_sky_behind_a_standing_person_is_found_not_asked_about(answers) -> None:
    """The hazy sky over trees with the cameraman standing in front of it (tune, 12 MP):
    beside him it reaches the top border across the width and ends at a horizon over
    textured ground, so it is an open sky (resolved), not a studio backdrop; his pixels
    stay out of it."""
    case = next(c for c in CASES if c.id == "sky_behind_standing_person")
    _, found = answers[case.id]
    shot = render(case)
    assert found.status == "resolved", found.reason
    assert "open sky" in found.reason, found.reason
    mask = found.masks[0].mask
    assert mask_iou(mask, shot.truth) >= 0.9
    (person,) = shot.others
    assert (mask & person).sum() < 0.01 * person.sum()


@pytest.mark.parametrize("case_id", ["right_of_two_touching_emblems",
                                     "left_of_two_touching_emblems",
                                     "biggest_of_three_touching_emblems"])
def test_touching_look_alikes_are_told_apart_before_picking(answers, case_id) -> None:
    """Two or three scikit-image badges touching (tune, 12 MP) are one connected salient
    blob; it is cut along the necks into one part per badge, so "the right/left/biggest
    emblem" is one badge (IoU ≥ 0.9), not the blob (IoU ≈ 0.5). No model here recognises
    an emblem, so the pick is offered first to click ("ambiguous", issue 32), not taken."""
    _, found = answers[case_id]
    shot = render(next(c for c in CASES if c.id == case_id))
    assert found.status == "ambiguous" and "click it to confirm" in found.reason, found.reason
    guess = found.masks[0].mask
    assert mask_iou(guess, shot.truth) >= 0.9
    for other in shot.others:
        assert (guess & other).sum() < 0.02 * other.sum()
