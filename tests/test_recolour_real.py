"""A recolour on a real photo grows over the object's edge only (issue 32, class
"touching"): "make the orange bus blue" on a Maltese bus parked between another bus and a
tree. A removal's growth (a quarter of the object's radius, 44 px here) took the
neighbour's orange and specks of foliage, 954 px beyond the bus's reach, recoloured blue
and reported done; a recolour's mask now reaches at most ``executor.EDGE_BAND`` of the
long side past the localiser's (``coverage`` unmixes the edge pixels it holds).

Wave 10: the detector's box for that bus is stretched over its neighbour's flank, which it
also sees as a bus on its own (0.59), and the cut-out took a quarter of that neighbour's
box: recoloured, 35 px of the neighbour turned blue and the turn said done. Where the bus
ends is not known then, and the turn asks; painted by the user, the recolour stays on it."""

from __future__ import annotations

import numpy as np

from eval import realset
from eval.realset_edits import beyond_reach


def test_a_recolour_stays_on_the_bus_beside_a_bus_and_a_tree(tmp_path) -> None:
    from agent.session import EditSession

    case = realset.case("voc_2011_000025__orange_bus")
    before, truth = realset.photo(case.photo)[..., :3], case.truth()
    session = EditSession.create(before, tmp_path / "s")
    asked = session.turn("make the orange bus blue")
    assert not asked.changed and asked.candidates and "another bus" in asked.message, \
        asked.message
    assert np.array_equal(session.current_image()[..., :3], before)
    step = session.turn("make it blue", truth).steps[0]      # the user paints the bus
    assert step.status == "applied", step
    after = session.current_image()[..., :3]
    changed = np.abs(after.astype(int) - before.astype(int)).max(axis=-1) > 0
    assert (changed & beyond_reach(truth)).sum() < 100
    a = after[truth].astype(int)
    assert ((a[:, 2] - a[:, :2].max(axis=-1)) > 0).mean() > 0.6     # the bus is blue
