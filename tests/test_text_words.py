"""Issue 32: text the user names by what it reads or what it is on. The text detector
finds where text is but reads none of it, so "the Leyland script on the bumper" was
"found" as the one text region the detector saw (elsewhere on the bus, IoU 0), reported
done after an edit. Checked on the tune photos that showed it."""

from __future__ import annotations

from eval import realset
from pipelines.localizers.perception import PerceptionLocalizer


def test_text_named_by_what_it_reads_or_is_on_is_asked() -> None:
    for case_id in ("voc_2011_000025__bumper_script", "kpa_cold_water__las_vegas"):
        case = next(c for c in realset.load_cases("tune") if c.id == case_id)
        found = PerceptionLocalizer().locate(realset.photo(case.photo), case.phrase)
        assert found.status == "ambiguous", (case_id, found.reason)
        assert "cannot read" in found.reason and "click" in found.reason


def test_all_the_text_and_a_place_among_it_are_still_found() -> None:
    """Words that say nothing of what the text reads ("the text") take every region, and a
    place word picks one (the regions are where the detector put them)."""
    image = realset.photo("kpa_cold_water")
    every = PerceptionLocalizer().locate(image, "the text")
    assert every.status == "resolved", every.reason
    assert len(every.masks) >= 2
    left = PerceptionLocalizer().locate(image, "the text on the left")
    assert left.status == "resolved", left.reason
    assert len(left.masks) == 1
