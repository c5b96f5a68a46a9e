"""A verifiable multi-turn benchmark engine at native 4K (after Agent Banana's HDD-Bench).

A scene is a symbolic state: objects with a name, colour, size, material, shape and
position. Canonical commands (add / remove / replace / adjust / undo) move the state
deterministically, ``s(t+1) = T(s(t), c(t))``; a template paraphraser turns each turn's
commands into one instruction; a procedural renderer draws any state at any resolution
over a textured, photographic-looking background, so every turn has a ground-truth
image; and a classical perception step maps a rendered (or edited) image back to a
state. Instruction Following (IF) and Image Consistency (IC) compare perceived and target
states attribute by attribute.

Objects use distinct, saturated colours from ``NAMED_COLORS`` over a low-saturation
background, so a colour-word localiser can find them and a classical editor can recolour
or remove them.

Modules: ``scene`` (objects, states, commands, the transition), ``paraphrase``
(commands → one instruction), ``render`` (a state → pixels at any resolution),
``perception`` (pixels → a state), ``scoring`` (IF and IC), ``dataset`` (sessions,
the dataset folders and their files). The names below are the package's API.
"""


from eval.hdd.dataset import (
    Session,
    initial_state,
    load_session,
    make_dataset,
    make_session,
    make_turn,
    write_png,
)
from eval.hdd.paraphrase import (
    Dialogue,
    paraphrase,
)
from eval.hdd.perception import (
    perceive,
)
from eval.hdd.render import (
    render,
)
from eval.hdd.scene import (
    ATTRIBUTES,
    COMMAND_KINDS,
    DEFAULT_SIZE,
    GRID_COLS,
    GRID_ROWS,
    MATCH_DISTANCE,
    MATERIALS,
    NOUNS,
    PALETTE,
    SHAPES,
    SIZE_RADIUS,
    SIZES,
    Command,
    HDDError,
    SceneObject,
    SceneState,
    apply,
    apply_turn,
)
from eval.hdd.scoring import (
    image_consistency,
    instruction_following,
    match_objects,
    targeted_ids,
)

__all__ = [
    "ATTRIBUTES",
    "COMMAND_KINDS",
    "Command",
    "DEFAULT_SIZE",
    "Dialogue",
    "GRID_COLS",
    "GRID_ROWS",
    "HDDError",
    "MATCH_DISTANCE",
    "MATERIALS",
    "NOUNS",
    "PALETTE",
    "SHAPES",
    "SIZES",
    "SIZE_RADIUS",
    "SceneObject",
    "SceneState",
    "Session",
    "apply",
    "apply_turn",
    "image_consistency",
    "initial_state",
    "instruction_following",
    "load_session",
    "make_dataset",
    "make_session",
    "make_turn",
    "match_objects",
    "paraphrase",
    "perceive",
    "render",
    "targeted_ids",
    "write_png",
]
