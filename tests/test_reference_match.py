"""Issue 35: matching the look of a reference photo, on real photos (the photos shipped in
our dependencies, ``eval.photos``), at ≤ 320 px so the file stays fast."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent import executor
from eval.look import MATCH_RATIO, STRUCTURE_KEPT, match_report, shoot_spread, structure
from eval.photos import load_photo
from pipelines.editors.base import EditRequest
from pipelines.look import look_distance
from pipelines.operations.measures import Measured
from pipelines.operations.reference import (
    MAX_SLOPE,
    SKIN_HUES,
    ReferenceError,
    find_faces,
    fit_match,
    reference_region,
    skin_hues,
)
from pipelines.operations.registry import get

OP = get("match_reference")
SIDE = 320
#: photo → reference, all real photos; every pair the operation is held to
PAIRS = [("astronaut", "coffee"), ("coffee", "chelsea"), ("chelsea", "rocket"),
         ("rocket", "motorcycle"), ("motorcycle", "cheetah_cub"), ("cheetah_cub", "groot"),
         ("groot", "lion"), ("lion", "tower"), ("grace_hopper", "china"),
         ("china", "flower"), ("flower", "cheetah_run"), ("china", "rocket"),
         ("lion", "china")]


@pytest.fixture(scope="module")
def photos() -> dict[str, np.ndarray]:
    names = {n for pair in PAIRS for n in pair}
    return {n: load_photo(n, SIDE) for n in names}


def _match(photo: np.ndarray, ref: np.ndarray, strength: float = 1.0, **extra) -> np.ndarray:
    params = OP.validate({"image": ref, "strength": strength, **extra})
    return OP.apply(photo.copy(), np.ones(photo.shape[:2], bool), params)


def _verdict(before, after, ref, **extra):
    params = OP.validate({"image": ref, **extra})
    return OP.check(Measured(before, after, np.ones(before.shape[:2], bool), params))


def test_the_look_distance_to_the_reference_halves_with_structure_kept(photos) -> None:
    assert len(PAIRS) >= 12
    for a, b in PAIRS:
        out = _match(photos[a], photos[b])
        report = match_report(photos[a], out, photos[b])
        assert report["ratio"] <= MATCH_RATIO, (a, b, report)
        assert report["structure"] >= STRUCTURE_KEPT, (a, b, report)
        assert _verdict(photos[a], out, photos[b]).achieved >= 0.9, (a, b)


def test_strength_goes_part_of_the_way_and_zero_changes_nothing(photos) -> None:
    photo, ref = photos["china"], photos["rocket"]
    assert np.array_equal(_match(photo, ref, 0.0), photo)
    start = look_distance(photo, ref).total
    half = look_distance(_match(photo, ref, 0.5), ref).total
    full = look_distance(_match(photo, ref, 1.0), ref).total
    assert full < half < start


def test_the_tone_curve_is_smooth_and_monotone(photos) -> None:
    match = fit_match(photos["grace_hopper"], None, photos["china"])
    steps = np.diff(match.tables(1.0)["tone"])
    assert (steps > 0).all() and steps.max() <= MAX_SLOPE + 1e-6
    # a smooth gradient stays smooth: no new gaps wider than the slope bound allows
    ramp = np.tile(np.linspace(0, 255, 512).astype(np.uint8), (8, 1))
    out = match.apply(np.dstack([ramp] * 3), 1.0)[..., 1].astype(int)
    assert np.abs(np.diff(out[4])).max() <= 4


def test_crafted_bad_matches_fail_the_check(photos) -> None:
    photo, ref = photos["china"], photos["rocket"]
    good = _match(photo, ref)
    assert _verdict(photo, good, ref).achieved >= 0.9
    pasted = cv2.resize(ref, (photo.shape[1], photo.shape[0]), interpolation=cv2.INTER_AREA)
    grey = np.full_like(photo, 118)
    past = np.clip(photo.astype(np.float32) + 2.2 * (good.astype(np.float32) - photo), 0,
                   255).astype(np.uint8)
    clipped = np.clip(good.astype(np.float32) * 2.5 + 40, 0, 255).astype(np.uint8)
    for name, bad in (("pasted", pasted), ("grey", grey), ("past", past),
                      ("clipped", clipped)):
        verdict = _verdict(photo, bad, ref)
        assert verdict.achieved < 0.5 and verdict.fix, (name, verdict.measures)
    assert structure(photo, pasted) < STRUCTURE_KEPT
    assert not _verdict(photo, past, ref).checks["not_past"]
    assert not _verdict(photo, clipped, ref).checks["no_clipping"]


def test_a_region_match_leaves_the_outside_bit_identical(photos) -> None:
    photo, ref = photos["china"], photos["rocket"]
    sky = reference_region(photo, "sky")
    assert sky is not None and 0.05 < sky.mean() < 0.8
    params = OP.validate({"image": photos["lion"], "ref_region": "whole"})
    done = executor.execute(photo, EditRequest(kind="adjust", operation=OP.name,
                                               params=params), sky)
    out = done.paste(photo)
    kernel = np.ones((2 * done.feather + 3,) * 2, np.uint8)
    near = cv2.dilate(sky.astype(np.uint8), kernel).astype(bool)
    assert np.array_equal(out[~near], photo[~near])
    assert not np.array_equal(out[sky], photo[sky])
    before = look_distance(photo, photos["lion"], sky).total
    assert look_distance(out, photos["lion"], sky).total <= MATCH_RATIO * before
    del ref


def test_the_references_sky_is_matched_and_no_sky_is_a_question(photos) -> None:
    photo, ref = photos["tower"], photos["china"]
    sky = reference_region(photo, "sky")
    ref_sky = reference_region(ref, "sky")
    out = OP.apply(photo.copy(), sky, OP.validate({"image": ref, "ref_region": "sky"}))
    start = look_distance(photo, ref, sky, ref_sky).total
    assert look_distance(out, ref, sky, ref_sky).total <= MATCH_RATIO * start
    with pytest.raises(ReferenceError, match="no sky"):
        OP.apply(photo.copy(), sky, OP.validate({"image": photos["coffee"],
                                                 "ref_region": "sky"}))


def test_faces_keep_a_plausible_skin_hue(photos) -> None:
    face_photo = photos["astronaut"]
    faces = find_faces(face_photo)
    if not faces:
        pytest.fail("the embedded face detector found no face on the astronaut photo "
                    "(are the perception weights installed? `make install`)")
    teal = load_photo("cheetah_run", SIDE).astype(np.float32)
    teal = np.clip(teal * np.array([0.45, 1.0, 1.35]), 0, 255).astype(np.uint8)  # a teal grade
    out = _match(face_photo, teal)
    for hue in skin_hues(out, faces):
        assert SKIN_HUES[0] <= hue <= SKIN_HUES[1], hue
    # without the guard the same match turns the face teal (measured: 172° against 60°)
    bare = fit_match(face_photo, None, teal, guard_faces=False).apply(face_photo, 1.0)
    assert not all(SKIN_HUES[0] <= h <= SKIN_HUES[1] for h in skin_hues(bare, faces))
    assert look_distance(out, teal).total < look_distance(face_photo, teal).total


def test_a_shoot_matched_to_one_reference_looks_alike(photos) -> None:
    shoot = [photos[n] for n in ("astronaut", "coffee", "chelsea", "rocket", "motorcycle",
                                 "groot", "lion")]
    ref = photos["china"]
    matched = [_match(p, ref) for p in shoot]
    assert shoot_spread(matched) <= 0.5 * shoot_spread(shoot)
    for before, after in zip(shoot, matched):
        assert structure(before, after) >= STRUCTURE_KEPT
