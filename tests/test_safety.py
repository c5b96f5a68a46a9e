"""The small guards the hostile corpus relies on, one by one: ids, secrets, masks,
graph checks and the staged unzip."""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agent.session.state import MAX_NODES, StateError, check_graph
from pipelines.archives import ArchiveError, check_members, extract
from pipelines.config import get_settings
from pipelines.files import check_id, is_id, slug, staging
from pipelines.masks import MaskError, fit_mask
from pipelines.redact import SecretFilter, hide_paths, redact, redact_url

# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("value", ["n1\n", "../x", "", "a" * 65, "n 1", "n1/", "ｎ1", None,
                                   5, ["n1"], "n1\x00"])
def test_malformed_ids_are_refused(value):
    assert not is_id(value)
    with pytest.raises(ValueError, match="malformed state id"):
        check_id(value, "state id")


def test_well_formed_ids_and_slugs():
    for value in ("n0", "n12", "region-ab12", "A" * 64, "-_x"):
        assert check_id(value) == value
    assert slug("../../My Photo (1).JPG") == "My_Photo_1_JPG"
    assert slug("../..") == "photo" and is_id(slug("a" * 500)) and len(slug("a" * 500)) == 40


# --------------------------------------------------------------------------- secrets


def test_urls_and_text_lose_their_secrets(monkeypatch):
    monkeypatch.setenv("LOUPE_LLM_API_KEY", "plain-key-without-shape-42")
    url = "https://bob:hunter2@api.example.com:8443/v1?api_key=abc123&x=1#frag"
    assert redact_url(url) == "https://api.example.com:8443/v1"
    text = redact(f"POST {url} Authorization: Bearer sk-abcdefghijklmnopqrstu "
                  "token hf_ABCDEFGHIJKLMNOPQRSTUV and plain-key-without-shape-42")
    for secret in ("hunter2", "abc123", "sk-abcdefghij", "hf_ABCDEF", "plain-key-without"):
        assert secret not in text
    assert "api.example.com" in text
    assert hide_paths("cannot read /srv/loupe/sessions/x/root.png, see http://h:1/v1/a") \
        == "cannot read root.png, see http://h:1/v1/a"


def test_logs_and_settings_never_show_a_secret(monkeypatch):
    monkeypatch.setenv("LOUPE_LLM_BASE_URL", "http://loupe:pw-123456@10.0.0.5:8000/v1")
    monkeypatch.setenv("LOUPE_LLM_API_KEY", "k-987654321")
    assert "pw-123456" not in repr(get_settings()) and "k-987654321" not in repr(get_settings())
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Keep()
    handler.addFilter(SecretFilter())
    logger = logging.getLogger("loupe.test.redact")
    logger.addHandler(handler)
    try:
        logger.warning("calling %s with %s", get_settings().llm_base_url, "k-987654321")
        try:
            raise RuntimeError("failed: http://loupe:pw-123456@10.0.0.5:8000/v1")
        except RuntimeError:
            logger.exception("boom")
    finally:
        logger.removeHandler(handler)
    joined = "\n".join(records)
    assert "10.0.0.5" in joined and "pw-123456" not in joined and "k-987654321" not in joined


def test_the_status_line_names_the_model_without_address_or_credentials(monkeypatch):
    import web

    monkeypatch.setenv("LOUPE_LLM_BASE_URL", "https://u:s3cr3t-pass@llm.example.org/v1?key=zz9")
    monkeypatch.setenv("LOUPE_LLM_MODEL", "qwen")
    line = web.status_line(None)
    assert "language model (qwen)" in line
    assert "s3cr3t" not in line and "zz9" not in line and "llm.example.org" not in line


# --------------------------------------------------------------------------- masks


def test_masks_scale_only_when_their_aspect_matches():
    canvas = np.zeros((75, 100), bool)
    canvas[10:20, 10:30] = True
    mask = fit_mask(canvas, (3000, 4000))
    assert mask.shape == (3000, 4000) and mask[500, 500] and not mask[2000, 2000]
    assert fit_mask(np.ones((76, 100), bool), (3000, 4000)).all()  # one pixel of rounding
    with pytest.raises(MaskError, match="100x50 but the image is 4000x3000"):
        fit_mask(np.ones((50, 100), bool), (3000, 4000))
    with pytest.raises(MaskError, match="marks nothing"):
        fit_mask(np.zeros((3000, 4000), np.uint8), (3000, 4000))
    assert not fit_mask(np.zeros((75, 100), bool), (3000, 4000), allow_empty=True).any()
    rgba = np.zeros((30, 40, 4), np.uint8)
    rgba[..., 3] = 0
    rgba[5:10, 5:10, 3] = 255  # transparency marks the area, not brightness
    assert fit_mask(rgba, (30, 40)).sum() == 25


# --------------------------------------------------------------------------- graphs


def _chain(n: int) -> dict:
    nodes = [{"id": "n0", "parent": None, "layers": []}]
    nodes += [{"id": f"n{i}", "parent": f"n{i - 1}", "layers": []} for i in range(1, n)]
    return {"version": 1, "root": "n0", "head": f"n{n - 1}", "width": 10, "height": 10,
            "nodes": nodes}


def test_graph_checks_are_linear_and_find_cycles_orphans_and_bad_boxes():
    check_graph(_chain(MAX_NODES))  # the largest graph accepted (timed in bench/hostile.py)
    looped = _chain(MAX_NODES)
    looped["nodes"][1]["parent"] = f"n{MAX_NODES - 1}"  # n1 … n99999 → n1: a cycle
    with pytest.raises(StateError, match="cycle"):
        check_graph(looped)
    orphan = _chain(3)
    orphan["nodes"][2]["parent"] = "n7"
    with pytest.raises(StateError, match="unknown parent n7"):
        check_graph(orphan)
    boxed = _chain(2)
    boxed["nodes"][1]["layers"] = [{"bbox": [0, 0, 11, 5], "patch": "layers/a.png",
                                    "mask": "layers/b.png"}]
    with pytest.raises(StateError, match="outside the 10x10 image"):
        check_graph(boxed)
    with pytest.raises(StateError, match="limit"):
        check_graph(_chain(2) | {"width": 40000, "height": 40000}, max_pixels=100_000_000)


# --------------------------------------------------------------------------- unzip


def test_extract_counts_inflated_bytes_and_leaves_nothing_on_refusal(tmp_path: Path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ok.txt", b"fine")
        zf.writestr("big.bin", bytes(5_000_000))
    with zipfile.ZipFile(path) as zf:
        infos = check_members(zf.infolist(), 10_000_000)
        with pytest.raises(ArchiveError, match="big.bin' unpacks past"):
            extract(zf, infos, tmp_path / "out", 10_000_000, member_cap=1_000_000)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip"]
        written = extract(zf, infos, tmp_path / "out", 10_000_000)
    assert written == 5_000_004 and (tmp_path / "out" / "ok.txt").read_bytes() == b"fine"


def test_staging_becomes_the_target_by_one_rename_or_disappears(tmp_path: Path):
    with staging(tmp_path / "t") as stage:
        (stage / "f").write_text("x")
        assert not (tmp_path / "t").exists()
    assert (tmp_path / "t" / "f").read_text() == "x"
    with pytest.raises(RuntimeError), staging(tmp_path / "u") as stage:
        (stage / "f").write_text("x")
        raise RuntimeError("half way")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
