"""The app's MCP tools, called by a real MCP client (the ``mcp`` package) over the app's
streamable-HTTP endpoint: every result is one JSON object with the documented keys, images
are URLs of our own (never a server path), errors are plain text with ``isError`` set."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamablehttp_client  # noqa: E402

from tests.serving import served_app  # noqa: E402

#: the keys each tool's JSON holds (docs/ARCHITECTURE.md, "API and MCP results")
SESSION_KEYS = {"session_id", "head", "width", "height", "message", "image_url"}
BATCH_KEYS = {"job_id", "state", "total", "finished", "done", "failed", "failures",
              "results_url", "report_url"}
KEYS = {
    "new_session": SESSION_KEYS, "undo": SESSION_KEYS, "redo": SESSION_KEYS,
    "checkout": SESSION_KEYS, "import_session": SESSION_KEYS,
    "edit": SESSION_KEYS | {"ok", "changed", "plan", "steps", "choices"},
    "crop": SESSION_KEYS | {"ok", "steps"},
    "graph": {"session_id", "head", "nodes"},
    "download": {"session_id", "head", "url"}, "export_session": {"session_id", "head", "url"},
    "share_link": {"session_id", "url"}, "revoke_share": {"session_id", "url", "revoked"},
    "autopilot": SESSION_KEYS | {"score_before", "score_after", "steps", "cancelled",
                                 "left_alone", "reason", "considered", "suggestions"},
    "accept_autopilot_suggestion": SESSION_KEYS | {"steps", "accepted", "suggestions"},
    "score": {"scores"}, "benchmark": {"summary", "per_turn", "rows"},
    "batch": BATCH_KEYS, "batch_status": BATCH_KEYS, "batch_cancel": BATCH_KEYS,
    "review_comments": {"session_id", "count", "open", "comments", "verdicts"},
    "resolve_comment": {"session_id", "comment_id", "resolved", "open"},
    "delete_comment": {"session_id", "comment_id", "deleted", "count"},
    "select": {"session_id", "head", "selection"},
    "clear_selection": {"session_id", "head", "selection"},
    "choose_region": SESSION_KEYS | {"ok", "changed", "plan", "steps"},
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("mcp-data")
    with served_app(data) as url:
        yield url.rstrip("/"), data


def _data_url(pixels: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _fetch(url: str) -> tuple[bytes, Any]:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.read(), resp.headers


def _pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


def _no_server_path(text: str, data_dir: Path) -> None:
    assert str(data_dir) not in text and "/tmp" not in text and "file=" not in text, text
    assert not re.search(r"(?<![\w/])/(home|var|root|usr|work)/", text), text


def _json(result: Any, tool: str, data_dir: Path) -> dict:
    """The one JSON object a successful tool call returns, checked for its keys."""
    assert not result.isError, result.content
    texts = [c.text for c in result.content if c.type == "text"]
    assert len(texts) == 1 and len(result.content) == 1, result.content
    _no_server_path(texts[0], data_dir)
    data = json.loads(texts[0])
    assert isinstance(data, dict) and KEYS[tool] <= set(data), (tool, sorted(data))
    return data


def _error(result: Any, data_dir: Path) -> str:
    """The plain-text message of a refused call."""
    assert result.isError, result.content
    text = " ".join(c.text for c in result.content if c.type == "text")
    _no_server_path(text, data_dir)
    assert not re.search(r"&(#x?[0-9a-fA-F]+|amp|lt|gt|quot|apos);", text), text
    assert "Traceback" not in text and "<" not in text, text
    return text



async def _finished_batch(session, job_id: str, data_dir, tries: int) -> dict:
    """Poll the MCP ``batch_status`` tool until the job is no longer running."""
    for _ in range(tries):
        status = _json(await session.call_tool("batch_status", {"job_id": job_id}),
                       "batch_status", data_dir)
        if status["state"] not in ("running", "cancelling"):
            break
        await asyncio.sleep(0.5)
    return status

def _run(url: str, script, headers: dict[str, str] | None = None) -> Any:
    async def main() -> Any:
        async with streamablehttp_client(url + "/gradio_api/mcp/", headers=headers) as (
                read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)

    return asyncio.run(main())


async def _with_progress(session: ClientSession, tool: str, args: dict) -> Any:
    """A call that sends a progress token (Gradio then streams status updates)."""
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        return None

    return await session.call_tool(tool, args, progress_callback=on_progress)


def test_tools_are_listed_with_described_arguments(served):
    url, _ = served

    async def script(session: ClientSession) -> dict:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools = _run(url, script)
    assert set(KEYS) == set(tools)  # the JSON tools only; the tuple-shaped API is not listed
    for name, tool in tools.items():
        assert "JSON {" in tool.description, name
        for arg, schema in tool.inputSchema["properties"].items():
            assert "e.g." in schema.get("description", ""), (name, arg)
    assert {"session_id", "instruction"} <= set(tools["edit"].inputSchema["properties"])
    assert set(tools["share_link"].inputSchema["properties"]) == {"session_id"}
    assert {"archive", "instruction"} <= set(tools["batch"].inputSchema["properties"])
    assert set(tools["batch_status"].inputSchema["properties"]) == {"job_id"}


def test_a_whole_session_over_mcp(served, astronaut: np.ndarray):
    url, data_dir = served

    async def script(session: ClientSession) -> dict:
        out: dict[str, Any] = {}
        out["new"] = _json(await session.call_tool(
            "new_session", {"image": _data_url(astronaut)}), "new_session", data_dir)
        sid = out["new"]["session_id"]
        out["edit"] = _json(await _with_progress(session, "edit", {
            "session_id": sid, "instruction": "make it brighter"}), "edit", data_dir)
        out["graph"] = _json(await session.call_tool("graph", {"session_id": sid}), "graph",
                             data_dir)
        out["undo"] = _json(await session.call_tool("undo", {"session_id": sid}), "undo",
                            data_dir)
        out["download"] = _json(await session.call_tool("download", {"session_id": sid}),
                                "download", data_dir)
        out["share"] = _json(await session.call_tool("share_link", {"session_id": sid}),
                             "share_link", data_dir)
        out["revoke"] = _json(await session.call_tool("revoke_share", {
            "session_id": sid, "url": out["share"]["url"]}), "revoke_share", data_dir)
        out["again"] = _json(await session.call_tool("revoke_share", {
            "session_id": sid, "url": out["share"]["url"]}), "revoke_share", data_dir)
        return out

    out = _run(url, script)
    new, edit, graph, undo = out["new"], out["edit"], out["graph"], out["undo"]
    sid = new["session_id"]
    assert (new["width"], new["height"], new["head"]) == (512, 512, "n0")
    assert edit["ok"] and edit["changed"] and edit["head"] == "n1" and edit["steps"]
    assert sid not in edit["image_url"] and edit["image_url"].startswith(url + "/files/")
    brighter = _pixels(_fetch(edit["image_url"])[0])
    original = _pixels(_fetch(new["image_url"])[0])
    assert brighter.mean() > original.mean() + 3
    assert graph["head"] == "n1" and [n["id"] for n in graph["nodes"]] == ["n0", "n1"]
    assert graph["nodes"][1]["image_url"] == edit["image_url"]
    assert undo["head"] == "n0" and undo["image_url"] == new["image_url"]
    body, headers = _fetch(out["download"]["url"])
    assert out["download"]["head"] == "n0" and headers["Content-Type"] == "image/png"
    np.testing.assert_array_equal(_pixels(body), astronaut)  # full resolution, lossless
    assert out["share"]["url"].startswith(url + "/review/rv.") and sid not in out["share"]["url"]
    assert out["revoke"]["revoked"] is True and out["again"]["revoked"] is False
    with pytest.raises(urllib.error.HTTPError) as gone:
        _fetch(out["share"]["url"])
    assert gone.value.code == 404


def test_bad_inputs_come_back_as_plain_text_errors(served, astronaut: np.ndarray):
    url, data_dir = served
    not_an_image = "data:image/png;base64," + base64.b64encode(b"just text").decode()

    async def script(session: ClientSession) -> dict:
        created = _json(await session.call_tool(
            "new_session", {"image": _data_url(astronaut[:64, :64])}), "new_session", data_dir)
        sid = created["session_id"]
        calls = {
            "unknown": ("undo", {"session_id": "AAAAAAAAAAAAAAAAAAAAAA"}),
            "traversal": ("edit", {"session_id": "../../etc/passwd", "instruction": "warmer"}),
            "non_image": ("new_session", {"image": not_an_image}),
            "empty": ("edit", {"session_id": sid, "instruction": "   "}),
            "quoted": ("crop", {"session_id": sid, "box": "0,0,32,32", "aspect": "banana"}),
        }
        out = {key: await session.call_tool(tool, args) for key, (tool, args) in calls.items()}
        out["progress"] = await _with_progress(session, "undo", {"session_id": "nope"})
        return out

    out = _run(url, script)
    texts = {key: _error(result, data_dir) for key, result in out.items()}
    assert "session" in texts["unknown"].lower() and "session" in texts["traversal"].lower()
    assert "image" in texts["non_image"].lower()
    assert "instruction" in texts["empty"].lower()
    assert "'banana'" in texts["quoted"]  # quotes as typed, never &#x27;
    assert "session" in texts["progress"].lower()


def test_autopilot_score_and_export_over_mcp(served, chelsea: np.ndarray):
    url, data_dir = served
    darker = (chelsea * 0.7).astype(np.uint8)

    async def script(session: ClientSession) -> dict:
        auto = _json(await session.call_tool("autopilot", {
            "image": _data_url(chelsea), "iterations": 1, "simulations": 3, "depth": 1,
            "top_k": 1, "seed": 0}), "autopilot", data_dir)
        score = _json(await session.call_tool("score", {
            "before": _data_url(chelsea), "after": _data_url(darker)}), "score", data_dir)
        same = _json(await session.call_tool("score", {
            "before": _data_url(chelsea), "after": _data_url(chelsea)}), "score", data_dir)
        export = _json(await session.call_tool("export_session", {
            "session_id": auto["session_id"]}), "export_session", data_dir)
        graph = _json(await session.call_tool("graph", {"session_id": auto["session_id"]}),
                      "graph", data_dir)
        return {"auto": auto, "score": score, "same": same, "export": export, "graph": graph}

    out = _run(url, script)
    auto = out["auto"]
    assert (auto["width"], auto["height"]) == (451, 300)
    assert auto["score_after"] >= auto["score_before"]
    assert len(out["graph"]["nodes"]) == 1 + len(auto["steps"])  # each kept step is a state
    assert _pixels(_fetch(auto["image_url"])[0]).shape[:2] == (300, 451)
    assert out["score"]["scores"]["psnr"] < 40
    assert out["same"]["scores"]["psnr"] is None  # infinite: JSON has no inf
    body, headers = _fetch(out["export"]["url"])
    assert headers["Content-Type"] == "application/zip" and body[:2] == b"PK"


def test_a_held_back_autopilot_fix_is_accepted_over_mcp(served):
    """Autopilot's held-back change comes back as a suggestion in the JSON; the
    accept_autopilot_suggestion tool lands it, and the photo it links is 3 dB closer."""
    from eval.metrics import psnr
    from eval.photos import BENCH_DEGRADATIONS, load_photo

    url, data_dir = served
    # a photo with a cool cast Autopilot is only about 70 % sure of (the same case as
    # test_do_no_harm's held-back fix)
    clean = load_photo("coffee", 256)
    dark = BENCH_DEGRADATIONS["cool_shade"](clean)

    async def script(session: ClientSession) -> dict:
        auto = _json(await session.call_tool("autopilot", {
            "image": _data_url(dark), "iterations": 2, "simulations": 6, "depth": 2,
            "top_k": 2, "seed": 0}), "autopilot", data_dir)
        held = [i for i, s in enumerate(auto["suggestions"])
                if s["operation"] == "full_strength"]
        accepted = _json(await session.call_tool("accept_autopilot_suggestion", {
            "session_id": auto["session_id"], "index": held[0] if held else 0}),
            "accept_autopilot_suggestion", data_dir)
        wrong = await session.call_tool("accept_autopilot_suggestion", {
            "session_id": auto["session_id"], "index": 9})
        return {"auto": auto, "held": held, "accepted": accepted,
                "wrong": _error(wrong, data_dir)}

    out = _run(url, script)
    assert len(out["held"]) == 1, out["auto"]["suggestions"]
    assert out["accepted"]["accepted"]["operation"] == "full_strength"
    landed = _pixels(_fetch(out["accepted"]["image_url"])[0])[..., :3]
    assert landed.shape == dark.shape
    assert psnr(landed, clean) >= psnr(dark, clean) + 3.0
    assert "suggestion" in out["wrong"].lower()


def test_file_links_refuse_what_they_do_not_know(served, astronaut: np.ndarray):
    url, data_dir = served

    async def script(session: ClientSession) -> dict:
        return _json(await session.call_tool("new_session", {"image": _data_url(astronaut)}),
                     "new_session", data_dir)

    new = _run(url, script)
    good = new["image_url"]
    token = good.split("/files/", 1)[1].split("/", 1)[0]
    for bad in (good.replace("/n0/", "/n9/"), good.replace("/n0/", "/..%2F..%2Fetc/"),
                f"{url}/files/fl.{'A' * 43}/n0/preview", f"{url}/files/{token[:-1]}x/n0/preview",
                f"{url}/files/{new['session_id']}/n0/preview"):
        with pytest.raises(urllib.error.HTTPError) as err:
            _fetch(bad)
        assert err.value.code == 404, bad
    _, headers = _fetch(good)
    assert headers["Content-Type"].startswith("image/")
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    import web  # the app runs in this process: delete the session as its owner would

    web.delete_session(new["session_id"])
    with pytest.raises(urllib.error.HTTPError) as err:
        _fetch(good)
    assert err.value.code == 404  # a link dies with its session


def test_links_use_the_address_the_client_came_through(served, astronaut: np.ndarray):
    """Behind a proxy (a Space), URLs name the public host, not the app's loopback."""
    url, data_dir = served

    async def script(session: ClientSession) -> tuple[dict, dict]:
        new = _json(await session.call_tool("new_session", {"image": _data_url(astronaut)}),
                    "new_session", data_dir)
        share = _json(await session.call_tool("share_link", {"session_id": new["session_id"]}),
                      "share_link", data_dir)
        return new, share

    new, share = _run(url, script, headers={"X-Forwarded-Host": "loupe.example.org",
                                            "X-Forwarded-Proto": "https"})
    assert new["image_url"].startswith("https://loupe.example.org/files/fl.")
    assert share["url"].startswith("https://loupe.example.org/review/rv.")


def test_batch_tools_over_mcp(served, chelsea: np.ndarray):
    url, data_dir = served

    async def script(session: ClientSession) -> dict:
        out = {"unknown": await session.call_tool("batch_status", {"job_id": "0" * 32}),
               "traversal": await session.call_tool("batch_cancel", {"job_id": "../../etc"}),
               "none": await session.call_tool("batch", {"archive": "",
                                                         "instruction": "make it warmer"})}
        started = _json(await session.call_tool("batch", {
            "archive": _data_url(chelsea[:96, :128]), "instruction": "make it warmer"}),
            "batch", data_dir)
        status = await _finished_batch(session, started["job_id"], data_dir, tries=600)
        return {"errors": out, "started": started, "status": status}

    got = _run(url, script)
    texts = {key: _error(result, data_dir) for key, result in got["errors"].items()}
    assert "no batch job" in texts["unknown"] and "no batch job" in texts["traversal"]
    assert "url" in texts["none"]  # refused before it reaches Loupe: no file given
    assert got["started"]["total"] == 1 and got["started"]["results_url"] is None
    status = got["status"]
    assert (status["state"], status["done"], status["failed"]) == ("done", 1, 0), status
    data, _ = _fetch(status["results_url"])
    import zipfile
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        photos = [n for n in zf.namelist() if n.endswith(".png")]
        assert len(photos) == 1 and _pixels(zf.read(photos[0])).shape == (96, 128, 3)


def test_review_comments_over_mcp(served, astronaut: np.ndarray):
    url, data_dir = served

    def comment(review_url: str, text: str) -> None:
        req = urllib.request.Request(
            review_url + "/comments", json.dumps({"state": "n0", "text": text,
                                                 "pin": [10, 20]}).encode(),
            headers={"Content-Type": "application/json", "Origin": url}, method="POST")
        with urllib.request.urlopen(req, timeout=60) as resp:
            assert resp.status == 201

    async def script(session: ClientSession) -> dict:
        out: dict[str, Any] = {}
        new = _json(await session.call_tool("new_session", {"image": _data_url(astronaut)}),
                    "new_session", data_dir)
        sid = out["sid"] = new["session_id"]
        share = _json(await session.call_tool("share_link", {"session_id": sid}),
                      "share_link", data_dir)
        comment(share["url"], "<b>crop the left</b>")
        out["list"] = _json(await session.call_tool("review_comments", {"session_id": sid}),
                            "review_comments", data_dir)
        cid = out["list"]["comments"][0]["id"]
        args = {"session_id": sid, "comment_id": cid}
        out["resolve"] = _json(await session.call_tool("resolve_comment", args),
                               "resolve_comment", data_dir)
        out["delete"] = _json(await session.call_tool("delete_comment", args),
                              "delete_comment", data_dir)
        out["again"] = _error(await session.call_tool("delete_comment", args), data_dir)
        return out

    out = _run(url, script)
    listed = out["list"]
    assert listed["count"] == 1 and listed["open"] == 1 and listed["verdicts"] == []
    assert listed["comments"][0]["text"] == "<b>crop the left</b>"  # text, as typed
    assert listed["comments"][0]["pin"] == [10, 20] and listed["comments"][0]["state"] == "n0"
    assert out["resolve"]["resolved"] is True and out["resolve"]["open"] == 0
    assert out["delete"] == {"session_id": out["sid"], "comment_id": listed["comments"][0]["id"],
                             "deleted": True, "count": 0}
    assert "no comment with that id" in out["again"]


def _zip_data_url(members: dict[str, bytes]) -> str:
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return "data:application/zip;base64," + base64.b64encode(buf.getvalue()).decode()


def _encoded(pixels: np.ndarray, fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return buf.getvalue()


def test_batch_of_several_photos_in_a_zip_over_mcp(served, chelsea: np.ndarray):
    """Several photos go in as one zip (Gradio's MCP schema cannot describe a list of
    files), the results come back as a zip with the same names; a second job is
    cancelled and keeps what it finished."""
    url, data_dir = served
    photos = {"shoot/a.png": chelsea[:96, :128], "shoot/day2/b.jpg": chelsea[100:196, 50:178],
              "c.png": chelsea[200:296, 100:228]}
    archive = _zip_data_url({name: _encoded(px, "PNG" if name.endswith(".png") else "JPEG")
                             for name, px in photos.items()} | {"notes.txt": b"not a photo"})

    async def wait(session: ClientSession, job_id: str) -> dict:
        for _ in range(600):
            status = _json(await session.call_tool("batch_status", {"job_id": job_id}),
                           "batch_status", data_dir)
            if status["state"] not in ("running", "cancelling"):
                return status
            await asyncio.sleep(0.5)
        raise AssertionError(f"batch {job_id} did not end")

    async def script(session: ClientSession) -> dict:
        started = _json(await session.call_tool("batch", {
            "archive": archive, "instruction": "make it warmer"}), "batch", data_dir)
        done = await wait(session, started["job_id"])
        second = _json(await session.call_tool("batch", {  # a zip known by its bytes
            "archive": archive.replace("application/zip", "application/octet-stream"),
            "instruction": "make it warmer"}), "batch", data_dir)
        cancelled = _json(await session.call_tool("batch_cancel",
                                                  {"job_id": second["job_id"]}),
                          "batch_cancel", data_dir)
        after = await wait(session, second["job_id"])
        return {"started": started, "done": done, "second": second, "cancelled": cancelled,
                "after": after}

    got = _run(url, script)
    assert got["started"]["total"] == 3, got["started"]
    status = got["done"]
    assert (status["state"], status["done"], status["failed"]) == ("done", 3, 0), status
    data, _ = _fetch(status["results_url"])
    import zipfile
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = {n for n in zf.namelist() if n.endswith((".png", ".jpg"))}
        out = {n: _pixels(zf.read(n)) for n in names}
    for name, before in photos.items():
        match = [n for n in out if n.endswith(Path(name).name)]
        assert len(match) == 1, (name, sorted(out))
        after = out[match[0]].astype(float)
        assert after.shape == before.shape
        warmth = lambda px: float(np.mean(px[..., 0]) - np.mean(px[..., 2]))  # noqa: E731
        assert warmth(after) > warmth(before.astype(float)) + 1.0, name
    assert got["second"]["total"] == 3, got["second"]
    assert got["cancelled"]["state"] in ("cancelled", "done"), got["cancelled"]
    after = got["after"]
    assert after["state"] == got["cancelled"]["state"]
    assert after["done"] + after["failed"] <= 3 and after["results_url"], after
    kept, _ = _fetch(after["results_url"])
    with zipfile.ZipFile(io.BytesIO(kept)) as zf:
        assert len([n for n in zf.namelist() if n.endswith((".png", ".jpg"))]) \
            == after["done"]
