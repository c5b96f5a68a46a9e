"""Issue 32, removal fills: "remove" never reports done on a fill it cannot make convincing.

On real tune photos with their hand-drawn masks as the brush, at a reduced size: a white
kitten in front of a monitor (its light bezel, the dark screen, a sheet and the dark room
meet around it) leaves a hole wide enough that the fill carries the screen's dark across
it in blocks; the step is rolled back with a message saying why and what to do. A hole as
wide in one kind of surround (a cinema screen in the dark hall) and a shallow one across
bands (a number plate on a bus's bumper) are filled and kept.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from agent.session import EditSession
from eval import realset
from pipelines.operations.measures import colour_regions

SIDE = 640


def _remove(case_id: str, side: int = SIDE) -> tuple[np.ndarray, np.ndarray, object]:
    image, truth = realset.case_at(case_id, side)
    assert truth is not None
    with tempfile.TemporaryDirectory() as tmp:
        session = EditSession.create(image, Path(tmp) / "s")
        result = session.turn("remove this", truth)
        after = session.current_image()[..., :3]
    return image, after, result.steps[0]


def test_a_wide_hole_where_regions_meet_is_rolled_back_with_a_message() -> None:
    image, after, step = _remove("cat_watching_tv__cat")
    assert step.status == "rolled_back"
    assert "could not fill the hole convincingly" in step.message
    assert "brush a smaller area" in step.message
    assert np.array_equal(after, image)   # nothing was changed


@pytest.mark.parametrize("case_id, side", [("blank_screen__screen", SIDE),
                                           ("voc_2011_000025__plate", 500)])
def test_a_fill_from_one_kind_of_surround_or_across_bands_is_kept(case_id: str,
                                                                  side: int) -> None:
    image, after, step = _remove(case_id, side)
    assert step.status == "applied"
    assert "could not fill" not in step.message
    assert not np.array_equal(after, image)


def test_colour_regions_counts_distinct_regions_not_texture() -> None:
    rng = np.random.default_rng(0)
    grass = np.column_stack([rng.normal(50, 6, 2000), rng.normal(-30, 5, 2000),
                             rng.normal(35, 5, 2000)])
    assert colour_regions(grass) == 1   # one texture, however noisy
    dark = np.column_stack([rng.normal(15, 2, 1000), np.zeros(1000), np.zeros(1000)])
    light = np.column_stack([rng.normal(85, 2, 1000), np.zeros(1000), np.zeros(1000)])
    assert colour_regions(np.vstack([dark, light])) == 2
    rim = np.column_stack([rng.normal(85, 2, 60), np.zeros(60), np.zeros(60)])
    assert colour_regions(np.vstack([dark, rim])) == 1   # a thin rim is no region


def test_a_fill_drawn_by_a_model_is_not_judged_as_a_copy_from_the_surroundings() -> None:
    """The rule says what a fill copied from the surroundings cannot do; a diffusion
    inpainter draws new pixels, so its fill of the same hole is not refused by it."""
    from agent.actions import Action
    from agent.brain.critic import Scene
    from agent.brain.critic.measured import MeasuredCritic
    from pipelines.operations.fill import inpaint

    image, truth = realset.case_at("cat_watching_tv__cat", SIDE)
    assert truth is not None
    after = inpaint(np.ascontiguousarray(image), truth)
    action = Action(kind="remove", operation="inpaint", params={}, target="",
                    region={"type": "mask"})
    critic = MeasuredCritic(independent=False)
    copied = critic.critique(image, after, action, truth, scene=Scene(image))
    drawn = critic.critique(image, after, action, truth, scene=Scene(image, model_fill=True))
    assert copied.checks["fill_continues_surround"] is False
    assert "fill_continues_surround" not in drawn.checks or \
        drawn.checks["fill_continues_surround"] is True
