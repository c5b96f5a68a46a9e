"""Issue 23's last qualifiers: "except the …" and "in the corner" (which corner, or the
nearest one), from the parsed words to the chosen masks on a 12-MP photo."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from eval.localization import load_cases, mask_iou, render
from pipelines.localizers import get_localizer
from pipelines.localizers.base import Candidate
from pipelines.localizers.phrases import parse_phrase, select_candidates
from tests.guesses import confirmed


def test_except_and_corner_words_are_parsed() -> None:
    p = parse_phrase("all the cups except the left one")
    assert p.plural and p.unknown == ["cups"] and p.horizontal is None
    assert p.exclude is not None and p.exclude.horizontal == "left"
    q = parse_phrase("the cup but not the biggest")
    assert q.exclude.size == "largest" and q.size is None
    c = parse_phrase("the logo in the corner")
    assert c.corner and c.spatial and c.horizontal is None and c.exclude is None
    assert parse_phrase("the cup on the left").exclude is None


def _square(x: int, y: int, side: int = 20) -> Candidate:
    mask = np.zeros((200, 300), bool)
    mask[y:y + side, x:x + side] = True
    return Candidate(mask, 0.8, "thing", "test")


@pytest.fixture()
def four() -> list[Candidate]:
    # centre, near the top-left corner (not in it), in the bottom-right corner, big left
    return [_square(140, 90), _square(40, 30), _square(275, 178), _square(10, 90, 60)]


def test_in_the_corner_picks_the_nearest_corner_or_the_one_named(four) -> None:
    got = select_candidates(four, parse_phrase("the one in the corner"), "thing")
    assert got.status == "resolved" and got.masks[0] is four[2]
    assert "bottom right corner" in got.reason
    top = select_candidates(four, parse_phrase("the one in the top corner"), "thing")
    assert top.masks[0] is four[1]
    left = select_candidates(four, parse_phrase("the one in the bottom left corner"), "thing")
    assert left.masks[0] is four[3]


def test_except_leaves_out_what_its_words_pick(four) -> None:
    got = select_candidates(four, parse_phrase("all of them except the biggest"), "thing")
    assert got.status == "resolved" and got.plural
    assert {id(m) for m in got.masks} == {id(four[0]), id(four[1]), id(four[2])}
    one = select_candidates(four[:2], parse_phrase("the things other than the left one"),
                            "thing")
    assert one.status == "resolved" and [id(m) for m in one.masks] == [id(four[0])]
    vague = select_candidates(four, parse_phrase("all except that one"), "thing")
    assert vague.status == "ambiguous" and "leave out" in vague.reason


CUPS = next(c for c in load_cases() if c.id == "all_cups")


@pytest.fixture(scope="module")
def three_cups():
    """The tune split's three cups (small at the left, middle, big at the right)."""
    return render(replace(CUPS, spec=dict(CUPS.spec, truth=[0, 1, 2])))


def _cup(spec_truth: list[int]) -> np.ndarray:
    return render(replace(CUPS, spec=dict(CUPS.spec, truth=spec_truth))).truth


def test_all_the_cups_except_the_biggest_on_a_12_mp_photo(three_cups) -> None:
    # the detector is unsure of pasted cups (0.23): the pick is offered to confirm
    found = confirmed(get_localizer().locate(three_cups.image,
                                             "all the cups except the biggest one"))
    assert found.status == "resolved" and found.plural, found.reason
    assert "except" in found.reason
    assert mask_iou(found.union(), _cup([0, 1])) >= 0.8
    biggest = _cup([2])
    assert (found.union() & biggest).sum() < 0.01 * biggest.sum()


def test_the_cup_in_the_corner_on_a_12_mp_photo() -> None:
    """Two cups in the middle and one in the bottom-right corner: "the cup in the
    corner" is that one."""
    spec = {"size": [4240, 2832], "background": "china",
            "paste": [{"source": "cup", "at": [0.3, 0.2], "height": 0.3},
                      {"source": "cup", "at": [0.5, 0.3], "height": 0.3},
                      {"source": "cup", "at": [0.8, 0.66], "height": 0.3}], "truth": [2]}
    shot = render(replace(CUPS, id="cup_in_the_corner", spec=spec))
    found = get_localizer().locate(shot.image, "the cup in the corner")
    assert found.status == "resolved", found.reason
    assert mask_iou(found.masks[0].mask, shot.truth) >= 0.8, found.reason
    assert "corner" in found.reason


def test_everything_except_the_cup_is_the_frame_without_it() -> None:
    from tests.perception_cases import photo_by_name

    coffee = photo_by_name("coffee")
    cup = get_localizer().locate(coffee, "the cup")
    rest = get_localizer().locate(coffee, "everything except the cup")
    assert cup.status == rest.status == "resolved", rest.reason
    mine, its = rest.masks[0].mask, cup.masks[0].mask     # (GrabCut may differ by a few px)
    assert (mine & its).sum() < 0.01 * its.sum() and (mine | its).mean() > 0.99
    assert "except" in rest.reason
    nothing = get_localizer().locate(coffee, "everything except the giraffe")
    assert nothing.status != "resolved" and "giraffe" in nothing.reason


def test_everything_except_works_without_weights_too() -> None:
    """The embedded (no-weights) localiser never reads "everything except the red saucer"
    as the whole photo."""
    from skimage import data

    from pipelines.localizers.embedded import EmbeddedLocalizer

    coffee = data.coffee()
    saucer = EmbeddedLocalizer().locate(coffee, "the red saucer")
    rest = EmbeddedLocalizer().locate(coffee, "everything except the red saucer")
    assert saucer.status == rest.status == "resolved", rest.reason
    assert np.array_equal(rest.masks[0].mask, ~saucer.masks[0].mask)
