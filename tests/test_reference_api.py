"""Issue 35 over the API and MCP: ``reference`` is the last optional argument of ``/edit``
(tuple form; 4-argument calls still work: ``ui.api.ApiBlocks`` fills in what they leave
out), of ``/edit_json`` and the MCP ``edit`` tool, and
of the MCP ``batch`` tool; hostile references are refused in plain words, nothing changed.
Real photos (``eval.photos``) at ≤ 256 px."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

gradio_client = pytest.importorskip("gradio_client")
pytest.importorskip("mcp")
from gradio_client import Client, handle_file  # noqa: E402

from eval.look import look_distance  # noqa: E402
from eval.photos import load_photo  # noqa: E402
from tests.serving import served_app  # noqa: E402
from tests.test_mcp import _data_url, _error, _finished_batch, _json, _run  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("ref-api-data")
    with served_app(data) as url:
        yield url.rstrip("/"), data


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ref-api-files")
    out = {}
    for name in ("china", "rocket"):
        out[name] = folder / f"{name}.png"
        Image.fromarray(load_photo(name, 256)).save(out[name])
    out["evil"] = folder / "evil.png"
    out["evil"].write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    return out


def _pixels(path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def test_edit_json_takes_a_reference_as_its_last_argument(served, files):
    client = Client(served[0], verbose=False)
    sid, _ = client.predict(handle_file(str(files["china"])), api_name="/new_session")
    _, old = client.predict(sid, "make it brighter", None, False, api_name="/edit")
    assert old["ok"]   # the tuple endpoint keeps the 4-argument shape scripts use
    four = json.loads(client.predict(sid, "make it darker", None, False, api_name="/edit_json"))
    assert four["ok"]  # so does the JSON one without a reference
    half = json.loads(client.predict(sid, "make it look halfway like the reference", None,
                                     False, handle_file(str(files["rocket"])),
                                     api_name="/edit_json"))
    assert half["ok"], half["message"]
    assert half["steps"][0]["action"]["params"]["strength"] == 0.5
    assert half["steps"][0]["action"]["params"]["reference"] == "ref1"
    # the same file again is the same reference 1
    answer = json.loads(client.predict(sid, "make it look like the reference", None, False,
                                       handle_file(str(files["rocket"])),
                                       api_name="/edit_json"))
    assert answer["ok"], answer["message"]
    assert answer["steps"][0]["action"]["params"]["reference"] == "ref1"
    image = _pixels(io.BytesIO(urllib.request.urlopen(answer["image_url"], timeout=60).read()))
    rocket = load_photo("rocket", 256)
    assert look_distance(image, rocket).total <= \
        0.5 * look_distance(load_photo("china", 256), rocket).total
    with pytest.raises(Exception, match="evil.png"):
        client.predict(sid, "make it look like the reference", None, False,
                       handle_file(str(files["evil"])), api_name="/edit_json")
    graph = client.predict(sid, api_name="/graph")
    assert graph["head"] == answer["head"]


def test_tuple_edit_takes_a_reference_as_its_fifth_argument(served, files):
    client = Client(served[0], verbose=False)
    sid, _ = client.predict(handle_file(str(files["china"])), api_name="/new_session")
    image, result = client.predict(sid, "make it look like the reference", None, False,
                                   handle_file(str(files["rocket"])), api_name="/edit")
    assert result["ok"], result["message"]
    assert result["steps"][0]["action"]["params"]["reference"] == "ref1"
    rocket = load_photo("rocket", 256)
    assert look_distance(_pixels(image), rocket).total <= \
        0.5 * look_distance(load_photo("china", 256), rocket).total
    # old calls: 4 arguments, and the 2 required ones alone (the server fills in the rest)
    _, four = client.predict(sid, "make it brighter", None, False, api_name="/edit")
    assert four["ok"] and four["head"] != result["head"]
    _, two = client.predict(sid, "make it darker", api_name="/edit")
    assert two["ok"] and two["head"] != four["head"]
    with pytest.raises(Exception, match="input values"):   # a required one is still required
        client.predict(sid, api_name="/edit")
    with pytest.raises(Exception, match="evil.png"):
        client.predict(sid, "make it look like the reference", None, False,
                       handle_file(str(files["evil"])), api_name="/edit")
    assert client.predict(sid, api_name="/graph")["head"] == two["head"]   # nothing changed
    assert "/edit" not in client.view_api(print_info=False, return_format="dict")[
        "named_endpoints"]   # still undocumented: not an MCP tool beside the JSON edit


def test_the_review_page_shows_the_reference_an_edit_used(served, files):
    client = Client(served[0], verbose=False)
    sid, _ = client.predict(handle_file(str(files["china"])), api_name="/new_session")
    _, result = client.predict(sid, "make it look like the reference", None, False,
                               handle_file(str(files["rocket"])), api_name="/edit")
    assert result["ok"], result["message"]
    url = client.predict(sid, api_name="/share_link")
    page = urllib.request.urlopen(url, timeout=60).read().decode()
    picture = f'src="{urllib.parse.urlparse(url).path}/reference/ref1"'
    assert page.count(picture) == 2   # beside the state it made, and in the chat
    assert "This state matches the look of reference 1 (rocket.png)" in page
    shown = _pixels(io.BytesIO(urllib.request.urlopen(f"{url}/reference/ref1",
                                                      timeout=60).read()))
    rocket = load_photo("rocket", shown.shape[1])
    assert shown.shape == rocket.shape and look_distance(shown, rocket).total < \
        0.2 * look_distance(load_photo("china", shown.shape[1]), rocket).total
    original = urllib.request.urlopen(f"{url}?state=n0", timeout=60).read().decode()
    assert "This state matches" not in original and original.count(picture) == 1  # the chat
    with pytest.raises(urllib.error.HTTPError, match="404"):
        urllib.request.urlopen(f"{url}/reference/ref2", timeout=60)


def test_mcp_edit_autopilot_and_batch_take_a_reference(served):
    url, data_dir = served
    china, rocket = load_photo("china", 200), load_photo("rocket", 200)
    evil = "data:image/png;base64,aGVsbG8gd29ybGQ="   # "hello world", labelled a PNG

    async def script(session) -> dict:
        opened = _json(await session.call_tool("new_session", {"image": _data_url(china)}),
                       "new_session", data_dir)
        sid = opened["session_id"]
        refused = await session.call_tool("edit", {
            "session_id": sid, "instruction": "make it look like the reference",
            "reference": evil})
        graph = _json(await session.call_tool("graph", {"session_id": sid}), "graph",
                      data_dir)
        edited = _json(await session.call_tool("edit", {
            "session_id": sid, "instruction": "make it look like the reference",
            "reference": _data_url(rocket)}), "edit", data_dir)
        auto = _json(await session.call_tool("autopilot", {
            "image": _data_url(china), "reference": _data_url(rocket)}), "autopilot",
            data_dir)
        bad_batch = await session.call_tool("batch", {
            "archive": _data_url(china), "instruction": "match the look of the reference",
            "reference": evil})
        started = _json(await session.call_tool("batch", {
            "archive": _data_url(china), "instruction": "match the look of the reference",
            "reference": _data_url(rocket)}), "batch", data_dir)
        status = await _finished_batch(session, started["job_id"], data_dir, tries=240)
        return {"refused": refused, "graph": graph, "edited": edited, "auto": auto,
                "bad_batch": bad_batch, "status": status}

    got = _run(url, script)
    assert "reference" in _error(got["refused"], data_dir)
    assert got["graph"]["head"] == "n0" and len(got["graph"]["nodes"]) == 1
    assert got["edited"]["ok"] and got["edited"]["changed"]
    assert got["edited"]["steps"][0]["action"]["params"]["reference"] == "ref1"
    assert got["auto"]["steps"] and "reference" in got["auto"]["reason"]   # in the mood's place
    assert "reference" in _error(got["bad_batch"], data_dir)
    assert got["status"]["state"] == "done" and got["status"]["done"] == 1, got["status"]
