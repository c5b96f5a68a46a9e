"""Hostile inputs: is every attack refused, how long does it take, how much memory?

Builds the corpus of ``tests/hostile_corpus.py`` (session archives with traversal ids,
cycles, zip bombs of ``--bomb-mb`` MB, pixel bombs, links, duplicates, truncation…; bad
photos, masks, instructions, ids, boxes and benchmark datasets) and sends each attack
through the service layer (what the UI, HTTP API and MCP tools call) and through
``python -m agent`` (in process). Per attack: wall time and peak extra resident memory
(sampled every 5 ms). Also times the graph check on the largest graph accepted, and an
edit against an unreachable LLM endpoint (first edit, then with the circuit open).

Usage::

    .venv/bin/python bench/hostile.py [--bomb-mb 1024]

The last printed line is one JSON object: corpus sizes, refusals, the worst time and
memory per entry point, and the extra figures.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _worst(outcomes: list, key: str) -> dict:
    item = max(outcomes, key=lambda o: getattr(o, key))
    return {"attack": item.name, key: round(getattr(item, key), 3)}


def _graph_check_seconds() -> dict:
    from agent.session.state import MAX_NODES, StateError, check_graph

    nodes = [{"id": "n0", "parent": None, "layers": []}]
    nodes += [{"id": f"n{i}", "parent": f"n{i - 1}", "layers": []} for i in range(1, MAX_NODES)]
    graph = {"version": 1, "root": "n0", "head": "n1", "width": 8, "height": 8,
             "nodes": nodes}
    start = time.perf_counter()
    check_graph(graph)
    valid = time.perf_counter() - start
    nodes[1]["parent"] = nodes[-1]["id"]
    start = time.perf_counter()
    try:
        check_graph(graph)
    except StateError:
        pass
    return {"nodes": MAX_NODES, "valid_s": round(valid, 3),
            "cycle_s": round(time.perf_counter() - start, 3)}


def _edits_against(url: str, sid: str) -> dict:
    """Seconds of three edits while the LLM endpoint is ``url`` (a fresh circuit)."""
    import web
    from pipelines.llm import reset_breakers

    reset_breakers()
    os.environ["LOUPE_LLM_BASE_URL"] = url
    web.get_manager().get(sid)._edit = None  # reopen: backends follow the settings
    try:
        times = []
        for text in ("make it warmer", "make it brighter", "increase the contrast"):
            start = time.perf_counter()
            web.edit_turn(sid, text)
            times.append(round(time.perf_counter() - start, 3))
    finally:
        del os.environ["LOUPE_LLM_BASE_URL"]
        web.get_manager().get(sid)._edit = None
    return {"first_edit_s": times[0], "next_edits_s": times[1:]}


def _dead_endpoints(sid: str) -> dict:
    """An endpoint that refuses connections, and one that accepts but never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused = _edits_against(f"http://127.0.0.1:{port}/v1", sid)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        hung = _edits_against(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", sid)
    return {"refused": refused, "silent": hung}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bomb-mb", type=int, default=1024, help="inflated size of the bombs")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="loupe-hostile-"))
    os.environ["LOUPE_DATA_DIR"] = str(tmp / "data")

    import numpy as np
    from PIL import Image
    from skimage import data

    import web
    from agent.session import EditSession
    from tests.hostile_corpus import build, cli_args, rss_mb, run_api, run_cli

    photo = np.ascontiguousarray(data.chelsea()[::4, ::4])
    start = time.perf_counter()
    attacks = build(tmp / "corpus", photo, bomb_mb=args.bomb_mb)
    built = time.perf_counter() - start
    Image.fromarray(photo).save(tmp / "cat.png")
    sid = web.ensure_session(None)
    web.open_image(sid, tmp / "cat.png", "cat.png")
    web.edit_turn(sid, "make it warmer")
    EditSession.create(tmp / "cat.png", tmp / "cli" / "cli-base")
    base = rss_mb()

    api, cli = [], []
    print(f"{'attack':32s} {'kind':10s} {'api s':>7s} {'api MB':>7s} {'cli s':>7s} "
          f"{'cli MB':>7s}  refused")
    for attack in attacks:
        a = run_api(attack, sid)
        api.append(a)
        argv = cli_args(attack, tmp / "cat.png", tmp / "cli")
        c = run_cli(attack, argv) if argv else None
        if c is not None:
            cli.append(c)
        print(f"{attack.name:32s} {attack.kind:10s} {a.seconds:7.3f} {a.peak_mb:7.1f} "
              + (f"{c.seconds:7.3f} {c.peak_mb:7.1f}" if c else f"{'-':>7s} {'-':>7s}")
              + f"  {a.refused and (c is None or c.refused)}")
    kinds: dict[str, int] = {}
    for attack in attacks:
        kinds[attack.kind] = kinds.get(attack.kind, 0) + 1
    still_works = web.edit_turn(sid, "make it brighter")[1]["ok"]
    summary = {
        "corpus": {"archives": kinds.get("archive", 0),
                   "other": len(attacks) - kinds.get("archive", 0), "by_kind": kinds,
                   "bomb_mb": args.bomb_mb, "build_s": round(built, 1)},
        "refused": {"api": sum(o.refused for o in api), "cli": sum(o.refused for o in cli),
                    "api_of": len(api), "cli_of": len(cli)},
        "worst_seconds": {"api": _worst(api, "seconds"), "cli": _worst(cli, "seconds")},
        "worst_memory_mb": {"api": _worst(api, "peak_mb"), "cli": _worst(cli, "peak_mb")},
        "baseline_rss_mb": round(base, 1),
        "session_still_edits": still_works,
        "graph_check": _graph_check_seconds(),
        "dead_llm_endpoint": _dead_endpoints(sid),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
