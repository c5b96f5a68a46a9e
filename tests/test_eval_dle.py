"""DLE rubric modes on rendered scenes (ground truth known), tools and the VLM loop."""

from __future__ import annotations

import numpy as np
import pytest

from eval import dle, hdd
from eval.hdd import Command, SceneObject, SceneState

SIZE = (640, 360)


def _box(obj: SceneObject) -> dle.Box:
    r = hdd.SIZE_RADIUS[obj.size] * SIZE[1]
    cx, cy = obj.position[0] * SIZE[0], obj.position[1] * SIZE[1]
    return int(cx - r) - 2, int(cy - r) - 2, int(cx + r) + 3, int(cy + r) + 3


@pytest.fixture(scope="module")
def scene():
    s0 = SceneState(objects=(
        SceneObject("o0", "red", "small", "matte", "circle", (0.15, 0.3)),
        SceneObject("o1", "blue", "medium", "glossy", "square", (0.5, 0.7)),
        SceneObject("o2", "yellow", "small", "matte", "star", (0.85, 0.3)),
        SceneObject("o3", "green", "small", "matte", "triangle", (0.5, 0.25))), background=3)
    s1 = hdd.apply(s0, Command("adjust", "o0", {"color": "purple"}))

    def draw(state):
        return hdd.render(state, SIZE)

    return {"s0": s0, "s1": s1, "source": draw(s0), "reference": draw(s1), "draw": draw,
            "boxes": [_box(s0.get("o0"))]}


def _judge(scene, edited):
    return dle.evaluate(scene["source"], edited, "make the red ball purple", scene["boxes"],
                        reference=scene["reference"])


def test_measured_if_labels(scene):
    draw = scene["draw"]
    assert _judge(scene, scene["source"])["if_label"] == "Localization Failure"
    flawless = _judge(scene, scene["reference"])
    assert flawless["if_label"] == "Flawless Execution" and flawless["if_score"] == 100.0
    wrong = draw(hdd.apply(scene["s0"], Command("adjust", "o0", {"color": "cyan"})))
    assert _judge(scene, wrong)["if_label"] == "Wrong Action"
    over = scene["reference"].copy()  # right colour, but the context around it changed
    x0, y0, x1, y1 = scene["boxes"][0]
    over[y1 + 4:y1 + 30, x0:x1] = (0, 0, 0)
    result = _judge(scene, over)
    assert result["if_label"] == "Over Modification" and result["if_score"] == 75.0


def test_measured_vc_labels(scene, chelsea):
    draw, s1 = scene["draw"], scene["s1"]
    assert _judge(scene, scene["reference"])["vc_label"] == "Perfect Consistency"
    one = draw(hdd.apply(s1, Command("adjust", "o2", {"color": "orange"})))
    assert _judge(scene, one)["vc_label"] == "Single Anomaly"
    two = draw(hdd.apply_turn(s1, [Command("adjust", "o2", {"color": "orange"}),
                                   Command("remove", "o1")]))
    assert _judge(scene, two)["vc_label"] == "Multiple Anomalies"
    import cv2

    other = cv2.resize(chelsea, SIZE)  # a different place altogether
    assert _judge(scene, other)["vc_label"] == "Scene Collapse"


def test_lambda_context_and_oracle_views(scene):
    box = scene["boxes"][0]
    grown = dle.context_box([box], SIZE)
    from pipelines.layers import context_lambda

    side = min(box[2] - box[0], box[3] - box[1])
    pad = int(np.ceil(context_lambda(side) * side))
    assert context_lambda(side) > 5  # a small target gets a wide context (λ near 6)
    assert grown == (max(0, box[0] - pad), max(0, box[1] - pad),
                     min(SIZE[0], box[2] + pad), min(SIZE[1], box[3] + pad))
    views = dle.oracle_if_views(scene["source"], scene["reference"], scene["reference"],
                                scene["boxes"])
    assert len(views) == 3 and min(views[0].shape[:2]) >= 512
    white = dle.paint_targets(scene["source"], scene["boxes"])
    assert (white[box[1]:box[3], box[0]:box[2]] == 255).all()
    assert np.array_equal(white[box[3] + 1:], scene["source"][box[3] + 1:])


def test_tools(scene):
    crop = dle.zoom_in(scene["source"], (10, 10, 42, 26))
    assert crop.shape[0] == 512 and crop.shape[1] == 1024
    found = dle.localize_differences(scene["source"], scene["reference"])
    assert len(found["boxes"]) == 1
    x0, y0, x1, y1 = found["boxes"][0]
    bx = scene["boxes"][0]
    assert x0 >= bx[0] - 8 and x1 <= bx[2] + 8 and y0 >= bx[1] - 8 and y1 <= bx[3] + 8
    assert found["crops"][0].shape[1] > 2 * found["crops"][0].shape[0] - 20  # side by side
    detected = dle.detect_object(scene["source"], "the red ball")
    assert detected["boxes"], detected
    dx0, dy0, dx1, dy1 = detected["boxes"][0]
    cx, cy = (dx0 + dx1) / 2, (dy0 + dy1) / 2
    assert bx[0] <= cx <= bx[2] and bx[1] <= cy <= bx[3]
    with pytest.raises(dle.DLEError):
        dle.zoom_in(scene["source"], (700, 0, 800, 10))


class _ToolUser:
    """A stand-in VLM: asks for localize_differences once, then labels by what it saw."""

    name = "scripted-vlm"

    def __init__(self):
        self.seen: list[int] = []

    def complete_json(self, system, messages, images, schema, check=None):
        self.seen.append(len(images or []))
        if "tool" in schema["properties"] and len(messages) == 1:
            return {"thought": "look closer", "tool": {"name": "localize_differences"}}
        label = schema["properties"]["label"]["enum"][-1]
        if "Changed boxes: []" in messages[-1]["content"]:
            label = schema["properties"]["label"]["enum"][0]
        return {"label": label}


def test_tool_driven_vlm_loop(scene):
    vlm = _ToolUser()
    out = dle.evaluate(scene["source"], scene["reference"], "make the red ball purple",
                       scene["boxes"], mode="tool", model=vlm)
    assert out["if_label"] == "Flawless Execution" and out["judge"] == "scripted-vlm"
    assert vlm.seen[0] == 2 and vlm.seen[1] > 2  # the tool's crops were shown
    same = dle.evaluate(scene["source"], scene["source"], "x", scene["boxes"], mode="tool",
                        model=_ToolUser())
    assert same["if_label"] == "Localization Failure"


def test_sample_schema_and_normalisation():
    sample = dle.DLESample.from_json({"id": "a", "source": "a.png", "instruction": "x",
                                      "type": "Color", "bbox": [1, 2, 30, 40]})
    assert sample.boxes == ((1, 2, 30, 40),) and sample.type == "color"
    for bad in ({"source": "a.png", "instruction": "x", "type": "blur", "bbox": [0, 0, 1, 1]},
                {"source": "a.png", "instruction": "x", "type": "color", "bbox": [5, 5, 1, 1]},
                {"source": "a.png", "instruction": " ", "type": "color", "bbox": [0, 0, 1, 1]}):
        with pytest.raises(dle.DLEError):
            dle.DLESample.from_json(bad)
    assert [dle.normalise(s) for s in (1, 2, 3, 4)] == [25.0, 50.0, 75.0, 100.0]
    with pytest.raises(dle.DLEError):
        dle.evaluate(np.zeros((8, 8, 3), np.uint8), np.zeros((8, 8, 3), np.uint8), "x",
                     [(0, 0, 2, 2)])
