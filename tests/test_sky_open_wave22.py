"""Issue 32: a sky that goes on down beside a low skyline. The sky is found on a small copy
and cut a little under its horizon (the median of its lower edge over its columns), so
that sky-like ground under it (a lit road, a sea) stays out. Where the skyline is not
level, the cut ran straight through open sky: the sky a cliff leaves open on its right
kept a hard horizontal edge, and "make the sky a deeper blue" left a band of it pale under
a straight seam, reported done (a label-free sweep of that instruction over the
gcompris-qt-data monuments found it on a palace, a cathedral and a colonnade).
``sky_land.open_below`` keeps, column by column, the sky that runs on unbroken from its
horizon, its tone changing little over a few rows; a shore under a misty horizon is a
step of tone and stays out. Whether the rest asks is unchanged."""

from __future__ import annotations

from eval import realphotos, realset
from pipelines.localizers.sky import ends_unsure, find_sky


def _case(case_id: str) -> realset.RealCase:
    return realset.case(case_id)


def test_the_sky_beside_a_cliff_goes_down_to_the_sea() -> None:
    """A clear sky over a cliff: on the right it runs down to the sea's horizon, far under
    the cliff-top that sets the median horizon. Main cut it there (IoU 0.926)."""
    case = _case("tux_cliff__sky")
    found = ends_unsure(find_sky(realphotos.load(case.photo)))
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.masks[0].mask > 0.5, case.truth()) >= 0.97


def test_sky_between_cables_is_still_a_question() -> None:
    """A night sky over a bridge: what goes on under the cut lies between cables, and only
    its open top runs on unbroken from the sky above. It stays a question, as on main."""
    case = _case("cincinnati_bridge__sky")
    found = ends_unsure(find_sky(realphotos.load(case.photo)))
    assert found.status == "ambiguous"
    assert "goes on below that horizon" in found.reason
