"""Hostile files and texts, sent as an attacker would: through the service layer the UI,
the HTTP API and the MCP tools call (``web``), and through ``python -m agent``.

Every attack of ``tests/hostile_corpus.py`` must be refused with a clear message (no
server path, no traceback) in under 5 s, with less than 300 MB of extra memory, leaving
no file behind and writing nothing outside the data folder; the sessions keep working.
The HTTP side (file route, other sessions) is in ``tests/test_hostile_http.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import web
from pipelines.config import get_settings
from tests.hostile_corpus import MARKER, Attack, build, cli_args, run_api, run_cli, snapshot

ROOT = Path(__file__).resolve().parents[1]
SECONDS, MEGABYTES = 5.0, 300.0


@pytest.fixture(scope="module")
def photo_array(chelsea: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(chelsea[::4, ::4])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, photo_array: np.ndarray
           ) -> tuple[Path, list[Attack]]:
    folder = tmp_path_factory.mktemp("hostile")
    return folder, build(folder, photo_array, bomb_mb=256)


@pytest.fixture()
def manager():
    mgr = web.SessionManager()
    web.set_manager(mgr)
    yield mgr
    web.set_manager(None)


@pytest.fixture()
def photo(tmp_path: Path, photo_array: np.ndarray) -> Path:
    path = tmp_path / "cat.png"
    Image.fromarray(photo_array).save(path)
    return path


def _problems(outcome, leaks: tuple[str, ...]) -> list[str]:
    found = []
    if not outcome.refused:
        found.append("not refused")
    if not outcome.message.strip():
        found.append("no message")
    for leak in leaks:
        if leak in outcome.message:
            found.append(f"message shows {leak!r}")
    if outcome.seconds >= SECONDS:
        found.append(f"took {outcome.seconds:.1f} s")
    if outcome.peak_mb >= MEGABYTES:
        found.append(f"took {outcome.peak_mb:.0f} MB")
    return found


def _escaped(base: Path) -> list[str]:
    """Files an attack managed to write outside the data folder (marked names)."""
    hits = [str(p) for p in base.rglob(f"{MARKER}*")]
    return hits + [str(p) for p in Path("/tmp").glob(f"{MARKER}*")]


def test_the_corpus_is_large_enough(corpus):
    _, attacks = corpus
    archives = [a for a in attacks if a.kind == "archive"]
    others = [a for a in attacks if a.kind != "archive"]
    assert len(archives) >= 15 and len(others) >= 40
    assert len({a.name for a in attacks}) == len(attacks)


def test_every_attack_is_refused_through_the_service_layer(corpus, manager, photo):
    folder, attacks = corpus
    sid = web.ensure_session(None)
    web.open_image(sid, photo, "cat.png")
    _, first = web.edit_turn(sid, "make it warmer")
    assert first["ok"]
    # loading the sentence model (once per process, ~0.2 s and ~100 MB in numpy) is the
    # app's start-up cost, not an attack's: measure the attacks with it loaded
    from pipelines.embeddings import sentence_encoder

    sentence_encoder()(["warm up"])
    data_dir = get_settings().data_dir
    before = snapshot(data_dir, ignore=(".access", "ui.json"))
    failures = {}
    for attack in attacks:
        outcome = run_api(attack, sid)
        found = _problems(outcome, (str(data_dir), "/tmp/", "Traceback", str(ROOT)))
        after = snapshot(data_dir, ignore=(".access", "ui.json"))
        if after != before:
            found.append(f"files changed: {sorted(set(after) ^ set(before))[:3]}")
            before = after
        if found:
            failures[attack.name] = (found, outcome.message[:200])
    assert not failures, failures
    assert not _escaped(folder.parent)
    assert sorted(p.name for p in manager.root.iterdir()) == [sid]  # no folder from an id
    view, result = web.edit_turn(sid, "make it brighter")  # the session still works
    assert result["ok"] and view.head == result["head"] != first["head"]
    other = web.ensure_session(None)  # and so do new ones
    assert web.open_image(other, photo, "cat.png").head == "n0"


def test_every_attack_is_refused_through_the_cli(corpus, photo, tmp_path):
    folder, attacks = corpus
    from agent.session import EditSession

    EditSession.create(photo, tmp_path / "cli-base")
    failures, ran = {}, 0
    for attack in attacks:
        args = cli_args(attack, photo, tmp_path)
        if args is None:
            continue
        ran += 1
        outcome = run_cli(attack, args)  # paths the user typed may be shown back
        found = _problems(outcome, ("Traceback",))
        target = Path(args[args.index("--session") + 1])
        if attack.expect == "error" and target.exists() and target.name != "cli-base":
            found.append("left a session folder")
        if list(tmp_path.glob(".staging-*")):
            found.append("left a staging folder")
        if found:
            failures[attack.name] = (found, outcome.message[:200])
    assert ran >= 60 and not failures, failures
    assert not _escaped(folder.parent)


# --------------------------------------------------------------------------- CLI, for real


def _agent(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=120)


def _one_line_error(run: subprocess.CompletedProcess) -> str:
    err = run.stderr.decode("utf-8", "replace").strip()
    assert run.returncode == 2 and err.startswith("error: ") and "\n" not in err, err
    assert "Traceback" not in err
    return err


def test_cli_failures_are_one_line_and_write_nothing(photo, tmp_path):
    bad_utf8 = _agent("edit", str(photo), b"make it \xff\xfe warmer", "--session", "s1",
                      cwd=tmp_path)
    assert "not valid text" in _one_line_error(bad_utf8) and not (tmp_path / "s1").exists()

    made = _agent("edit", str(photo), "make it warmer", "--session", "s2", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    gif = _agent("edit", str(photo), "make it brighter", "--session", "s2", "--out",
                 "out.gif", cwd=tmp_path)
    assert ".gif" in _one_line_error(gif) and not (tmp_path / "out.gif").exists()
    log = _agent("log", "--session", "s2", cwd=tmp_path)
    assert len(log.stdout.decode().splitlines()) == 2  # the turn was never committed

    (tmp_path / "folder").mkdir()
    export = _agent("export", "folder", "--session", "s2", cwd=tmp_path)
    assert "is a folder" in _one_line_error(export)
    assert list((tmp_path / "folder").iterdir()) == []

    bomb = _agent("import", str(photo), "--session", "s3", cwd=tmp_path)
    assert "not a valid zip" in _one_line_error(bomb) and not (tmp_path / "s3").exists()


# --------------------------------------------------------------------------- kill -9

_SLOW = """
import sys, time
import pipelines.archives as archives
real = archives.stream_member
def slow(*args, **kwargs):
    n = real(*args, **kwargs)
    print("STAGED", flush=True)
    time.sleep(60)
    return n
archives.stream_member = slow
import zipfile
real_write = zipfile.ZipFile.write
def slow_write(self, *args, **kwargs):
    real_write(self, *args, **kwargs)
    print("STAGED", flush=True)
    time.sleep(60)
zipfile.ZipFile.write = slow_write
from agent.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _killed_midway(args: list[str], cwd: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", _SLOW, *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            line = proc.stdout.readline()
            if "STAGED" in line or not line:
                break
        assert "STAGED" in line, proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_kill_9_during_import_or_export_leaves_no_half_session(photo, tmp_path, manager):
    from agent.session import EditSession

    session = EditSession.create(photo, tmp_path / "s")
    mask = np.zeros(session.graph.shape[:2], bool)
    mask[5:30, 5:40] = True
    assert session.turn("brighten this area", mask).ok
    archive = session.export(tmp_path / "s.zip")

    _killed_midway(["import", str(archive), "--session", "copy"], tmp_path)
    assert not (tmp_path / "copy").exists()  # only a hidden staging folder may remain
    assert [p.name.startswith(".staging-") for p in tmp_path.iterdir()
            if p.name not in ("s", "s.zip", "cat.png")] == [True]
    copy = EditSession.import_archive(archive, tmp_path / "copy")
    assert copy.head == session.head

    _killed_midway(["export", "again.zip", "--session", "s"], tmp_path)
    assert not (tmp_path / "again.zip").exists()
    assert all(p.name.startswith(".again.zip.") for p in tmp_path.glob("*again*"))

    # the web app: a kill midway through an import leaves the session as it was, and the
    # leftovers are cleared when the session is next loaded from disk
    sid = web.ensure_session(None)
    web.open_image(sid, photo, "cat.png")
    folder = manager.get(sid).folder
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    script = _SLOW.replace("from agent.__main__ import main\nsys.exit(main(sys.argv[1:]))",
                           f"import web\nweb.import_archive({sid!r}, {str(archive)!r})")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, text=True)
    assert "STAGED" in proc.stdout.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    web.set_manager(web.SessionManager())  # a restarted server
    assert web.get_view(sid).head == "n0"  # the photo it had, not a half import
    leftovers = [p for p in folder.iterdir() if p.name.startswith(".staging-")]
    assert leftovers
    old = time.time() - 7200
    for path in leftovers:
        os.utime(path, (old, old))
    web.set_manager(web.SessionManager())
    web.get_view(sid)
    assert not [p for p in folder.iterdir() if p.name.startswith(".staging-")]


# --------------------------------------------------------------------------- quota, ids


def test_disk_quota_refuses_with_a_clear_message(photo, tmp_path):
    mgr = web.SessionManager(quota_mb=(photo.stat().st_size + 4096) / 2 ** 20)
    web.set_manager(mgr)
    try:
        sid = web.ensure_session(None)
        big = tmp_path / "big.png"
        Image.fromarray(np.random.default_rng(0).integers(0, 255, (200, 200, 3),
                                                          np.uint8)).save(big)
        with pytest.raises(web.SessionError, match="LOUPE_SESSION_QUOTA_MB") as err:
            web.open_image(sid, big, "big.png")
        assert "Export the session" in str(err.value)
        assert not any(p.name.startswith("edit-") for p in mgr.get(sid).folder.iterdir())
        web.open_image(sid, photo, "cat.png")  # the photo fits, an edit more does not
        with pytest.raises(web.SessionError, match="This edit would take this session"):
            for _ in range(20):
                web.edit_turn(sid, "make it warmer")
    finally:
        web.set_manager(None)


def test_autopilot_and_crop_respect_the_disk_quota_and_leave_nothing_behind(photo):
    mgr = web.SessionManager(quota_mb=(photo.stat().st_size + 4096) / 2 ** 20)
    web.set_manager(mgr)
    try:
        sid = web.ensure_session(None)
        web.open_image(sid, photo, "cat.png")
        folder = mgr.get(sid).folder
        before = sorted(p.name for p in folder.iterdir())
        with pytest.raises(web.SessionError, match="This Autopilot run would take"):
            web.run_autopilot(sid, simulations=2, iterations=1)
        assert sorted(p.name for p in folder.iterdir()) == before   # no scratch left
        with pytest.raises(web.SessionError, match="This crop would take"):
            web.crop(sid, [0, 0, 10, 10])
        assert web.get_view(sid).head == "n0"
    finally:
        web.set_manager(None)


def test_ids_the_server_did_not_mint_never_create_folders(manager):
    made = web.ensure_session(None)
    for bad in (made + "\n", "../" + made, made + "/x", "Z" * 30):
        assert web.ensure_session(bad) not in (bad,)
        with pytest.raises(web.SessionError):
            manager.get(bad)
    names = sorted(p.name for p in manager.root.iterdir())
    assert all(web.SESSION_ID_RE.match(n) for n in names) and "Z" * 30 not in names


def test_gradio_cache_is_cleaned_on_a_schedule(monkeypatch):
    import app

    monkeypatch.setenv("LOUPE_CACHE_TTL_HOURS", "2")
    assert app.build_app().delete_cache == (1800, 7200)
    options = app.launch_options()
    assert str(get_settings().sessions_dir.resolve()) in options["blocked_paths"]
    assert all("sessions" not in p for p in options["allowed_paths"])


# --------------------------------------------------------------------------- dead model


def test_a_dead_llm_endpoint_costs_an_edit_seconds_once_and_leaks_nothing(
        manager, photo, monkeypatch, caplog):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once the socket is closed
    monkeypatch.setenv("LOUPE_LLM_BASE_URL", f"http://loupe:hunter2pw@127.0.0.1:{port}/v1")
    monkeypatch.setenv("LOUPE_LLM_API_KEY", "sk-test-0123456789abcdefghij")
    monkeypatch.setenv("LOUPE_LLM_COOLDOWN_S", "600")
    sid = web.ensure_session(None)
    web.open_image(sid, photo, "cat.png")
    seconds, messages = [], []
    for text in ("make it warmer", "make it brighter", "increase the contrast"):
        start = time.perf_counter()
        view, result = web.edit_turn(sid, text)
        seconds.append(time.perf_counter() - start)
        assert result["ok"], result["message"]
        messages.append(result["plan"]["message"])
    assert max(seconds) < 3.0 and seconds[1] < 1.0 and seconds[2] < 1.0, seconds
    said = [m for m in messages if "planner model unavailable" in m]
    assert len(said) == 1  # said once, when the circuit opened
    assert "built-in rules for now (the language model is unreachable" in view.status
    assert caplog.text.count("WARNING") <= 3  # no warning per call while the circuit is open
    shown = " ".join([view.status, *messages, *(str(m) for m in view.chat), caplog.text,
                      web.status_line(None)])
    assert "hunter2pw" not in shown and "sk-test-0123456789" not in shown


def test_the_dataset_size_cap_is_a_setting(tmp_path, monkeypatch):
    import io
    import zipfile

    archive = tmp_path / "data.zip"
    noise = np.random.default_rng(1).integers(0, 255, (120, 160, 3), np.uint8)
    with zipfile.ZipFile(archive, "w") as zf:
        buf = io.BytesIO()
        Image.fromarray(noise).save(buf, format="PNG")
        zf.writestr("set/s0/input.png", buf.getvalue())
    monkeypatch.setenv("LOUPE_MAX_DATASET_MB", "0.01")   # 10 KB: the 57-KB image is over
    with pytest.raises(web.SessionError) as err:
        web.unpack_dataset(archive, tmp_path / "out")
    assert "data.zip" in str(err.value) and str(tmp_path) not in str(err.value)
    assert not (tmp_path / "out").exists()
    monkeypatch.setenv("LOUPE_MAX_DATASET_MB", "512")
    assert web.unpack_dataset(archive, tmp_path / "out").is_dir()
