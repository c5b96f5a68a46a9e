"""Train the learned evaluator (``eval/naturalness.py``) and write ``eval/data/naturalness.json``.

Usage: ``python scripts/train_naturalness.py [--crops 8 --degradations 12]
[--out eval/data/naturalness.json]``

Data, all offline: the photos of ``eval.photos.TRAIN_PHOTOS`` (files inside scikit-image and
Gradio) at 256 px, each as the full frame and ``--crops`` random crops. Each frame is used as
it is and degraded ``--degradations`` times (``eval.photos.random_degradation``: exposure,
illuminant casts, fading and their mixtures, wider than the benchmark's six). Every such
input then receives each of the Autopilot's photographic corrections
(``agent.brain.perceiver.CORRECTIONS``). A sample is one input: its colour/tone features
(``eval.naturalness.features``) and, per head, log(1 + RMSE) against the undegraded frame —
head ``"input"`` for the input as it is, one head per correction for its result.

Settings are chosen by leave-one-photo-out on the training photos only (``--cv``), scored
on each left-out photo's random-degradation inputs and on the benchmark's six degradations
of it. The held-out photos (``eval.photos.HELDOUT_PHOTOS``) are scored once at the end with
the benchmark's six degradations, for the learned model and for the hand-set norms of
``eval.noref`` side by side, and the figures go into the JSON (``info``); nothing is fitted
or chosen on them. Per input, each evaluator picks the correction it rates best (or none,
when none beats the input by its margin): ``pick_gain_db`` is the mean PSNR gain of that
pick on degraded inputs, ``closer`` the share of them it brings closer to the original,
``untouched_db`` the mean PSNR of the pick against an undegraded input (100 = left alone)
and ``untouched_min_db`` its minimum.
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.actions import Action  # noqa: E402
from agent.brain.perceiver import CORRECTIONS, Candidate  # noqa: E402
from agent.search.mcts import apply_candidate  # noqa: E402
from eval.naturalness import FEATURE_NAMES, MODEL_PATH, SELF, features  # noqa: E402
from eval.noref import HAND_WEIGHTS, aesthetic_score  # noqa: E402
from eval.photos import (  # noqa: E402
    BENCH_DEGRADATIONS,
    HELDOUT_PHOTOS,
    TRAIN_PHOTOS,
    load_photo,
    psnr,
    random_degradation,
)
from pipelines.images import downscale  # noqa: E402

SIZE = 256


def corrections() -> list[Candidate]:
    """The Autopilot's photographic corrections as candidates (one head each)."""
    return [Candidate(Action(kind="adjust", operation=op, params=params), op, reason, 0.0)
            for op, params, reason in CORRECTIONS]


def heads() -> list[str]:
    """The model's heads: the input as it is, then each correction's key."""
    return [SELF] + [c.key for c in corrections()]


@dataclass
class Sample:
    """One input measured against its undegraded original (images are not kept)."""

    photo: str
    label: str
    features: np.ndarray          # of the input
    rmse: np.ndarray              # per head: the input, then each correction's result
    psnr: np.ndarray
    hand: np.ndarray | None = None   # the hand-set norms' score per head (higher = better)


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)))


def measure(photo: str, label: str, original: np.ndarray, image: np.ndarray, *,
            hand: bool = False) -> Sample:
    """Apply every correction to ``image`` and measure each result against ``original``."""
    outputs = [image] + [apply_candidate(image, c, fast=False) for c in corrections()]
    scores = np.array([aesthetic_score(o, image, HAND_WEIGHTS) for o in outputs]) \
        if hand else None
    return Sample(photo, label, features(image), np.array([_rmse(o, original) for o in outputs]),
                  np.array([psnr(o, original) for o in outputs]), scores)


def _crop(img: np.ndarray, rng: random.Random) -> np.ndarray:
    h, w = img.shape[:2]
    s = rng.uniform(0.55, 0.85)
    ch, cw = max(32, int(h * s)), max(32, int(w * s))
    y, x = rng.randrange(0, h - ch + 1), rng.randrange(0, w - cw + 1)
    return np.ascontiguousarray(img[y:y + ch, x:x + cw])


def training_samples(crops: int, degradations: int, seed: int) -> list[Sample]:
    """Samples from the training photos (full frame + crops, each as is and degraded)."""
    rng = random.Random(seed)
    out = []
    for photo in TRAIN_PHOTOS:
        big = load_photo(photo, 1024)
        frames = [downscale(big, SIZE)] + [downscale(_crop(big, rng), SIZE)
                                           for _ in range(crops)]
        for fi, frame in enumerate(frames):
            out.append(measure(photo, f"frame{fi}:none", frame, frame))
            for _ in range(degradations):
                deg = random_degradation(rng)
                out.append(measure(photo, f"frame{fi}:{deg.label}", frame, deg.apply(frame)))
        logging.info("%s: %d samples so far", photo, len(out))
    return out


def bench_samples(photos: tuple[str, ...], *, hand: bool) -> list[Sample]:
    """Whole photos, untouched and under the benchmark's six degradations."""
    out = []
    for photo in photos:
        clean = downscale(load_photo(photo, 1024), SIZE)
        out.append(measure(photo, "none", clean, clean, hand=hand))
        out += [measure(photo, kind, clean, degrade(clean), hand=hand)
                for kind, degrade in BENCH_DEGRADATIONS.items()]
    return out


# ----------------------------------------------------------------------------- model

def fit(samples: list[Sample], *, hidden: int, epochs: int, decay: float, seed: int,
        ensemble: int = 1) -> dict:
    """Fit ``ensemble`` multi-head perceptrons (seeds ``seed``, ``seed + 1``, …) and merge
    them into one: concatenated hidden units and averaged outputs compute exactly the mean
    of the members' predictions."""
    members = [_fit_one(samples, hidden=hidden, epochs=epochs, decay=decay, seed=seed + i)
               for i in range(ensemble)]
    merged = dict(members[0])
    merged["w1"] = np.concatenate([np.asarray(m["w1"]) for m in members], axis=1).tolist()
    merged["b1"] = np.concatenate([np.asarray(m["b1"]) for m in members]).tolist()
    merged["w2"] = (np.concatenate([np.asarray(m["w2"]) for m in members], axis=0)
                    / ensemble).tolist()
    merged["b2"] = np.mean([np.asarray(m["b2"]) for m in members], axis=0).tolist()
    return merged


def _fit_one(samples: list[Sample], *, hidden: int, epochs: int, decay: float,
             seed: int) -> dict:
    """Fit one multi-head perceptron (MSE on every head's log distance)."""
    import torch  # heavy: only the training script needs it

    torch.manual_seed(seed)
    torch.set_num_threads(1)   # small batches: threads only contend on a shared machine
    x = np.nan_to_num(np.stack([s.features for s in samples]))
    y = np.log1p(np.stack([s.rmse for s in samples]))
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    xt = torch.tensor((x - mean) / scale, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.Tanh(),
                              torch.nn.Linear(hidden, y.shape[1]))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3, weight_decay=decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(perm), 64):
            batch = perm[i:i + 64]
            loss = torch.mean((net(xt[batch]) - yt[batch]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    return {"features": list(FEATURE_NAMES), "heads": heads(), "mean": mean.tolist(),
            "scale": scale.tolist(), "w1": net[0].weight.detach().numpy().T.tolist(),
            "b1": net[0].bias.detach().numpy().tolist(),
            "w2": net[2].weight.detach().numpy().T.tolist(),
            "b2": net[2].bias.detach().numpy().tolist()}


def predict(model: dict, samples: list[Sample]) -> np.ndarray:
    """(samples, heads) predicted log distances (the same arithmetic as eval.naturalness)."""
    x = np.nan_to_num(np.stack([s.features for s in samples]))
    z = (x - np.asarray(model["mean"])) / np.asarray(model["scale"])
    return np.tanh(z @ np.asarray(model["w1"]) + np.asarray(model["b1"])) @ \
        np.asarray(model["w2"]) + np.asarray(model["b2"])


def figures(samples: list[Sample], picks: list[int]) -> dict:
    """How good the picks (head index per sample; 0 = leave alone) are (module doc)."""
    gains = [s.psnr[p] - s.psnr[0] for s, p in zip(samples, picks, strict=True)
             if not s.label.endswith("none")]
    kept = [s.psnr[p] for s, p in zip(samples, picks, strict=True) if s.label.endswith("none")]
    return {"inputs": len(samples), "pick_gain_db": round(float(np.mean(gains)), 2),
            "closer": round(float(np.mean([g > 0 for g in gains])), 3),
            "untouched_db": round(float(np.mean(kept)), 1) if kept else None,
            "untouched_min_db": round(float(np.min(kept)), 1) if kept else None}


def learned_picks(pred: np.ndarray, margin: float) -> list[int]:
    """The head with the lowest predicted distance, if it beats the input by ``margin``."""
    out = []
    for row in pred:
        best = int(np.argmin(row))
        out.append(best if row[0] - row[best] > margin else 0)
    return out


def hand_picks(samples: list[Sample], margin: float) -> list[int]:
    """The hand-set norms' best-scored result, if it beats the input's score by ``margin``."""
    out = []
    for s in samples:
        best = int(np.argmax(s.hand))
        out.append(best if s.hand[best] - s.hand[0] > margin else 0)
    return out


def cross_validate(samples: list[Sample], checks: list[Sample], config: dict,
                   margins: tuple[float, ...]) -> dict:
    """Leave-one-photo-out over the training photos (random and benchmark degradations)."""
    pred = np.zeros((len(samples), len(heads())))
    check_pred = np.zeros((len(checks), len(heads())))
    for photo in TRAIN_PHOTOS:
        model = fit([s for s in samples if s.photo != photo], **config)
        rows = [i for i, s in enumerate(samples) if s.photo == photo]
        pred[rows] = predict(model, [samples[i] for i in rows])
        rows = [i for i, s in enumerate(checks) if s.photo == photo]
        check_pred[rows] = predict(model, [checks[i] for i in rows])
    return {str(m): {"random_degradations": figures(samples, learned_picks(pred, m)),
                     "benchmark_degradations": figures(checks, learned_picks(check_pred, m))}
            for m in margins}


def _command() -> str:
    """This run's command line as the model records it (a ``--cache`` only saves time and
    names a local file, so it is left out)."""
    argv, out, skip = sys.argv[1:], [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--cache":
            skip = True
        elif not arg.startswith("--cache="):
            out.append(arg)
    return " ".join(["python scripts/train_naturalness.py", *out])


def _write(model: dict, path: Path) -> None:
    """Save a fitted model as the JSON ``eval.naturalness`` reads (weights to 4 decimals)."""
    rounded = {k: (np.round(np.asarray(v), 4).tolist()
                   if k in ("mean", "scale", "w1", "b1", "w2", "b2") else v)
               for k, v in model.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rounded, separators=(",", ":")) + "\n")


def write_leave_one_out(samples: list[Sample], config: dict, folder: Path) -> None:
    """One model per training photo, fitted on the others: ``folder/<photo>.json``."""
    for photo in TRAIN_PHOTOS:
        model = fit([s for s in samples if s.photo != photo], **config)
        model["info"] = {"left_out": photo, "config": config, "command": _command()}
        _write(model, folder / f"{photo}.json")
        logging.info("%s: fitted without it", photo)
    print(json.dumps({"leave_one_out": str(folder), "photos": list(TRAIN_PHOTOS)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crops", type=int, default=8)
    parser.add_argument("--degradations", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--ensemble", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--decay", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--margin", type=float, default=0.1,
                        help="log-distance margin a correction must win by (figures only)")
    parser.add_argument("--cv", action="store_true", help="run leave-one-photo-out")
    parser.add_argument("--no-heldout", action="store_true",
                        help="skip the held-out figures (while choosing settings)")
    parser.add_argument("--cache", default="",
                        help="reuse/save the measured training samples here (a local pickle "
                             "this script wrote itself)")
    parser.add_argument("--out", default=str(MODEL_PATH))
    parser.add_argument("--leave-one-out", default="", metavar="DIR",
                        help="instead of the shipped model, write DIR/<photo>.json per "
                             "training photo, each fitted without that photo (for "
                             "bench/autopilot_quality.py --leave-one-out DIR)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("agent").setLevel(logging.WARNING)
    start = time.perf_counter()
    config = dict(hidden=args.hidden, epochs=args.epochs, decay=args.decay, seed=args.seed,
                  ensemble=args.ensemble)
    cache = Path(args.cache) if args.cache else None
    key = {"crops": args.crops, "degradations": args.degradations, "seed": args.seed,
           "photos": list(TRAIN_PHOTOS), "heads": heads()}
    cached = None
    if cache is not None and cache.exists():
        with cache.open("rb") as handle:
            cached = pickle.load(handle)   # a file this script wrote itself
        if not (isinstance(cached, dict) and cached.get("key") == key):
            raise SystemExit(f"{cache.name} holds samples measured with other settings; "
                             "remove it or name another --cache")
    if cached is not None:
        samples, checks = cached["samples"], cached["checks"]
    else:
        samples = training_samples(args.crops, args.degradations, args.seed)
        checks = bench_samples(TRAIN_PHOTOS, hand=True)
        if cache is not None:
            with cache.open("wb") as handle:
                pickle.dump({"key": key, "samples": samples, "checks": checks}, handle)
    logging.info("%d training inputs (%.0f s)", len(samples), time.perf_counter() - start)
    if args.leave_one_out:
        write_leave_one_out(samples, config, Path(args.leave_one_out))
        return
    margins = (0.0, args.margin)
    cv = cross_validate(samples, checks, config, margins) if args.cv else None
    logging.info("leave-one-photo-out: %s", cv)
    model = fit(samples, **config)
    train_checks = {"learned": figures(checks, learned_picks(predict(model, checks),
                                                             args.margin)),
                    "hand_set_norms": figures(checks, hand_picks(checks, 0.0))}
    heldout = None
    if not args.no_heldout:
        held = bench_samples(HELDOUT_PHOTOS, hand=True)
        heldout = {"learned": figures(held, learned_picks(predict(model, held), args.margin)),
                   "hand_set_norms": figures(held, hand_picks(held, 0.0)),
                   "learned_no_margin": figures(held, learned_picks(predict(model, held), 0.0))}
        logging.info("held-out: %s", heldout)
    model["info"] = {
        "command": _command(),
        "config": config, "crops": args.crops, "degradations": args.degradations,
        "margin": args.margin, "inputs": len(samples),
        "train_photos": list(TRAIN_PHOTOS), "heldout_photos": list(HELDOUT_PHOTOS),
        "target": "log(1 + RMSE in grey levels at 256 px) against the undegraded photo",
        "leave_one_photo_out": cv, "train_photos_benchmark": train_checks,
        "heldout": heldout, "seconds": round(time.perf_counter() - start, 1)}
    out = Path(args.out)
    _write(model, out)
    print(json.dumps({"out": str(out), "bytes": out.stat().st_size, "cv": cv,
                      "train_photos_benchmark": train_checks, "heldout": heldout,
                      "seconds": model["info"]["seconds"]}))


if __name__ == "__main__":
    main()
