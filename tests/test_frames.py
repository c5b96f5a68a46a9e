"""Frame edits: exact pixels, states in the graph (undo, later edits in the new frame,
archives), a real session turn, the web crop call and EXIF orientation on export."""

from __future__ import annotations

import io
import json
import math

import cv2
import numpy as np
import pytest
from PIL import Image
from skimage import data

import web
from agent.actions import Action
from agent.session.edit_session import EditSession
from agent.session.frames import detect_tilt, run_frame_action
from agent.session.state import StateError, StateGraph
from agent.session.store import diff_layer
from pipelines.editors.base import EditRequest
from pipelines.editors.classical import ClassicalEditor
from pipelines.editors.frame import (
    FrameChange,
    FrameError,
    apply_frame,
    crop_box,
    inscribed_size,
    plan_frame,
)
from pipelines.images import load_image


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    """A 768x512 photo (astronaut, upscaled and cropped: not square, not symmetric)."""
    return np.ascontiguousarray(cv2.resize(data.astronaut(), (768, 768))[128:640])


# --------------------------------------------------------------------------- pixels


@pytest.mark.parametrize("aspect, size", [("1:1", (512, 512)), ("16:9", (768, 432)),
                                          ("4:5", (410, 512)), ("original", (768, 512))])
def test_crop_to_an_aspect_takes_the_largest_centred_box(aspect, size):
    x0, y0, x1, y1 = crop_box(768, 512, aspect=aspect)
    assert (x1 - x0, y1 - y0) == size
    assert abs((x0 + x1) / 2 - 384) <= 1 and abs((y0 + y1) / 2 - 256) <= 1


def test_crop_around_a_subject_contains_it_and_stays_inside():
    box = crop_box(768, 512, aspect="1:1", around=(600, 100, 760, 300), margin=-0.15)
    x0, y0, x1, y1 = box
    assert x1 - x0 == y1 - y0 and 0 <= x0 and x1 <= 768 and 0 <= y0 and y1 <= 512
    assert x0 <= 600 and y0 <= 100 and y1 >= 300 and x1 >= 760 - 1


def test_quarter_turns_and_flips_are_exact(photo):
    for degrees, expected in [(90, np.rot90(photo, -1)), (-90, np.rot90(photo, 1)),
                              (270, np.rot90(photo, 1)), (180, photo[::-1, ::-1])]:
        change, out = plan_frame(photo, "rotate", {"degrees": degrees})
        assert np.array_equal(out, expected) and change.size == (out.shape[1], out.shape[0])
        assert np.array_equal(apply_frame(photo, change), out)
    _, mirrored = plan_frame(photo, "flip", {"axis": "horizontal"})
    _, upside = plan_frame(photo, "flip", {"axis": "vertical"})
    assert np.array_equal(mirrored, photo[:, ::-1]) and np.array_equal(upside, photo[::-1])
    with pytest.raises(FrameError, match="quarter turns"):
        plan_frame(photo, "rotate", {"degrees": 45})


@pytest.mark.parametrize("degrees", [2.0, -7.5, 30.0])
def test_straighten_keeps_no_empty_corner_and_the_shape(degrees):
    w, h = 1200, 800
    out_w, out_h = inscribed_size(w, h, degrees)
    assert abs(out_w / out_h - w / h) < 0.01 and out_w < w
    # every corner of the kept frame, rotated back, lies inside the original frame
    a = math.radians(degrees)
    for cx, cy in ((-out_w / 2, -out_h / 2), (out_w / 2, -out_h / 2), (-out_w / 2, out_h / 2),
                   (out_w / 2, out_h / 2)):
        x = cx * math.cos(a) - cy * math.sin(a)
        y = cx * math.sin(a) + cy * math.cos(a)
        assert abs(x) <= w / 2 + 0.5 and abs(y) <= h / 2 + 0.5
    white = np.full((h, w, 3), 255, np.uint8)
    change, out = plan_frame(white, "straighten", {"angle": degrees})
    assert out.shape == (out_h, out_w, 3) and out.min() == 255 and not change.exact


def _horizon(tilt: float) -> np.ndarray:
    """Sky over ground, the horizon tilted by ``tilt`` degrees (counter-clockwise +)."""
    h, w = 600, 900
    yy, xx = np.mgrid[0:h, 0:w]
    line = h / 2 - (xx - w / 2) * math.tan(math.radians(tilt))
    img = np.where((yy < line)[..., None], np.array([150, 190, 235], np.uint8),
                   np.array([70, 110, 50], np.uint8)).astype(np.uint8)
    noise = np.random.default_rng(0).integers(-6, 7, img.shape)
    return np.clip(img.astype(int) + noise, 0, 255).astype(np.uint8)


def test_straighten_finds_and_levels_a_tilted_horizon():
    tilted = _horizon(4.0)
    angle, confidence = detect_tilt(tilted)
    assert confidence >= 6 and abs(angle + 4.0) < 0.5
    action = Action(kind="adjust", operation="straighten", params={"auto": True})
    done = run_frame_action(tilted, action)
    assert done.change.size[0] < 900 and done.pixels is not None
    assert abs(detect_tilt(done.pixels)[0]) < 0.5
    with pytest.raises(FrameError, match="no tilted horizon"):
        run_frame_action(_horizon(0.0), action)


# --------------------------------------------------------------------------- graph


def test_graph_frame_state_undo_is_bit_exact_and_later_layers_use_the_new_frame(photo):
    graph = StateGraph(photo)
    change, cropped = plan_frame(photo, "crop", {"aspect": "1:1"})
    node = graph.add_frame(None, {"operation": "crop"}, "crop", change, [])
    assert graph.size == (512, 512) and np.array_equal(graph.image(), cropped)
    brighter = ClassicalEditor().edit(cropped, np.ones((512, 512), bool),
                                      EditRequest("adjust", "brightness", {"amount": 0.2}))
    graph.add(node.id, {"operation": "brightness"}, "brighter", [diff_layer(cropped, brighter)])
    assert graph.image().shape == (512, 512, 3)
    assert np.array_equal(graph.image(), brighter)
    graph.cache.clear()   # rebuilt from the root: crop replayed, then the layer
    assert np.array_equal(graph.image(), brighter)
    graph.undo(2)
    assert graph.size == (768, 512) and np.array_equal(graph.image(), photo)
    graph.checkout(node.id)   # a branch from the cropped state
    with pytest.raises(StateError, match="outside the 512x512"):
        graph.add(None, None, "too wide", [diff_layer(photo, photo[:, ::-1].copy())])


def test_graph_json_round_trip_and_versions(photo, tmp_path):
    graph = StateGraph(photo)
    assert graph.to_json()["version"] == 1   # no frame edit: readable by older Loupes
    change, turned = plan_frame(photo, "rotate", {"degrees": 90})
    graph.add_frame(None, None, "rotate", change, [])
    data = json.loads(json.dumps(graph.to_json()))
    assert data["version"] == 2 and data["nodes"][1]["frame"]["kind"] == "rotate"
    back = StateGraph.from_json(data, photo, tmp_path)
    assert back.size == (512, 768) and np.array_equal(back.image(), turned)
    data["version"] = 1   # a version-1 file cannot hold frame states
    with pytest.raises(StateError, match="version-1"):
        StateGraph.from_json(data, photo, tmp_path)
    data["version"] = 2
    data["nodes"][1]["frame"] = {"kind": "rotate", "params": {"degrees": 45}, "size": [5, 5]}
    with pytest.raises(StateError, match="multiple of 90"):
        StateGraph.from_json(data, photo, tmp_path)
    with pytest.raises(FrameError):
        FrameChange.from_json({"kind": "explode", "params": {}, "size": [1, 1]})


# --------------------------------------------------------------------------- session


def test_session_turns_crop_then_edit_at_the_cropped_native_size(photo, tmp_path):
    session = EditSession.create(photo, tmp_path / "s")
    result = session.turn("crop to a square pls")
    assert result.ok and session.graph.size == (512, 512)
    assert result.steps[0].bbox == [128, 0, 640, 512]   # the kept box, for a UI
    crop = photo[:, 128:640]
    assert np.array_equal(session.current_image(), crop)
    result = session.turn("make it brighter")
    assert result.ok and session.current_image().shape == (512, 512, 3)
    expected = ClassicalEditor().edit(crop, np.ones((512, 512), bool),
                                      EditRequest("adjust", "brightness", {"amount": 0.2}))
    assert np.array_equal(session.current_image(), expected)
    for text, size in [("rotate it left", (512, 512)), ("mirror it", (512, 512)),
                       ("straighten it 5 degrees clockwise", None)]:
        assert session.turn(text).ok, text
        if size:
            assert session.graph.size == size
    assert session.graph.size[0] < 512
    states = {n: np.array(session.image_at(n)) for n in session.graph.nodes}
    session.undo(5)
    assert np.array_equal(session.current_image(), photo)   # bit-exact original
    # the archive keeps every state, frame edits included
    zipped = session.export(tmp_path / "s.zip")
    again = EditSession.import_archive(zipped, tmp_path / "t")
    assert all(np.array_equal(again.image_at(n), states[n]) for n in states)
    again.checkout(list(states)[-1])
    assert again.graph.size == session.graph.size_at(list(states)[-1])


def test_session_crop_box_and_resize_on_export(photo, tmp_path):
    session = EditSession.create(photo, tmp_path / "s")
    result = session.crop([100, 50, 400, 250])
    assert result.ok and np.array_equal(session.current_image(), photo[50:250, 100:400])
    data = session.save_image(None, format="PNG", long_side=150)
    assert Image.open(io.BytesIO(data)).size == (150, 100)
    with pytest.raises(ValueError, match="four numbers"):
        session.crop(["a", 1, 2])


def test_export_keeps_exif_orientation_consistent_with_the_pixels(tmp_path):
    upright = np.ascontiguousarray(data.astronaut()[:300, :480])
    stored = np.ascontiguousarray(np.rot90(upright, 1))   # a camera's orientation-6 file
    exif = Image.Exif()
    exif[0x0112], exif[0x010F] = 6, "TestCam"
    exif.get_ifd(0x8769).update({0xA002: stored.shape[1], 0xA003: stored.shape[0]})
    buf = io.BytesIO()
    Image.fromarray(stored).save(buf, "JPEG", quality=95, exif=exif.tobytes())
    session = EditSession.create(buf.getvalue(), tmp_path / "s")
    assert session.current_image().shape == (300, 480, 3)   # upright on load
    assert session.turn("rotate 90 degrees clockwise").ok
    out = session.save_image(None)
    reread = Image.open(io.BytesIO(out))
    tags = reread.getexif()
    assert tags.get(0x0112) == 1 and tags.get(0x010F) == "TestCam"
    assert reread.size == (300, 480)
    assert (tags.get_ifd(0x8769).get(0xA002), tags.get_ifd(0x8769).get(0xA003)) == (300, 480)
    pixels = load_image(out).pixels
    assert np.abs(pixels.astype(int) - np.rot90(upright, -1)).mean() < 4


def test_web_crop_call_makes_one_undoable_state(photo, tmp_path):
    web.set_manager(web.SessionManager(tmp_path / "web"))
    try:
        sid = web.ensure_session(None)
        web.open_image(sid, photo, "photo.png")
        assert web.suggest_crop(sid, "1:1") == [128, 0, 640, 512]
        view, result = web.crop(sid, "10, 20, 310, 220")
        assert result["ok"] and web.image_size(sid) == (300, 200)
        assert web.download(sid, "PNG", long_side=150).name.endswith("-150px.png")
        web.undo(sid)
        assert web.image_size(sid) == (768, 512)
    finally:
        web.set_manager(None)


def test_one_turn_crops_then_edits_the_cropped_frame(photo, tmp_path):
    session = EditSession.create(photo, tmp_path / "s")
    result = session.turn("crop to a square and make it black and white")
    assert result.ok and len(result.nodes) == 2 and session.graph.size == (512, 512)
    out = session.current_image()
    assert np.array_equal(out[..., 0], out[..., 1]) and np.array_equal(out[..., 1], out[..., 2])
    session.undo()
    assert np.array_equal(session.current_image(), photo[:, 128:640])
