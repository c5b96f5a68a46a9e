"""How long a cold process takes to load the WordNet lexicon (issue 34: < 0.3 s).

Each repeat starts a fresh Python process that imports ``pipelines.operations.wordnet``
(which imports the ``pipelines.operations`` package: numpy, OpenCV, the registry) and loads
the derived index (``lexicon()``), and reports both times measured inside it; the
interpreter's own start is not counted. Also prints the index's size and
what it holds.

Run: ``.venv/bin/python bench/lexicon_load.py [--repeats 5]``. The last line is one JSON
object with ``load_s_median``/``load_s_max`` (reading the index),
``import_and_load_s_median``/``_max``, ``index_mb``, ``lemmas`` and ``object_nouns``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, time
start = time.perf_counter()
from pipelines.operations.wordnet import lexicon
imported = time.perf_counter()
lex = lexicon()
end = time.perf_counter()
print(json.dumps({"s": end - start, "load": end - imported, "ok": lex is not None,
                  "lemmas": sum(len(v) for v in lex._pos.values()) if lex else 0,
                  "object_nouns": sum(1 for _ in lex.object_nouns()) if lex else 0}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    if not runs[0]["ok"]:
        raise SystemExit("the lexicon is not installed: run `python -m pipelines.perception "
                         "fetch`")
    sys.path.insert(0, str(ROOT))
    from pipelines.operations.wordnet import index_path

    times, loads = [r["s"] for r in runs], [r["load"] for r in runs]
    print(json.dumps({"load_s_median": round(statistics.median(loads), 3),
                      "load_s_max": round(max(loads), 3),
                      "import_and_load_s_median": round(statistics.median(times), 3),
                      "import_and_load_s_max": round(max(times), 3), "repeats": len(times),
                      "index_mb": round(index_path().stat().st_size / 1e6, 2),
                      "lemmas": runs[0]["lemmas"], "object_nouns": runs[0]["object_nouns"]}))


if __name__ == "__main__":
    main()
