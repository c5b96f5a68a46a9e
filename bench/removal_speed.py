"""Removal speed and quality at native resolution (issue 14): edge growth + PatchMatch fill.

Usage::

    .venv/bin/python bench/removal_speed.py [--repeats 2] [--cases photo_12mp,...]
    .venv/bin/python bench/removal_speed.py --cli [--sizes 12,24,50] [--holes 0.01,0.05]
    .venv/bin/python bench/removal_speed.py --cli --support chameleon,butterfly --sizes 50
    .venv/bin/python bench/removal_speed.py --cli --support chameleon,butterfly --sizes 50 \
        --choose 1

``--cli`` (issue 23) runs the phrase-driven command line end to end, one fresh process
per run — ``python -m agent edit photo.jpg "remove the cup" --out …``, no brush — on
the Summer Palace photo enlarged to 12, 24 and 50 MP with the coffee cup pasted at a size
that makes it 1 % to 5 % of the frame, and reports each process's wall time, its CPU
time (user + system, all threads: on a shared machine the wall time mostly measures the
other processes), the load average when it ended, its peak resident memory (its
``VmHWM``, polled), the exit status, how much of the cup the removal changed and how
much changed beyond 1.5 × the cup's box (targets: ≤ 40 s and ≤ 2.5 GB at every size).

``--cli --support chameleon,butterfly`` (issue 32) removes a subject sitting on its
support instead, in a real photo upscaled (Lanczos) to each size, the real-photo set's
hand-drawn mask scaled with it: "remove the chameleon" (palapeli-data, 1306×1530: the
chameleon grips a branch and fills 36 % of the frame) and "remove the butterfly"
(lxqt-themes, 1920×1278: on a flower head, 2 % of the frame). Beside time and memory it
reports ``subject_changed`` (share of the subject changed) and ``support_changed`` (pixels
changed beyond the subject's mask grown by 1.5 % of the frame's long side — the branch,
the flower — relative to the subject's area): the support must stay. Where the CLI asks
which one is meant (the salient subject is only a guess), ``--choose N`` runs the edit the
user gets by answering it (``--choose N`` on the command line): the fill itself.

Three cases, each removed through a whole Edit turn (``EditSession.turn``: plan, localise,
grow the mask, fill, critique, commit) on a fresh session:

* ``photo_12mp``: scikit-image's coffee photo upscaled to 4000×3000 with an anti-aliased
  blue disc of about 1 MP (radius 565 px) — "remove the blue circle";
* ``texture_12mp``: scikit-image's gravel, mirror-tiled at its native grain to 4000×3000,
  with a 1-MP magenta disc — "remove the magenta circle";
* ``hdd_4k``: an HDD render at 3840×2160 with a medium green square — "remove the green
  box".

The fill alone (``executor.execute`` on the localised mask) is timed too, and its result
is measured against the true background (known: the object is drawn here): ``rim_px``,
pixels within 8 px of the old edge that have the object's colour (within 30 ΔE of it,
closer to it than to the background there, and > 15 ΔE off that background);
``fill_dE``, the fill's mean Lab colour against a ring 5–30 px around it; ``spread``, its
lightness spread over the ring's; ``detail``, its mean gradient magnitude over the ring's
(below 1: smoother than its surroundings). ``fill_cpu_s`` is the fill's process CPU time
(all threads): on a shared machine the wall time mostly measures the other processes.
The last printed line is one JSON object;
the target is a few seconds per removal at 12 MP on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import executor  # noqa: E402
from agent.actions import Action  # noqa: E402
from agent.session import EditSession  # noqa: E402
from eval import hdd  # noqa: E402
from pipelines.color import rgb_to_lab as lab_of  # noqa: E402
from pipelines.editors.operations import parse_color  # noqa: E402
from pipelines.localizers import get_localizer  # noqa: E402

Case = tuple[np.ndarray, np.ndarray, str]


def _disc(background: np.ndarray, colour: str) -> np.ndarray:
    image = background.copy()
    cv2.circle(image, (2000 * 16, 1500 * 16), 565 * 16, parse_color(colour), -1,
               cv2.LINE_AA, 4)
    return image


def photo_12mp() -> Case:
    """4000×3000 coffee photo with a ~1-MP anti-aliased blue disc."""
    from skimage import data

    bg = cv2.resize(data.coffee(), (4000, 3000), interpolation=cv2.INTER_CUBIC)
    return _disc(bg, "blue"), bg, "blue circle"


def texture_12mp() -> Case:
    """4000×3000 gravel (mirror-tiled at native grain) with a ~1-MP magenta disc."""
    from skimage import data

    tile = np.dstack([data.gravel()] * 3)
    bg = np.ascontiguousarray(np.pad(tile, ((0, 3000 - tile.shape[0]),
                                            (0, 4000 - tile.shape[1]), (0, 0)),
                                     mode="symmetric"))
    return _disc(bg, "magenta"), bg, "magenta circle"


def hdd_4k() -> Case:
    """3840×2160 HDD render with one medium green square."""
    obj = hdd.SceneObject("o1", "green", "medium", "matte", "square", (0.5, 0.55))
    return (hdd.render(hdd.SceneState((obj,), 3, 2), (3840, 2160)),
            hdd.render(hdd.SceneState((), 3, 2), (3840, 2160)), "green box")


CASES = {"photo_12mp": photo_12mp, "texture_12mp": texture_12mp, "hdd_4k": hdd_4k}


def quality(out: np.ndarray, before: np.ndarray, bg: np.ndarray) -> dict:
    """Rim pixels and fill statistics against the true background (see the module doc)."""
    obj = np.any(np.abs(before.astype(int) - bg.astype(int)) > 2, axis=2)
    x, y, w, h = cv2.boundingRect(obj.view(np.uint8))
    pad = 40
    win = (slice(max(0, y - pad), y + h + pad), slice(max(0, x - pad), x + w + pad))
    obj, lab, lab_bg = obj[win], lab_of(out[win]), lab_of(bg[win])
    colour = lab_of(before[win])[cv2.erode(obj.view(np.uint8), np.ones((15, 15))) > 0].mean(0)
    far = cv2.distanceTransform((~obj).view(np.uint8), cv2.DIST_L2, 5)
    near = cv2.distanceTransform(obj.view(np.uint8), cv2.DIST_L2, 5)
    band = ((far > 0) & (far <= 8)) | ((near > 0) & (near <= 8))
    d_obj = np.linalg.norm(lab[band] - colour, axis=1)
    d_bg = np.linalg.norm(lab[band] - lab_bg[band], axis=1)
    inner = cv2.erode(obj.view(np.uint8), np.ones((5, 5), np.uint8)) > 0
    ring = (far > 4) & (far <= 30)
    grad = np.hypot(cv2.Sobel(lab[..., 0], cv2.CV_32F, 1, 0), cv2.Sobel(lab[..., 0], cv2.CV_32F,
                                                                         0, 1))
    return {"rim_px": int(((d_obj < d_bg) & (d_bg > 15) & (d_obj < 30)).sum()),
            "fill_dE": round(float(np.linalg.norm(lab[inner].mean(0) - lab[ring].mean(0))), 2),
            "spread": round(float((lab[inner][:, 0].std() + 1) / (lab[ring][:, 0].std() + 1)), 3),
            "detail": round(float(grad[inner].mean() / max(grad[ring].mean(), 1e-6)), 3)}


def measure(image: np.ndarray, bg: np.ndarray, phrase: str, repeats: int, tmp: Path) -> dict:
    """Median seconds of the fill alone and of a whole turn, and the fill's quality."""
    mask = get_localizer().locate(image, f"the {phrase}").masks[0].mask
    action = Action(kind="remove", operation="inpaint", target=phrase)
    fills, turns, cpus = [], [], []
    for i in range(repeats):
        t, cpu = time.perf_counter(), time.process_time()
        done = executor.execute(image, action, mask)
        fills.append(time.perf_counter() - t)
        cpus.append(time.process_time() - cpu)
        session = EditSession.create(image, tmp / f"s{len(os.listdir(tmp))}")
        t = time.perf_counter()
        result = session.turn(f"remove the {phrase}")
        turns.append(time.perf_counter() - t)
        logging.info("repeat %d: fill %.2f s, turn %.2f s", i, fills[-1], turns[-1])
    step = result.steps[0]
    return {"pixels": int(image.shape[0] * image.shape[1]), "hole_px": int(mask.sum()),
            "fill_s": round(statistics.median(fills), 2),
            "fill_cpu_s": round(statistics.median(cpus), 2),
            "turn_s": round(statistics.median(turns), 2),
            "attempts": len(step.attempts), "status": step.status,
            "score": round(max((a.score for a in step.attempts), default=0.0), 2),
            **quality(done.paste(image), image, bg)}


SIZES = {12: (4240, 2832), 24: (6000, 4000), 50: (8660, 5774)}


def cup_photo(megapixels: int, hole: float) -> tuple[np.ndarray, np.ndarray]:
    """The Summer Palace photo at ``megapixels`` with the coffee cup covering ``hole`` of
    the frame, and the cup's exact mask."""
    from eval.localization import _canvas, _paste, cutout

    width, height = SIZES[megapixels]
    image = _canvas("china", (width, height))
    _, mask = cutout("cup")
    fill = mask.mean()                       # the cup's share of its own box
    aspect = mask.shape[1] / mask.shape[0]
    frac = float(np.sqrt(hole * width * height / (fill * aspect))) / height
    cup = _paste(image, {"source": "cup", "at": [0.42, 0.5], "height": frac})
    return image, cup


def _high_water_mb(pid: int) -> int:
    """Peak resident memory of a running process (``VmHWM``; 0 once it has gone). Not
    ``ru_maxrss`` of ``wait4``: a forked child starts with the parent's resident pages
    (here the big test photos), which that figure counts."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


#: ``--support`` subjects: name → (real-photo case, what is removed)
SUPPORT = {"chameleon": ("panther_chameleon_female__chameleon", "remove the chameleon"),
           "butterfly": ("butterfly_kw__butterfly", "remove the butterfly")}


def support_photo(megapixels: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A subject on its support (a real photo) upscaled to ``megapixels``, and its
    hand-drawn mask scaled with it."""
    from eval import realset
    from pipelines.upscale import lanczos

    case = realset.case(SUPPORT[name][0])
    small, truth = realset.photo(case.photo), case.truth()
    k = float(np.sqrt(megapixels * 1e6 / (small.shape[0] * small.shape[1])))
    size = (round(small.shape[1] * k), round(small.shape[0] * k))
    mask = cv2.resize(truth.astype(np.uint8), size, interpolation=cv2.INTER_LINEAR) > 0
    return lanczos(small, size), mask


def cli_run(megapixels: int, hole: float, tmp: Path, support: str = "", choose: str = ""
            ) -> dict:
    """One ``python -m agent edit … "remove the cup"`` process (``support``: a subject on
    its support in a real photo, ``SUPPORT``): wall s, peak RSS MB, what changed."""
    import subprocess

    if support:
        image, cup = support_photo(megapixels, support)
        phrase = SUPPORT[support][1]
    else:
        image, cup = cup_photo(megapixels, hole)
        phrase = "remove the cup"
    tag = f"{megapixels}_{hole}{support}"
    src, out = tmp / f"p{tag}.jpg", tmp / f"o{tag}.png"
    cv2.imwrite(str(src), image[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, 97])
    before = cv2.imread(str(src))[..., ::-1]
    cmd = [sys.executable, "-m", "agent", "edit", str(src), phrase, "--out",
           str(out), "--session", str(tmp / f"s{tag}")] + (["--choose", choose] if choose else [])
    start = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = tmp / f"log{tag}.txt"
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1], stdout=sink,
                                stderr=subprocess.STDOUT)
        peak = 0
        while proc.poll() is None:      # VmHWM: the process's own high-water mark
            peak = max(peak, _high_water_mb(proc.pid))
            time.sleep(0.2)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)    # the one child, once reaped
    cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    said = log.read_text(errors="replace").strip().splitlines()
    row = {"megapixels": round(image.shape[0] * image.shape[1] / 1e6, 1),
           "hole": round(float(cup.mean()), 3) if support else hole, "subject": support,
           "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
           "load_1min": round(os.getloadavg()[0], 1), "peak_rss_mb": peak, "exit": proc.returncode,
           "said": said[-1][:160] if said else ""}
    if out.exists():
        after = cv2.imread(str(out))[..., ::-1]
        changed = np.abs(after.astype(int) - before.astype(int)).max(axis=2) > 8
        if support:
            grow = max(3, int(0.015 * max(cup.shape)))
            near = cv2.dilate(cup.view(np.uint8), np.ones((2 * grow + 1,) * 2, np.uint8))
            row["subject_changed"] = round(float(changed[cup].mean()), 3)
            row["support_changed"] = round(float(changed[near == 0].sum() / cup.sum()), 4)
            return row
        x, y, w, h = cv2.boundingRect(cup.view(np.uint8))
        far = np.ones(cup.shape, bool)
        far[max(0, y - h // 4):y + h + h // 4, max(0, x - w // 4):x + w + w // 4] = False
        row["cup_changed"] = round(float(changed[cup].mean()), 3)
        row["changed_beyond_box_px"] = int(changed[far].sum())
    return row


def cli_bench(sizes: list[int], holes: list[float], support: list[str] | None = None,
              choose: str = "") -> dict:
    out: dict = {"runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for mp in sizes:
            for hole, name in ([(0.0, n) for n in support] if support else
                               [(h, "") for h in holes]):
                row = cli_run(mp, hole, Path(tmp), name, choose)
                print(row, flush=True)
                out["runs"].append(row)
    runs = out["runs"]
    out["max_wall_s"] = max(r["wall_s"] for r in runs)
    out["max_cpu_s"] = max(r["cpu_s"] for r in runs)
    out["max_peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    out["all_ok"] = all(r["exit"] == 0 for r in runs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--cli", action="store_true",
                        help="phrase-driven CLI removals at 12/24/50 MP (issue 23)")
    parser.add_argument("--sizes", default="12,24,50")
    parser.add_argument("--holes", default="0.01,0.05")
    parser.add_argument("--support", default="",
                        help="with --cli: subjects on their support in real photos, "
                             "upscaled (issue 32): chameleon, butterfly")
    parser.add_argument("--choose", default="",
                        help="with --cli: answer the CLI's 'which one?' with candidate N")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.cli:
        print("load average at start:", os.getloadavg(), flush=True)
        out = cli_bench([int(v) for v in args.sizes.split(",")],
                        [float(v) for v in args.holes.split(",")],
                        [v for v in args.support.split(",") if v], args.choose)
        out["load_avg_1min"] = round(os.getloadavg()[0], 2)
        print(json.dumps(out))
        return
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            image, bg, phrase = CASES[name]()
            out[name] = measure(image, bg, phrase, args.repeats, Path(tmp))
            print(name, out[name], flush=True)
    out["load_avg_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
