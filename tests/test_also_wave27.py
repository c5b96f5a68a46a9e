"""Wave 27: "…, and the sea too" gives the sea the same edit.

"make the sky darker, and the sea too" darkened the sky only and said done; "make the trees
darker, the sky too" read "make the sky too" as a highlights edit of the whole photo
(``agent.brain.also``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eval import realphotos
from eval.realset_edits import cli_edit
from tests.planned import plan_of

ROOT = Path(__file__).resolve().parents[1]
MASKS = ROOT / "eval" / "data" / "realphotos" / "masks"


@pytest.mark.parametrize("text,same_as", [
    ("make the sky darker, and the trees as well", "make the sky darker and the trees darker"),
    ("make the trees darker, the sky too", "make the trees darker and the sky darker"),
    ("make the sky darker. the trees too.", "make the sky darker and the trees darker"),
    ("darken the sky, also the trees", "darken the sky and darken the trees"),
    ("make the red car darker and the truck too", "make the red car darker and the truck darker"),
    ("remove the dog and the cat too", "remove the dog and remove the cat"),
])
def test_too_gives_the_second_thing_the_same_edit(text: str, same_as: str) -> None:
    assert plan_of(text) == plan_of(same_as), text


def test_the_cli_darkens_the_sea_too(tmp_path: Path) -> None:
    """Through the command line on a real photo: the sky and the sea (their labelled
    masks) both darker; on 2b1deb3 the sea was left as it was and the edit said done."""
    photo = realphotos.photo_path("kpa_skagen")
    out = tmp_path / "out.png"
    run = cli_edit(photo, "make the sky darker, and the sea too", tmp_path, timeout=300)
    assert run is not None, "timed out"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    before = np.asarray(Image.open(photo).convert("RGB")).astype(float)
    after = np.asarray(Image.open(out).convert("RGB")).astype(float)
    luma = np.array([0.299, 0.587, 0.114])
    for name in ("sky", "sea"):
        mask = np.array(Image.open(MASKS / f"kpa_skagen__{name}.png")) > 0
        assert (after[mask] @ luma).mean() < (before[mask] @ luma).mean() - 8, name
