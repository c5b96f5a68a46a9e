"""Context folding: references resolve, tool details fold away, render stays in budget."""

from __future__ import annotations

from agent.session.memory import ImageContext, Memory, ToolContext


def _session_memory(turns: int) -> Memory:
    mem = Memory()
    mem.add_image(ImageContext("n0", None, "original photo", "upload"))
    parent = "n0"
    targets = ["sky", "car", "dog", "tree", "house", "lamp"]
    for i in range(1, turns + 1):
        target = targets[i % len(targets)]
        node = f"n{i}"
        mem.record_attempt(ToolContext(f"recolor the {target}", "classical",
                                       {"color": "red"}, "first try", 5.0, ["too weak"]))
        mem.add_image(ImageContext(node, parent, f"recolor the {target} (color=blue)",
                                   "recolor", f"the {target}"))
        mem.fold_turn(f"make the {target} blue", targets=[f"the {target}"],
                      operations=["recolor"], values={"color": "blue", "strength": 1.0},
                      states=[node])
        parent = node
    mem.head = parent
    return mem


def test_fold_drops_tool_contexts_and_keeps_intent():
    mem = Memory()
    mem.add_image(ImageContext("n0", None, "original"))
    mem.record_attempt(ToolContext("brighten", "classical", {"amount": 0.2}, "try", 4.0))
    assert len(mem.tools) == 1
    act = mem.fold_turn("brighten the sky", targets=["the sky"], operations=["brightness"],
                        values={"amount": 0.4}, states=["n1"])
    assert mem.tools == []
    assert act.intent == "brighten the sky" and act.states == ["n1"]


def test_pronoun_and_same_colour_resolve():
    mem = Memory()
    mem.fold_turn("make the car red", targets=["the car"], operations=["recolor"],
                  values={"color": "red"}, states=["n1"])
    mem.fold_turn("brighten it", targets=["it"], operations=["brightness"],
                  values={"amount": 0.3}, states=["n2"])
    assert mem.last_target() == "the car"
    assert mem.last_value("color") == "red"
    assert mem.last_value("nothing") is None
    refs = mem.resolve("paint that one the same colour")
    assert refs == {"target": "the car", "color": "red"}


def test_find_node_before_and_after_a_change():
    mem = _session_memory(6)  # n1 tree? targets cycle: n1 car, n2 dog, n3 tree, ...
    assert mem.find_node("go back to before the dog change") == "n1"
    assert mem.find_node("the state after the dog change") == "n2"
    assert mem.find_node("back to n3") == "n3"
    assert mem.find_node("before the unicorn") is None
    assert mem.resolve("go back to before the tree change")["node"] == "n2"


def test_the_original_is_the_photo_as_loaded() -> None:
    """"start over", "revert to the original": the root, whatever was edited since (the
    root was skipped: 'I could not find the state')."""
    mem = _session_memory(6)
    for query in ("to the original", "the original image", "back to the beginning"):
        assert mem.find_node(query) == "n0", query


def test_render_stays_in_budget_after_50_turns_and_names_referred_states():
    mem = _session_memory(50)
    referred = mem.find_node("before the car change")  # latest car edit
    assert referred is not None
    for budget in (400, 1000, 2500):
        text = mem.render(budget)
        assert len(text) <= budget
        assert referred in text  # a state the user referred to is always named
        assert "the sky" in text and "the car" in text  # recent targets
        assert "current state: n50" in text
    assert "folded" in mem.render(400)


def test_memory_json_round_trip():
    mem = _session_memory(5)
    mem.find_node("before the dog change")
    again = Memory.from_json(mem.to_json())
    assert again.render(800) == mem.render(800)
    assert again.last_target() == mem.last_target()
