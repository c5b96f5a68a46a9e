"""Issue 32: text the user names by what it reads or what it is on. The text detector
finds where text is; PP-OCRv4's recogniser (from the same registry package) reads each
region, and the regions that read a named word are the answer. "The Leyland script on the
bumper" was "found" as the one text region the detector saw (elsewhere on the bus, IoU 0),
reported done; now that region is read ("EBY·584", the number plate), it says no such
thing, and Loupe asks, saying what it read. Checked on the tune photos that showed it."""

from __future__ import annotations

import numpy as np

from agent.brain.frontend import normalise
from eval import realset
from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.perception import PerceptionLocalizer
from pipelines.localizers.text import plate_like, reads_as, unread
from pipelines.perception.detectors import TextReader


def _case(case_id: str) -> realset.RealCase:
    return realset.case(case_id)


def test_text_named_by_what_it_reads_is_found_by_reading() -> None:
    """A neon "LAS VEGAS" over a street with other writing: the region that reads it (as
    'LASVEGASS') is the answer, the other one is not."""
    case = _case("kpa_cold_water__las_vegas")
    found = PerceptionLocalizer().locate(realset.photo(case.photo), case.phrase)
    assert found.status == "resolved", found.reason
    assert "reads" in found.reason and len(found.masks) == 1
    assert realset.mask_iou(found.union(), case.truth()) >= 0.8


def test_text_that_reads_otherwise_is_asked_with_what_was_read() -> None:
    case = _case("voc_2011_000025__bumper_script")
    found = PerceptionLocalizer().locate(realset.photo(case.photo), case.phrase)
    assert found.status == "ambiguous", found.reason
    assert "I read 'EBY" in found.reason and "leyland" in found.reason
    assert "click" in found.reason


def test_the_reader_reads_a_number_plate_also_in_a_mirror() -> None:
    """On the mirrored print the plate read '82-83' (0 plates found): a line read unsurely
    is read mirrored too, and the surer reading is kept."""
    image = realset.photo("voc_2011_000025")
    text, confidence = TextReader().read(image, (223, 309, 296, 328))
    assert text.replace("·", " ").split() == ["EBY", "584"] and confidence > 0.8
    mirrored = np.ascontiguousarray(image[:, ::-1])
    w = image.shape[1]
    text, confidence = TextReader().read(mirrored, (w - 296, 309, w - 223, 328))
    assert text.replace("·", " ").split() == ["EBY", "584"] and confidence > 0.8


def test_the_number_plate_is_the_writing_that_reads_like_one() -> None:
    """"Blur the number plate", the commonest privacy edit: the plate is the text region
    whose reading has letters and digits ('EBY·584'); it was refused before ("the main
    subject is a bus, not a number plate")."""
    case = _case("voc_2011_000025__plate")
    found = PerceptionLocalizer().locate(realset.photo(case.photo), case.phrase)
    assert found.status == "resolved", found.reason
    assert "EBY" in found.reason
    assert realset.mask_iou(found.union(), case.truth()) >= 0.8
    assert plate_like("EBY·584") and plate_like("AB12 CDE") and plate_like("7XYZ123")
    assert not plate_like("LASVEGAS") and not plate_like("2024") and not plate_like("12")


def test_a_reading_matches_a_name_with_a_slip_or_cut_short() -> None:
    assert reads_as(["las", "vegas"], "LASVEGASS")
    assert reads_as(["eristoff"], "ERSTO")            # a piece of the word, one slip
    assert reads_as(["stop"], "STOP")
    assert not reads_as(["leyland", "bumper"], "EBY·584")
    assert not reads_as(["open"], "CLOSED")
    assert not reads_as(["sale"], "S")                # too little read to say


def test_a_capitalised_name_is_not_spell_corrected() -> None:
    """"Leyland" is a name, not a slip for "eland" (the antelope the lexicon knows)."""
    for typed in ("make the Leyland script on the bumper darker",
                  "make the LEYLAND sign above the grille darker"):
        read = normalise(typed)
        assert "leyland" in read.text and not read.corrections, read
    assert normalise("remove the squirel").corrections == [("squirel", "squirrel")]
    assert normalise("Squirel in the corner, remove it").corrections   # first word


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


def test_two_regions_that_read_the_name_once_named_are_asked_about() -> None:
    """The reading picks the regions; for a thing named once, two that read it are a
    question (a bus's "LEYLAND" sign and badge), for a plural they are the answer."""
    def region(x: int) -> Candidate:
        mask = np.zeros((40, 100), bool)
        mask[10:20, x:x + 20] = True
        return Candidate(mask, 0.8, "text", "test")

    sign, badge, plate = region(0), region(40), region(70)
    said = {id(sign): "LEYLAND", id(badge): "LEYLAND", id(plate): "EBY 584"}

    def read(c: Candidate) -> tuple[str, float]:
        return said[id(c)], 0.9

    found = Localization([sign, badge, plate], "resolved", "all 3 text regions")
    once = unread(found, ["the", "leyland", "lettering"], False, read)
    assert once.status == "ambiguous" and len(once.masks) == 2, once.reason
    every = unread(found, ["the", "leyland", "letters"], False, read, plural=True)
    assert every.status == "resolved" and len(every.masks) == 2, every.reason


def test_a_plate_like_reading_off_any_vehicle_is_no_number_plate() -> None:
    """A shop sign that reads "OPEN 24H" reads like a plate; on no vehicle it is asked."""
    mask = np.zeros((60, 100), bool)
    mask[40:50, 30:60] = True
    sign = Candidate(mask, 0.8, "text", "test")
    found = Localization([sign], "resolved", "all 1 text regions")

    def read(c: Candidate) -> tuple[str, float]:
        return "OPEN 24H", 0.95

    words = ["the", "number", "plate"]
    off = unread(found, words, False, read, vehicles=lambda: [(0, 0, 100, 20)])
    assert off.status == "ambiguous" and "vehicle" in off.reason, off.reason
    on = unread(found, words, False, read, vehicles=lambda: [(10, 30, 90, 60)])
    assert on.status == "resolved", on.reason


def test_the_name_read_elsewhere_than_the_place_named_is_asked() -> None:
    """On an enlarged view the detector also finds the bus's LEYLAND sign above the grille;
    "the Leyland script on the bumper" then read as that sign would be a wrong answer said
    done. A reading that accounts for the name but not for "bumper" is only a guess."""
    mask = np.zeros((60, 100), bool)
    mask[5:15, 20:80] = True
    sign = Candidate(mask, 0.8, "text", "test")
    found = Localization([sign], "resolved", "all 1 text regions")
    asked = unread(found, ["the", "leyland", "script", "on", "the", "bumper"], False,
                   lambda c: ("LEYLAND", 0.98))
    assert asked.status == "ambiguous" and asked.guess == 1, asked.reason
    assert "bumper" in asked.reason
    named = unread(found, ["the", "leyland", "lettering"], False, lambda c: ("LEYLAND", 0.98))
    assert named.status == "resolved", named.reason
