"""Batch editing (``python -m agent batch``) run as a user runs it: a folder of real and
rendered photos through the CLI on a local Ray and on a real ``ray start --head``
cluster, with a worker and the driver killed midway.

One cluster is started per module (Ray's start costs seconds); it is stopped by the
ids of its own processes (never ``ray stop``, which would stop every Ray on the machine).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import psutil
import pytest
from PIL import Image, ImageCms

from agent.session import EditSession
from pipelines.images import load_image
from tests.serving import free_port

ROOT = Path(__file__).resolve().parents[1]
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
INSTRUCTION = "make it warmer"
GOOD = 11  # photos that must come out edited (the 12th is damaged)


def _exif(orientation: int) -> bytes:
    block = Image.Exif()
    block[0x010F] = "LoupeCam"
    block[0x0112] = orientation
    return block.tobytes()


def _render(width: int, height: int) -> np.ndarray:
    """A flat scene: sky gradient, ground, a red disc and a blue box."""
    y = np.linspace(0, 1, height)[:, None]
    img = np.zeros((height, width, 3), np.uint8)
    img[...] = np.stack([120 + 60 * y, 160 + 40 * y, 230 - 50 * y], -1).astype(np.uint8)
    img[int(height * 0.65):] = (90, 140, 70)
    yy, xx = np.mgrid[:height, :width]
    img[(xx - width * 0.3) ** 2 + (yy - height * 0.6) ** 2 < (height * 0.12) ** 2] = (210, 30, 30)
    img[int(height * 0.4):int(height * 0.7), int(width * 0.6):int(width * 0.8)] = (40, 60, 200)
    return img


def _photo(name: str) -> np.ndarray:
    from skimage import data

    img = getattr(data, name)()
    return np.ascontiguousarray(np.stack([img] * 3, -1) if img.ndim == 2 else img[..., :3])


@pytest.fixture(scope="module")
def shoot(tmp_path_factory) -> Path:
    """12 photos in nested folders (one damaged, one of 40 MP, one rotated by EXIF with
    an ICC profile), a link and a text file that are not photos to edit."""
    root = tmp_path_factory.mktemp("shoot")
    for sub in ("people", "renders/nested/deeper", "bw", "q75", "a/b/c", "broken", "big"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    Image.fromarray(_photo("astronaut")).save(root / "people/astronaut-rotated.jpg",
                                              quality=90, exif=_exif(6), icc_profile=SRGB)
    Image.fromarray(_photo("coffee")).save(root / "coffee.png")
    Image.fromarray(_photo("chelsea")).save(root / "chelsea.webp", quality=80)
    Image.fromarray(_photo("rocket")).save(root / "rocket.tif")
    Image.fromarray(_photo("camera")).save(root / "bw/camera.png")
    Image.fromarray(_render(800, 600)).save(root / "renders/scene.jpg", quality=92)
    Image.fromarray(_render(640, 400)).save(root / "renders/nested/deeper/gradient.png")
    Image.fromarray(_photo("coffee")).save(root / "q75/coffee.jpg", quality=75)
    Image.fromarray(_photo("chelsea")).save(root / "a/b/c/cat.tiff")
    Image.fromarray(_photo("astronaut")).save(root / "astronaut.webp", lossless=True)
    big = Image.fromarray(_render(730, 548)).resize((7300, 5480), Image.NEAREST)
    big.save(root / "big/flat-40mp.jpg", quality=85)
    whole = io.BytesIO()
    Image.fromarray(_photo("coffee")).save(whole, "JPEG", quality=90)
    (root / "broken/corrupt.jpg").write_bytes(whole.getvalue()[:3000])
    os.symlink(root / "coffee.png", root / "bw/link-to-coffee.png")
    (root / "notes.txt").write_text("not a photo")
    return root


@pytest.fixture(scope="module")
def expected(shoot, tmp_path_factory) -> dict[str, bytes]:
    """What a single-photo edit writes for each good photo (``EditSession`` turn +
    ``save_image``, as ``python -m agent edit PHOTO "…" --out X`` does)."""
    out = {}
    scratch = tmp_path_factory.mktemp("single")
    for path in sorted(shoot.rglob("*")):
        rel = path.relative_to(shoot).as_posix()
        if path.is_symlink() or path.suffix not in (".jpg", ".png", ".webp", ".tif", ".tiff") \
                or rel.startswith("broken/"):
            continue
        session = EditSession.create(path, scratch / rel.replace("/", "_"))
        assert session.turn(INSTRUCTION).ok, rel
        out[rel] = session.save_image(None)
    assert len(out) == GOOD
    return out


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LOUPE_DEBUG", None)
    return env


def _batch(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "agent", "batch", *map(str, args)],
                            cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _manifest(out: Path) -> list[dict]:
    path = out / ".loupe-batch/manifest.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _check_outputs(shoot: Path, out: Path, expected: dict[str, bytes]) -> None:
    for rel, data in expected.items():
        assert (out / rel).read_bytes() == data, f"{rel} differs from the single-photo edit"
    rotated = load_image(out / "people/astronaut-rotated.jpg")
    assert rotated.icc_profile == SRGB and rotated.quality == 90
    assert Image.open(out / "people/astronaut-rotated.jpg").getexif()[0x0112] == 1
    assert Image.open(out / "q75/coffee.jpg").format == "JPEG"
    assert load_image(out / "q75/coffee.jpg").quality == 75
    assert Image.open(out / "rocket.tif").format == "TIFF"
    assert load_image(out / "astronaut.webp").lossless
    assert load_image(out / "big/flat-40mp.jpg").pixels.shape == (5480, 7300, 3)
    warmer = load_image(out / "coffee.png").pixels.astype(int)
    before = load_image(shoot / "coffee.png").pixels.astype(int)
    assert (warmer[..., 0] - warmer[..., 2]).mean() > (before[..., 0] - before[..., 2]).mean()
    assert not (out / "broken/corrupt.jpg").exists()
    assert not (out / "bw/link-to-coffee.png").exists()  # links are not followed
    assert not (out / "edited").exists()  # OUT inside IN is never read as input


def _ray_workers_of(pid: int) -> list[psutil.Process]:
    """The processes below ``pid`` running a batch photo right now."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    busy = []
    for child in children:
        try:
            if "ray::edit_photo" in " ".join(child.cmdline()):
                busy.append(child)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return busy


def test_cli_batch_on_local_ray_matches_single_edits_and_survives_a_killed_worker(
        shoot, expected):
    out = shoot / "edited"  # OUT inside IN
    try:
        _local_run(shoot, out, expected)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _processes_naming(fragment: str) -> dict[int, psutil.Process]:
    """The processes whose command line holds ``fragment`` (a Ray's temp dir), by pid."""
    found = {}
    for p in psutil.process_iter(["cmdline"]):
        try:
            if fragment in " ".join(p.info["cmdline"] or []):
                found[p.pid] = p
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _local_run(shoot: Path, out: Path, expected: dict[str, bytes]) -> None:
    before = _processes_naming("/lray-")  # any local batch's Ray names its lray- dir
    proc = _batch(shoot, out, INSTRUCTION, "--workers", "2", "--report")
    killed = None
    deadline = time.monotonic() + 240
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        busy = _ray_workers_of(proc.pid)
        if busy:
            killed = busy[0].pid
            os.kill(killed, signal.SIGKILL)  # a worker dies mid-task
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=300)
    assert killed is not None, "no worker was seen running a photo"
    assert proc.returncode == 1, stderr  # one photo failed
    assert "12 photos: 11 done, 1 failed" in stdout, stdout
    left = [p for pid, p in _processes_naming("/lray-").items() if pid not in before]
    _gone, alive = psutil.wait_procs(left, timeout=10)  # workers may take a moment to exit
    assert not alive, f"the batch left its Ray running: {alive}"  # the monitor killed too
    assert "broken/corrupt.jpg: corrupt.jpg is damaged" in stdout
    _check_outputs(shoot, out, expected)
    entries = _manifest(out)
    assert sorted(e["path"] for e in entries) == sorted([*expected, "broken/corrupt.jpg"])
    assert all(e["sha256"] and e["instruction"] == INSTRUCTION for e in entries)
    assert all(e["score"] is not None and e["seconds"] > 0 for e in entries
               if e["outcome"] == "done")
    report = json.loads((out / "batch-report.json").read_text())
    assert report["photos"][0]["path"] == "broken/corrupt.jpg"  # failures first
    page = (out / "batch-report.html").read_text()
    assert page.index("broken/corrupt.jpg") < page.index("coffee.png")
    assert page.count("<img ") == 2 * GOOD  # before and after each; none for the damaged
    csv_lines = (out / "batch-report.csv").read_text().splitlines()
    assert csv_lines[1].startswith("broken/corrupt.jpg,failed,") and len(csv_lines) == 13


# --------------------------------------------------------------------- a real cluster


@pytest.fixture(scope="module")
def cluster():
    """A ``ray start --head`` cluster on loopback (free ports, a private temp dir)."""
    temp = tempfile.mkdtemp(prefix="lrt", dir="/tmp")
    port = free_port()
    cmd = [str(Path(sys.executable).with_name("ray")), "start", "--head",
           "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
           f"--temp-dir={temp}", "--include-dashboard=false", "--disable-usage-stats",
           f"--dashboard-port={free_port()}", f"--dashboard-agent-listen-port={free_port()}",
           "--object-store-memory=300000000"]
    started = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop_cluster(temp)


def _stop_cluster(temp: str) -> None:
    """Stop the processes of this cluster only (found by its temp dir), then wait."""
    roots = _processes_naming(temp).values()
    procs = {p.pid: p for r in roots for p in [r, *r.children(recursive=True)]}
    for p in procs.values():
        try:
            p.terminate()
        except psutil.NoSuchProcess:
            pass
    # the raylet, the GCS, the autoscaler monitor and the runtime-env agent never exit
    # within 5 s of SIGTERM (they drain first): that wait was the whole 5-s teardown
    _gone, alive = psutil.wait_procs(list(procs.values()), timeout=1)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    subprocess.run(["rm", "-rf", temp], check=False)


def test_resume_after_the_driver_is_killed_on_a_cluster(shoot, expected, cluster, tmp_path):
    out = tmp_path / "out"
    proc = _batch(shoot, out, INSTRUCTION, "--ray", cluster, "--workers", "2")
    deadline = time.monotonic() + 240
    while len(_manifest(out)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, f"the batch ended before it could be killed: " \
        f"{proc.communicate()[1][-1500:]}"
    proc.send_signal(signal.SIGKILL)  # the driver dies at an arbitrary moment
    proc.communicate(timeout=30)
    before = {e["path"]: e for e in _manifest(out)}
    assert 3 <= len(before) < 12
    for path in out.rglob("*"):  # nothing half-written: every photo there decodes whole
        if path.is_file() and path.suffix in (".jpg", ".png", ".webp", ".tif", ".tiff") \
                and ".loupe-batch" not in path.parts:
            assert not path.name.startswith(".")
            assert load_image(path).pixels.size
    stamps = {rel: (out / rel).stat().st_mtime_ns for rel, e in before.items()
              if e["outcome"] == "done"}
    resumed = _batch(shoot, out, INSTRUCTION, "--resume", "--ray", cluster, "--json")
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 1, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["ray"].startswith(f"cluster {cluster}") and summary["ran"] >= 1
    assert summary["skipped"] == len(before) and summary["done"] == GOOD
    lines = [e["path"] for e in _manifest(out)]
    assert all(lines.count(rel) == 1 for rel in before)  # finished photos were not redone
    assert {rel: (out / rel).stat().st_mtime_ns for rel in stamps} == stamps
    _check_outputs(shoot, out, expected)

    # nothing left: it returns at once, without starting Ray
    again = _batch(shoot, out, INSTRUCTION, "--resume", "--json")
    stdout, _ = again.communicate(timeout=60)
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert (summary["ran"], summary["ray"], summary["skipped"]) == (0, "", 12)
    assert again.returncode == 1  # the damaged photo still counts as failed

    # a changed photo is redone, the others are not
    Image.fromarray(_render(640, 400)[::-1].copy()).save(shoot / "renders/nested/deeper"
                                                                 "/gradient.png")
    try:
        changed = _batch(shoot, out, INSTRUCTION, "--resume", "--json", "--ray", cluster)
        stdout, _ = changed.communicate(timeout=120)
        summary = json.loads(stdout.strip().splitlines()[-1])
        assert (summary["ran"], summary["skipped"]) == (1, 11)
    finally:
        Image.fromarray(_render(640, 400)).save(shoot / "renders/nested/deeper/gradient.png")


def test_refusals_are_one_line_and_write_nothing(shoot, tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "agent", "batch", *map(str, args)],
                              cwd=ROOT, env=_env(), capture_output=True, text=True,
                              timeout=60)

    for args, message in (((tmp_path / "none", tmp_path / "o", "x"), "none: no such folder"),
                          ((shoot, shoot, INSTRUCTION), "must not be the input folder"),
                          ((shoot, tmp_path / "o"), "say what to change"),
                          ((shoot, tmp_path / "o", INSTRUCTION, "--point", "a,b"), "--point"),
                          ((shoot, tmp_path / "o", INSTRUCTION, "--mask-from",
                            tmp_path / "nomasks"), "mask folder nomasks does not exist")):
        proc = run(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------- API / MCP


@pytest.fixture(scope="module")
def client(cluster, tmp_path_factory):
    """The app served on loopback; its batch jobs run on the module's cluster."""
    from gradio_client import Client

    from tests.serving import served_app

    mp = pytest.MonkeyPatch()
    mp.setenv("LOUPE_BATCH_RAY", cluster)
    mp.setenv("LOUPE_BATCH_WORKERS", "1")
    try:
        with served_app(tmp_path_factory.mktemp("batch-api")) as url:
            yield Client(url, verbose=False)
    finally:
        mp.undo()


def _until_ended(client, job_id: str, timeout: float = 240) -> tuple:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, results, report = client.predict(job_id, api_name="/batch_status")
        if status["state"] not in ("running", "cancelling"):
            return status, results, report
        assert results is None and report is None
        time.sleep(0.5)
    raise AssertionError("the batch did not end")


def test_api_batch_runs_a_job_and_hands_back_the_zip_and_report(client, shoot, expected,
                                                                tmp_path):
    import zipfile

    from gradio_client import handle_file

    more = tmp_path / "more.zip"
    with zipfile.ZipFile(more, "w") as zf:
        zf.write(shoot / "renders/scene.jpg", "x/scene.jpg")
        zf.write(shoot / "a/b/c/cat.tiff", "cat.tiff")
        zf.writestr("readme.txt", "not a photo")
    uploads = [shoot / "coffee.png", shoot / "q75/coffee.jpg", more,
               shoot / "broken/corrupt.jpg"]
    info = client.predict([handle_file(str(p)) for p in uploads], INSTRUCTION, False, "",
                          api_name="/batch")
    assert info["state"] == "running" and info["total"] == 5 and len(info["job_id"]) == 32
    running = json.loads(client.predict(info["job_id"], api_name="/batch_status_json"))
    assert running["state"] in ("running", "done") and running["total"] == 5
    status, results, report = _until_ended(client, info["job_id"])
    assert (status["state"], status["done"], status["failed"]) == ("done", 4, 1)
    public = json.loads(client.predict(info["job_id"], api_name="/batch_status_json"))
    assert public["results_url"].endswith(f"/batch/{info['job_id']}/results")
    with urllib.request.urlopen(public["results_url"], timeout=60) as resp:
        assert resp.read() == Path(results).read_bytes()  # the app's own link, same zip
    with urllib.request.urlopen(public["report_url"], timeout=60) as resp:
        assert resp.read() == Path(report).read_bytes()
    for bad in (public["results_url"].replace(info["job_id"], "0" * 32),
                public["report_url"].replace("/report", "/job.json")):
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(bad, timeout=60)
    assert status["failures"][0]["photo"] == "corrupt.jpg"
    assert "damaged" in status["failures"][0]["reason"]
    with zipfile.ZipFile(results) as zf:
        names = set(zf.namelist())
        assert zf.read("coffee.png") == expected["coffee.png"]
        assert zf.read("coffee.jpg") == expected["q75/coffee.jpg"]
        assert zf.read("more/x/scene.jpg") == expected["renders/scene.jpg"]
        assert zf.read("more/cat.tiff") == expected["a/b/c/cat.tiff"]
        assert {"batch-report.html", "batch-report.csv", "batch-report.json"} <= names
        assert "corrupt.jpg" not in names
    page = Path(report).read_text()
    assert page.count("data:image/jpeg;base64,") == 8  # one file: thumbnails inline
    assert page.index("corrupt.jpg") < page.index("coffee.png")
    assert str(ROOT) not in page and "/batches/" not in page and "/batches/" not in str(status)


def test_api_batch_cancel_keeps_what_is_finished(client, shoot, tmp_path):
    import zipfile

    from gradio_client import handle_file

    uploads = [shoot / "big/flat-40mp.jpg", shoot / "coffee.png", shoot / "bw/camera.png",
               shoot / "chelsea.webp"]
    info = client.predict([handle_file(str(p)) for p in uploads], INSTRUCTION, False, "",
                          api_name="/batch")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the 40-MP photo runs beside one small photo
        status, _, _ = client.predict(info["job_id"], api_name="/batch_status")
        if status["finished"] >= 1:
            break
        time.sleep(0.2)
    status, results, report = client.predict(info["job_id"], api_name="/batch_cancel")
    assert status["state"] == "cancelled" and 1 <= status["done"] < 4
    with zipfile.ZipFile(results) as zf:
        photos = [n for n in zf.namelist() if n.endswith((".png", ".webp", ".jpg"))
                  and not n.startswith(".loupe-batch/")]
        assert len(photos) == status["done"]
        for name in photos:
            assert Image.open(io.BytesIO(zf.read(name))).size[0] > 0
    assert "cancelled" in Path(report).read_text()
    again, _, _ = client.predict(info["job_id"], api_name="/batch_status")
    assert again["state"] == "cancelled" and again["done"] == status["done"]


def test_api_batch_refusals(client, shoot, monkeypatch):
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="no batch job with that id"):
        client.predict("../../etc", api_name="/batch_status")
    with pytest.raises(AppError, match="no batch job with that id"):
        client.predict("0" * 32, api_name="/batch_cancel")
    monkeypatch.setenv("LOUPE_BATCH_MAX_PHOTOS", "2")
    photos = [handle_file(str(shoot / n)) for n in ("coffee.png", "rocket.tif", "bw/camera.png")]
    with pytest.raises(AppError, match="3 photos is more than the 2 a batch may hold"):
        client.predict(photos, INSTRUCTION, False, "", api_name="/batch")
    with pytest.raises(AppError, match="instruction is empty"):
        client.predict(photos[:1], "   ", False, "", api_name="/batch")


# --------------------------------------------------------------------- the task itself


def _encode(pixels: np.ndarray, fmt: str = "PNG") -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, fmt)
    return buf.getvalue()


def test_task_with_a_mask_edits_only_inside_it(coffee):
    from agent.batch import job_settings
    from agent.batch_task import edit_photo

    mask = np.zeros(coffee.shape[:2], np.uint8)
    mask[:, : coffee.shape[1] // 3] = 255
    job = {**job_settings("make it brighter"), "mask": _encode(mask), "mask_name": "m.png"}
    result = edit_photo(_encode(coffee), "coffee.png", job)
    assert result["outcome"] == "done", result["reason"]
    after = load_image(result["output"]).pixels.astype(int)
    third = coffee.shape[1] // 3
    assert (after[:, : third - 10] - coffee[:, : third - 10]).mean() > 3
    np.testing.assert_array_equal(after[:, 2 * third:], coffee[:, 2 * third:])


def test_task_with_a_point_edits_the_clicked_region():
    from agent.batch import job_settings
    from agent.batch_task import edit_photo

    scene = _render(400, 300)
    job = job_settings("make this brighter", point=[0.3, 0.6])  # the red disc's centre
    result = edit_photo(_encode(scene), "scene.png", job)
    assert result["outcome"] == "done", result["reason"]
    after = load_image(result["output"]).pixels.astype(int)
    assert (after[180, 120] - scene[180, 120]).sum() > 10  # inside the disc
    np.testing.assert_array_equal(after[:40, :40], scene[:40, :40])  # the sky far away


def test_task_failures_carry_their_reason():
    from agent.batch import job_settings
    from agent.batch_task import edit_photo

    job = job_settings("make this brighter", point=[5000, 5000])
    assert "outside" in edit_photo(_encode(_render(64, 48)), "s.png", job)["reason"]
    broken = edit_photo(b"\x89PNG\r\n\x1a\nnot really", "x.png", job_settings("x"))
    assert broken["outcome"] == "failed" and broken["reason"].startswith("x.png")


def test_report_escapes_strangers_text(tmp_path):
    from agent.batch import BatchSummary
    from agent.batch_report import write_report

    evil = "<img src=x onerror=alert(1)>.jpg"
    entries = [{"path": "ok.jpg", "outcome": "done", "reason": "", "steps": ["warmer"],
                "score": 9.5, "seconds": 1.0, "instruction": "<b>warm</b>"},
               {"path": evil, "outcome": "failed", "reason": "<script>alert(2)</script>",
                "steps": [], "seconds": 0.1, "instruction": "=HYPERLINK(\"x\")"}]
    names = write_report(tmp_path, entries, BatchSummary(total=2, done=1, failed=1))
    page = (tmp_path / names["html"]).read_text()
    assert "<script>" not in page and "<img src=x" not in page and "&lt;script&gt;" in page
    assert page.index("onerror") < page.index("ok.jpg")  # failures first
    rows = (tmp_path / names["csv"]).read_text().splitlines()
    assert rows[1].startswith('<img src=x') and "'=HYPERLINK" in rows[1]


def test_batch_tab_words_escape_file_names():
    from ui.batch_tab import status_markdown

    text = status_markdown({"state": "done", "total": 2, "finished": 2, "done": 1,
                            "failed": 1, "eta_s": None,
                            "failures": [{"photo": "<img src=x>.jpg", "reason": "<b>bad</b>"}]})
    assert text.startswith("**Done** — 2 of 2 photos finished: 1 edited, 1 failed.")
    assert "<img" not in text and "&lt;img src=x&gt;.jpg: &lt;b&gt;bad&lt;/b&gt;" in text


def test_dry_run_plans_without_an_output(coffee):
    from agent.batch import job_settings
    from agent.batch_task import edit_photo

    result = edit_photo(_encode(coffee), "coffee.png",
                        job_settings("make it warmer", dry_run=True))
    assert result["outcome"] == "planned" and result["output"] is None
    assert any("temperature" in step for step in result["steps"])


def test_masks_are_found_by_the_photo_s_name(tmp_path):
    from agent.batch_files import Photo, mask_for

    masks = tmp_path / "masks"
    (masks / "a").mkdir(parents=True)
    (masks / "a" / "scan.png").write_bytes(b"x")
    (masks / "top.webp").write_bytes(b"x")
    found = mask_for(Photo("a/scan.jpg", tmp_path / "a/scan.jpg", 1), masks)
    assert found == masks / "a" / "scan.png"
    assert mask_for(Photo("b/top.tif", tmp_path / "b/top.tif", 1), masks) == masks / "top.webp"
    assert mask_for(Photo("c/none.jpg", tmp_path / "c/none.jpg", 1), masks) is None


def test_a_photo_without_its_mask_fails_with_the_reason(coffee):
    from agent.batch import job_settings
    from agent.batch_task import edit_photo

    job = {**job_settings("make it brighter"), "mask_required": True}
    result = edit_photo(_encode(coffee), "coffee.png", job)
    assert result["outcome"] == "failed" and result["output"] is None
    assert result["reason"].startswith("no mask named like coffee.png")
