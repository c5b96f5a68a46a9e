"""Shared fixtures: real photos from scikit-image's bundled data, small and fast."""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

# Cache bytecode even where the environment turns it off (PYTHONDONTWRITEBYTECODE=1 here):
# otherwise every CLI, server, MCP and Ray process a test starts compiles the project from
# source again (about 3.6 s of CPU over test_agent_cli's few processes). Git ignores it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
logging.getLogger("PIL").setLevel(logging.WARNING)


def _rgb(name: str) -> np.ndarray:
    from skimage import data

    img = getattr(data, name)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return np.ascontiguousarray(img[..., :3].astype(np.uint8))


@pytest.fixture(scope="session")
def astronaut() -> np.ndarray:
    """512×512 RGB portrait (skimage.data.astronaut)."""
    return _rgb("astronaut")


@pytest.fixture(scope="session")
def coffee() -> np.ndarray:
    """400×600 RGB photo of a coffee cup."""
    return _rgb("coffee")


@pytest.fixture(scope="session")
def chelsea() -> np.ndarray:
    """300×451 RGB photo of a cat."""
    return _rgb("chelsea")


@pytest.fixture(scope="session", autouse=True)
def _nets_remember_more_views() -> Iterator[None]:
    """The perception nets' memo (``detectors._Net._forward``) keeps more answers here.

    The memo returns a net's earlier answer to the exact same input tensor (keyed by its
    bytes, so never a stale one; a copy, so never a shared one). The app keeps the last 4
    of 0.5 MB at most, for its memory budget; the suite asks about the same views again
    and again across tests (a case located in a module fixture, then edited; the same
    photo in many tests): in ten perception-heavy files, 227 of 736 forwards (33.4 of
    102.8 s of CPU) repeated an input seen before. Here each net keeps its last 128 answers
    of up to 2 MB (the detector's passes included; ~0.3 GB at most over the nets, mostly
    the detector's 1.8 MB). Wave 30 counted 18 such files in one process: of 918 forwards
    254 were answered by a memo of 32 and 40 more (10.8 s of 150 s of the nets' CPU) were
    repeats it had already let go. The answers are the same bytes the net gives; only how
    many are kept differs."""
    from pipelines.perception import detectors

    saved = detectors.FORWARD_MEMO, detectors.FORWARD_MEMO_BYTES
    detectors.FORWARD_MEMO, detectors.FORWARD_MEMO_BYTES = 128, 2 << 20
    yield
    detectors.FORWARD_MEMO, detectors.FORWARD_MEMO_BYTES = saved


@pytest.fixture(scope="session", autouse=True)
def _nets_share_answers_between_workers(tmp_path_factory: pytest.TempPathFactory
                                        ) -> Iterator[None]:
    """The two workers of ``pytest -n 2`` keep the nets' answers in one folder of this run
    (``pipelines.perception.shared_memo``): a view one worker's net answered (the same
    photo at the same size in two test files) is not run again by the other. Same bytes
    as the net gives, keyed by the model file and the input tensor's bytes; a fresh
    folder each run, so nothing carries over from an earlier run or another checkout."""
    from pipelines.perception import shared_memo

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent                       # pytest-N/, shared by popen-gw0, gw1, …
    folder = base / "net-answers"
    folder.mkdir(exist_ok=True)
    saved, shared_memo.FOLDER = shared_memo.FOLDER, folder
    yield
    shared_memo.FOLDER = saved


@pytest.fixture(autouse=True)
def _fresh_endpoint_breakers() -> None:
    """An endpoint failure in one test never opens the circuit for the next one."""
    from pipelines.llm import reset_breakers

    reset_breakers()


#: The real photographs the tests read, kept between runs like the nets' files in
#: ``weights/`` (git ignores it): a run fetched all 158 from their 12 Debian packages again,
#: ~41 s of CPU and ~64 s of a worker (wave 30, load 10).
PHOTO_CACHE = Path(__file__).resolve().parents[1] / ".cache" / "real-photos"


def _drop_altered_photos(folder: Path) -> None:
    """Delete every cached photo (or its labels) that is no longer the file
    ``photos.json`` records: the next test that reads it fetches and checks it again."""
    from eval import realphotos

    table = realphotos.catalogue()
    present = [pid for pid, p in table.items() if (folder / p.filename).is_file()]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOUPE_PHOTOS_DIR", str(folder))
        altered = realphotos.verify(present)
    for pid in present:
        photo, labels = table[pid], folder / f"{pid}.labels.json"
        if pid in altered:
            (folder / photo.filename).unlink(missing_ok=True)
        if photo.labels_sha256 and labels.is_file() and hashlib.sha256(
                labels.read_bytes()).hexdigest() != photo.labels_sha256:
            labels.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def _real_photos_dir() -> str:
    """One cache of the real photographs (``eval.realphotos``) for every run (``PHOTO_CACHE``).

    A photo's cache defaults to ``<LOUPE_DATA_DIR>/photos``, and each test gets a fresh
    data folder: every test that read a real photo downloaded and unpacked its Debian
    package again (15 times for test_scene_nouns' 11 tests, 51 of its 75 s). A photo lands
    in this folder only after its SHA-256 matched ``photos.json`` (an atomic rename, so two
    workers of ``pytest -n`` fetching it at once each leave the same bytes), and each run
    checks what it finds there first (``_drop_altered_photos``, ~1 s), so a later test
    reads the same checked bytes. ``test_realphotos`` (whose point is the download) sets a
    folder of its own; a ``LOUPE_PHOTOS_DIR`` set outside the run is kept."""
    if os.environ.get("LOUPE_PHOTOS_DIR"):
        return os.environ["LOUPE_PHOTOS_DIR"]
    PHOTO_CACHE.mkdir(parents=True, exist_ok=True)
    _drop_altered_photos(PHOTO_CACHE)
    return str(PHOTO_CACHE)


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory: pytest.TempPathFactory,
                       monkeypatch: pytest.MonkeyPatch, _real_photos_dir: str) -> None:
    """Sessions and caches of a test never land in the user's home."""
    monkeypatch.setenv("LOUPE_DATA_DIR", str(tmp_path_factory.mktemp("loupe-data")))
    monkeypatch.setenv("LOUPE_PHOTOS_DIR", _real_photos_dir)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything the test modules imported is alive for the whole run: see below."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After each test module (its module fixtures torn down), its garbage is collected and
    what is still alive (imported libraries, the nets, caches) is frozen: the interpreter's
    full collections then stop re-walking those ~800k long-lived objects again and again
    (about a twentieth of the suite's CPU time went to that). Nothing a test builds is
    frozen before its module ends, so a test's own ``gc.collect()`` frees what it drops."""
    yield
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        gc.collect()
        gc.freeze()


#: The files that take longest (seconds of one worker), longest first. ``make test`` hands
#: whole files to two workers (``--dist loadfile``) in the order collected; pytest-xdist
#: gives each worker one file, and the next as soon as the one it runs has two tests left,
#: so the two end close together only when the long files go first and many short ones
#: are left to even out the ends. The first six from wave 28's run of the suite
#: (cea9ba2's tests, load 10-15 beside the lead's benches, stopped after them; each figure
#: is the span of the file's results on its worker): the labelled set's file is the
#: second longest, not the fifth. The rest from wave 27's run (load 12-13; both runs are
#: ~2x an idle one). Every file of ≥ 40 s there is listed.
SLOWEST_FILES = (
    "tests/browser/test_ui.py",               # 549 s (its 13 tests after wave 28)
    "tests/test_localization_set.py",         # 368
    "tests/test_perception.py",               # 356
    "tests/test_cli_edits_real.py",           # 260
    "tests/test_batch.py",                    # 215
    "tests/test_independent.py",              # 183
    "tests/test_assurance.py",                # 141
    "tests/test_edit_quality.py",             # 134
    "tests/browser/test_ui_reference.py",     # 131
    "tests/test_mcp.py",                      # 118
    "tests/browser/test_selection.py",        # 110
    "tests/browser/test_ui_feedback.py",      # 98
    "tests/test_reference_cli.py",            # 87
    "tests/test_reference_api.py",            # 86
    "tests/test_zoom_search.py",              # 86
    "tests/test_agent_cli.py",                # 84
    "tests/test_api.py",                      # 74
    "tests/browser/test_ui_batch.py",         # 73
    "tests/test_hostile.py",                  # 73
    "tests/test_realset.py",                  # 72
    "tests/test_mirror_and_light.py",         # 71
    "tests/test_subject_guess_wave25.py",     # 67
    "tests/test_prints_wave13.py",            # 65
    "tests/test_do_no_harm.py",               # 65
    "tests/test_app.py",                      # 63
    "tests/test_steady.py",                   # 60
    "tests/test_subject_wave19.py",           # 59
    "tests/test_eval_runner.py",              # 58
    "tests/test_realphotos.py",               # 56
    "tests/test_hostile_http.py",             # 54
    "tests/test_eval_metrics.py",             # 53
    "tests/test_diffusion_editors.py",        # 51
    "tests/test_critic.py",                   # 48
    "tests/test_cli_pipelines.py",            # 46
    "tests/test_api_selection.py",            # 44
    "tests/test_scene_nouns.py",              # 43
    "tests/test_qualifiers.py",               # 42
    # wave 27's files that run the CLI or locate on real photos (30-80 s each at load 12,
    # not measured idle): few tests each, so not to be left for last
    "tests/test_faces_wave27.py",
    "tests/test_partial_status_wave27.py",
    "tests/test_exclusions_wave27.py",
    "tests/test_wishes_wave27.py",
    "tests/test_also_wave27.py",
    # wave 29: three real-photo localisations (21-42 s each at load 11, most of it the
    # first fetch of their packages' photos when run alone)
    "tests/test_absent_wave29.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest files first (``SLOWEST_FILES``), then the rest by how many tests they hold,
    most first (what pytest-xdist's own ordering does); a file's tests keep their order."""
    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    order = sorted(by_file, key=lambda f: (rank.get(f, len(rank)), -len(by_file[f])))
    items[:] = [item for name in order for item in by_file[name]]
