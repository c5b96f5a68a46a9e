"""How well the embedded planner reads everyday phrasings, and how fast.

Runs the default (rule + front end + intent library) planner on the phrasing sets in
``tests/data``: ``phrasing_tuning.json`` (used while building) and
``phrasing_heldout.json`` (written first, before the planner was read or run, and never
tuned on), and their second generation (issue 34), ``phrasing_everyday_tune.json`` and
``phrasing_everyday_heldout.json`` (held-out committed before the planner changed). Each
case's plan is checked by ``eval.phrasing.case_matches`` (the grammar is documented
there). Latency: the first plan (which loads the sentence model and embeds the intent
library) is reported as the cold start; then every phrasing is planned warm,
``--repeats`` times.

Run: ``.venv/bin/python bench/planner_phrasing.py [--show-failures] [--set NAME]``.
The last line is one JSON object with ``<set>_accuracy`` and ``<set>_cases`` per set,
``verbs_taken_for_objects`` (``eval.phrasing.verbs_as_objects`` over every set),
``plan_latency_ms_p50``, ``plan_latency_ms_p95``, ``plan_latency_ms_max`` and
``cold_start_s``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.brain.intents import default_matcher  # noqa: E402
from agent.brain.rules import RulePlanner  # noqa: E402
from eval.phrasing import (  # noqa: E402
    case_matches,
    describe_view,
    plan_view,
    verbs_as_objects,
)

SETS = {"tuning": ROOT / "tests/data/phrasing_tuning.json",
        "heldout": ROOT / "tests/data/phrasing_heldout.json",
        "everyday_tune": ROOT / "tests/data/phrasing_everyday_tune.json",
        "everyday_heldout": ROOT / "tests/data/phrasing_everyday_heldout.json"}


def view_of(plan: Any) -> dict[str, Any]:
    """A Plan as the plain dict ``eval.phrasing`` checks."""
    actions = [a.model_dump(mode="json") for a in plan.actions]
    return plan_view(actions, plan.is_edit, plan.choices)


def run_set(planner: RulePlanner, cases: list[dict[str, Any]],
            times: list[float], verbs: list[str] | None = None) -> tuple[float, list[str]]:
    """Accuracy of ``planner`` on ``cases`` and a line per failure; appends latencies, and
    to ``verbs`` each verb or particle taken for an object."""
    failures = []
    for case in cases:
        start = time.perf_counter()
        plan = planner.plan(case["text"], has_mask=bool(case.get("selection")))
        times.append(time.perf_counter() - start)
        view = view_of(plan)
        if verbs is not None:
            verbs += [f"{case['text']!r}: {w}" for w in verbs_as_objects(case["text"], view)]
            if re.search(r"could not tell where", plan.message):
                verbs.append(f"{case['text']!r}: {plan.message[:80]}")
        if not case_matches(view, case):
            where = " [selection]" if case.get("selection") else ""
            failures.append(f"{case['text']!r}{where}: expected {case['plan']}, got "
                            f"{describe_view(view)} ({plan.message[:80]!r})")
    return 1 - len(failures) / len(cases), failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show-failures", action="store_true")
    parser.add_argument("--set", choices=list(SETS), action="append")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    planner = RulePlanner()
    start = time.perf_counter()
    default_matcher().warm()   # loads the sentence model and embeds the intent library
    planner.plan("make it pop")
    cold = time.perf_counter() - start
    result: dict[str, Any] = {"cold_start_s": round(cold, 2)}
    times: list[float] = []
    verbs: list[str] = []
    for name in args.set or list(SETS):
        cases = json.loads(SETS[name].read_text())["cases"]
        accuracy, failures = run_set(planner, cases, times, verbs)
        for _ in range(args.repeats):
            run_set(planner, cases, times)
        print(f"{name}: {accuracy:.1%} of {len(cases)} phrasings")
        if args.show_failures:
            for line in failures:
                print("  FAIL", line)
        result[f"{name}_accuracy"] = round(accuracy, 4)
        result[f"{name}_cases"] = len(cases)
    for line in verbs:
        print("  VERB TAKEN FOR AN OBJECT", line)
    result["verbs_taken_for_objects"] = len(verbs)
    ms = sorted(t * 1000 for t in times)
    result.update(plan_latency_ms_p50=round(statistics.median(ms), 2),
                  plan_latency_ms_p95=round(ms[int(0.95 * (len(ms) - 1))], 2),
                  plan_latency_ms_max=round(ms[-1], 2))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
