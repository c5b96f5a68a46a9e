"""Issue 32's real-photo set: the runner's mechanics (on small made-up masks, fine for
mechanics) and the integrity of the committed set (split by photo, masks at the photo's
size, the format refused when broken)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from eval import realphotos, realset
from eval.realset import (
    HELD_OUT,
    RealCase,
    SetError,
    boundary_f,
    judge,
    load_cases,
    parse_file,
    upscale_factor,
    upscaled,
)
from eval.realset_edits import changed_as_asked
from pipelines.localizers.base import Candidate, Localization


def _disc(h: int, w: int, cx: int, cy: int, r: int) -> np.ndarray:
    yy, xx = np.mgrid[:h, :w]
    return (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r


def _case(expect: str = "resolved", **kw) -> RealCase:
    base = dict(id="bridge__x", photo="bridge", split="tune", phrase="the x", expect=expect,
                cls="plain", mask="bridge__x.png" if expect == "resolved" else None)
    base.update(kw)
    return RealCase(**base)


def test_boundary_f_tolerates_two_pixels_but_not_ten() -> None:
    truth = _disc(200, 200, 100, 100, 50)
    assert boundary_f(truth, truth) == 1.0
    assert boundary_f(np.roll(truth, 2, axis=1), truth) == 1.0
    assert boundary_f(np.roll(truth, 10, axis=1), truth) < 0.4
    assert boundary_f(None, truth) == 0.0


def test_judge_needs_iou_08_when_resolved_and_the_expected_kind_otherwise() -> None:
    truth = _disc(200, 200, 100, 100, 50)
    close = _disc(200, 200, 103, 100, 50)     # IoU ~0.92
    far = _disc(200, 200, 115, 100, 50)       # IoU ~0.68: right under 0.5, wrong here
    assert judge(_case(), "resolved", close, truth)[2]
    iou, _, right = judge(_case(), "resolved", far, truth)
    assert 0.5 < iou < 0.8 and not right
    assert not judge(_case(), "ask", None, truth)[2]
    assert judge(_case("ask"), "ask", None, None)[2]
    assert not judge(_case("ask"), "resolved", close, None)[2]
    assert judge(_case("refuse"), "refuse", None, None)[2]
    assert not judge(_case("refuse"), "ask", None, None)[2]


def test_evaluate_reads_the_localisers_answer(monkeypatch, tmp_path) -> None:
    """A stub localiser (mechanics only) that answers with the true mask shifted: the
    outcome's kind, IoU, F and silent flag follow from its answer."""
    image = np.zeros((120, 160, 3), np.uint8)
    truth = _disc(120, 160, 80, 60, 30)
    monkeypatch.setattr(realset, "MASKS_DIR", tmp_path)
    realset.save_mask(truth, "bridge__x.png")
    monkeypatch.setattr(realset, "photo", lambda pid: image)
    shifts = {"the x": 1, "the far x": 25}

    def locate(img, phrase):
        if phrase == "the giraffe":
            return Localization([], "unresolved", "not found")
        mask = np.roll(truth, shifts[phrase], axis=1)
        return Localization([Candidate(mask, 0.9, "x", "stub")], "resolved", "found")

    cases = [_case(), _case(id="bridge__far", phrase="the far x", mask="bridge__x.png"),
             _case("refuse", id="bridge__g", phrase="the giraffe")]
    got = realset.evaluate(locate, cases)
    assert [o.kind for o in got] == ["resolved", "resolved", "refuse"]
    assert [o.right for o in got] == [True, False, True]
    assert [o.silent for o in got] == [False, True, False]
    assert got[0].iou > 0.95 and got[0].bf == 1.0
    summary = realset.summarise(got)
    assert summary["right_share"]["tune"] == pytest.approx(0.667)
    assert summary["silent_failures"]["tune"] == 1
    assert summary["by_class"]["tune"] == {"plain": "2/3"}


def test_a_question_is_one_click_from_right_only_when_it_shows_the_thing(
        monkeypatch, tmp_path) -> None:
    """Mechanics: a question offering the true mask among the candidates shown to click
    (the first ``offer`` by score) is one click from a right edit; one that shows only
    other things, or hides the true one past ``offer``, is not."""
    image = np.zeros((120, 160, 3), np.uint8)
    truth = _disc(120, 160, 80, 60, 30)
    monkeypatch.setattr(realset, "MASKS_DIR", tmp_path)
    realset.save_mask(truth, "bridge__x.png")
    monkeypatch.setattr(realset, "photo", lambda pid: image)
    other = _disc(120, 160, 30, 30, 15)
    offers = {"the x": [(other, 0.9), (truth, 0.5)], "the far x": [(other, 0.9)],
              "the hidden x": [(other, 0.9), (other, 0.8), (truth, 0.1)]}

    def locate(img, phrase):
        return Localization([Candidate(m, s, "x", "stub") for m, s in offers[phrase]],
                            "ambiguous", "which one?")

    cases = [_case(id=f"bridge__{i}", phrase=p, mask="bridge__x.png")
             for i, p in enumerate(offers)]
    got = realset.evaluate(locate, cases, offer=2)
    assert [o.offered for o in got] == [1.0, 0.0, 0.0]
    assert [o.one_click for o in got] == [True, False, False]
    assert not any(o.right or o.silent for o in got)
    assert realset.summarise(got)["one_click"]["tune"] == pytest.approx(0.333)
    assert realset.evaluate(locate, cases[:1])[0].offered == 0.0   # not measured


def test_upscaled_reaches_12_to_20_mp_and_keeps_the_mask_aligned() -> None:
    assert upscale_factor(4000, 3000, 16) == 1.0           # already 12 MP
    image = np.zeros((600, 800, 3), np.uint8)
    mask = _disc(600, 800, 300, 250, 120)
    image[mask] = 200
    big, big_mask = upscaled(image, mask, 16)
    assert 12e6 <= big.shape[0] * big.shape[1] <= 20e6
    assert big_mask.shape == big.shape[:2]
    bright = big[..., 0] > 100
    assert realset.mask_iou(bright, big_mask) > 0.98


@pytest.mark.parametrize("how", realset.PRINTS)
def test_another_print_keeps_the_mask_on_its_thing_and_left_and_right_where_they_are(
        how) -> None:
    image = np.zeros((600, 800, 3), np.uint8)
    mask = _disc(600, 800, 300, 200, 100)               # a disc on the left
    image[mask] = 200
    out, out_mask, phrase = realset.printed(image, mask, "the disc on the left", how)
    assert out_mask.shape == out.shape[:2]
    assert realset.mask_iou(out[..., 0] > 100, out_mask) > 0.98
    if not how.startswith("crop"):      # a crop is centred on its thing (see below)
        on_left = out_mask[:, : out.shape[1] // 2].sum() > out_mask[:, out.shape[1] // 2:].sum()
        assert ("left" in phrase) == on_left            # the words follow the mirror
    if how.startswith("gamma"):
        assert bool((out[mask] > 200).all()) == (how == "gamma0.8")     # lighter, or darker
    with pytest.raises(ValueError, match="unknown print"):
        realset.printed(image, mask, "x", "rotate")


def test_a_crop_print_keeps_its_whole_target_and_only_cases_it_cannot_change() -> None:
    """The crop print is 0.6 × each side around the target, the whole target inside; it
    is run only on resolved cases whose words name no place or neighbour ("the cat" on a
    cropped frame is still the cat; "the dog on the left" may not be)."""
    cases = {c.id: c for c in realset.load_cases("tune")}
    cat = cases["cat_watching_tv__cat"]
    image, truth = realset.photo(cat.photo), cat.truth()
    out, out_mask, phrase = realset.printed(image, truth, cat.phrase, "crop0.6")
    assert out.shape[:2] == (round(0.6 * image.shape[0]), round(0.6 * image.shape[1]))
    assert out_mask.sum() == truth.sum() and phrase == cat.phrase
    assert realset.printable(cat, "crop0.6") and realset.printable(cat, "flip")
    assert not realset.printable(cases["dogs_under_tree__dog_left"], "crop0.6")   # a place
    assert not realset.printable(cases["cat_watching_tv__tv"], "crop0.6")         # an ask
    assert not realset.printable(cases["dog_on_floor__dog"], "crop0.6")   # wider than 0.6


def _write(tmp_path, rows) -> list[RealCase]:
    path = tmp_path / "bridge.json"
    path.write_text(json.dumps(rows))
    return parse_file(path)


@pytest.mark.parametrize("change,words", [
    ({"class": "animals"}, "unknown class"),
    ({"split": "held_out"}, "is in split tune"),
    ({"expect": "maybe"}, "unknown expect"),
    ({"mask": "other.png"}, "needs 'mask'"),
    ({"colour": "red"}, "unknown field"),
    ({"edits": "remove it"}, "'edits' must be a list"),
])
def test_a_malformed_case_is_refused(tmp_path, change, words) -> None:
    row = {"id": "bridge__x", "photo": "bridge", "split": "tune", "phrase": "the x",
           "expect": "resolved", "class": "plain", "mask": "bridge__x.png"}
    row.update(change)
    with pytest.raises(SetError, match=words):
        _write(tmp_path, [row])


def test_a_mask_of_another_size_than_its_photo_is_refused(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(realset, "MASKS_DIR", tmp_path)
    realset.save_mask(np.ones((10, 10), bool), "bridge__x.png")
    with pytest.raises(SetError, match="mask is"):
        realset.validate([_case()])


def test_edit_checks_tell_the_asked_change_from_another() -> None:
    before = np.full((50, 50, 3), 90, np.uint8)
    before[..., 2] = 140                            # a blueish region
    truth = np.zeros((50, 50), bool)
    truth[10:40, 10:40] = True
    brighter = before.copy()
    brighter[truth] += 30
    assert changed_as_asked("make the sky brighter", before, brighter, truth)[0]
    assert not changed_as_asked("make the sky darker", before, brighter, truth)[0]
    deeper = before.copy()
    deeper[truth, 0] = 70
    deeper[truth, 2] = 160                          # saturation 50 -> 90
    assert changed_as_asked("a deeper blue sky", before, deeper, truth)[0]
    burnt = before.copy()
    burnt[truth] = (0, 0, 255)                      # driven to the limit
    assert not changed_as_asked("a deeper blue sky", before, burnt, truth)[0]
    assert not changed_as_asked("remove the sky", before, before, truth)[0]
    garish = before.copy()
    garish[truth] = (40, 40, 230)                    # a recolour, not "deeper"
    assert not changed_as_asked("a deeper blue sky", before, garish, truth)[0]
    half = before.copy()
    half[10:25, 10:40] += 30                         # only half the sky brightened
    assert not changed_as_asked("make the sky brighter", before, half, truth)[0]
    red_body = before.copy()
    red_body[10:33, 10:40] = (200, 40, 40)           # the body red, the windows kept
    assert changed_as_asked("make the car red", before, red_body, truth)[0]
    red_roof = before.copy()
    red_roof[10:20, 10:40] = (200, 40, 40)           # a third of it: not the car
    assert not changed_as_asked("make the car red", before, red_roof, truth)[0]


def test_a_gain_counts_as_covering_a_thing_whose_shadows_cannot_show_it() -> None:
    """A warmth or brightness gain moves a shadow at luma 30 by a level or two: the
    pyramid made warmer read "only 84 % changed". Coverage counts the pixels bright
    enough to move; a gain on half of those still fails."""
    before = np.full((60, 60, 3), 150, np.uint8)
    before[30:, :] = 30                              # the shaded half of the thing
    truth = np.ones((60, 60), bool)
    gain = np.array([1.06, 1.0, 0.94])
    warmer = np.clip(before * gain, 0, 255).astype(np.uint8)
    assert np.abs(warmer[30:].astype(int) - before[30:]).max() <= 2
    assert changed_as_asked("make the pyramid warmer", before, warmer, truth)[0]
    half = before.copy()
    half[:15] = warmer[:15]                          # half of the lit part only
    ok, why = changed_as_asked("make the pyramid warmer", before, half, truth)
    assert not ok and "only 50%" in why
    dark = np.full((60, 60, 3), 30, np.uint8)        # a black dog: all of it counts
    dark_warmer = np.clip(dark * gain, 0, 255).astype(np.uint8)
    assert not changed_as_asked("make the dog warmer", dark, dark_warmer, truth)[0]


# ------------------------------------------------------------------ the set itself


def test_the_set_is_well_formed_and_split_by_photo() -> None:
    cases = load_cases()
    assert len(cases) >= 500
    table = realphotos.catalogue()
    for case in cases:
        assert case.split == ("held_out" if case.photo in HELD_OUT else "tune")
        assert case.photo in table
    assert len(HELD_OUT) == 15 and HELD_OUT <= set(table)
    for expect in ("resolved", "ask", "refuse"):
        assert any(c.expect == expect for c in cases)


def test_every_mask_is_a_1_bit_png_at_its_photos_size_and_names_a_part() -> None:
    table = realphotos.catalogue()
    for case in load_cases():
        if not case.mask:
            continue
        with Image.open(realset.MASKS_DIR / case.mask) as img:
            photo = table[case.photo]
            assert img.size == (photo.width, photo.height), case.id
            assert img.mode in ("1", "L"), case.id
            share = np.asarray(img.convert("L").reduce(4)).mean() / 255
        assert 0.0003 < share < 0.95, (case.id, share)


def test_an_edit_runs_on_another_print_of_its_photo() -> None:
    """``bench/realset.py --edits --print flip``: the CLI edits the mirrored photo and the
    mirrored true mask judges what changed (judged against the photo as shot, a removal
    on the mirror image would have changed pixels all over)."""
    from eval.localization import beyond_reach
    from eval.realset_edits import run_edit

    case = realset.case("kitten_white__kitten")
    done = run_edit(case, "remove the kitten", print_as="flip")
    assert done.verdict == "right" and done.exit == 0, done.why
    as_shot = realset.photo(case.photo)
    assert done.after is not None and done.after.shape == as_shot.shape
    far = beyond_reach(np.ascontiguousarray(case.truth()[:, ::-1]))
    assert np.array_equal(done.after[far], as_shot[:, ::-1][far])
    assert not np.array_equal(done.after[far], as_shot[far])


def test_an_edit_runs_on_the_photo_enlarged() -> None:
    """``bench/realset.py --edits --upscale 12``: the CLI edits the photo enlarged to 12 MP
    (the native-resolution path of a large photo), and the true mask enlarged with it
    judges what changed; before, the flag enlarged only the located photos and the edits
    ran as shot."""
    from eval.localization import beyond_reach
    from eval.realset_edits import run_edit

    case = realset.case("kitten_white__kitten")
    big, big_truth = upscaled(realset.photo(case.photo), case.truth(), 12)
    assert big.shape[0] * big.shape[1] >= 11.9e6
    done = run_edit(case, "make the kitten darker", upscale_mp=12)
    assert done.exit == 0 and done.after is not None, done.why
    assert done.after.shape == big.shape
    changed = np.abs(done.after.astype(int) - big.astype(int)).max(axis=-1) > 0
    assert changed[big_truth].mean() > 0.9                   # the kitten, at 12 MP
    assert done.leaked_px == int(changed[beyond_reach(big_truth)].sum())
