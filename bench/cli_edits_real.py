"""All nine command-line edits of ``tests/test_cli_edits_real.py`` on the labelled
composite set (12–20 MP), with the same checks; the suite runs five of them (``SUITE``).

Usage: ``.venv/bin/python bench/cli_edits_real.py [--cases ID,…]``.

Each edit is one fresh ``python -m agent edit PHOTO "…" --out X`` process. Per case: the
outcome (``edited``; ``refused`` where the agent said honestly that it could not, as the
test accepts; ``failed: …`` with the first line of the failed check), the wall time, the
CLI process's CPU time (user + system: on a shared machine the steadier figure; the
checks' own work in this process is not in it) and the load average when it ended.
The last printed line is one JSON object: ``cases`` (per case), ``passed`` and
``total``, ``load_average_start`` and ``load_average``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_cli_edits_real import EDITS, cli_edit  # noqa: E402


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    args = ap.parse_args(argv)
    wanted = set(filter(None, args.cases.split(",")))
    load_start = os.getloadavg()
    results = {}
    for case_id, instruction, check in EDITS:
        if wanted and case_id not in wanted:
            continue
        start = time.perf_counter()
        cpu = _children_cpu()
        with tempfile.TemporaryDirectory(prefix="cli-edit-") as tmp:
            try:
                outcome = cli_edit(Path(tmp), case_id, instruction, check)
            except AssertionError as exc:
                outcome = "failed: " + (str(exc).splitlines() or ["assertion"])[0][:300]
        results[case_id] = {"instruction": instruction, "outcome": outcome,
                            "seconds": round(time.perf_counter() - start, 1),
                            "cpu_seconds": round(_children_cpu() - cpu, 1),
                            "load_average": round(os.getloadavg()[0], 2)}
        print(f"{case_id}: {instruction!r} -> {outcome} "
              f"({results[case_id]['seconds']} s, CLI CPU {results[case_id]['cpu_seconds']} s)",
              flush=True)
    passed = sum(not r["outcome"].startswith("failed") for r in results.values())
    print(json.dumps({"cases": results, "passed": passed, "total": len(results),
                      "load_average_start": [round(x, 2) for x in load_start],
                      "load_average": [round(x, 2) for x in os.getloadavg()]}))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
