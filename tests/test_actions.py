"""Actions and the operation catalogue: what planners may emit, and the errors they get."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.actions import (
    PLAN_SCHEMA,
    Action,
    ActionKind,
    ActionValidationError,
    RegionType,
    operation_catalogue,
    parse_actions,
)
from pipelines.editors.operations import OPERATIONS, OperationError, get_operation, parse_color


def test_parse_fills_defaults_and_keeps_order():
    actions = parse_actions(json.dumps({"actions": [
        {"id": "a1", "kind": "replace", "target": "the car", "operation": "recolor",
         "params": {"color": "Red"}, "region": {"type": "phrase", "phrase": "the car"}},
        {"id": "a2", "kind": "adjust", "operation": "exposure", "depends_on": ["a1"]},
    ]}))
    assert [a.id for a in actions] == ["a1", "a2"]
    assert actions[0].params == {"color": "red", "strength": 1.0, "lightness": 1.0}
    assert actions[1].params == {"stops": 0.5}
    assert actions[1].region.type is RegionType.image
    assert actions[0].describe() == "recolor the car (color=red, strength=1, lightness=1)"


@pytest.mark.parametrize("payload, fragment", [
    ("not json", "not valid JSON"),
    ({"plan": []}, '"actions"'),
    ([{"kind": "adjust", "operation": "melt"}], "unknown operation 'melt'"),
    ([{"kind": "adjust", "operation": "exposure", "params": {"stops": 9}}], "out of range"),
    ([{"kind": "adjust", "operation": "exposure", "params": {"gain": 1}}], "no parameter gain"),
    ([{"kind": "remove", "operation": "exposure"}], "cannot serve a remove action"),
    ([{"kind": "adjust", "operation": "recolor"}], "needs the parameter color"),
    ([{"kind": "adjust", "operation": "recolor", "params": {"color": "sparkly"}}],
     "is not a colour"),
    ([{"kind": "teleport", "operation": "exposure"}], "kind"),
    ([{"kind": "adjust", "operation": "exposure", "region": {"type": "box", "box": [5, 5, 1, 1]}}],
     "x0 < x1"),
    ([{"kind": "adjust", "operation": "exposure", "region": {"type": "phrase"}}],
     "non-empty phrase"),
    ([{"id": "a", "kind": "adjust", "operation": "exposure", "depends_on": ["b"]},
      {"id": "b", "kind": "adjust", "operation": "contrast"}], "earlier actions"),
    ([{"id": "a", "kind": "adjust", "operation": "exposure"},
      {"id": "a", "kind": "adjust", "operation": "contrast"}], "duplicate id"),
    ([{"kind": "adjust", "operation": "exposure", "code": "import os"}], "Extra inputs"),
    ([{"kind": "undo", "operation": "exposure"}], "takes no operation"),
])
def test_invalid_plans_get_readable_errors(payload, fragment):
    with pytest.raises(ActionValidationError) as err:
        parse_actions(payload)
    assert fragment in str(err.value)


def test_every_problem_is_reported_at_once():
    with pytest.raises(ActionValidationError) as err:
        parse_actions([{"kind": "adjust", "operation": "melt"},
                       {"kind": "adjust", "operation": "exposure", "params": {"stops": 99}}])
    assert "action 1" in str(err.value) and "action 2" in str(err.value)


def test_too_many_actions_rejected():
    with pytest.raises(ActionValidationError, match="too many"):
        parse_actions([{"kind": "adjust", "operation": "exposure"}] * 17)


def test_undo_and_reference_images():
    undo = Action(kind="undo", steps=2)
    assert undo.describe() == "undo 2 steps"
    ref = np.zeros((4, 4, 3), np.uint8)
    paste = Action(kind="add", operation="paste", params={"image": ref},
                   region={"type": "mask"})
    assert paste.params["image"] is ref
    request = paste.to_request(seed=3, params={"mode": "mixed"})
    assert request.params["mode"] == "mixed" and request.seed == 3
    assert request.kind == ActionKind.add.value


def test_schema_and_catalogue_name_every_operation():
    text = operation_catalogue()
    for name in OPERATIONS:
        assert f"- {name} (" in text
    item = PLAN_SCHEMA["properties"]["actions"]["items"]
    assert set(item["properties"]) >= {"kind", "target", "region", "operation", "params"}


def test_param_checks():
    spec = get_operation("clahe")
    assert spec.validate({"tile": "8.4"}) == {"clip_limit": 2.0, "tile": 8}
    with pytest.raises(OperationError, match="must be a number"):
        spec.validate({"clip_limit": True})
    with pytest.raises(OperationError, match="NaN"):
        spec.validate({"clip_limit": float("nan")})
    with pytest.raises(OperationError, match="one of"):
        get_operation("inpaint").validate({"method": "magic"})
    with pytest.raises(OperationError, match="too long"):
        get_operation("text").validate({"text": "x" * 501})


@pytest.mark.parametrize("value, rgb", [
    ("red", (220, 30, 30)), (" Blue ", (30, 70, 220)), ("#00ff80", (0, 255, 128)),
    ("f0a", (255, 0, 170)), ((1, 2, 3), (1, 2, 3)),
])
def test_parse_color(value, rgb):
    assert parse_color(value) == rgb


@pytest.mark.parametrize("bad", ["", "sparkly", "#12345", (300, 0, 0), None, 7])
def test_parse_color_rejects(bad):
    with pytest.raises(OperationError):
        parse_color(bad)


def test_plan_schema_validates_with_a_standard_validator():
    import jsonschema

    good = {"actions": [{"kind": "adjust", "operation": "exposure", "params": {"stops": 1},
                         "region": {"type": "phrase", "phrase": "the sky"}}]}
    jsonschema.validate(good, PLAN_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"actions": [{"kind": "melt"}]}, PLAN_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"actions": [{"kind": "adjust", "region": {"type": "cloud"}}]},
                            PLAN_SCHEMA)
