"""Generated sessions and the dataset folders (``session.json`` + PNGs per session)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from eval.hdd.paraphrase import Dialogue, paraphrase
from eval.hdd.render import render
from eval.hdd.scene import (
    DEFAULT_SIZE,
    GRID_COLS,
    GRID_ROWS,
    MATERIALS,
    PALETTE,
    SHAPES,
    SIZE_RADIUS,
    SIZES,
    Command,
    HDDError,
    SceneState,
    apply,
    apply_turn,
)
from pipelines.files import atomic_write

# --- generation ------------------------------------------------------------------------


def _slot_position(slot: int, rng: random.Random, aspect: float) -> tuple[float, float]:
    col, row = slot % GRID_COLS, slot // GRID_COLS
    reach = SIZE_RADIUS["large"] + 0.015  # image-height units
    jx = max(0.0, 0.5 / GRID_COLS - reach / aspect)
    jy = max(0.0, 0.5 / GRID_ROWS - reach)
    x = (col + 0.5) / GRID_COLS + rng.uniform(-jx, jx)
    y = (row + 0.5) / GRID_ROWS + rng.uniform(-jy, jy)
    return round(x, 4), round(y, 4)


def _slot_of(position: tuple[float, float]) -> int:
    col = min(GRID_COLS - 1, int(position[0] * GRID_COLS))
    row = min(GRID_ROWS - 1, int(position[1] * GRID_ROWS))
    return row * GRID_COLS + col


def _new_attrs(state: SceneState, rng: random.Random, aspect: float) -> dict[str, Any] | None:
    used_colors = {o.color for o in state.objects}
    free_slots = sorted(set(range(GRID_COLS * GRID_ROWS)) - {_slot_of(o.position)
                                                             for o in state.objects})
    colors = [c for c in PALETTE if c not in used_colors]
    if not free_slots or not colors:
        return None
    return {"color": rng.choice(colors), "size": rng.choice(SIZES),
            "material": rng.choice(MATERIALS), "shape": rng.choice(SHAPES),
            "position": _slot_position(rng.choice(free_slots), rng, aspect)}


def initial_state(rng: random.Random, aspect: float = 16 / 9, objects: tuple[int, int] = (3, 5),
                  background: int | None = None) -> SceneState:
    """A random first scene with distinct colours, one object per grid slot."""
    state = SceneState(background=rng.randrange(1 << 30) if background is None else background)
    for _ in range(rng.randint(*objects)):
        attrs = _new_attrs(state, rng, aspect)
        if attrs is None:
            break
        state = apply(state, Command("add", attrs=attrs))
    return state


def _random_command(state: SceneState, rng: random.Random, aspect: float,
                    busy: set[str]) -> Command | None:
    kinds = ["adjust"] * 5 + ["remove"] * 2 + ["add"] * 2 + ["replace"] * 2
    kind = rng.choice(kinds)
    candidates = [o for o in state.objects if o.id not in busy]
    if kind == "add" or not candidates:
        attrs = _new_attrs(state, rng, aspect)
        return Command("add", attrs=attrs) if attrs else None
    obj = rng.choice(candidates)
    free_colors = [c for c in PALETTE if c not in {o.color for o in state.objects}]
    if kind == "remove":
        return Command("remove", obj.id) if len(state.objects) > 1 else None
    if kind == "replace":
        shape = rng.choice([s for s in SHAPES if s != obj.shape])
        attrs = {"shape": shape}
        if free_colors and rng.random() < 0.5:
            attrs["color"] = rng.choice(free_colors)
        return Command("replace", obj.id, attrs)
    attr = rng.choice(["color"] * 4 + ["size", "material"])
    if attr == "color":
        return Command("adjust", obj.id, {"color": rng.choice(free_colors)}) if free_colors \
            else None
    if attr == "size":
        here = SIZES.index(obj.size)
        choices = [s for i, s in enumerate(SIZES) if abs(i - here) == 1]
        return Command("adjust", obj.id, {"size": rng.choice(choices)})
    material = "matte" if obj.material == "glossy" else "glossy"
    return Command("adjust", obj.id, {"material": material})


def make_turn(states: Sequence[SceneState], rng: random.Random, aspect: float = 16 / 9,
              max_commands: int = 2) -> list[Command]:
    """Draw one turn's commands: one or two edits on distinct objects, or an undo."""
    state = states[-1]
    if len(states) >= 2 and rng.random() < 0.12:
        return [Command("undo")]
    commands: list[Command] = []
    busy: set[str] = set()
    want = 1 if rng.random() < 0.45 else max_commands
    for _ in range(10 * want):
        if len(commands) == want:
            break
        command = _random_command(state, rng, aspect, busy)
        if command is None:
            continue
        state = apply(state, command)
        busy |= {command.target} if command.target else set()
        busy |= {f"o{state.next_id - 1}"} if command.kind == "add" else set()
        commands.append(command)
    return commands


@dataclass
class Session:
    """One generated multi-turn session: states ``s0 … sT``, commands and instructions."""

    id: str
    states: list[SceneState]
    commands: list[list[Command]]
    instructions: list[str]

    def to_json(self, size: tuple[int, int]) -> dict[str, Any]:
        return {"id": self.id, "size": list(size), "source": "turn_0.png",
                "states": [s.to_json() for s in self.states],
                "turns": [{"turn": t + 1, "instruction": q,
                           "commands": [c.to_json() for c in cs],
                           "target": f"turn_{t + 1}.png"}
                          for t, (q, cs) in enumerate(zip(self.instructions, self.commands))]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        try:
            return cls(id=str(data["id"]),
                       states=[SceneState.from_json(s) for s in data["states"]],
                       commands=[[Command.from_json(c) for c in t["commands"]]
                                 for t in data["turns"]],
                       instructions=[str(t["instruction"]) for t in data["turns"]])
        except (KeyError, TypeError) as exc:
            raise HDDError(f"malformed HDD session: {exc}") from None


def make_session(session_id: str, rng: random.Random, turns: int = 3,
                 aspect: float = 16 / 9) -> Session:
    """Generate one session of ``turns`` turns (states, commands, instructions)."""
    states = [initial_state(rng, aspect)]
    commands: list[list[Command]] = []
    instructions: list[str] = []
    mentioned: list[str] = []
    for _ in range(turns):
        turn = make_turn(states, rng, aspect)
        instructions.append(paraphrase(turn, rng, Dialogue(states[-1], list(mentioned))))
        states.append(apply_turn(states[-1], turn, states[:-1]))
        mentioned += [c.target for c in turn if c.target]
        commands.append(turn)
    return Session(session_id, states, commands, instructions)


def write_png(image: np.ndarray, path: Path) -> None:
    """Write an RGB image as PNG, atomically (deterministic bytes for the same pixels)."""
    ok, data = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR),
                            [cv2.IMWRITE_PNG_COMPRESSION, 3])
    if not ok:
        raise HDDError(f"could not encode {path}")
    atomic_write(path, data.tobytes())


def make_dataset(out: str | Path, sessions: int = 96, turns: int = 3,
                 size: tuple[int, int] = DEFAULT_SIZE, seed: int = 0, *,
                 targets: bool = True) -> Path:
    """Write an HDD dataset: one folder per session with ``session.json`` and images.

    Args:
        out: the dataset folder (created; existing session folders are overwritten).
        sessions: number of sessions.
        turns: turns per session.
        size: ``(width, height)`` of every image.
        seed: the master seed; the same seed gives the same bytes.
        targets: also write each turn's ground-truth image (``turn_<t>.png``); the source
            ``turn_0.png`` is always written.

    Returns:
        The dataset folder (with ``manifest.json``).
    """
    if sessions < 1 or turns < 1:
        raise HDDError("sessions and turns must be at least 1")
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    aspect = size[0] / size[1]
    names = []
    for index in range(sessions):
        rng = random.Random(f"hdd-{seed}-{index}")
        session = make_session(f"s{index:04d}", rng, turns, aspect)
        folder = root / session.id
        folder.mkdir(exist_ok=True)
        shown = session.states if targets else session.states[:1]
        for t, state in enumerate(shown):
            write_png(render(state, size), folder / f"turn_{t}.png")
        (folder / "session.json").write_text(json.dumps(session.to_json(size), indent=1))
        names.append(session.id)
    manifest = {"benchmark": "hdd", "version": 1, "size": list(size), "seed": seed,
                "turns": turns, "targets": targets, "sessions": names}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return root


def load_session(folder: str | Path) -> Session:
    """Read one session folder written by ``make_dataset``."""
    path = Path(folder) / "session.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise HDDError(f"cannot read {path}: {exc}") from None
    return Session.from_json(data)
