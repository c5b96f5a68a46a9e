"""Issue 32, wave 36: a person named by place among look-alikes ("the woman in the middle",
"the second person from the right").

"In the middle" was the instance nearest the photo's centre and "second from the right"
counted from the left, both among the outlined candidates only; a row's order is now
read from every instance's box, and an unclear order, a missing middle or an outline
that is not the whole instance is a question (``pipelines.localizers.row``).
"""

from __future__ import annotations

import numpy as np

from eval import realset
from pipelines.localizers import fusion, row
from pipelines.localizers.base import Candidate
from pipelines.localizers.phrases import parse_phrase


def _person(box: tuple[int, int, int, int], shape=(200, 400), fill: float = 0.6
            ) -> tuple[Candidate, fusion.ObjectEvidence]:
    """A person's outline (an ellipse filling about ``fill`` of its box) and its evidence."""
    mask = np.zeros(shape, bool)
    x0, y0, x1, y1 = box
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    squash = np.sqrt(fill / 0.785)
    mask[((xx - cx) / (rx * squash)) ** 2 + ((yy - cy) / (ry * squash)) ** 2 <= 1] = True
    return (Candidate(mask, 0.8, "person", "test", box=box),
            fusion.ObjectEvidence(tuple(float(v) for v in box), {"person": 0.8}, fused=0.8))


def _row(boxes: list[tuple[int, int, int, int]], **kw):
    made = [_person(b, **kw) for b in boxes]
    return [m for m, _ in made], [o for _, o in made]


THREE = [(20, 40, 90, 190), (150, 45, 220, 195), (290, 38, 360, 192)]


def test_the_words_that_rank_a_row() -> None:
    assert row.rank(parse_phrase("the woman in the middle")) == ("middle", 0)
    assert row.rank(parse_phrase("the middle meerkat")) == ("middle", 0)
    assert row.rank(parse_phrase("the second person from the right")) == ("right", 2)
    assert row.rank(parse_phrase("the second person from the left")) == ("left", 2)
    assert row.rank(parse_phrase("the man on the far right")) == ("right", 1)
    # nearness to a place, not a rank: kept as it was
    assert row.rank(parse_phrase("the man on the right")) is None
    assert row.rank(parse_phrase("the orange slice at the bottom in the middle")) is None
    assert row.rank(parse_phrase("the biggest dog")) is None


def test_the_middle_of_three_in_a_row_is_the_second_from_either_end() -> None:
    masks, objects = _row(THREE)
    middle = row.choose(masks, objects, parse_phrase("the person in the middle"), "person")
    assert middle.status == "resolved" and middle.masks[0] is masks[1]
    right = row.choose(masks, objects, parse_phrase("the second person from the right"),
                       "person")
    assert right.status == "resolved" and right.masks[0] is masks[1]
    far = row.choose(masks, objects, parse_phrase("the person on the far right"), "person")
    assert far.status == "resolved" and far.masks[0] is masks[2]


def test_the_order_is_read_from_every_instance_not_the_outlined_ones() -> None:
    """Five people, the two on the right not outlined: the middle one is the third."""
    boxes = THREE[:2] + [(230, 40, 280, 190), (300, 42, 340, 190), (350, 40, 395, 190)]
    masks, objects = _row(boxes)
    found = row.choose(masks[:3], objects, parse_phrase("the woman in the middle"), "woman")
    assert found.status == "resolved" and found.masks[0] is masks[2]
    asked = row.choose(masks[:3], objects, parse_phrase("the person on the far right"),
                       "person")
    assert asked.status == "ambiguous"       # the rightmost one has no outline to give


def test_no_middle_or_an_unclear_order_is_a_question() -> None:
    masks, objects = _row(THREE + [(370, 40, 398, 190)])
    even = row.choose(masks, objects, parse_phrase("the man in the middle"), "man")
    assert even.status == "ambiguous" and "middle" in even.reason
    # offered: the outlines nearest the row's middle, both middle ones among them
    assert {THREE[1], THREE[2]} <= {m.box for m in even.masks} and len(even.masks) == 3
    # the middle one stands half behind its neighbour: which is in the middle is unclear
    masks, objects = _row([(20, 40, 90, 190), (40, 45, 110, 195), (290, 38, 360, 192)])
    assert row.choose(masks, objects, parse_phrase("the man in the middle"),
                      "man").status == "ambiguous"
    # a second row behind (smaller, higher up): no single row has a middle
    masks, objects = _row([(20, 100, 90, 199), (150, 10, 180, 60), (290, 100, 360, 199)])
    assert row.choose(masks, objects, parse_phrase("the man in the middle"),
                      "man").status == "ambiguous"


def test_an_outline_that_is_not_the_whole_instance_is_a_question() -> None:
    masks, objects = _row(THREE)
    masks[1] = _person(THREE[1], fill=0.15)[0]          # half of her, or less
    assert row.choose(masks, objects, parse_phrase("the woman in the middle"),
                      "woman").status == "ambiguous"
    masks, objects = _row(THREE)
    objects[1].why = f"detector person 0.80; {fusion.CAUGHT}: it reached into another object"
    assert row.choose(masks, objects, parse_phrase("the woman in the middle"),
                      "woman").status == "ambiguous"


def test_words_that_rank_nothing_leave_the_choice_to_the_place_reading() -> None:
    masks, objects = _row(THREE)
    found = row.choose(masks, objects, parse_phrase("the man on the left"), "man")
    assert found.status == "resolved" and found.masks[0] is masks[0]
    assert "nearest the left" in found.reason


def test_a_weaker_detection_where_the_count_runs_is_a_question() -> None:
    """The aquarium's leftmost woman was seen at 0.31 beside a man at 0.65 and left out of
    the candidates: "the person on the far left" took the man (a silent failure)."""
    masks, objects = _row(THREE[1:])
    weak = fusion.ObjectEvidence((20.0, 40.0, 90.0, 190.0), {"person": 0.31})
    part = fusion.ObjectEvidence((300.0, 40.0, 350.0, 100.0), {"person": 0.4})  # a head
    seen = objects + [weak, part]
    far = row.choose(masks, objects, parse_phrase("the person on the far left"), "person",
                     seen, "person")
    assert far.status == "ambiguous" and "unsure" in far.reason
    right = row.choose(masks, objects, parse_phrase("the person on the far right"), "person",
                       seen, "person")
    assert right.status == "resolved" and right.masks[0] is masks[1]
    faint = fusion.ObjectEvidence((20.0, 40.0, 90.0, 190.0), {"person": 0.1})
    found = row.choose(masks, objects, parse_phrase("the person on the far left"), "person",
                       objects + [faint], "person")
    assert found.status == "resolved" and found.masks[0] is masks[0]


def test_the_real_second_person_from_the_right_and_no_middle_among_the_aquarium_people(
        ) -> None:
    """Aquarium silhouettes at 0.35 x: the second from the right is the standing man next
    to the seated one (hand-drawn; it was counted from the left, then asked), and "the
    person in the middle", where two people overlap at the centre, is a question (it was
    the one nearest the centre, said found)."""
    import cv2

    from pipelines.localizers.perception import PerceptionLocalizer

    case = realset.case("aquarium__second_person_right")
    image, truth = realset.photo(case.photo), case.truth()
    h, w = truth.shape
    size = (int(w * 0.35), int(h * 0.35))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    truth = cv2.resize(truth.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
    localizer = PerceptionLocalizer()
    found = localizer.locate(small, case.phrase)
    assert found.status == "resolved" and "from the right" in found.reason
    got = found.union()
    assert (got & truth).sum() / (got | truth).sum() >= 0.7
    middle = localizer.locate(small, realset.case("aquarium__person_middle").phrase)
    assert middle.status == "ambiguous" and "middle" in middle.reason


def test_a_question_offers_the_outlines_at_the_named_end() -> None:
    masks, objects = _row(THREE[1:] + [(370, 40, 398, 190), (250, 40, 280, 190)])
    weak = fusion.ObjectEvidence((20.0, 40.0, 90.0, 190.0), {"person": 0.31})
    masks = masks[::-1]             # as scored: the right one first
    asked = row.choose(masks, objects, parse_phrase("the person on the far left"),
                       "person", objects + [weak], "person")
    assert asked.status == "ambiguous"
    # the three from the left, not the one at the far right; all four kept as candidates
    assert [m.box for m in asked.masks] == [THREE[1], (250, 40, 280, 190), THREE[2]]
    assert len(asked.candidates) == 4
