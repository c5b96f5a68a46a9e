"""Everyday phrasings: the text front end, the intent library, questions with buttons,
and the planner's accuracy on the tuning and held-out phrasing sets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.brain.frontend import correct_word, normalise
from agent.brain.intents import LIBRARY, default_matcher, library_text
from agent.brain.prompts import planner_system, planner_user
from agent.brain.rules import RulePlanner
from agent.session.edit_session import EditSession
from eval.phrasing import case_matches, parse_alternatives, plan_matches, plan_view

DATA = Path(__file__).parent / "data"


def _view(plan) -> dict:
    return plan_view([a.model_dump(mode="json") for a in plan.actions], plan.is_edit,
                     plan.choices)


@pytest.mark.parametrize("typed, plain", [
    ("can u make it abit brighter thx", "make it a bit brighter"),
    ("brigter", "brighter"),
    ("more contrst plz", "more contrast"),
    ("staighten it", "straighten it"),
    ("Could you please make the picture slightly darker?", "make the picture slightly darker?"),
    ("the highlights are blown out", "recover the highlights"),
    ("darken the corners a touch", "add vignette slightly"),
    ("not warmer, cooler", "cooler"),
    ("less dark", "brighter"),
    ("write 'hapy brithday' on the sign", "write 'hapy brithday' on the sign"),
])
def test_front_end_turns_chat_into_plain_requests(typed, plain):
    assert normalise(typed).text == plain


def test_spelling_leaves_real_words_and_names_alone():
    for word in ("umbrella", "scratches", "boat", "backdrop", "bluer", "sepia"):
        assert correct_word(word) == word
    assert correct_word("contrst") == "contrast" and correct_word("satuation") == "saturation"
    assert normalise("sharpn").corrections == [("sharpn", "sharpen")]


def test_intent_library_plans_asks_and_says_when_nothing_fits():
    matcher = default_matcher()
    assert matcher.decide("sunset glow").intents[0].name == "look_golden_hour"
    assert matcher.decide("order me a pizza").kind == "none"
    ask = matcher.decide("fix the lighting")
    assert ask.kind == "ask" and len({i.operation for i in ask.intents}) == 2
    names = [i.name for i in LIBRARY]
    assert len(names) == len(set(names)) and all(len(i.phrasings) >= 3 for i in LIBRARY
                                                 if not i.name.startswith("look_bw"))


def test_planner_asks_with_two_buttons_and_the_session_passes_them_on(tmp_path):
    plan = RulePlanner().plan("fix the lighting")
    assert not plan.is_edit and not plan.actions and len(plan.choices) == 2
    assert all(set(c) == {"label", "instruction"} for c in plan.choices)
    for choice in plan.choices:   # each button is itself a request the planner reads
        assert RulePlanner().plan(choice["instruction"]).is_edit
    session = EditSession.create(np.full((64, 96, 3), 120, np.uint8), tmp_path / "s")
    result = session.turn("fix the lighting")
    assert not result.changed and result.to_dict()["choices"] == plan.choices
    assert "Did you mean" in result.message


def test_nothing_to_do_says_what_the_app_can_do():
    plan = RulePlanner().plan("what can you do?")
    assert not plan.is_edit and not plan.choices
    assert "crop" in plan.message and "vintage" in plan.message


def test_llm_prompt_carries_the_library_and_the_normalised_text():
    system = planner_system()
    assert library_text().splitlines()[0] in system and "look(" in system
    user = planner_user(normalise("brigter pls").text, typed="brigter pls")
    assert "<<<brighter>>>" in user and "as typed: <<<brigter pls>>>" in user


@pytest.mark.parametrize("step, action, ok", [
    ("brightness+ small", {"operation": "brightness", "params": {"amount": 0.1}}, True),
    ("brightness+ small", {"operation": "brightness", "params": {"amount": 0.2}}, False),
    ("exposure=-0.5", {"operation": "exposure", "params": {"stops": -0.5}}, True),
    ("rotate=ccw", {"operation": "rotate", "params": {"degrees": -90}}, True),
    ("rotate=ccw", {"operation": "rotate", "params": {"degrees": 90}}, False),
    ("transform.dx-@cat", {"operation": "transform", "params": {"dx": -0.15},
                           "target": "cat", "region": {"type": "phrase", "phrase": "cat"}},
     True),
    ("recolor=red@car", {"operation": "recolor", "params": {"color": "red"}}, False),
])
def test_expected_plan_grammar(step, action, ok):
    action.setdefault("region", {"type": "image"})
    assert plan_matches(plan_view([action], True), [step]) is ok
    assert parse_alternatives(step)[0].op == action["operation"]


@pytest.mark.parametrize("name, floor", [("tuning", 0.95), ("heldout", 0.90)])
def test_planner_reads_everyday_phrasings(name, floor):
    cases = json.loads((DATA / f"phrasing_{name}.json").read_text())["cases"]
    assert len(cases) >= 100
    planner = RulePlanner()
    passed = [c["text"] for c in cases if case_matches(_view(planner.plan(c["text"])), c)]
    assert len(passed) / len(cases) >= floor, sorted(set(c["text"] for c in cases) - set(passed))
