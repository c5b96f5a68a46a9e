"""Candidates to click and click-to-select through the API (gradio_client against the app
served on localhost; the JSON tools ``/select_json``, ``/clear_selection_json`` and
``/choose_region_json``, which are also the MCP tools) and the command line (issue 24).

The photo is the held-out two-cup composite of ``tests/critic_pairs.py``: two copies of
the scikit-image coffee cup pasted at known places on the cat photo, so which pixels
belong to which cup is known exactly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

gradio_client = pytest.importorskip("gradio_client")
from gradio_client import Client, handle_file  # noqa: E402
from gradio_client.exceptions import AppError  # noqa: E402

from tests.critic_pairs import _two_cups  # noqa: E402
from tests.serving import served_app  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with served_app(tmp_path_factory.mktemp("api-select-data")) as url:
        yield Client(url, verbose=False)


@pytest.fixture(scope="module")
def cups(tmp_path_factory: pytest.TempPathFactory):
    image, left, right = _two_cups("chelsea")
    path = tmp_path_factory.mktemp("cups") / "cups.png"
    Image.fromarray(image).save(path)
    return path, image, left, right


def _pixels(path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def _centre(mask: np.ndarray) -> tuple[int, int]:
    ys, xs = np.nonzero(mask)
    return int(xs.mean()), int(ys.mean())


def _changed(client: Client, sid: str, before: np.ndarray) -> np.ndarray:
    full = client.predict(sid, api_name="/download")
    return np.any(_pixels(full) != before, axis=2)


def test_an_unsure_edit_lists_candidates_and_choose_region_runs_it_on_one(client, cups):
    path, image, left, right = cups
    sid, _ = client.predict(handle_file(str(path)), api_name="/new_session")
    _, result = client.predict(sid, "make the cup blue", None, False, api_name="/edit")
    assert not result["ok"] and result["head"] == "n0"          # nothing changed yet
    cands = result["candidates"]
    assert len(cands) == 2 and {c["label"] for c in cands} == {"cup"}
    assert set(cands[0]) == {"id", "label", "score", "box"}
    pick = next(c for c in cands if c["box"][0] < image.shape[1] / 2)   # the left one
    chosen = json.loads(client.predict(sid, pick["id"], api_name="/choose_region_json"))
    assert chosen["ok"] and chosen["head"] != "n0"
    changed = _changed(client, sid, image)
    assert (changed & left).sum() > 0.8 * left.sum()
    assert not (changed & right).any()
    with pytest.raises(AppError, match="(?i)no candidate|no candidates"):
        client.predict(sid, "7", api_name="/choose_region_json")


def test_select_then_this_changes_that_object_only(client, cups):
    path, image, left, right = cups
    sid, _ = client.predict(handle_file(str(path)), api_name="/new_session")
    x, y = _centre(right)
    picked = json.loads(client.predict(sid, x, y, False, api_name="/select_json"))
    sel = picked["selection"]
    assert picked["session_id"] == sid and sel["label"] == "cup" and sel["parts"] == 1
    x0, y0, x1, y1 = sel["box"]
    assert x0 > image.shape[1] / 2 - 20 and x0 <= x <= x1 and y0 <= y <= y1
    _, result = client.predict(sid, "make this red", None, False, api_name="/edit")
    assert result["ok"]
    changed = _changed(client, sid, image)
    assert (changed & right).sum() > 0.8 * right.sum()
    assert not (changed & left).any()


def test_add_to_selection_and_clear_selection(client, cups):
    path, image, left, right = cups
    sid, _ = client.predict(handle_file(str(path)), api_name="/new_session")
    one = json.loads(client.predict(sid, *_centre(left), False,
                                    api_name="/select_json"))["selection"]
    both = json.loads(client.predict(sid, *_centre(right), True,
                                     api_name="/select_json"))["selection"]
    assert both["parts"] == 2 and both["area"] > 1.8 * one["area"]
    _, result = client.predict(sid, "make it darker", None, False, api_name="/edit")
    changed = _changed(client, sid, image)
    assert result["ok"] and (changed & left).any() and (changed & right).any()
    assert not changed[:, :40].any()                         # the rest is untouched
    cleared = json.loads(client.predict(sid, api_name="/clear_selection_json"))
    assert cleared["selection"] is None and cleared["session_id"] == sid
    head = cleared["head"]
    _, result = client.predict(sid, "make the whole photo brighter", None, False,
                               api_name="/edit")
    assert result["ok"] and result["head"] != head
    assert _changed(client, sid, image)[:, :40].any()        # not bound to the old selection


def test_select_refuses_a_point_outside_the_photo(client, cups):
    path, image, _, _ = cups
    sid, _ = client.predict(handle_file(str(path)), api_name="/new_session")
    with pytest.raises(AppError, match="outside"):
        client.predict(sid, image.shape[1] + 5, 10, False, api_name="/select_json")


def test_cli_choose_and_point(cups, tmp_path: Path, capsys):
    from agent.__main__ import main

    path, image, left, right = cups
    out = tmp_path / "chosen.png"
    code = main(["edit", str(path), "make the cup blue", "--choose", "1",
                 "--session", str(tmp_path / "s1"), "--out", str(out)])
    said = capsys.readouterr().out
    assert code == 0 and "candidates: 1." in said
    changed = np.any(_pixels(out) != image, axis=2)
    assert (changed & left).any() != (changed & right).any()   # exactly one cup changed
    out2 = tmp_path / "pointed.png"
    point = ",".join(map(str, _centre(left)))
    code = main(["edit", str(path), "make it brighter", "--point", point,
                 "--session", str(tmp_path / "s2"), "--out", str(out2)])
    assert code == 0 and "selected: cup" in capsys.readouterr().out
    changed = np.any(_pixels(out2) != image, axis=2)
    assert (changed & left).sum() > 0.8 * left.sum() and not (changed & right).any()
