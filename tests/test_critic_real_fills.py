"""Removal fills on real photos judged by eye label the critic's pairs (issue 32, part 4).

A removal inside the true mask is only a correct edit when its fill is: wave 15 looked at
every removal's fill in ``tests/critic_real_pairs`` (before/after crops, 1x and zoomed) and
recorded a verdict per case in ``tests/data/critic_real_fills.json``. A visibly wrong fill
(a ghost, copied or invented structure, a gap) makes a bad pair of its own kind, "wrong
fill"; an undecided one is left out of both rates.
"""

from __future__ import annotations

import re

from tests.critic_real_pairs import (
    FILLS_FILE,
    _edit,
    fill_seen,
    fill_verdicts,
    labelled_by_id,
    photo,
)


def test_every_fill_verdict_has_a_reason_and_a_fingerprint():
    rows = fill_verdicts()
    assert FILLS_FILE.is_file() and len(rows) >= 80
    for cid, row in rows.items():
        assert row["fill"] in ("plausible", "wrong", "undecided"), cid
        assert row["split"] in ("tune", "held_out"), cid
        assert len(row["why"]) > 10, cid
        assert re.fullmatch(r"[0-9a-f]{12}", row["fill_sha1"]), cid
    # both splits are labelled the same way
    assert {r["split"] for r in rows.values()} == {"tune", "held_out"}


def test_a_fill_wrong_by_eye_is_read_as_wrong_and_a_plausible_one_as_plausible():
    """A plane removed from a snowy apron leaves a white ghost and tail fragments (wrong);
    sand filled where a foot stood continues the sand (plausible)."""
    found = labelled_by_id({"kpa_snow__front_plane", "sand__foot"})
    for cid, expected in (("kpa_snow__front_plane", "wrong"), ("sand__foot", "plausible")):
        case = found[cid]
        words = f"remove {case.phrase}"
        after = _edit(photo(case.photo), words, case.mask, right=True)
        assert fill_seen(case, after) == expected
