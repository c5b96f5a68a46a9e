"""Command line for the agent: ``python -m agent edit|undo|redo|checkout|log|…``.

Examples::

    python -m agent edit photo.jpg "make the sky bluer and brighten the car" --session s1
    python -m agent undo --session s1
    python -m agent checkout n2 --session s1
    python -m agent log --session s1
    python -m agent export s1.zip --session s1
    python -m agent import s1.zip --session s1-copy
    python -m agent autopilot photo.jpg --mood "warm evening" --session s2
    python -m agent critique before.png after.png "remove the red ball" --json
    python -m agent edit photo.jpg "make the cup blue" --choose 2
    python -m agent edit photo.jpg "make this brighter" --point 640,410
    python -m agent batch shoot/ edited/ "make it warmer" --workers 2 --resume
    python -m agent batch shoot/ edited/ --autopilot --mood "warm evening" --ray auto

Exit status: 0 done (every step of the plan applied), 1 the request was refused, asked a
question or was carried out only in part (the message says what was applied and what is
asked; a partial edit still writes what was applied to --out and the session, so that
answering the question continues from it), 2 any failure: bad input (missing file,
damaged session, malformed archive, an output it cannot write…), one line on stderr,
never a traceback. Everything that can be checked is checked before anything is written:
a failed command leaves no new session folder, no half-written output and no
half-imported session behind.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

from agent.batch import BatchError, ProgressBar, run_batch
from agent.session import SessionError
from agent.session.inputs import check_instruction
from pipelines.cli import guarded
from pipelines.images import SUFFIX_FORMATS, load_image, save_image
from pipelines.masks import load_mask
from pipelines.redact import install_log_redaction

log = logging.getLogger("agent.cli")


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agent", description="Loupe's editing agent.",
        epilog="Exit status: 0 done (every step applied); 1 refused, asked or done only in "
               "part (a partial edit still writes the applied steps to --out; the message "
               "says what is asked); 2 an error.")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("edit", help="run one instruction on an image (or a session)",
                       description="Run one instruction. Exit status 0 when every step of "
                       "its plan was applied; 1 when it was refused, asked a question, or "
                       "only some steps were applied (those are saved to --out and the "
                       "session; the message says what is asked); 2 on an error.")
    e.add_argument("image", help="the image file (ignored when --session already exists)")
    e.add_argument("instruction", help="what to change, in plain words")
    e.add_argument("--mask", help="brush mask image of the same size (white = edit area)")
    e.add_argument("--reference", action="append", default=[], metavar="REF",
                   help="a reference photo to match ('make it look like the reference'); "
                        "repeat for 'reference 1', 'reference 2', …")
    e.add_argument("--session", help="session folder (created, or continued if it exists)")
    e.add_argument("--out", help="where to save the result (default: in the session folder)")
    e.add_argument("--search", choices=["none", "tree"], default="none",
                   help="'tree' runs the tree search instead of the plain turn loop")
    e.add_argument("--json", action="store_true", help="print the turn result as JSON")
    e.add_argument("--point", metavar="X,Y",
                   help="select the object under this point (full-resolution pixels) first: "
                        "'this', 'that', 'it' then mean it")
    e.add_argument("--choose", metavar="N",
                   help="when the target is unsure, run the edit on candidate N (as listed)")

    for name, text in (("undo", "go back one state"), ("redo", "go forward again"),
                       ("log", "list the states")):
        s = sub.add_parser(name, help=text)
        s.add_argument("--session", required=True, help="session folder")
        if name == "undo":
            s.add_argument("--steps", type=int, default=1, help="how many states to go back")
    c = sub.add_parser("checkout", help="move to any state (the next edit branches)")
    c.add_argument("node", help="state id, as shown by 'log'")
    c.add_argument("--session", required=True, help="session folder")
    x = sub.add_parser("export", help="write the session to one .zip")
    x.add_argument("zip", help="archive to write")
    x.add_argument("--session", required=True, help="session folder")
    i = sub.add_parser("import", help="unpack a session .zip into a folder")
    i.add_argument("zip", help="archive to read")
    i.add_argument("--session", help="folder to create (default: a new session folder)")
    i.add_argument("--max-mb", type=float, help="refuse archives larger than this")

    k = sub.add_parser("critique", help="judge an edit: BEFORE, AFTER and the instruction")
    k.add_argument("before", help="the image before the edit")
    k.add_argument("after", help="the image after the edit (same size)")
    k.add_argument("instruction", help="what was asked")
    k.add_argument("--mask", help="target mask (white = target); default: localised")
    k.add_argument("--json", action="store_true", help="print the verdict as JSON")

    a = sub.add_parser("autopilot", help="improve a photo by tree search over edits")
    a.add_argument("image")
    a.add_argument("--mood", help="optional intent, e.g. 'warm evening light'")
    a.add_argument("--reference", metavar="REF",
                   help="a reference photo in place of the mood ('better, like this one')")
    a.add_argument("--iterations", type=int, default=3)
    a.add_argument("--simulations", type=int, default=20)
    a.add_argument("--depth", type=int, default=3)
    a.add_argument("--top-k", type=int, default=3)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--session", help="session folder to land the steps in")
    a.add_argument("--out", help="where to save the result")

    b = sub.add_parser("batch", help="edit every photo of a folder into another folder",
                       description="Edit every JPEG/PNG/WebP/TIFF under IN (recursively) "
                       "into OUT with the same relative paths, as Ray tasks (a local Ray by "
                       "default). Exit status 1 when any photo failed (see the report).")
    b.add_argument("input", help="the folder of photos")
    b.add_argument("output", help="the folder for the results (may lie inside IN)")
    b.add_argument("instruction", nargs="?", help="what to change (or --autopilot)")
    b.add_argument("--autopilot", action="store_true", help="run Autopilot on every photo")
    b.add_argument("--mood", help="Autopilot's optional intent, e.g. 'warm evening light'")
    b.add_argument("--iterations", type=int, default=2, help="Autopilot's steps at most")
    b.add_argument("--simulations", type=int, default=8, help="Autopilot's simulations")
    b.add_argument("--depth", type=int, default=2, help="Autopilot's look-ahead")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--reference", action="append", default=[], metavar="REF",
                   help="a reference photo every photo is matched to ('match the look of "
                        "the reference'); repeatable")
    b.add_argument("--mask-from", help="a folder of masks named like the photos "
                   "(a/b.jpg → a/b.png; white = edit area)")
    b.add_argument("--point", help="click-to-select X,Y (fractions of the width and height "
                   "when both are ≤ 1, else pixels): the region around it is edited")
    b.add_argument("--workers", type=int, help="local Ray workers (default: every core), or "
                   "photos in flight on a cluster")
    b.add_argument("--threads", type=int, default=1, help="threads per worker (default 1)")
    b.add_argument("--ray", help="join this Ray cluster ('auto': the running one)")
    b.add_argument("--resume", action="store_true",
                   help="skip photos already finished with the same bytes and settings")
    b.add_argument("--retry-failed", action="store_true",
                   help="with --resume, run the photos that failed again")
    b.add_argument("--dry-run", action="store_true", help="plan only; write no photo")
    b.add_argument("--report", action="store_true",
                   help="print the report's path and the failures at the end")
    b.add_argument("--json", action="store_true", help="print the summary as JSON")
    return p


# --------------------------------------------------------------------------- commands


# The edit stack (~0.5 s of imports) is loaded by the commands that use it, so that
# ``batch`` (whose driver only hands photos to Ray) starts Ray that much sooner.


def _open(folder: str) -> Any:
    from agent.session import EditSession  # the edit stack, loaded by the commands using it

    return EditSession.open(folder)


def _session_for(image: str, folder: str | None) -> tuple[Any, bool]:
    """The session to edit and whether this call created it."""
    from agent.session import SESSION_FILE, EditSession  # loaded when a command needs it

    if folder and (Path(folder) / SESSION_FILE).is_file():
        _say(f"continuing session {folder}")
        return EditSession.open(folder), False
    if folder and Path(folder).exists() and (not Path(folder).is_dir()
                                             or any(Path(folder).iterdir())):
        raise SessionError(f"{Path(folder).name} exists and is not a Loupe session")
    return EditSession.create(image, folder), True


def _check_output(out: str | None) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if not out:
        return
    path = Path(out)
    if path.is_dir():
        raise SessionError(f"{path.name or out} is a folder: give the output's file name")
    if path.suffix.lower() not in SUFFIX_FORMATS:
        raise SessionError(f"cannot write {path.suffix or 'a file without a suffix'}: Loupe "
                           "writes .jpg, .png, .webp, .tif and .bmp")
    if not path.parent.is_dir():
        raise SessionError(f"the folder for {path.name} does not exist")


def _output_path(session: Any, out: str | None) -> Path:
    if out:
        return Path(out)
    suffix = Path(session.root_file).suffix or ".png"
    return session.folder / f"output{suffix if suffix in SUFFIX_FORMATS else '.png'}"


def cmd_edit(args: argparse.Namespace) -> int:
    instruction = check_instruction(args.instruction)
    _check_output(args.out)
    references = _read_references(args.reference)   # refused before anything is made
    session, created = _session_for(args.image, args.session)
    try:
        for raw, name in references:
            entry = session.add_reference(raw, name)
            _say(f"{entry['name']}: {name} ({entry['width']}x{entry['height']})")
        mask = None
        if args.mask:
            width, height = session.graph.size
            mask = load_mask(args.mask, (height, width), label=Path(args.mask).name)
        if args.point:
            x, y = _point(args.point)
            picked = session.select(x, y)["selection"]
            _say(f"selected: {picked['label']} at {picked['box']} ({picked['source']}, "
                 f"{picked['seconds']:.2f}s)")
        result = session.turn(instruction, mask, search=args.search)
        if args.choose and result.candidates:
            _say("candidates: " + "; ".join(f"{c['id']}. {c['label']} {c['score']:.2f} "
                                             f"{c['box']}" for c in result.candidates))
            result = session.choose(args.choose)
    except BaseException:
        if created:  # nothing half-made: the new session goes with the failed command
            shutil.rmtree(session.folder, ignore_errors=True)
        raise
    if args.json:
        _say(json.dumps(result.to_dict(), indent=1, default=str))
    else:
        _print_turn(result)
    if result.ok:
        path = session.save_image(_output_path(session, args.out))
        _say(f"saved: {path}" + (" (only the applied steps)" if result.status == "partial"
                                 else ""))
    _say(f"session: {session.folder}")
    if result.status == "partial":
        from agent.session.results import DONE_STEPS  # what carried out its part

        left = [s.description for s in result.steps if s.status not in DONE_STEPS]
        _say(f"not done: {'; '.join(left)} (exit 1: the request was carried out only in part)")
    return 0 if result.status == "done" else 1


def _read_references(paths: list[str]) -> list[tuple[bytes, str]]:
    """Each ``--reference`` file's bytes and name, every one checked like an upload."""
    from agent.session.references import check_reference  # the edit stack, on use

    out = []
    for path in paths:
        name = Path(path).name
        if not Path(path).is_file():
            raise SessionError(f"the reference {name} does not exist; nothing was changed")
        raw = Path(path).read_bytes()
        check_reference(raw, name)
        out.append((raw, name))
    return out


def _point(text: str) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in str(text).replace(" ", "").split(","))
    except ValueError:
        raise SessionError(f"--point takes X,Y in pixels, e.g. 120,340; got {text!r}") from None
    return x, y


#: the app's ways to point at a thing, as the CLI's options
_CLI_WORDS = (
    (re.compile(r"Click it on the photo \(or paint it with the brush\) and send the "
                r"instruction again", re.I),
     "Run it again with --point X,Y (a pixel on it, full-resolution) and 'it' in the "
     "words, or with --mask FILE"),
    (re.compile(r"or pick one of the (\d+) numbered candidates", re.I),
     r"or pick one of the \1 numbered candidates with --choose N"),
    (re.compile(r"Click one of the (\d+) numbered candidates on the photo, or click it "
                r"\(or paint it with the brush\)", re.I),
     r"Run it again with --choose N (one of the \1 candidates listed), or point at it with "
     "--point X,Y (a pixel on it) and say 'it'"),
    (re.compile(r"paint (?:it|the area) with the brush", re.I),
     "point at it with --point X,Y or give --mask FILE"),
)


def cli_words(text: str) -> str:
    """A turn's message for the command line: the app's "click it" / "paint it" become
    the options that do the same here (``--point X,Y``, ``--choose N``, ``--mask``)."""
    for pattern, words in _CLI_WORDS:
        text = pattern.sub(words, text)
    return text


def _print_turn(result: Any) -> None:
    plan = result.plan or {}
    descriptions = plan.get("descriptions", [])
    _say("plan:" if descriptions else "plan: (no edit)")
    for n, text in enumerate(descriptions, 1):
        _say(f"  {n}. {text}")
    for step in result.steps:
        _say(f"step {step.index + 1} [{step.status}] {step.description}"
             + (f" — region: {step.region}" if step.region else ""))
        for a in step.attempts:
            params = ", ".join(f"{k}={v}" for k, v in a.params.items())
            detail = a.error or f"score {a.score:.1f}/10"
            _say(f"    attempt {a.index}: {a.editor}({params}) → {detail} ({a.seconds:.2f}s)")
            for fix in a.fix:
                _say(f"      fix: {fix}")
    _say(cli_words(result.message))
    for c in getattr(result, "candidates", []) or []:
        _say(f"  candidate {c['id']}: {c['label']} (score {c['score']:.2f}) at {c['box']} — "
             f"run again with --choose {c['id']}")
    _say(f"head: {result.head}  ({result.timings.get('total', 0):.2f}s)")


def cmd_nav(args: argparse.Namespace) -> int:
    session = _open(args.session)
    if args.command == "undo":
        head = session.undo(args.steps)
    elif args.command == "redo":
        head = session.redo()
    else:
        head = session.checkout(args.node)
    _say(f"head: {head} — {session.graph.nodes[head].description}")
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    session = _open(args.session)
    for line in session.log_lines():
        _say(line)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    path = _open(args.session).export(args.zip)
    _say(f"exported: {path}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from agent.session import EditSession  # loaded when a command needs it

    limit = int(args.max_mb * 1024 * 1024) if args.max_mb else None
    session = EditSession.import_archive(args.zip, args.session, max_bytes=limit)
    _say(f"imported into {session.folder} ({len(session.graph.nodes)} states, "
         f"head {session.head})")
    return 0


def cmd_autopilot(args: argparse.Namespace) -> int:
    from agent.search.mcts import autopilot  # loaded when this command runs

    _check_output(args.out)
    if args.reference and args.mood:
        raise SessionError("give a mood or a reference, not both")
    references = _read_references([args.reference] if args.reference else [])
    session = _session_for(args.image, args.session)[0] if args.session else None
    image = np.array(session.current_image()) if session else load_image(args.image).pixels
    if references:
        result = _autopilot_like(image, references[0], session, args.image)
    else:
        result = autopilot(image, mood=args.mood, iterations=args.iterations,
                           simulations=args.simulations, depth=args.depth, top_k=args.top_k,
                           seed=args.seed, session=session,
                           progress=lambda *info: log.info("autopilot %s", info))
    for n, step in enumerate(result.steps, 1):
        text = getattr(step, "description", str(step))
        scores = ""
        if hasattr(step, "score_before"):
            scores = f" ({step.score_before:.2f} → {step.score_after:.2f})"
        reason = getattr(step, "reason", "")
        _say(f"  {n}. {text}{scores}" + (f" — {reason}" if reason else ""))
    _say(f"score: {result.score_before:.2f} → {result.score_after:.2f}")
    if session is not None:
        path = session.save_image(_output_path(session, args.out))
    else:
        out = args.out or str(Path(args.image).with_name(Path(args.image).stem + "-auto.png"))
        path = save_image(result.image, out, like=load_image(args.image))
    _say(f"saved: {path}")
    return 0


def _autopilot_like(image: Any, reference: tuple[bytes, str], session: Any, photo: str) -> Any:
    """Autopilot with a reference in place of the mood (``agent.search.reference_pilot``)."""
    from agent.search.reference_pilot import autopilot_like  # loaded when used

    raw, name = reference
    if session is not None:
        entry = session.add_reference(raw, name)
        pixels = session.references.pixels(session.folder, entry["id"], session.original)
        return autopilot_like(image, pixels, session=session, ref_id=entry["id"])
    from agent.session.references import reference_pixels  # loaded when used

    return autopilot_like(image, reference_pixels(raw, name, load_image(photo)))


def cmd_critique(args: argparse.Namespace) -> int:
    from agent.brain.judge import critique_files  # loaded when this command runs

    verdict = critique_files(args.before, args.after, args.instruction,
                             args.mask)
    if args.json:
        _say(json.dumps(verdict))
    else:
        _say(f"score {verdict['score']:.1f}/10 — {'passed' if verdict['passed'] else 'failed'}")
        for reason in verdict["reasons"]:
            _say(f"  - {reason}")
    return 0 if verdict["passed"] else 1


def cmd_batch(args: argparse.Namespace) -> int:
    if not args.autopilot and not args.instruction:
        raise BatchError("say what to change (an instruction) or use --autopilot")
    if args.autopilot and args.instruction:
        raise BatchError("give an instruction or --autopilot, not both")
    if args.workers is not None and args.workers < 1:
        raise BatchError("--workers must be at least 1")
    if args.autopilot and args.mood and args.reference:
        raise BatchError("give Autopilot a mood or a reference, not both")
    stop = threading.Event()  # SIGTERM (a web job's cancel): finish cleanly, keep the done
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    summary = run_batch(args.input, args.output, args.instruction, autopilot=args.autopilot,
                        mood=args.mood, mask_from=args.mask_from, point=args.point,
                        workers=args.workers, ray_address=args.ray, resume=args.resume,
                        dry_run=args.dry_run, retry_failed=args.retry_failed,
                        threads=args.threads, iterations=args.iterations,
                        simulations=args.simulations, depth=args.depth, seed=args.seed,
                        references=args.reference,
                        progress=None if args.json else ProgressBar(), cancel=stop.is_set)
    if args.json:
        _say(json.dumps(summary.to_dict()))
    else:
        _say(f"{summary.total} photos: {summary.done} done, {summary.failed} failed"
             + (f", {summary.planned} planned" if summary.planned else "")
             + f" ({summary.skipped} finished before, {summary.ran} run"
             + (f" on {summary.ray}" if summary.ray else "") + f", {summary.seconds:.1f}s)")
        if args.report or summary.failed:
            for failure in summary.failures:
                _say(f"  failed: {failure['path']}: {failure['reason']}")
        if summary.report:
            _say(f"report: {Path(args.output) / summary.report['html']}")
    return 0 if summary.ok else 1


COMMANDS = {"edit": cmd_edit, "batch": cmd_batch, "critique": cmd_critique, "undo": cmd_nav,
            "redo": cmd_nav,
            "checkout": cmd_nav,
            "log": cmd_log, "export": cmd_export, "import": cmd_import,
            "autopilot": cmd_autopilot}


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (see the module doc)."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    install_log_redaction()
    return guarded(lambda: COMMANDS[args.command](args))


if __name__ == "__main__":
    sys.exit(main())
