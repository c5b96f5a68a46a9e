"""Every API endpoint through gradio_client, against the app served on localhost: the
tuple-shaped endpoints scripts already use (``/edit`` …) and the JSON ones (``/edit_json``
…, the same functions the MCP tools are)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

gradio_client = pytest.importorskip("gradio_client")
from gradio_client import Client, handle_file  # noqa: E402

from tests.serving import served_app  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with served_app(tmp_path_factory.mktemp("api-data")) as url:
        yield Client(url, verbose=False)


@pytest.fixture()
def photo(tmp_path: Path, astronaut: np.ndarray) -> Path:
    path = tmp_path / "astronaut.png"
    Image.fromarray(astronaut).save(path)
    return path


def _pixels(path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def test_edit_undo_redo_checkout_graph_download(client: Client, photo: Path):
    sid, info = client.predict(handle_file(str(photo)), api_name="/new_session")
    assert info["width"] == 512 and info["height"] == 512 and info["head"] == "n0"

    image, result = client.predict(sid, "make it brighter", None, False, api_name="/edit")
    assert result["ok"] and result["head"] != "n0"
    edited = _pixels(image)
    assert edited.mean() > _pixels(str(photo)).mean() + 3

    image, info = client.predict(sid, api_name="/undo")
    assert info["head"] == "n0"
    np.testing.assert_array_equal(_pixels(image), _pixels(str(photo)))
    _, info = client.predict(sid, api_name="/redo")
    assert info["head"] == result["head"]
    _, info = client.predict(sid, "n0", api_name="/checkout")
    assert info["head"] == "n0"

    graph = client.predict(sid, api_name="/graph")
    assert graph["head"] == "n0" and {n["id"] for n in graph["nodes"]} == {"n0", result["head"]}

    client.predict(sid, result["head"], api_name="/checkout")
    full = client.predict(sid, api_name="/download")
    assert Path(full).suffix == ".png"
    np.testing.assert_array_equal(_pixels(full), edited)  # full resolution, lossless PNG


def test_masked_edit_leaves_the_rest_untouched(client: Client, photo: Path, tmp_path: Path):
    sid, _ = client.predict(handle_file(str(photo)), api_name="/new_session")
    mask = np.zeros((128, 128), np.uint8)  # any size: scaled to the photo
    mask[:, :48] = 255                       # the left ~3/8 of the picture
    Image.fromarray(mask).save(tmp_path / "mask.png")
    image, result = client.predict(sid, "make it brighter", handle_file(str(tmp_path / "mask.png")),
                                   False, api_name="/edit")
    assert result["ok"]
    after, before = _pixels(image).astype(int), _pixels(str(photo)).astype(int)
    assert (after[:, :150] - before[:, :150]).mean() > 3
    np.testing.assert_array_equal(after[:, 300:], before[:, 300:])


def test_export_and_import_session(client: Client, photo: Path):
    sid, _ = client.predict(handle_file(str(photo)), api_name="/new_session")
    _, result = client.predict(sid, "make it warmer", None, False, api_name="/edit")
    archive = client.predict(sid, api_name="/export_session")
    new_sid, info = client.predict(handle_file(archive), api_name="/import_session")
    assert new_sid != sid and info["head"] == result["head"]


def test_autopilot_endpoint(client: Client):
    from skimage import data

    path = Path(client.output_dir) / "chelsea-in.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(data.chelsea()).save(path)
    image, summary = client.predict(handle_file(str(path)), "", 1, 4, 1, 2, 0,
                                    api_name="/autopilot")
    assert _pixels(image).shape == (300, 451, 3)
    assert summary["score_after"] >= summary["score_before"]
    assert isinstance(summary["steps"], list)


def test_score_endpoint(client: Client, photo: Path, tmp_path: Path, astronaut: np.ndarray):
    after = astronaut.copy()
    after[100:200, 100:200] = 255 - after[100:200, 100:200]
    Image.fromarray(after).save(tmp_path / "after.png")
    scores = client.predict(handle_file(str(photo)), handle_file(str(tmp_path / "after.png")),
                            None, "100,100,200,200", "invert the square", api_name="/score")
    assert isinstance(scores, dict) and scores
    same = client.predict(handle_file(str(photo)), handle_file(str(photo)), None, "", "",
                          api_name="/score")
    assert same != scores


def test_errors_are_clear(client: Client, tmp_path: Path):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="session"):
        client.predict("../../etc", "make it warmer", None, False, api_name="/edit")
    bad = tmp_path / "fake.png"
    bad.write_bytes(b"not an image at all")
    with pytest.raises(AppError, match="(?i)image"):
        client.predict(handle_file(str(bad)), api_name="/new_session")


def test_benchmark_endpoint_on_an_uploaded_archive(client: Client, tmp_path: Path):
    import shutil

    from eval.hdd import make_dataset

    make_dataset(tmp_path / "tiny-hdd", sessions=1, turns=1, size=(128, 72), seed=3)
    archive = shutil.make_archive(str(tmp_path / "tiny"), "zip", tmp_path, "tiny-hdd")
    result, csv_file = client.predict(handle_file(archive), "identity", api_name="/benchmark")
    assert result["summary"]["samples"] == 1 and result["summary"]["errors"] == 0
    assert result["rows"] and result["rows"][0]["turn"] == 1
    header = Path(csv_file).read_text().splitlines()[0]
    assert header.startswith("run,turn")


def test_review_links_through_the_api(client: Client, photo: Path):
    import urllib.error
    import urllib.request

    from gradio_client.exceptions import AppError

    sid, _ = client.predict(handle_file(str(photo)), api_name="/new_session")
    client.predict(sid, "make it warmer", None, False, api_name="/edit")
    url = client.predict(sid, api_name="/share_link")
    assert url.startswith(client.src.rstrip("/") + "/review/rv.") and sid not in url
    with urllib.request.urlopen(url) as resp:
        page = resp.read().decode()
        assert resp.status == 200 and "no-referrer" in resp.headers["Referrer-Policy"]
        assert "script-src 'nonce-" in resp.headers["Content-Security-Policy"]
    assert sid not in page and "data-node=" in page and "<form" not in page
    token = url.rsplit("/", 1)[1]
    with urllib.request.urlopen(f"{url}/download/n1") as resp:
        assert resp.headers["Content-Type"] == "image/png"
        assert _pixels(io.BytesIO(resp.read())).shape == (512, 512, 3)
    for call in ((token, "make it cooler", None, False, "/edit"), (token, "/undo"),
                 (token, "/export_session"), (token, "/share_link")):
        with pytest.raises(AppError):
            client.predict(*call[:-1], api_name=call[-1])
    assert client.predict(sid, url, api_name="/revoke_share") == {"revoked": True}
    for target in (url, f"{url}/preview/n0", f"{url}/download/n1"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(target)
        assert err.value.code == 404
    assert client.predict(sid, url, api_name="/revoke_share") == {"revoked": False}


def test_review_comments_through_the_api_and_the_review_route(client: Client, photo: Path):
    import json
    import urllib.error
    import urllib.request

    from gradio_client.exceptions import AppError

    sid, _ = client.predict(handle_file(str(photo)), api_name="/new_session")
    client.predict(sid, "make it warmer", None, False, api_name="/edit")
    url = client.predict(sid, api_name="/share_link")
    origin = client.src.rstrip("/")

    def post(body: dict, **headers) -> tuple[int, dict]:
        req = urllib.request.Request(f"{url}/comments", json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(req) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    status, made = post({"state": "n1", "text": "warmer still", "pin": [100, 50, 200, 150],
                         "verdict": "changes"}, Origin=origin)
    assert status == 201 and made["comment"]["pin"] == [100, 50, 200, 150]
    status, refused = post({"state": "n1", "text": "x"}, Origin="https://elsewhere.example")
    assert status == 403 and "only from the review page" in refused["error"]
    status, refused = post({"state": "n1", "text": "x", "pin": [512, 0]}, Origin=origin)
    assert status == 400 and "512×512" in refused["error"]

    got = json.loads(client.predict(sid, api_name="/review_comments_json"))
    assert got["session_id"] == sid and got["count"] == 1 and got["open"] == 1
    comment = got["comments"][0]
    assert comment["text"] == "warmer still" and comment["verdict"] == "changes"
    assert got["verdicts"][0]["id"] == comment["id"]
    assert json.loads(client.predict(sid, comment["id"], api_name="/resolve_comment_json")) == {
        "session_id": sid, "comment_id": comment["id"], "resolved": True, "open": 0}
    assert json.loads(client.predict(sid, comment["id"], api_name="/delete_comment_json")) == {
        "session_id": sid, "comment_id": comment["id"], "deleted": True, "count": 0}
    token = url.rsplit("/", 1)[1]
    for call in ((token, "/review_comments_json"), (sid, "c0nope", "/resolve_comment_json")):
        with pytest.raises(AppError):
            client.predict(*call[:-1], api_name=call[-1])


def test_the_json_endpoints_answer_one_json_object(client: Client, photo: Path):
    import json

    created = json.loads(client.predict(handle_file(str(photo)), api_name="/new_session_json"))
    assert created["head"] == "n0" and created["width"] == 512
    sid = created["session_id"]
    edited = json.loads(client.predict(sid, "make it brighter", None, False,
                                       api_name="/edit_json"))
    assert edited["ok"] and edited["head"] == "n1" and "/files/fl." in edited["image_url"]
    graph = json.loads(client.predict(sid, api_name="/graph_json"))
    assert [n["id"] for n in graph["nodes"]] == ["n0", "n1"]
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="session") as err:
        client.predict("../../etc", api_name="/undo_json")
    assert "&#" not in str(err.value)
