"""The app's service layer (web, web.graph_view) and the Blocks it builds.

Sessions, isolation, expiry, restore-after-restart, the brush mask at native resolution,
the graph drawing, and a full edit → undo → checkout → download → export/import cycle
through the same functions the UI, the API and the MCP tools call.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import web
from pipelines.config import get_settings
from web import graph_view


@pytest.fixture()
def manager():
    mgr = web.SessionManager(ttl_hours=1.0)  # under the isolated LOUPE_DATA_DIR
    web.set_manager(mgr)
    yield mgr
    web.set_manager(None)


@pytest.fixture()
def photo(tmp_path: Path, coffee: np.ndarray) -> Path:
    path = tmp_path / "coffee.jpg"
    Image.fromarray(coffee).save(path, quality=95)
    return path


# ----------------------------------------------------------------------------- graph view


def test_graph_svg_marks_head_and_branch():
    from agent.session.state import StateGraph

    base = np.zeros((40, 60, 3), np.uint8)
    graph = StateGraph(base)
    a = graph.add(graph.head, {"operation": "exposure"}, "brighter", [])
    graph.add(a.id, {"operation": "contrast"}, "more contrast", [])
    graph.checkout(a.id)
    b = graph.add(a.id, {"operation": "recolor"}, "cup to blue", [])  # a branch
    svg = graph_view.render_svg(graph)
    ids = re.findall(r'data-node="([^"]+)"', svg)
    assert sorted(ids) == sorted(graph.nodes)
    head = re.search(r'<g class="node head" data-node="([^"]+)"', svg)
    assert head and head.group(1) == b.id
    assert svg.count('class="edge') == len(graph.nodes) - 1
    assert 'width="100%"' in svg and "viewBox=" in svg  # scales to fit its box
    # the branch point has two children drawn side by side (different x)
    xs = {nid: float(x) for nid, x in re.findall(
        r'data-node="([^"]+)"[^>]*>(?:<title>.*?</title>)?(?:<circle[^>]*r="18"[^>]*/>)?'
        r'<circle cx="([0-9.]+)"', svg)}
    kids = graph.children(a.id)
    assert len(kids) == 2 and xs[kids[0]] != xs[kids[1]]


def test_graph_svg_accepts_nested_trees_and_escapes_labels():
    tree = {"id": "root", "label": "start", "visits": 8, "children": [
        {"id": "c1", "label": "<script>alert(1)</script>", "value": 0.5, "children": []},
        {"id": "c2", "label": "warmer", "children": [{"id": "c3", "label": "crop"}]}]}
    svg = graph_view.render_svg(tree, head="c3", title="MCTS tree")
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert set(re.findall(r'data-node="([^"]+)"', svg)) == {"root", "c1", "c2", "c3"}
    assert 'class="node head" data-node="c3"' in svg
    assert "visits 8" in svg
    assert "No states yet" in graph_view.render_svg(None)


# ----------------------------------------------------------------------------- sessions


def test_session_ids_are_validated_and_isolated(manager: web.SessionManager):
    for bad in ("../../etc", "a/b", "", None, "x" * 10, "abc$%^&*()_+abcdefgh"):
        with pytest.raises(web.SessionError):
            manager.get(bad)
    a, b = web.ensure_session(None), web.ensure_session(None)
    assert a != b and web.SESSION_ID_RE.match(a)
    fa, fb = manager.get(a).folder, manager.get(b).folder
    assert fa.parent == fb.parent == manager.root and fa != fb
    assert web.ensure_session("../../etc") not in ("../../etc",)


def test_sessions_expire_after_ttl(manager: web.SessionManager):
    old, fresh = web.ensure_session(None), web.ensure_session(None)
    stamp = manager.get(old).folder / ".access"
    past = time.time() - 2 * 3600
    os.utime(stamp, (past, past))
    removed = manager.sweep()
    assert removed == [old]
    assert not (manager.root / old).exists() and (manager.root / fresh).exists()
    with pytest.raises(web.SessionError):
        manager.get(old, create=False)


def test_mask_from_downscaled_canvas_is_native():
    canvas = np.zeros((100, 150, 4), np.uint8)
    canvas[20:60, 30:90, 3] = 255  # the brush stroke on the 1/4-scale canvas
    mask = web.mask_from_editor({"background": None, "layers": [canvas], "composite": None},
                                (400, 600))
    assert mask.shape == (400, 600) and mask.dtype == bool
    ys, xs = np.nonzero(mask)
    assert abs(ys.min() - 80) <= 2 and abs(ys.max() - 239) <= 2
    assert abs(xs.min() - 120) <= 2 and abs(xs.max() - 359) <= 2
    assert web.mask_from_editor({"layers": [np.zeros((10, 10, 4), np.uint8)]}, (40, 40)) is None
    assert web.mask_from_editor(None, (40, 40)) is None


def test_preview_keeps_small_images_and_shrinks_large():
    small = np.zeros((300, 200, 3), np.uint8)
    assert web.preview(small) is small
    big = np.zeros((3000, 4000, 3), np.uint8)
    assert web.preview(big, 1600).shape == (1200, 1600, 3)
    assert max(web.preview(big).shape[:2]) == get_settings().preview_side


def test_bad_upload_gives_a_clear_message(manager, tmp_path: Path):
    sid = web.ensure_session(None)
    bad = tmp_path / "notes.png"
    bad.write_text("this is not an image")
    with pytest.raises(web.SessionError) as err:
        web.open_image(sid, bad, "notes.png")
    assert "image" in str(err.value).lower()
    assert not web.get_view(sid).size  # nothing half-created
    with pytest.raises(web.SessionError):
        web.edit_turn(sid, "make it warmer")


def test_open_restores_after_restart(manager, photo: Path):
    sid = web.ensure_session(None)
    view = web.open_image(sid, photo, "coffee.jpg")
    assert view.size == (600, 400) and view.head == "n0"
    ui = json.loads((manager.root / sid / "ui.json").read_text())
    assert ui["filename"] == "coffee.jpg"
    web.set_manager(web.SessionManager(manager.root))  # a server restart
    again = web.get_view(sid)
    assert again.size == (600, 400) and again.head == "n0"
    np.testing.assert_array_equal(again.image, view.image)
    assert 'data-node="n0"' in again.graph_svg


def test_status_line_says_every_role_in_plain_words(manager):
    line = web.status_line(None)
    for words in ("understands requests", "finds things", "edits with", "checks every result"):
        assert words in line
    assert "cannot" in line  # what the embedded default cannot do
    for jargon in ("planner", "critic", "localiser", "classical", "embedded", "**"):
        assert jargon not in line


def test_parse_bbox():
    assert web.parse_bbox("1, 2, 30, 40") == (1, 2, 30, 40)
    assert web.parse_bbox("") is None
    for bad in ("1,2,3", "a,b,c,d", "10,10,5,20"):
        with pytest.raises(web.SessionError):
            web.parse_bbox(bad)


# ----------------------------------------------------------------------------- the Blocks


def test_app_builds_with_every_endpoint(manager):
    import app

    demo = app.build_app()
    tools = {"new_session", "edit", "crop", "undo", "redo", "checkout", "graph", "download",
             "export_session", "import_session", "autopilot", "accept_autopilot_suggestion",
             "score", "benchmark",
             "share_link", "revoke_share", "review_comments", "resolve_comment",
             "delete_comment", "batch", "batch_status", "batch_cancel"}
    # the documented (and MCP) endpoints answer in JSON; the tuple-shaped ones scripts use
    # keep their names, callable but undocumented
    selection = {"select", "clear_selection", "choose_region"}   # JSON tools only (issue 24)
    assert set(demo.get_api_info()["named_endpoints"]) == {f"/{t}_json"
                                                          for t in tools | selection}
    every = set(demo.get_api_info(all_endpoints=True)["named_endpoints"])
    assert {f"/{t}" for t in tools} - {"/review_comments", "/resolve_comment",
                                        "/delete_comment"} <= every  # JSON-only tools
    api_names = {fn.api_name for fn in demo.fns.values()}
    for ui in ("ui_open", "ui_edit", "ui_undo", "ui_redo", "ui_checkout", "ui_download",
               "ui_export", "ui_import", "ui_autopilot", "ui_autopilot_cancel",
               "ui_send_to_edit", "ui_score", "ui_benchmark", "ui_example", "ui_brush",
               "ui_compare", "ui_sessions", "ui_share", "ui_revoke", "ui_links",
               "ui_photo_click", "ui_clear_selection", "ui_batch_start", "ui_batch_poll",
               "ui_batch_cancel"):
        assert ui in api_names
    assert all(fn.api_name for fn in demo.fns.values() if fn.fn is not None)


# ----------------------------------------------------------------------------- edit cycle


def _jpeg_with_metadata(path: Path, pixels: np.ndarray) -> Path:
    from PIL import ImageCms

    exif = Image.Exif()
    exif[0x010F] = "LoupeTestCam"  # Make
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    Image.fromarray(pixels).save(path, quality=95, exif=exif.tobytes(), icc_profile=icc)
    return path


def test_edit_undo_branch_checkout_download_export(manager, tmp_path: Path,
                                                    astronaut: np.ndarray):
    src = _jpeg_with_metadata(tmp_path / "astronaut.jpg", astronaut)
    sid = web.ensure_session(None)
    opened = web.open_image(sid, src, "astronaut.jpg")
    original = opened.image.astype(float)

    view, result = web.edit_turn(sid, "make it brighter")
    assert result["ok"] and view.head == result["head"] != "n0"
    assert view.image.astype(float).mean() > original.mean() + 3
    np.testing.assert_array_equal(view.before, opened.image)  # previous state: the parent
    np.testing.assert_array_equal(view.original, opened.image)
    titles = [m.get("metadata", {}).get("title", "") for m in view.chat]
    assert view.chat[0] == {"role": "user", "content": "make it brighter"}
    assert view.chat[1]["content"].startswith("**Plan**\n1. Brighten the whole photo")
    assert any(t.startswith("Attempt 1") and "/10" in t for t in titles)
    brighter = view.head

    undone = web.undo(sid)
    assert undone.head == "n0"
    np.testing.assert_array_equal(undone.image, opened.image)
    _, warmer = web.edit_turn(sid, "make it warmer")  # from n0: a branch
    graph = web.graph_json(sid)
    children = [n["id"] for n in graph["nodes"] if n["parent"] == "n0"]
    assert sorted(children) == sorted([brighter, warmer["head"]])
    svg = web.get_view(sid).graph_svg
    assert svg.count("data-node=") == 3 and f'class="node head" data-node="{warmer["head"]}"' in svg

    back = web.checkout(sid, brighter)
    assert back.head == brighter and back.image.astype(float).mean() > original.mean() + 3
    with pytest.raises(web.SessionError):
        web.checkout(sid, "n999")

    out = web.download(sid)
    with Image.open(out) as im:
        assert im.size == (512, 512) and im.format == "JPEG"
        assert im.info.get("icc_profile") and im.getexif().get(0x010F) == "LoupeTestCam"

    archive = web.export_archive(sid)
    other = web.ensure_session(None)
    imported = web.import_archive(other, archive)
    assert imported.head == brighter
    assert {n["id"] for n in web.graph_json(other)["nodes"]} == {n["id"] for n in graph["nodes"]}
    np.testing.assert_array_equal(imported.image, back.image)


def test_refused_and_failing_turns_leave_the_session_usable(manager, photo: Path):
    sid = web.ensure_session(None)
    web.open_image(sid, photo, "coffee.jpg")
    with pytest.raises(web.SessionError):
        web.edit_turn(sid, "   ")
    with pytest.raises(web.SessionError):
        web.edit_turn(sid, "x" * 5000)
    wrong = np.ones((10, 10), bool)  # a mask of the wrong size is refused with a message
    with pytest.raises(web.SessionError):
        web.edit_turn(sid, "make it warmer", wrong)
    view, result = web.edit_turn(sid, "make it warmer")
    assert result["ok"] and view.head != "n0"


def test_dataset_archive_unpacking_is_safe(tmp_path: Path):
    import zipfile

    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("ok/session.json", "{}")
        zf.writestr("../../escape.txt", "boom")
    with pytest.raises(web.SessionError, match="Unsafe"):
        web.unpack_dataset(evil, tmp_path / "out")
    assert not (tmp_path.parent / "escape.txt").exists()
    (tmp_path / "notzip.zip").write_text("nope")
    with pytest.raises(web.SessionError, match="zip"):
        web.unpack_dataset(tmp_path / "notzip.zip", tmp_path / "out2")


def test_autopilot_cancel_stops_early(manager, chelsea: np.ndarray):
    sid = web.ensure_session(None)
    seen: list[str] = []

    def progress(fraction: float, text: str) -> None:
        seen.append(text)
        if len(seen) == 2:
            web.cancel_autopilot(sid)

    view = web.run_autopilot(sid, chelsea, iterations=5, simulations=50, depth=2, top_k=2,
                             progress=progress)
    assert view.summary["cancelled"] is True
    assert 2 <= len(seen) < 10  # stopped long before 250 simulations
    assert view.slider[1].shape == chelsea.shape


def test_bundled_examples_work_on_the_embedded_default(manager):
    import app

    total = sum(p.stat().st_size for p in app.ASSETS.iterdir())
    assert total < 8 * 1024 ** 2
    sizes = []
    for path, instruction in app.EXAMPLES:
        sid = web.ensure_session(None)
        opened = web.open_image(sid, path)
        view, result = web.edit_turn(sid, instruction)
        assert result["ok"], (path, instruction, result["message"])
        assert view.head != "n0" and not np.array_equal(view.image, opened.image)
        sizes.append(view.size)
    assert (3840, 2160) in sizes  # the rendered 4K scene


def test_tree_search_turn_draws_its_topology(manager, coffee: np.ndarray):
    sid = web.ensure_session(None)
    web.open_image(sid, coffee)
    view, result = web.edit_turn(sid, "make it warmer, then increase the contrast",
                                 search="tree")
    assert result["ok"] and view.head != "n0"
    svg = result["topology_svg"]
    topology = result["extra"]["topology"]
    assert svg.count("data-node=") == len(topology["nodes"]) >= 2
    assert f'class="node head" data-node="{topology["best"]}"' in svg
    assert "make it warmer" in svg


def test_idle_sessions_are_closed_in_memory_and_reopen_from_disk(manager, chelsea: np.ndarray):
    manager.max_open = 2
    ids = [web.ensure_session(None) for _ in range(4)]
    for sid in ids:
        web.open_image(sid, chelsea)
    loaded = [sid for sid in ids if manager.get(sid, create=False)._edit is not None]
    assert len(loaded) <= 2
    view, result = web.edit_turn(ids[0], "make it warmer")  # reopened from its folder
    assert result["ok"] and view.head != "n0"


def test_autopilot_send_to_edit_lands_each_step(manager, tmp_path: Path, chelsea: np.ndarray):
    src = tmp_path / "cat.png"
    Image.fromarray((chelsea * 0.5).astype(np.uint8)).save(src)   # something to fix
    sid = web.ensure_session(None)
    run = web.run_autopilot(sid, str(src), iterations=2, simulations=4, depth=1, top_k=2)
    assert run.summary["score_after"] >= run.summary["score_before"]
    if not run.rows:
        pytest.skip("autopilot kept no step on this photo")
    view = web.send_autopilot_to_edit(sid)
    graph = web.graph_json(sid)
    assert len(graph["nodes"]) == 1 + len(run.rows)
    assert graph["nodes"][0]["description"].endswith("cat.png")
    assert all(n["description"].startswith("Autopilot") for n in graph["nodes"][1:])
    np.testing.assert_array_equal(view.image, run.slider[1])  # the same final pixels
    assert web.undo(sid).head == graph["nodes"][-2]["id"]


def test_status_line_names_a_configured_generative_editor(monkeypatch):
    import web
    from pipelines.models import get_manager
    from tests.tiny_models import tiny_model_dir

    assert "instruct-pix2pix" not in web.status_line(None)
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("ip2p")))
    try:
        line = web.status_line(None)
    finally:
        get_manager().unload_all()
    assert "instruct-pix2pix" in line, line
