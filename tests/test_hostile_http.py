"""The hostile corpus over HTTP, against the app served on localhost, and the file route.

Every attack goes through the public API (``gradio_client``) while a victim session
holds a photo and an edit: each is refused with a message naming no server path, fast;
no session is left behind by a refused upload; the victim keeps editing. Files are
served only by the unguessable URL handed to their owner: session folders, the
browser-id key, neighbours and guesses all get a bare 404.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from PIL import Image

gradio_client = pytest.importorskip("gradio_client")
from gradio_client import Client, handle_file  # noqa: E402
from gradio_client.exceptions import AppError  # noqa: E402

from pipelines.config import get_settings  # noqa: E402
from tests.hostile_corpus import MARKER, Attack, build  # noqa: E402
from tests.serving import served_app  # noqa: E402

SECONDS = 5.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("http-data")
    with served_app(data) as url:
        yield url, data


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, chelsea: np.ndarray
           ) -> tuple[Path, Path, list[Attack]]:
    folder = tmp_path_factory.mktemp("hostile-http")
    photo = np.ascontiguousarray(chelsea[::4, ::4])
    Image.fromarray(photo).save(folder / "cat.png")
    return folder, folder / "cat.png", build(folder, photo, bomb_mb=128)


def _send(client: Client, attack: Attack, sid: str, photo: Path) -> object:
    kind, payload = attack.kind, attack.payload
    if kind == "archive":
        return client.predict(handle_file(str(payload)), api_name="/import_session")
    if kind == "image":
        return client.predict(handle_file(str(payload)), api_name="/new_session")
    if kind == "mask":
        return client.predict(sid, "brighten this area", handle_file(str(payload)), False,
                              api_name="/edit")
    if kind == "text":
        return client.predict(sid, payload, None, False, api_name="/edit")
    if kind == "session_id":
        return client.predict(payload, "make it brighter", None, False, api_name="/edit")
    if kind == "node":
        return client.predict(sid, payload, api_name="/checkout")
    if kind == "bbox":
        return client.predict(handle_file(str(photo)), handle_file(str(photo)), None,
                              payload, "", api_name="/score")
    return client.predict(handle_file(str(payload)), "embedded", api_name="/benchmark")


def test_attacks_over_http_are_refused_and_other_sessions_keep_working(served, corpus):
    url, _ = served
    data = get_settings().data_dir  # the served app reads it per request (in this process)
    folder, photo, attacks = corpus
    client = Client(url, verbose=False)
    sid, _ = client.predict(handle_file(str(photo)), api_name="/new_session")
    _, first = client.predict(sid, "make it warmer", None, False, api_name="/edit")
    assert first["ok"]
    sessions = data / "sessions"
    before = {p.name for p in sessions.iterdir()}
    failures = {}
    for attack in attacks:
        if attack.kind == "text" and not _encodable(attack.payload) \
                or attack.kind == "image" and not Path(attack.payload).exists():
            continue  # no HTTP form (unencodable text, no file to upload): tested in-process
        start = time.perf_counter()
        try:
            result = _send(client, attack, sid, photo)
            refused = (isinstance(result, tuple) and isinstance(result[-1], dict)
                       and result[-1].get("ok") is False and result[-1].get("message"))
            message = str(result[-1].get("message")) if refused else f"accepted: {result}"
        except AppError as err:
            refused, message = True, str(err)
        seconds = time.perf_counter() - start
        problems = [] if refused else ["not refused"]
        for leak in (str(data), "/tmp/", "Traceback", "gradio"):
            if leak in message:
                problems.append(f"shows {leak!r}")
        if seconds >= SECONDS:
            problems.append(f"took {seconds:.1f} s")
        if problems:
            failures[attack.name] = (problems, message[:200])
    assert not failures, failures
    assert {p.name for p in sessions.iterdir()} == before == {sid}  # refused uploads left none
    assert not list(folder.parent.rglob(f"{MARKER}*"))
    _, again = client.predict(sid, "make it brighter", None, False, api_name="/edit")
    assert again["ok"] and again["head"] != first["head"]
    other, info = client.predict(handle_file(str(photo)), api_name="/new_session")
    assert other != sid and info["head"] == "n0"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _file_url(base: str, path: Path | str) -> str:
    return f"{base.rstrip('/')}/gradio_api/file={quote(str(path))}"


def test_files_are_served_only_by_the_url_handed_to_their_owner(served, corpus):
    from gradio import utils as gradio_utils

    url, _ = served
    data = get_settings().data_dir
    _, photo, _ = corpus
    client = Client(url, verbose=False)
    sid, _ = client.predict(handle_file(str(photo)), api_name="/new_session")
    client.predict(sid, "make it warmer", None, False, api_name="/edit")
    downloaded = Path(client.predict(sid, api_name="/download"))
    cache = Path(gradio_utils.get_upload_folder())
    mine = max(cache.glob("loupe-*/*"), key=lambda p: p.stat().st_mtime)
    assert mine.name == downloaded.name and len(mine.parent.name) > 40
    status, body = _get(_file_url(url, mine))
    assert status == 200 and body == downloaded.read_bytes()  # the owner's URL works

    session = data / "sessions" / sid
    edit = next(session.glob("edit-*"))
    guesses = [session / "ui.json", edit / "session.json", edit / "root.png",
               data / "browser-secret", mine.parent / ("x" + mine.name),
               mine.parent.with_name(mine.parent.name[:-1] + ("B" if mine.parent.name[-1] == "A"
                                                             else "A")) / mine.name,
               mine.parent / ".." / mine.parent.name / mine.name.upper(), mine.parent,
               "/etc/passwd", get_settings().data_dir / "browser-secret"]
    for guess in guesses:
        status, body = _get(_file_url(url, guess))
        assert (status, body) == (404, b"Not found"), (guess, status, body[:80])
