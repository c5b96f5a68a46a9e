"""Fit ``eval/data/restore.json``: the judges of ``eval.restore`` (issue 33).

Usage: ``python scripts/train_restore.py [--crops 10] [--degradations 8] [--hazy 3]
[--min-leaf 40] [--l2 5] [--workers 2] [--cache FILE] [--out eval/data/restore.json]``

1. Rows: every photo of ``REAL_TRAIN`` + ``TRAIN_PHOTOS`` (training) and ``REAL_VALIDATION``
   (validation), loaded at 512 px, whole and as ``--crops`` random crops (50–90 % of each
   side), each brought to ``eval.restore.SIZE`` (the size the statistics are read at) and
   taken untouched and under ``--degradations`` draws of ``eval.photos.random_degradation``;
   validation photos also under the six benchmark degradations (whole photo). Each crop is
   also seen through depth-dependent haze (``eval.photos.atmospheric_haze``: the scene as a
   photographer would have taken it in haze or fog, so an *untouched* row) and under
   ``--hazy`` − 1 random degradations of that (issue 33's fog, as a class); validation's
   hazy rows are reported, never calibrated on. Features:
   ``eval.restore.features``. Labels: *degraded* = the degradation moved the photo by more
   than 4.5 grey levels RMSE (below 35 dB); *faded* = the degradation has a fade part.
2. Two gradient-boosted tree ensembles (scikit-learn, training only; the file holds plain
   arrays that ``eval.restore`` evaluates with numpy): *degraded* on every training row that
   the estimated inverse moves by more than ``--min-moves`` (a photo the inverse barely
   moves is safe whatever the answer), *faded* on the degraded training rows.
3. Calibration on validation only: Platt scaling of the *degraded* score with balanced class
   weights (prior 1:1, not the benchmark's six degraded copies per photo), on the
   validation rows where the decision matters: the inverse of the family the *faded* judge
   picks, as applied, moves the photo by more than 4.5 grey levels (past 35 dB). Wave 8
   calibrated on every row either family's inverse moves by ``--min-moves``: untouched
   crops whose chosen inverse is the identity (a photo with its own white, read as gains)
   counted there as sure mistakes that cost nothing, and held every probability down.

Prints the validation figures the Autopilot's thresholds are chosen on (the gain of the
estimated inverse applied in full, and of the part ``agent.search.restore_step`` applies
below its full threshold); the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search.reward import HARM_BOUND  # noqa: E402
from eval import restore  # noqa: E402
from eval.photos import (  # noqa: E402
    BENCH_DEGRADATIONS,
    REAL_TRAIN,
    REAL_VALIDATION,
    TRAIN_PHOTOS,
    VALIDATION_UNTOUCHED,
    atmospheric_haze,
    load_photo,
    load_validation,
    psnr,
    random_degradation,
)
from pipelines.images import downscale  # noqa: E402
from pipelines.operations import registry  # noqa: E402

DEGRADED_RMSE = 4.5
#: The part band's lower end (``agent.search.restore_step.SUGGEST``), for the report.
SUGGEST = 0.5


def _crops(img: np.ndarray, rng: random.Random, n: int) -> list[np.ndarray]:
    h, w = img.shape[:2]
    out = [img]
    for _ in range(n):
        ch, cw = int(h * rng.uniform(0.5, 0.9)), int(w * rng.uniform(0.5, 0.9))
        y, x = rng.randint(0, h - ch), rng.randint(0, w - cw)
        out.append(np.ascontiguousarray(img[y:y + ch, x:x + cw]))
    return out


def _apply(img: np.ndarray, est: restore.Estimate) -> np.ndarray:
    op = registry.get(est.operation)
    return op.apply(img, np.ones(img.shape[:2], bool), op.validate(est.params))


def _photo_rows(job: tuple[str, int, int, int, bool]) -> list[dict]:
    """Every row of one photo (run in a worker process)."""
    name, crops, degradations, seed, bench, hazy = job
    rng, rows = random.Random(f"{seed}:{name}"), []
    for ci, crop in enumerate(_crops(load_photo(name, 512), rng, crops)):
        clean = np.ascontiguousarray(downscale(crop, restore.SIZE))
        cases = [("untouched", clean, False, clean)]
        for _ in range(degradations):
            d = random_degradation(rng)
            faded = bool(d.black or d.white != 1.0 or d.saturation != 1.0)
            cases.append(("random", d.apply(clean), faded, clean))
        if bench and ci == 0:
            cases += [(k, f(clean), k == "faded", clean) for k, f in BENCH_DEGRADATIONS.items()]
        if hazy:      # the scene as taken through haze or fog, untouched and degraded
            misty = atmospheric_haze(clean, rng)
            cases.append(("hazy", misty, False, misty))
            for _ in range(hazy - 1):
                d = random_degradation(rng)
                faded = bool(d.black or d.white != 1.0 or d.saturation != 1.0)
                cases.append(("hazy_random", d.apply(misty), faded, misty))
        for kind, img, faded, clean in cases:
            rmse = float(np.sqrt(np.mean((img.astype(np.float32) - clean) ** 2)))
            row = {"photo": name, "crop": ci, "kind": kind, "faded": faded,
                   "degraded": rmse > DEGRADED_RMSE, "x": restore.features(img)}
            if bench:      # validation: what each family's inverse (as applied) gains
                amount = {"gains": 1.0, "fade": restore.fade_amount(img)}
                ests = {f: restore.Estimate(f, 1.0, 0.0, (0.0, 0.0, 0.0), amount=amount[f])
                        for f in restore.FAMILIES}
                before = psnr(img, clean)
                row["gain"] = {f: psnr(_apply(img, e), clean) - before for f, e in ests.items()}
                row["moves"] = {f: restore._rmse(_apply(img, e), img) for f, e in ests.items()}
                row["part"] = {f: psnr(_apply(img, e.part(min(1.0, HARM_BOUND / max(
                    row["moves"][f], 1e-6)))), clean) - before for f, e in ests.items()}
            rows.append(row)
    return rows


def _rows(photos: tuple[str, ...], crops: int, degradations: int, seed: int,
          bench: bool, workers: int, hazy: int = 0) -> list[dict]:
    jobs = [(name, crops, degradations, seed, bench, hazy) for name in photos]
    if workers <= 1:
        return [r for job in jobs for r in _photo_rows(job)]
    with ProcessPoolExecutor(workers) as pool:
        return [r for rows in pool.map(_photo_rows, jobs) for r in rows]


def _export(model) -> dict:
    """The fitted HistGradientBoostingClassifier as plain arrays (one row per tree)."""
    trees = [p[0].nodes for p in model._predictors]
    n = max(len(t) for t in trees)
    out = {k: np.zeros((len(trees), n)) for k in ("threshold", "value")}
    for k in ("feature", "left", "right", "missing_left"):
        out[k] = np.zeros((len(trees), n), np.int64)
    out["feature"][:] = -1
    for i, t in enumerate(trees):
        m = len(t)
        leaf = t["is_leaf"].astype(bool)
        out["feature"][i, :m] = np.where(leaf, -1, t["feature_idx"])
        out["threshold"][i, :m] = t["num_threshold"]
        out["left"][i, :m], out["right"][i, :m] = t["left"], t["right"]
        out["value"][i, :m] = t["value"]
        out["missing_left"][i, :m] = t["missing_go_to_left"]
    return {"base": float(np.ravel(model._baseline_prediction)[0]),
            **{k: v.tolist() for k, v in out.items()}}


def main() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier  # training only
    from sklearn.linear_model import LogisticRegression

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crops", type=int, default=10)
    parser.add_argument("--degradations", type=int, default=8)
    parser.add_argument("--min-moves", type=float, default=3.5)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--min-leaf", type=int, default=40,
                        help="the judge's smallest leaf (rows)")
    parser.add_argument("--l2", type=float, default=5.0, help="the judge's L2 penalty")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--hazy", type=int, default=3,
                        help="rows per crop of the scene through haze: one untouched, the "
                             "rest under random degradations (0: none)")
    parser.add_argument("--cache", default="")
    parser.add_argument("--out", default=str(restore.MODEL_PATH))
    args = parser.parse_args()
    start = time.time()
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.is_file():
        train, valid = pickle.loads(cache.read_bytes())
    else:
        train = _rows(REAL_TRAIN + TRAIN_PHOTOS, args.crops, args.degradations, 1, False,
                      args.workers, args.hazy)
        valid = _rows(REAL_VALIDATION, max(1, args.crops // 2), max(1, args.degradations - 2),
                      2, True, args.workers, 2)
        if cache is not None:
            cache.write_bytes(pickle.dumps((train, valid)))
    print(f"{len(train)} training rows, {len(valid)} validation rows "
          f"({time.time() - start:.0f} s)", flush=True)
    mv = restore.FEATURE_NAMES.index

    def moving(r: dict) -> bool:
        return max(r["x"][mv(f"moves_{f}")] for f in restore.FAMILIES) > args.min_moves

    tr = [r for r in train if moving(r)]
    X, y = np.array([r["x"] for r in tr]), np.array([r["degraded"] for r in tr])
    judge = HistGradientBoostingClassifier(max_depth=3, max_iter=args.iterations,
                                           learning_rate=0.05, class_weight="balanced",
                                           min_samples_leaf=args.min_leaf,
                                           l2_regularization=args.l2,
                                           random_state=0).fit(X, y)
    dg = [r for r in train if r["degraded"]]
    fader = HistGradientBoostingClassifier(max_depth=3, max_iter=200,
                                           learning_rate=0.05, random_state=0).fit(
        np.array([r["x"] for r in dg]), np.array([r["faded"] for r in dg]))
    # calibrate on the validation rows where the decision matters: the estimated family's
    # inverse, as applied, would move the photo past 35 dB (an untouched photo whose chosen
    # inverse barely moves it is safe whatever the probability says)
    for r in valid:
        r["family"] = "fade" if fader.decision_function(r["x"][None])[0] > 0 else "gains"
    va = [r for r in valid if moving(r) and not r["kind"].startswith("hazy") and
          r["moves"][r["family"]] > DEGRADED_RMSE]
    raw = judge.decision_function(np.array([r["x"] for r in va]))
    platt = LogisticRegression(C=1e4, class_weight="balanced").fit(
        raw[:, None], np.array([r["degraded"] for r in va]))
    a, b = float(platt.coef_[0, 0]), float(platt.intercept_[0])
    data = {"features": list(restore.FEATURE_NAMES), "platt": [a, b],
            "degraded": _export(judge), "faded": _export(fader)}
    model = restore.RestoreModel.from_json(json.loads(json.dumps(data)))
    # validation figures: the calibrated probability and the family on every row
    report: dict = {"validation_rows": len(valid), "moving_rows": len(va)}
    for r in valid:
        r["p"] = model.probability(r["x"]) if moving(r) else 0.0
        r["family"] = "fade" if model.faded.raw(r["x"]) > 0 else "gains"
    untouched = [r for r in valid if r["kind"] == "untouched"]
    bench = [r for r in valid if r["kind"] in BENCH_DEGRADATIONS]
    for thr in (0.5, 0.7, 0.8, 0.9):
        sure = [r for r in bench if r["p"] >= thr]
        gains = [r["gain"][r["family"]] if r["p"] >= thr else 0.0 for r in bench]
        with_part = [r["gain"][r["family"]] if r["p"] >= thr else r["part"][r["family"]]
                     if r["p"] >= SUGGEST else 0.0 for r in bench]
        report[f"p>={thr}"] = {
            "untouched_sure": sum(r["p"] >= thr for r in untouched),
            "untouched_sure_harmed": sum(r["p"] >= thr and r["moves"][r["family"]] >
                                         DEGRADED_RMSE for r in untouched),
            "bench_sure": len(sure), "bench": len(bench),
            "sure_closer": sum(r["gain"][r["family"]] > 0 for r in sure),
            "gain_if_only_sure_fixed": round(float(np.mean(gains)), 2),
            "gain_with_part_below": round(float(np.mean(with_part)), 2)}
    report["family_accuracy_bench"] = round(float(np.mean(
        [(r["family"] == "fade") == (r["kind"] == "faded") for r in bench])), 3)
    report["inverse_gain_bench_by_family"] = round(float(np.mean(
        [r["gain"][r["family"]] for r in bench])), 2)
    report["untouched_p_max"] = round(max(r["p"] for r in untouched), 3)
    for kind in ("hazy", "hazy_random"):     # synthetic: the class of issue 33's fog
        rs = [r for r in valid if r["kind"] == kind]
        report[kind] = {"rows": len(rs), "degraded": sum(r["degraded"] for r in rs),
                        "p>=0.9": sum(r["p"] >= 0.9 for r in rs),
                        "p>=0.9_untouched": sum(r["p"] >= 0.9 and not r["degraded"]
                                                for r in rs),
                        "p>=0.9_degraded": sum(r["p"] >= 0.9 and r["degraded"] for r in rs),
                        "p_max_untouched": round(max([r["p"] for r in rs
                                                      if not r["degraded"]] or [0.0]), 3)}
    report["validation_untouched_p"] = {
        k: round(model.probability(restore.features(load_validation(k, 512))), 3)
        for k in VALIDATION_UNTOUCHED}
    for k in BENCH_DEGRADATIONS:
        rs = [r for r in bench if r["kind"] == k]
        print(f"{k:16s} p " + " ".join(f"{r['p']:.2f}" for r in rs) + "  gain " +
              " ".join(f"{r['gain'][r['family']]:+.0f}" for r in rs))
    data["info"] = {"command": "python scripts/train_restore.py " + " ".join(sys.argv[1:]),
                    "training_photos": list(REAL_TRAIN + TRAIN_PHOTOS),
                    "validation_photos": list(REAL_VALIDATION), "validation": report}
    Path(args.out).write_text(json.dumps(data, separators=(",", ":")))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
