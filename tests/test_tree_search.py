"""Tree-of-States / Graph-of-References search over rendered scenes with measured checks."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from agent.brain.checklist import MeasuredChecker, VLMChecker, build_checklist, split_instruction
from agent.search.tree_search import ClassicalActor, SearchLimits, tree_search


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, list]:
    from eval import hdd

    state = hdd.initial_state(random.Random(0), objects=(5, 5))
    return hdd.render(state, (384, 216), seed=0), list(state.objects)


def _request(objs: list) -> str:
    return (f"make the {objs[0].describe()} {'green' if objs[0].color != 'green' else 'blue'}"
            f", remove the {objs[1].describe()} and make it brighter")


def test_checklist_splits_and_parses() -> None:
    parts = split_instruction("make the red ball blue, remove the green box; then make it "
                              "warmer and also do a little dance")
    assert parts == ["make the red ball blue", "remove the green box", "make it warmer",
                     "do a little dance"]
    items = build_checklist("make the red ball blue, remove the green box, make it warmer, "
                            "do a little dance")
    assert [i.kind for i in items] == ["recolor", "remove", "global", "unknown"]
    assert items[0].question == "Is the red ball now blue?" and items[0].value == "blue"
    with pytest.raises(ValueError, match="empty"):
        build_checklist("   ")


def test_measured_checks_see_the_edits(scene: tuple[np.ndarray, list]) -> None:
    image, objs = scene
    items = build_checklist(_request(objs))
    checker = MeasuredChecker()
    assert checker.check(items, image, image) == [False, False, False]
    result = tree_search(image, _request(objs), actor=ClassicalActor(),
                         checker=MeasuredChecker())
    assert checker.check(items, image, result.image) == [True, True, True]
    assert result.satisfied == 1.0
    assert not np.array_equal(result.image, image)


def test_topology_has_nodes_edges_references_and_is_json(scene: tuple[np.ndarray, list]
                                                         ) -> None:
    image, objs = scene
    actor = ClassicalActor(load_penalty=0.3, base_failure=0.3)
    result = tree_search(image, _request(objs), actor=actor, checker=MeasuredChecker(),
                         seed=2, max_steps=6)
    topo = json.loads(json.dumps(result.to_dict()))["topology"]
    ids = {n["id"] for n in topo["nodes"]}
    assert 0 in ids and len(ids) <= 7
    assert all(a in ids and b in ids for a, b in topo["edges"])
    assert all(len(n["thought"]) <= 2 for n in topo["nodes"] if n["parent"] is not None)
    assert topo["active_path"][0] == 0 and topo["active_path"][-1] == topo["best"]
    depths = {n["id"]: n["depth"] for n in topo["nodes"]}
    best = max(topo["nodes"], key=lambda n: n["share"])["share"]
    chosen = next(n for n in topo["nodes"] if n["id"] == topo["best"])
    assert chosen["share"] == pytest.approx(result.satisfied)
    if chosen["depth"] >= topo["mode_limits"]["min_depth"]:
        assert chosen["share"] == best
        ties = [n for n in topo["nodes"] if n["share"] == best
                and n["depth"] >= topo["mode_limits"]["min_depth"]]
        assert depths[topo["best"]] == min(n["depth"] for n in ties)


def test_references_steer_siblings_to_untried_items(scene: tuple[np.ndarray, list]) -> None:
    """With a failing actor, a sibling made with references asks for other items first."""
    image, objs = scene
    request = (f"remove the {objs[0].describe()}, remove the {objs[1].describe()}, "
               f"remove the {objs[2].describe()}, remove the {objs[3].describe()}")

    class Fails:
        def act(self, image, items, original, rng):  # noqa: ANN001 - test double
            return image

    common = dict(actor=Fails(), checker=MeasuredChecker(), max_steps=2, max_depth=4,
                  instruction_volume=2, stay_threshold=0.5)
    plain = tree_search(image, request, mode="tree", **common)
    steered = tree_search(image, request, mode="tree_refs", **common)
    thoughts = [n["thought"] for n in plain.topology["nodes"][1:]]
    assert thoughts == [[0, 1], [0, 1]]           # siblings repeat themselves
    steered_nodes = steered.topology["nodes"][1:]
    assert [n["thought"] for n in steered_nodes] == [[0, 1], [2, 3]]
    assert steered.topology["references"] == [[1, 2]]


def test_direct_mode_is_one_state_and_session_gets_the_path(scene: tuple[np.ndarray, list],
                                                            tmp_path) -> None:
    from agent.session import EditSession

    image, objs = scene
    direct = tree_search(image, _request(objs), mode="direct", actor=ClassicalActor(),
                         checker=MeasuredChecker())
    assert len(direct.topology["nodes"]) == 2 and direct.satisfied == 1.0
    session = EditSession.create(image, tmp_path / "s")
    result = tree_search(image, _request(objs), session=session, actor=ClassicalActor(),
                         checker=MeasuredChecker())
    assert all(step.get("node_id") for step in result.steps)
    assert np.array_equal(session.current_image(), result.image)


def test_limits_are_checked(scene: tuple[np.ndarray, list]) -> None:
    image, objs = scene
    with pytest.raises(ValueError, match="unknown search limit"):
        tree_search(image, _request(objs), checker=MeasuredChecker(), max_stepz=3)
    with pytest.raises(ValueError, match="max_steps"):
        tree_search(image, _request(objs), checker=MeasuredChecker(), max_steps=0)
    with pytest.raises(ValueError, match="unknown mode"):
        SearchLimits.for_complexity(3, "sideways")
    lim = SearchLimits.for_complexity(5)
    assert (lim.max_steps, lim.max_depth, lim.min_depth) == (12, 6, 3)


def test_vlm_checker_validates_answers(scene: tuple[np.ndarray, list]) -> None:
    """A VLM's answers are majority-voted; a malformed or failing answer counts as "no"."""
    image, objs = scene
    items = build_checklist(_request(objs))

    class FakeVLM:  # an external service cannot run here; this stands in for its replies
        def __init__(self) -> None:
            self.calls = 0

        def complete_json(self, system, messages, images, schema):  # noqa: ANN001
            self.calls += 1
            if self.calls == 2:
                raise RuntimeError("endpoint down")
            return {"answers": ["yes", "no", "yes"]}

    vlm = FakeVLM()
    assert VLMChecker(vlm, repeats=3).check(items, image, image) == [True, False, True]
    assert vlm.calls == 3
