"""``python -m eval`` end to end: make-hdd → run → report, and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _eval(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def _last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def test_make_run_report(tmp_path):
    data, out = tmp_path / "hdd", tmp_path / "run"
    made = _eval("make-hdd", "--sessions", "2", "--turns", "2", "--size", "320x180",
                 "--seed", "2", str(data))
    assert made.returncode == 0, made.stderr
    assert _last_json(made.stdout)["sessions"] == 2
    ran = _eval("run", "--dataset", str(data), "--agent", "oracle", "--lpips-side", "0",
                "--report", str(out))
    assert ran.returncode == 0, ran.stderr
    summary = _last_json(ran.stdout)
    assert summary["samples"] == 2 and summary["overall"]["if"] == 1.0
    assert (out / "report.md").is_file() and (out / "curves.png").is_file()
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    again = _eval("report", str(out), "--out", str(tmp_path / "rep"))
    assert again.returncode == 0, again.stderr
    assert len(_last_json(again.stdout)["written"]) == 4


def test_errors_are_reported_cleanly(tmp_path):
    missing = _eval("run", "--dataset", str(tmp_path / "nope"), "--agent", "oracle",
                    str(tmp_path / "o"))
    assert missing.returncode == 2 and "no dataset" in missing.stderr
    bad_size = _eval("make-hdd", "--size", "big", str(tmp_path / "x"))
    assert bad_size.returncode == 2 and "3840x2160" in bad_size.stderr
    unknown = _eval("run", "--dataset", str(tmp_path), "--agent", "nobody", str(tmp_path / "o"))
    assert unknown.returncode == 2 and "unknown agent" in unknown.stderr


def test_an_unexpected_failure_is_one_redacted_line_not_a_traceback(tmp_path, monkeypatch,
                                                                     capsys):
    import eval.__main__ as cli

    monkeypatch.setenv("HF_TOKEN", "s3cr3t-value-0123456789")

    def broken(*_args, **_kwargs):
        raise KeyError("https://u:pw@host/x?api_key=s3cr3t-value-0123456789")

    monkeypatch.setattr(cli, "score_pair", broken)
    for name in ("a.png", "b.png"):
        (tmp_path / name).write_bytes((ROOT / "assets" / "coffee.jpg").read_bytes())
    status = cli.main(["score", str(tmp_path / "a.png"), str(tmp_path / "b.png")])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: internal error (KeyError)")
    assert "s3cr3t" not in err and "Traceback" not in err and len(err.splitlines()) == 1
