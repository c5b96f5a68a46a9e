"""Tree search hands the items no rule understood to a configured generative editor."""

from __future__ import annotations

import random

import cv2
import numpy as np

from agent.search.tree_search import EditorActor, tree_search
from tests.test_generative_turn import tiny_ip2p  # noqa: F401  (the fixture)

REQUEST = "make it warmer, then make it look like a watercolor painting"


def _editors(result) -> list[str]:
    return [e for node in result.topology["nodes"] for e in node["editors"]]


def test_without_a_generative_editor_unknown_items_are_not_attempted(chelsea) -> None:
    small = cv2.resize(chelsea, (96, 64), interpolation=cv2.INTER_AREA)
    assert EditorActor.configured().generative is None
    result = tree_search(small, REQUEST, max_steps=3)
    assert _editors(result) and set(_editors(result)) == {"classical"}


def test_a_configured_generative_editor_acts_on_unknown_items(tiny_ip2p, chelsea) -> None:  # noqa: F811
    small = cv2.resize(chelsea, (96, 64), interpolation=cv2.INTER_AREA)
    actor = EditorActor.configured()
    assert actor.generative == "instruct-pix2pix"
    result = tree_search(small, REQUEST, max_steps=3, actor=actor)
    generated = [n for n in result.topology["nodes"] if "instruct-pix2pix" in n["editors"]]
    assert generated, result.topology["nodes"]
    assert "classical" in _editors(result)          # the warmer item stayed classical
    assert result.image.shape == small.shape and result.image.dtype == np.uint8
    # the item's pixels are the model's work
    from agent.brain.checklist import build_checklist

    unknown = [it for it in build_checklist(REQUEST) if it.kind == "unknown"]
    out = actor.act(small, unknown, small, random.Random(0))
    assert actor.editors_used[-1] == "instruct-pix2pix"
    assert out.shape == small.shape and not np.array_equal(out, small)
