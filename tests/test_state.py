"""State graph: layers of changed pixels, replay, undo/redo/branch, cache bounds, files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.session.state import StateGraph
from agent.session.store import (
    ImageCache,
    LayerDraft,
    StateError,
    StoredLayer,
    decode_png,
    diff_layer,
    encode_png,
    split_layer,
)


def _edit(image: np.ndarray, box: tuple[int, int, int, int], value: int) -> np.ndarray:
    out = image.copy()
    x0, y0, x1, y1 = box
    out[y0:y1, x0:x1] = value
    return out


def _add(graph: StateGraph, after: np.ndarray, parent: str | None = None, text: str = "edit"):
    before = graph.image(parent)
    layer = diff_layer(before, after)
    return graph.add(parent, {"kind": "adjust"}, text, [layer] if layer else [])


def test_diff_layer_stores_only_changed_pixels(astronaut):
    after = _edit(astronaut, (100, 120, 140, 150), 7)
    layer = diff_layer(astronaut, after)
    assert layer.bbox == (100, 120, 140, 150)
    assert layer.patch.shape == (30, 40, 3)
    assert layer.mask.all()
    rebuilt = astronaut.copy()
    layer.apply(rebuilt)
    assert np.array_equal(rebuilt, after)
    assert diff_layer(astronaut, astronaut.copy()) is None


def test_diff_layer_keeps_unchanged_pixels_inside_box(astronaut):
    after = astronaut.copy()
    after[10, 10] = 0
    after[50, 60] = 255
    layer = diff_layer(astronaut, after)
    assert layer.bbox == (10, 10, 61, 51)
    assert layer.mask.sum() == 2
    rebuilt = astronaut.copy()
    layer.apply(rebuilt)
    assert np.array_equal(rebuilt, after)


def test_replay_undo_redo_and_branch(astronaut):
    graph = StateGraph(astronaut)
    a = _edit(astronaut, (0, 0, 50, 50), 10)
    n1 = _add(graph, a, text="dark corner")
    b = _edit(a, (200, 200, 260, 260), 250)
    n2 = _add(graph, b, text="white square")
    assert graph.head == n2.id and graph.path() == ["n0", n1.id, n2.id]
    graph.cache.clear()
    assert np.array_equal(graph.image(), b)
    assert graph.undo() == n1.id
    assert np.array_equal(graph.image(), a)
    assert graph.redo() == n2.id
    graph.undo()
    c = _edit(a, (300, 10, 400, 80), 128)
    n3 = _add(graph, c, text="grey bar")  # from a non-leaf → a branch
    assert graph.children(n1.id) == [n2.id, n3.id]
    assert set(graph.nodes) == {"n0", n1.id, n2.id, n3.id}  # nothing deleted
    graph.cache.clear()
    assert np.array_equal(graph.image(n2.id), b)
    assert np.array_equal(graph.image(n3.id), c)
    assert np.array_equal(graph.image("n0"), astronaut)
    graph.undo()
    assert graph.redo() == n3.id  # redo returns to the branch we came from


def test_undo_at_root_and_unknown_node_are_clear_errors(astronaut):
    graph = StateGraph(astronaut)
    with pytest.raises(StateError, match="nothing to undo"):
        graph.undo()
    with pytest.raises(StateError, match="nothing to redo"):
        graph.redo()
    with pytest.raises(StateError, match="no state 'n9'"):
        graph.checkout("n9")


def test_images_are_read_only(astronaut):
    graph = StateGraph(astronaut)
    _add(graph, _edit(astronaut, (0, 0, 8, 8), 1))
    with pytest.raises(ValueError):
        graph.image()[0, 0, 0] = 5


def test_cache_is_bounded_in_bytes():
    cache = ImageCache(max_bytes=250)
    for i in range(5):
        cache.put(f"k{i}", np.zeros(100, np.uint8))
    assert cache.bytes <= 250 and "k4" in cache and "k0" not in cache
    cache.put("big", np.zeros(1000, np.uint8))  # the newest entry stays even if too big
    assert "big" in cache and cache.bytes == 1000


def test_cache_budget_holds_with_many_states(coffee):
    graph = StateGraph(coffee, cache_bytes=2 * coffee.nbytes)
    image = coffee
    for i in range(8):
        image = _edit(image, (i * 20, 10, i * 20 + 15, 40), i * 30)
        _add(graph, image)
        graph.image()
    assert graph.cache.bytes <= 2 * coffee.nbytes
    graph.cache.clear()
    assert np.array_equal(graph.image(), image)


def test_png_round_trip_rgb_rgba_mask(astronaut, tmp_path):
    rgba = np.dstack([astronaut[:40, :50], np.full((40, 50), 77, np.uint8)])
    for arr in (astronaut[:40, :50], rgba):
        for dense in (False, True):   # run-length or Huffman-only coding: both lossless
            (tmp_path / "x.png").write_bytes(encode_png(arr, dense=dense))
            assert np.array_equal(decode_png(tmp_path / "x.png"), arr)
    mask = astronaut[:40, :50, 0] > 100
    (tmp_path / "m.png").write_bytes(encode_png(mask))
    assert np.array_equal(decode_png(tmp_path / "m.png", mask=True), mask)


def test_persisted_graph_reloads_lazily(astronaut, tmp_path):
    graph = StateGraph(astronaut)
    a = _edit(astronaut, (5, 5, 60, 70), 33)
    _add(graph, a)
    b = _edit(a, (100, 100, 180, 150), 200)
    _add(graph, b)
    graph.persist_layers(tmp_path)
    assert graph.stored_bytes() == 0  # pixels now live only on disk
    assert sorted(p.name for p in (tmp_path / "layers").iterdir()) == [
        "n1-0-mask.png", "n1-0-patch.png", "n2-0-mask.png", "n2-0-patch.png"]
    data = json.loads(json.dumps(graph.to_json()))
    again = StateGraph.from_json(data, astronaut, tmp_path)
    assert again.head == graph.head and list(again.nodes) == list(graph.nodes)
    assert np.array_equal(again.image(), b)
    assert np.array_equal(again.image("n1"), a)


def test_from_json_rejects_bad_versions_and_paths(astronaut, tmp_path):
    graph = StateGraph(astronaut)
    _add(graph, _edit(astronaut, (0, 0, 10, 10), 3))
    graph.persist_layers(tmp_path)
    data = graph.to_json()
    with pytest.raises(StateError, match="unknown session graph version 99"):
        StateGraph.from_json(data | {"version": 99}, astronaut, tmp_path)
    bad = json.loads(json.dumps(data))
    bad["nodes"][1]["layers"][0]["patch"] = "../../etc/passwd"
    with pytest.raises(StateError, match="outside"):
        StateGraph.from_json(bad, astronaut, tmp_path)
    with pytest.raises(StateError, match="expects"):
        StateGraph.from_json(data, astronaut[:100], tmp_path)


def test_layer_outside_image_is_refused(astronaut):
    graph = StateGraph(astronaut)
    layer = StoredLayer(bbox=(500, 500, 600, 600), _patch=np.zeros((100, 100, 3), np.uint8),
                        _mask=np.ones((100, 100), bool))
    with pytest.raises(StateError, match="outside"):
        graph.add(None, None, "bad", [layer])


def test_images_held_by_callers_never_change_under_them(coffee):
    graph = StateGraph(coffee, cache_bytes=coffee.nbytes)  # room for one frame only
    a = _edit(coffee, (0, 0, 40, 40), 9)
    _add(graph, a)
    held = graph.image()
    view = graph.image()[10:20]
    b = _edit(a, (100, 100, 150, 150), 99)
    _add(graph, b)
    graph.cache.clear()
    graph.cache.put("n1", np.array(a))  # only n1 cached; n2 replays from it
    held = graph.image("n1")
    assert np.array_equal(graph.image("n2"), b)
    assert np.array_equal(held, a) and np.array_equal(view, a[10:20])
    del held
    assert np.array_equal(graph.image("n1"), a)  # n1 is rebuilt when it was taken over
    c = _edit(b, (200, 200, 210, 210), 1)
    _add(graph, c)
    graph.cache.clear()
    graph.cache.put("n2", np.array(b))
    assert np.array_equal(graph.image("n3"), c)  # buffer reused: nobody else held n2
    assert "n2" not in graph.cache and np.array_equal(graph.image("n2"), b)


def test_large_layers_split_into_bands_that_replay_exactly(tmp_path):
    rng = np.random.default_rng(3)
    before = rng.integers(0, 255, (900, 1200, 3), np.uint8)
    after = before.copy()
    after[100:850, 50:1150] = 255 - after[100:850, 50:1150]
    after[400:420] = before[400:420]  # an unchanged stripe inside the box
    layer = diff_layer(before, after)
    bands = split_layer(layer, max_pixels=200_000)
    assert len(bands) > 3 and all(b.area <= 200_000 for b in bands)
    graph = StateGraph(before)
    graph.add(None, None, "invert", bands)
    graph.persist_layers(tmp_path)  # bands are encoded in parallel
    graph.cache.clear()
    assert np.array_equal(graph.image(), after)
    assert split_layer(layer, max_pixels=10**9) == [layer]



@pytest.mark.parametrize("cancel", [False, True])
def test_a_layer_drafted_beside_the_critic_writes_the_files_the_plain_path_writes(
        astronaut, tmp_path, cancel):
    """The draft (diff, bands, PNG bytes made on background threads) stores the very layer
    and files ``diff_layer`` + ``split_layer`` + ``persist`` make; with its encodings
    cancelled half-way, ``persist`` encodes what is missing itself."""
    rng = np.random.default_rng(3)
    before = np.ascontiguousarray(np.tile(astronaut, (3, 4, 1)))   # 1536 x 2048: 2 bands
    after = before.copy()
    after[50:1390, 20:1900] = rng.integers(0, 256, (1340, 1880, 3), dtype=np.uint8)
    draft = LayerDraft(before, after, (30, 40))
    bands = draft.bands()
    if cancel:
        draft.cancel()
    plain = split_layer(diff_layer(before, after, offset=(30, 40)))
    assert draft.layer().bbox == (50, 90, 1930, 1430) and len(plain) == 2
    assert [b.bbox for b in bands] == [b.bbox for b in plain]
    for i, (mine, theirs) in enumerate(zip(bands, plain)):
        mine.persist(tmp_path / "draft", f"n{i}")
        theirs.persist(tmp_path / "plain", f"n{i}")
        for name in (mine.patch_file, mine.mask_file):
            assert (tmp_path / "draft" / name).read_bytes() == \
                (tmp_path / "plain" / name).read_bytes()
        assert np.array_equal(mine.patch, theirs.patch) and np.array_equal(mine.mask,
                                                                           theirs.mask)
