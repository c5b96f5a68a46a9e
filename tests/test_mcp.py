"""The app's MCP tools, called by a real MCP client over the app's streamable-HTTP endpoint."""

from __future__ import annotations

import ast
import asyncio
import base64
import io
import re
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


@pytest.fixture(scope="module")
def mcp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_app(tmp_path_factory.mktemp("mcp-data")) as url:
        yield url.rstrip("/") + "/gradio_api/mcp/"


def _data_url(pixels: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _texts(result: Any) -> list[Any]:
    out = []
    for item in result.content:
        if item.type == "text":
            try:
                out.append(ast.literal_eval(item.text))
            except (ValueError, SyntaxError):
                out.append(item.text)
    return out


def _image(result: Any) -> np.ndarray:
    item = next(c for c in result.content if c.type == "image")
    with Image.open(io.BytesIO(base64.b64decode(item.data))) as im:
        return np.asarray(im.convert("RGB"))


async def _call(session: ClientSession, tool: str, args: dict) -> Any:
    """Call a tool with a progress callback (so the reply carries each output separately)."""
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        return None

    return await session.call_tool(tool, args, progress_callback=on_progress)


def _run(url: str, script) -> Any:
    async def main() -> Any:
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)

    return asyncio.run(main())


def test_tools_are_listed_with_descriptions(mcp_url: str):
    async def script(session: ClientSession) -> dict:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools = _run(mcp_url, script)
    for name in ("new_session", "edit", "undo", "checkout", "autopilot", "score",
                 "share_link", "revoke_share", "batch", "batch_status", "batch_cancel"):
        assert name in tools and tools[name].description
    assert {"session_id", "instruction"} <= set(tools["edit"].inputSchema["properties"])
    assert set(tools["share_link"].inputSchema["properties"]) == {"session_id"}
    assert {"photos", "instruction"} <= set(tools["batch"].inputSchema["properties"])
    assert set(tools["batch_status"].inputSchema["properties"]) == {"job_id"}


def test_edit_undo_checkout_over_mcp(mcp_url: str, astronaut: np.ndarray):
    async def script(session: ClientSession) -> dict:
        out: dict[str, Any] = {}
        created = await _call(session, "new_session", {"image": _data_url(astronaut)})
        assert not created.isError, created.content
        sid, info = _texts(created)[:2]
        out["info"] = info
        edited = await _call(session, "edit", {"session_id": sid,
                                                  "instruction": "make it brighter"})
        assert not edited.isError, edited.content
        out["edited"], out["result"] = _image(edited), _texts(edited)
        undone = await _call(session, "undo", {"session_id": sid})
        out["undone"], out["undo_text"] = _image(undone), _texts(undone)
        head = next(t for t in out["result"] if isinstance(t, dict))["head"]
        moved = await _call(session, "checkout", {"session_id": sid, "node_id": head})
        out["checkout"] = _image(moved)
        bad = await _call(session, "undo", {"session_id": "not-a-session"})
        out["bad"] = bad
        return out

    out = _run(mcp_url, script)
    assert out["info"]["width"] == 512 and out["info"]["head"] == "n0"
    assert out["edited"].mean() > astronaut.mean() + 3
    np.testing.assert_array_equal(out["undone"], astronaut)
    np.testing.assert_array_equal(out["checkout"], out["edited"])
    assert out["bad"].isError


def test_autopilot_and_score_over_mcp(mcp_url: str, chelsea: np.ndarray, tmp_path: Path):
    darker = (chelsea * 0.7).astype(np.uint8)

    async def script(session: ClientSession) -> tuple:
        auto = await _call(session, "autopilot", {
            "image": _data_url(chelsea), "iterations": 1, "simulations": 3, "depth": 1,
            "top_k": 1, "seed": 0})
        score = await _call(session, "score", {"before": _data_url(chelsea),
                                                  "after": _data_url(darker)})
        return auto, score

    auto, score = _run(mcp_url, script)
    assert not auto.isError, auto.content
    assert _image(auto).shape == chelsea.shape
    assert not score.isError, score.content
    metrics = next(t for t in _texts(score) if isinstance(t, dict))
    assert isinstance(metrics, dict) and "psnr" in metrics and metrics["psnr"] < 40


def test_plain_calls_without_progress_token(mcp_url: str, chelsea: np.ndarray):
    """Clients that send no progress token get the outputs as text (Gradio 6.31)."""
    async def script(session: ClientSession) -> tuple:
        created = await session.call_tool("new_session", {"image": _data_url(chelsea)})
        sid = re.search(r"'session_id': '([A-Za-z0-9_-]+)'", created.content[0].text).group(1)
        graph = await session.call_tool("graph", {"session_id": sid})
        return created, graph

    created, graph = _run(mcp_url, script)
    assert not created.isError and not graph.isError
    data = ast.literal_eval(graph.content[0].text)
    assert data["head"] == "n0" and [n["id"] for n in data["nodes"]] == ["n0"]
