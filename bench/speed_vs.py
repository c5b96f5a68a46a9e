"""Speed guard (issue 36): this commit against a fixed older commit, back to back (ABAB).

    .venv/bin/python bench/speed_vs.py [--base bbf534c] [--rounds 2] [--repeats 3]

Two measures, each run in a fresh process per commit and round, the commits alternating
(A B A B …):

* **turn** — one three-action instruction on a 12-MP photo (``bench/turn_latency.py``'s
  scene and instruction, each commit's own), ``--repeats`` warm turns on fresh sessions
  after one cold turn; the figure is the median warm wall time, and the cold turn is kept.
* **autopilot** — ``agent.search.mcts.autopilot`` at 3 × 20 × 3 on ``bench/autopilot.py``'s
  12-MP photo (each commit's own), wall seconds.

Every run gets an empty ``LOUPE_DATA_DIR``, the same thread settings, and a new noise seed
per repeat: the scene is perturbed by ±2 levels of seeded noise, so no cache keyed on the
image's content can make a repeat free. The older commit is exported with ``git archive``
into a temporary folder and uses the same perception files (``LOUPE_WEIGHTS_DIR``). The
driver below runs inside each commit's tree and uses only APIs both commits have.

The figure per commit is the best (lowest) of its rounds; the ratios are this commit over
the base (< 1 is faster). The last line is one JSON object: ``turn_ratio``,
``autopilot_ratio``, ``cold_turn_ratio``, and the absolute seconds per commit; the same
for process CPU time (``turn_cpu_ratio``, ``autopilot_cpu_ratio``: all threads), which
the other processes on a shared machine disturb much less than wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DRIVER = r'''
import json, sys, tempfile, time
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

def noisy(image, seed):
    rng = np.random.default_rng(seed)
    noise = rng.integers(-2, 3, size=image.shape, dtype=np.int16)
    return np.clip(image.astype(np.int16) + noise, 0, 255).astype(np.uint8)

mode, seed, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if mode == "turn":
    import turn_latency as tl
    from agent.session import EditSession
    times, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats + 1):
            session = EditSession.create(noisy(tl.scene(), seed * 100 + i), Path(tmp) / f"s{i}")
            t, c = time.perf_counter(), time.process_time()
            result = session.turn(tl.INSTRUCTION)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
            assert all(s.status == "applied" for s in result.steps), result.steps
    print(json.dumps({"cold_s": times[0], "median_s": float(np.median(times[1:])),
                      "cold_cpu_s": cpus[0], "median_cpu_s": float(np.median(cpus[1:]))}))
else:
    import autopilot as ap
    from agent.search.autopilot_memory import AutopilotMemory
    from agent.search.mcts import autopilot
    photo = noisy(ap.make_photo(), seed)
    t, c = time.perf_counter(), time.process_time()
    autopilot(photo, iterations=3, simulations=20, depth=3, top_k=3, seed=0,
              memory=AutopilotMemory())
    print(json.dumps({"seconds": time.perf_counter() - t, "cpu_s": time.process_time() - c}))
'''


def _export(commit: str, dest: Path) -> Path:
    """The tree of ``commit`` in ``dest`` (``git archive``), with the driver beside its benches."""
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _run(tree: Path, mode: str, seed: int, repeats: int, env: dict[str, str]) -> dict:
    driver = tree / "bench" / "_speed_vs_driver.py"
    driver.write_text(DRIVER)
    with tempfile.TemporaryDirectory(prefix="loupe-speed-") as data:
        run_env = dict(env, LOUPE_DATA_DIR=data)
        done = subprocess.run([sys.executable, str(driver), mode, str(seed), str(repeats)],
                              cwd=tree, env=run_env, capture_output=True, text=True,
                              timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} on {tree.name} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="bbf534c")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=("turn", "autopilot"), default=None)
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("LOUPE_WEIGHTS_DIR", str(ROOT / "weights"))
    env.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 2))
    modes = [args.only] if args.only else ["turn", "autopilot"]
    results: dict[str, dict[str, list[dict]]] = {"base": {}, "head": {}}
    with tempfile.TemporaryDirectory(prefix="loupe-vs-") as tmp:
        trees = {}
        for label, commit in (("base", args.base), ("head", args.head)):
            folder = Path(tmp) / label
            folder.mkdir()
            trees[label] = _export(commit, folder)
        seed = 0
        for rnd in range(args.rounds):
            for mode in modes:
                for label in ("base", "head") if rnd % 2 == 0 else ("head", "base"):
                    seed += 1
                    out = _run(trees[label], mode, seed, args.repeats, env)
                    results[label].setdefault(mode, []).append(out)
                    print(json.dumps({"round": rnd, "commit": label, "mode": mode, **out}),
                          flush=True)
    summary: dict[str, object] = {"base": args.base, "head": args.head,
                                  "rounds": args.rounds, "load_avg_1min":
                                  round(os.getloadavg()[0], 1)}
    if "turn" in modes:
        best = {k: min(r["median_s"] for r in results[k]["turn"]) for k in results}
        cold = {k: min(r["cold_s"] for r in results[k]["turn"]) for k in results}
        cpu = {k: min(r["median_cpu_s"] for r in results[k]["turn"]) for k in results}
        summary.update(turn_s=best, cold_turn_s=cold, turn_cpu_s=cpu,
                       turn_ratio=round(best["head"] / best["base"], 3),
                       cold_turn_ratio=round(cold["head"] / cold["base"], 3),
                       turn_cpu_ratio=round(cpu["head"] / cpu["base"], 3))
    if "autopilot" in modes:
        best = {k: min(r["seconds"] for r in results[k]["autopilot"]) for k in results}
        cpu = {k: min(r["cpu_s"] for r in results[k]["autopilot"]) for k in results}
        summary.update(autopilot_s=best, autopilot_cpu_s=cpu,
                       autopilot_ratio=round(best["head"] / best["base"], 3),
                       autopilot_cpu_ratio=round(cpu["head"] / cpu["base"], 3))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
