"""The operations registry as a whole, and the operation added through it (dehaze).

Every operation declares its parameters, words, wording, pixels and check; its buttons and
example phrasings plan to it; no word is claimed by two operations; words that carry an
operation are never taken as an object to move. Dehaze is checked on pixels like the
other operations in ``test_classical``: haze added to a photo is taken back out.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from agent.actions import Action
from agent.brain.critic import PASS_SCORE, MeasuredCritic
from agent.brain.intents import LIBRARY
from agent.brain.rules import RulePlanner
from pipelines.config import ROLES
from pipelines.editors.base import EditRequest
from pipelines.editors.classical import IMPLEMENTED, ClassicalEditor
from pipelines.editors.operations import OPERATIONS, get_operation
from pipelines.operations import REGISTRY, Measured, Verdict, operations, word_owner

PLANNER = RulePlanner()
EDITOR = ClassicalEditor()
#: parameters an operation cannot default (required ones)
REQUIRED = {"color": "blue", "text": "Hello"}


def _planned(text: str) -> list[str]:
    return [a.operation for a in PLANNER.plan(text).actions]


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    return cv2.resize(data.coffee(), (180, 120), interpolation=cv2.INTER_AREA)


def _defaults(op) -> dict:
    params = {p.name: REQUIRED[p.name] for p in op.params if p.required and p.name in REQUIRED}
    if any(p.type == "image" and p.required for p in op.params):
        params["image"] = np.full((20, 30, 3), 200, np.uint8)
    return op.validate(params)


# --------------------------------------------------------------------------- the registry


def test_the_catalogue_is_the_registry() -> None:
    assert OPERATIONS is REGISTRY
    for name, op in REGISTRY.items():
        assert op.name == name and get_operation(name) is op


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_operation_declares_what_it_is(name: str) -> None:
    op = REGISTRY[name]
    assert op.params, f"{name} has no parameters"
    assert op.main_param in op.param_names, f"{name}'s main parameter is not one of its own"
    assert op.words, f"{name} has no words that ask for it"
    assert op.description and op.family
    where = "the cup"
    wording = op.describe(_defaults(op) if op.classical else {}, where)
    assert wording and "_" not in wording, wording
    assert where in wording or op.has("frame"), wording   # a frame edit is the photo's
    # pixels: a classical implementation, or a frame change / a generative model
    assert op.classical or op.has("frame") or (op.generative and op.model_role in ROLES), name
    assert (name in IMPLEMENTED) == op.classical


@pytest.mark.parametrize("name", sorted(n for n, op in REGISTRY.items() if op.classical))
def test_every_classical_operation_applies_and_checks_its_result(name: str, photo) -> None:
    op = REGISTRY[name]
    mask = np.zeros(photo.shape[:2], bool)
    mask[30:90, 40:140] = True
    params = _defaults(op)
    out = op.apply(photo.copy(), mask, params)
    assert out.shape == photo.shape and out.dtype == np.uint8
    verdict = op.check(Measured(photo, out, mask, params))
    assert isinstance(verdict, Verdict) and 0.0 <= verdict.achieved <= 1.0
    assert all(isinstance(v, float | int) for v in verdict.measures.values())


def test_no_word_is_claimed_by_two_operations() -> None:
    seen: dict[str, str] = {}
    for op in operations():
        for word in op.words:
            assert word not in seen, f"'{word}' is claimed by {seen[word]} and {op.name}"
            seen[word] = op.name
    assert seen == word_owner()


def test_the_planner_reads_each_operations_own_words() -> None:
    import re

    for op in operations():
        if op.grammar:   # the planner reads these by their words
            for word in op.words:
                assert re.search(op.keyword_pattern(), word), (op.name, word)


def test_every_button_plans_to_its_operation() -> None:
    for intent in LIBRARY:
        assert intent.operation in _planned(intent.instruction), \
            f"the '{intent.label}' button ('{intent.instruction}') does not plan to " \
            f"{intent.operation}"


def test_example_phrasings_plan_to_their_operation() -> None:
    misread = [(op.name, p, _planned(p)) for op in operations() for ask in op.asks
               for p in ask.phrasings if op.name not in _planned(p)]
    assert sum(len(a.phrasings) for op in operations() for a in op.asks) > 250
    assert not misread, "\n".join(f"'{p}' plans to {got}, not {name}"
                                   for name, p, got in misread)


def test_complaints_and_direction_words_ask_for_the_right_operation() -> None:
    """A complaint asks for the remedy; a filter's word said of an adjustment's noun sets
    that adjustment's direction; the plain requests keep their own operation."""
    assert _planned("it is blurry") == ["sharpen"]
    assert _planned("the background looks too blurry") == ["sharpen"]
    assert _planned("make the background blurry") == ["blur"]
    assert _planned("soften the image") == ["blur"]
    soft = PLANNER.plan("soften the contrast").actions
    assert [a.operation for a in soft] == ["contrast"] and soft[0].params["amount"] < 0
    assert _planned("crisper details") == ["sharpen"]
    assert _planned("crisper tones") == ["contrast"]
    assert _planned("remove the colour cast") == ["auto_white_balance"]
    warm = PLANNER.plan("remove the blue cast").actions
    assert [a.operation for a in warm] == ["temperature"] and warm[0].params["amount"] > 0
    assert _planned("make it sepia") == ["sepia"]


def test_words_that_carry_an_operation_are_not_objects() -> None:
    for op in operations():
        if not op.grammar:
            continue
        for word in (w for w in op.words if " " not in w):   # one-word names
            moved = [a for a in PLANNER.plan(f"move the {word} to the left").actions
                     if a.operation == "transform"]
            assert not moved, f"'{word}' ({op.name}) was taken as an object to move"


def test_the_lexicon_turns_idioms_into_directions() -> None:
    down = PLANNER.plan("dial back the saturation").actions[0]
    up = PLANNER.plan("crank up the contrast").actions[0]
    assert down.operation == "saturation" and down.params["amount"] < 0
    assert up.operation == "contrast" and up.params["amount"] > 0


# ------------------------------------------------------------------------------- dehaze


def _hazy(img: np.ndarray, t: float = 0.5) -> np.ndarray:
    """The haze model: each pixel keeps a share ``t`` of its light, the rest is airlight."""
    air = np.array([215.0, 218.0, 222.0])
    return np.clip(img.astype(np.float64) * t + air * (1 - t), 0, 255).astype(np.uint8)


def _run(img: np.ndarray, mask: np.ndarray, **params) -> np.ndarray:
    return EDITOR.edit(img, mask, EditRequest("adjust", "dehaze", params))


def test_dehaze_takes_added_haze_back_out() -> None:
    clean = cv2.resize(data.astronaut(), (256, 256), interpolation=cv2.INTER_AREA)
    hazy = _hazy(clean)
    whole = np.ones(clean.shape[:2], bool)
    out = _run(hazy, whole, amount=1.0)
    err_hazy = np.abs(hazy.astype(int) - clean).mean()
    err_out = np.abs(out.astype(int) - clean).mean()
    assert err_out < 0.7 * err_hazy, (err_hazy, err_out)
    grey = [cv2.cvtColor(x, cv2.COLOR_RGB2GRAY).std() for x in (hazy, out)]
    assert grey[1] > 1.3 * grey[0]          # contrast comes back
    sat = [cv2.cvtColor(x, cv2.COLOR_RGB2HSV)[..., 1].mean() for x in (hazy, out)]
    assert sat[1] > 1.3 * sat[0]            # and colour with it


def test_dehaze_amount_scales_and_zero_is_a_no_op() -> None:
    hazy = _hazy(cv2.resize(data.coffee(), (200, 150), interpolation=cv2.INTER_AREA))
    whole = np.ones(hazy.shape[:2], bool)
    assert np.array_equal(_run(hazy, whole, amount=0.0), hazy)
    weak = np.abs(_run(hazy, whole, amount=0.3).astype(int) - hazy).mean()
    strong = np.abs(_run(hazy, whole, amount=1.0).astype(int) - hazy).mean()
    assert 0 < weak < strong


def test_dehaze_leaves_the_outside_of_the_mask_alone() -> None:
    hazy = _hazy(cv2.resize(data.astronaut(), (200, 200), interpolation=cv2.INTER_AREA))
    mask = np.zeros(hazy.shape[:2], bool)
    mask[:100] = True
    out = _run(hazy, mask, amount=1.0)
    assert np.array_equal(out[130:], hazy[130:])
    assert np.abs(out[:80].astype(int) - hazy[:80]).mean() > 10


def test_the_critic_passes_a_dehaze_and_fails_none() -> None:
    hazy = _hazy(cv2.resize(data.astronaut(), (200, 200), interpolation=cv2.INTER_AREA))
    whole = np.ones(hazy.shape[:2], bool)
    action = Action(kind="adjust", operation="dehaze", params={"amount": 0.8},
                    target="the whole image", region={"type": "image"})
    critic = MeasuredCritic(localizer=False)
    good = critic.critique(hazy, _run(hazy, whole, amount=0.8), action, whole)
    assert good.score >= PASS_SCORE and good.passed, good
    same = critic.critique(hazy, hazy.copy(), action, whole)
    assert not same.passed and same.retry_params.get("amount", 0) > 0.8


def test_dehaze_is_planned_from_its_words() -> None:
    for text in ("remove the haze", "dehaze the photo", "it looks hazy", "cut through the haze"):
        actions = PLANNER.plan(text).actions
        assert [a.operation for a in actions] == ["dehaze"], text
        assert actions[0].target == "" or "haze" not in actions[0].target, text
    sky = PLANNER.plan("dehaze the sky a bit").actions[0]
    assert sky.target == "sky" and sky.params["amount"] == pytest.approx(0.3)
