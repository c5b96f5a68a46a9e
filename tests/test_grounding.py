"""Embedded localiser: hints, colour/ordinal/spatial phrases and honest statuses.

Scenes are coloured shapes drawn with OpenCV over real photos (scikit-image data), so
the true mask of every target is known.
"""

from __future__ import annotations

from typing import ClassVar

import cv2
import numpy as np
import pytest
from skimage import data

from pipelines.editors.operations import NAMED_COLORS
from pipelines.localizers import (
    LOCALIZERS,
    EmbeddedLocalizer,
    Hint,
    Localization,
    LocalizationError,
    Localizer,
    Mask,
    get_localizer,
    parse_phrase,
)
from pipelines.localizers import registry as grounding

LOC = EmbeddedLocalizer()


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / max(1, (a | b).sum()))


def shaded(canvas: np.ndarray, shape_mask: np.ndarray, rgb: tuple[int, int, int]) -> None:
    """Paint ``rgb`` into the mask with a top-to-bottom shading (0.75 … 1.0)."""
    h = canvas.shape[0]
    shade = np.linspace(1.0, 0.75, h, dtype=np.float32)[:, None, None]
    layer = np.clip(np.array(rgb, np.float32)[None, None] * shade, 0, 255).astype(np.uint8)
    canvas[shape_mask] = np.broadcast_to(layer, canvas.shape)[shape_mask]


def disc(shape: tuple[int, int], centre: tuple[int, int], radius: int) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    cv2.circle(mask, centre, radius, 1, -1)
    return mask > 0


def rect(shape: tuple[int, int], x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    mask = np.zeros(shape, bool)
    mask[y0:y1, x0:x1] = True
    return mask


@pytest.fixture(scope="module")
def grey_photo() -> np.ndarray:
    """The cameraman photo (grey, real texture) at 480×320 as RGB."""
    return np.dstack([cv2.resize(data.camera(), (480, 320), interpolation=cv2.INTER_AREA)] * 3)


PALETTE = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "cyan"]


@pytest.fixture(scope="module")
def palette_scene(grey_photo) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    scene = grey_photo.copy()
    truth = {}
    for i, name in enumerate(PALETTE):
        x, y = 60 + (i % 4) * 110, 90 + (i // 4) * 140
        truth[name] = disc(scene.shape[:2], (x, y), 35) if i % 2 else \
            rect(scene.shape[:2], x - 35, y - 30, x + 35, y + 30)
        shaded(scene, truth[name], NAMED_COLORS[name])
    return scene, truth


@pytest.fixture(scope="module")
def reds(grey_photo) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Three red shapes (small left, large middle, medium right) and a blue one."""
    scene = grey_photo.copy()
    shape = scene.shape[:2]
    truth = {"left": disc(shape, (60, 160), 25), "middle": disc(shape, (230, 150), 60),
             "right": rect(shape, 370, 120, 440, 190), "blue": disc(shape, (230, 280), 25)}
    for key, mask in truth.items():
        shaded(scene, mask, NAMED_COLORS["blue" if key == "blue" else "red"])
    return scene, truth


# --- hints ------------------------------------------------------------------------

def test_brush_mask_of_any_size_and_type_is_resized_to_the_image(grey_photo):
    small = np.zeros((32, 48), np.uint8)
    small[8:24, 12:36] = 255
    for brush in (small, small > 0, small.astype(np.float32) / 255.0,
                  np.dstack([np.zeros_like(small)] * 3 + [small])):
        found = LOC.locate(grey_photo, "this", Hint(mask=brush))
        assert found.status == "resolved" and found.masks[0].source == "brush"
        assert found.masks[0].mask.shape == grey_photo.shape[:2]
        assert iou(found.masks[0].mask, rect((320, 480), 120, 80, 360, 240)) > 0.98
    empty = LOC.locate(grey_photo, "this", Hint(mask=np.zeros((10, 10), bool)))
    assert empty.status == "unresolved" and "empty" in empty.reason


def test_a_colour_word_narrows_a_rough_brush_to_the_object(reds):
    scene, truth = reds
    rough = rect((320, 480), 150, 70, 320, 230)            # painted around the big disc
    found = LOC.locate(scene, "the red ball", Hint(mask=rough, refine=True))
    assert found.status == "resolved" and found.masks[0].source == "brush+colour"
    assert iou(found.masks[0].mask, truth["middle"]) > 0.9
    assert not (found.masks[0].mask & ~rough).any()
    exact = LOC.locate(scene, "the red ball", Hint(mask=rough))      # default: as painted
    assert exact.masks[0].source == "brush" and np.array_equal(exact.masks[0].mask, rough)
    plain = LOC.locate(scene, "the green ball", Hint(mask=rough, refine=True))   # no green
    assert plain.masks[0].source == "brush" and np.array_equal(plain.masks[0].mask, rough)


def test_box_is_refined_to_the_object_with_grabcut(reds):
    scene, truth = reds
    found = LOC.locate(scene, "that thing", Hint(box=(20, 120, 100, 200)))
    assert found.status == "resolved" and found.masks[0].source == "box+grabcut"
    assert iou(found.masks[0].mask, truth["left"]) > 0.85
    assert not found.masks[0].mask[:, 101:].any()   # never outside the box


def test_box_on_a_flat_area_falls_back_to_the_box_itself():
    flat = np.full((200, 200, 3), 120, np.uint8)
    found = LOC.locate(flat, "", Hint(box=(50, 60, 150, 140)))
    assert found.status == "resolved" and found.masks[0].source == "box"
    assert np.array_equal(found.masks[0].mask, rect((200, 200), 50, 60, 150, 140))


def test_bad_boxes_and_points(grey_photo):
    assert LOC.locate(grey_photo, "x", Hint(box=(600, 400, 700, 500))).status == "unresolved"
    assert LOC.locate(grey_photo, "x", Hint(point=(-5, 10))).status == "unresolved"
    with pytest.raises(LocalizationError, match="box"):
        LOC.locate(grey_photo, "x", Hint(box=("a", 1, 2, 3)))


def test_point_selects_the_region_under_it(reds):
    scene, truth = reds
    found = LOC.locate(scene, "this", Hint(point=(230, 150)))
    assert found.status == "resolved" and iou(found.masks[0].mask, truth["middle"]) > 0.85


# --- colour words -----------------------------------------------------------------

@pytest.mark.parametrize("colour", PALETTE)
def test_colour_word_finds_its_shaded_shape(palette_scene, colour):
    scene, truth = palette_scene
    found = LOC.locate(scene, f"the {colour} shape")
    assert found.status == "resolved", found.reason
    assert len(found.masks) == 1 and iou(found.masks[0].mask, truth[colour]) > 0.9
    assert 0.0 <= found.masks[0].score <= 1.0 and found.masks[0].source == "colour"


def test_several_matches_without_a_cue_are_ambiguous_and_sorted(reds):
    scene, truth = reds
    found = LOC.locate(scene, "the red one")
    assert found.status == "ambiguous" and len(found.masks) == 3
    scores = [m.score for m in found.masks]
    assert scores == sorted(scores, reverse=True)
    assert iou(found.masks[0].mask, truth["middle"]) > 0.9   # the largest, most compact


@pytest.mark.parametrize(("phrase", "target"), [
    ("the left red one", "left"), ("the red one on the right", "right"),
    ("the second red object", "middle"), ("the first red shape", "left"),
    ("the last red one", "right"), ("the largest red", "middle"),
    ("the smallest red thing", "left"), ("the rightmost red one", "right"),
])
def test_ordinal_size_and_position_words_pick_one(reds, phrase, target):
    scene, truth = reds
    found = LOC.locate(scene, phrase)
    assert found.status == "resolved" and len(found.masks) == 1, found.reason
    assert iou(found.masks[0].mask, truth[target]) > 0.9


@pytest.mark.parametrize("phrase", ["all red", "the red cars", "every red object",
                                    "both red ones"])
def test_plural_phrases_resolve_to_every_match(reds, phrase):
    scene, truth = reds
    found = LOC.locate(scene, phrase)
    assert found.status == "resolved" and len(found.masks) == 3
    assert iou(found.union(), truth["left"] | truth["middle"] | truth["right"]) > 0.9


def test_one_dominant_region_resolves_with_a_modest_score(grey_photo):
    scene = grey_photo.copy()
    big, speck = disc((320, 480), (200, 160), 70), disc((320, 480), (420, 60), 20)
    shaded(scene, big | speck, NAMED_COLORS["orange"])
    found = LOC.locate(scene, "the orange ball")
    assert found.status == "resolved" and len(found.masks) == 1
    assert iou(found.masks[0].mask, big) > 0.9 and found.masks[0].score <= 0.8
    assert "smaller" in found.reason


def test_colour_regions_on_real_photos():
    saucer = LOC.locate(data.coffee(), "the red saucer")
    assert saucer.status == "resolved" and 0.1 < saucer.masks[0].mask.mean() < 0.4
    cat = LOC.locate(data.chelsea(), "the orange cat")
    assert cat.status == "resolved" and cat.masks[0].mask.mean() > 0.08
    assert LOC.locate(data.chelsea(), "the green car").status == "unresolved"


def test_ordinal_beyond_the_matches_is_not_a_guess(reds):
    found = LOC.locate(reds[0], "the fifth red one")
    assert found.status == "ambiguous" and "only 3" in found.reason


# --- places, whole image, sky, subject --------------------------------------------

@pytest.mark.parametrize(("phrase", "box"), [
    ("the left half", (0, 0, 240, 320)), ("right side", (240, 0, 480, 320)),
    ("top", (0, 0, 480, 160)), ("the bottom part", (0, 160, 480, 320)),
    ("upper left corner", (0, 0, 160, 107)), ("bottom right corner", (320, 214, 480, 320)),
    ("the centre", (120, 80, 360, 240)),
])
def test_spatial_words_give_regions(grey_photo, phrase, box):
    found = LOC.locate(grey_photo, phrase)
    assert found.status == "resolved"
    assert iou(found.masks[0].mask, rect((320, 480), *box)) > 0.97


@pytest.mark.parametrize("phrase", ["whole image", "everything", "the entire photo"])
def test_whole_image(grey_photo, phrase):
    found = LOC.locate(grey_photo, phrase)
    assert found.status == "resolved" and found.masks[0].mask.all()


@pytest.mark.parametrize("phrase", ["the dog", "", "   ", "it", "the thing over there"])
def test_what_it_cannot_find_is_unresolved_with_a_reason(grey_photo, phrase):
    found = LOC.locate(grey_photo, phrase)
    assert found.status == "unresolved" and not found.masks
    assert "colour or position" in found.reason


def test_a_place_without_the_object_is_only_a_hint(grey_photo):
    found = LOC.locate(grey_photo, "the dog on the left")
    assert found.status == "ambiguous" and found.masks[0].score < 0.5
    assert "'dog' was not located" in found.reason


def test_missing_colour_is_unresolved(grey_photo):
    found = LOC.locate(grey_photo, "the yellow car")
    assert found.status == "unresolved" and "no yellow" in found.reason


def test_sky_on_real_photos():
    rocket = data.rocket()
    sky = LOC.locate(rocket, "the sky")
    assert sky.status == "resolved"
    rows = np.nonzero(sky.masks[0].mask)[0]
    assert sky.masks[0].mask[:20].mean() > 0.6 and rows.mean() < 0.5 * rocket.shape[0]
    for photo in (data.chelsea(), data.coffee()):
        assert LOC.locate(photo, "sky").status == "unresolved"


def test_subject_and_background_on_a_rendered_scene():
    backdrop = cv2.GaussianBlur(cv2.resize(data.coffee(), (300, 200)), (0, 0), 6)
    backdrop = (backdrop.astype(np.float32) * 0.5 + 60).astype(np.uint8)
    truth = np.zeros((200, 300), np.uint8)
    cv2.ellipse(truth, (150, 100), (60, 70), 0, 0, 360, 1, -1)
    truth = truth > 0
    scene = backdrop.copy()
    shaded(scene, truth, NAMED_COLORS["blue"])
    subject = LOC.locate(scene, "the main subject")
    assert subject.status == "resolved" and iou(subject.masks[0].mask, truth) > 0.8
    background = LOC.locate(scene, "the background")
    assert iou(background.masks[0].mask, ~truth) > 0.9


def test_native_resolution_masks_come_back_at_full_size():
    big = cv2.resize(data.camera(), (4000, 3000), interpolation=cv2.INTER_LINEAR)
    big = np.dstack([big] * 3 + [np.full_like(big, 255)])   # RGBA works too
    truth = disc(big.shape[:2], (1200, 1500), 500)
    big[truth, :3] = NAMED_COLORS["green"]
    found = LOC.locate(big, "the green ball")
    assert found.masks[0].mask.shape == (3000, 4000)
    assert iou(found.masks[0].mask, truth) > 0.97


def test_bad_image_is_a_clear_error():
    with pytest.raises(LocalizationError, match="uint8"):
        LOC.locate(np.zeros((10, 10, 3), np.float32), "red")
    with pytest.raises(ValueError, match="status"):
        Localization([], "maybe", "")


def test_phrase_parsing():
    parsed = parse_phrase("The SECOND red object, upper left")
    assert (parsed.colors, parsed.ordinal, parsed.horizontal, parsed.vertical) == \
        (["red"], 2, "left", "top")
    assert parse_phrase("the red cars").plural and not parse_phrase("the red glass").plural
    assert parse_phrase("the dog").unknown == ["dog"]


# --- registry ---------------------------------------------------------------------

class _ModelLocalizer(Localizer):
    """A model-based localiser whose weights a test turns on and off."""

    name = "test-model"
    requires_weights = True
    ready: ClassVar[bool] = True

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        return (True, "") if cls.ready else (False, "no weights")

    def locate(self, image, phrase, hint=None):
        return Localization([Mask(np.ones(image.shape[:2], bool), 0.7, phrase, "model")],
                            "resolved", "test")


def test_get_localizer_prefers_an_available_model_else_embedded(monkeypatch):
    monkeypatch.setitem(LOCALIZERS, "test-model", _ModelLocalizer)
    monkeypatch.setattr(_ModelLocalizer, "ready", True)
    assert get_localizer().name == "test-model"
    monkeypatch.setattr(_ModelLocalizer, "ready", False)
    # the embedded perception stack when its files are installed, else the plain one
    assert get_localizer().name in ("perception", "embedded")
    with pytest.raises(LocalizationError, match="unavailable: no weights"):
        get_localizer("test-model")


def test_get_localizer_by_name():
    assert get_localizer("embedded") is get_localizer("embedded")
    with pytest.raises(LocalizationError, match="unknown localiser 'nope'; known: .*embedded"):
        get_localizer("nope")
    with pytest.raises(TypeError):
        grounding.register_localizer(type("Nameless", (EmbeddedLocalizer,), {"name": ""}))


@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 3, 3), (3, 2, 4), (7, 5, 3)])
def test_tiny_images_never_crash_and_masks_match_their_size(shape):
    img = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    for phrase in ("red", "the left half", "sky", "subject", "background", "whole image",
                   "the dog", "upper left corner", "the second red one"):
        found = LOC.locate(img, phrase)
        assert found.status in ("resolved", "ambiguous", "unresolved")
        assert all(m.mask.shape == shape[:2] for m in found.masks)
    for hint in (Hint(mask=np.ones((5, 5))), Hint(box=(0, 0, 1, 1)), Hint(point=(0, 0)),
                 Hint(box=(0, 0, shape[1], shape[0]))):
        assert all(m.mask.shape == shape[:2] for m in LOC.locate(img, "x", hint).masks)
