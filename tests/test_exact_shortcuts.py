"""The shortcuts of issue 36 (speed): the critic's copies made once, its detections
started early, a pasted frame's copies made from its base frame's, ``object_core``'s wide
erode. Each must give the very answer the plain way gives (bit for bit), never a stale
one. (The layer drafts are checked in ``tests/test_state.py``.)"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from agent.brain import independent, work_copies
from agent.brain.work_copies import note_pasted, shared_work_copies, work_copy


def _plain(image: np.ndarray, side: int) -> np.ndarray:
    h, w = image.shape[:2]
    s = side / max(h, w)
    return cv2.resize(np.ascontiguousarray(image[..., :3]),
                      (max(1, round(w * s)), max(1, round(h * s))),
                      interpolation=cv2.INTER_AREA)


@pytest.mark.parametrize("size", [(1000, 750), (1008, 756), (750, 1000), (1200, 800),
                                  (1003, 751)])
def test_a_pasted_frames_work_copies_equal_a_resize_of_the_whole_frame(size):
    """Bit for bit, on noise (where any weight difference shows), at scales where the
    shortcut applies (1000 → 256: 125/32 px per px) and where it falls back (1003)."""
    rng = np.random.default_rng(size[0])
    w, h = size
    before = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    for _ in range(3):
        x0, y0 = int(rng.integers(0, w - 20)), int(rng.integers(0, h - 20))
        x1, y1 = int(rng.integers(x0 + 1, w + 1)), int(rng.integers(y0 + 1, h + 1))
        after = before.copy()
        after[y0:y1, x0:x1] = rng.integers(0, 256, (y1 - y0, x1 - x0, 4), dtype=np.uint8)
        with shared_work_copies():
            note_pasted(after, before, (x0, y0, x1, y1))
            for side in (256, 512, 125):
                got = work_copy(after, side)
                shortcut = work_copies._from_base(after, work_copy(before, side),
                                                  (x0, y0, x1, y1), got.shape[1::-1])
                if side in (256, 512) and size in ((1000, 750), (750, 1000), (1008, 756)):
                    assert shortcut is not None, (size, side)   # 125/32, 63/16 px per px
                if size == (1003, 751):
                    assert shortcut is None, side
                assert np.array_equal(got, _plain(after, side)), (size, side, (x0, y0, x1, y1))
                assert np.array_equal(work_copy(before, side), _plain(before, side))


def test_copies_are_made_once_in_a_block_and_fresh_outside_it():
    image = np.random.default_rng(1).integers(0, 256, (600, 800, 3), dtype=np.uint8)
    with shared_work_copies():
        first = work_copy(image, 256)
        assert work_copy(image, 256) is first
        assert not first.flags.writeable          # shared: nobody may change it
    image[:] = 0                                   # outside the block the frame may change
    assert not work_copy(image, 256).any()         # and its copy is made anew


def test_a_detection_started_early_is_the_one_the_check_would_have_made():
    frame = cv2.resize(data.chelsea(), (1200, 900), interpolation=cv2.INTER_CUBIC)
    models = independent._models()
    assert models is not None, "perception files missing: run `make install`"
    small = work_copy(frame)
    independent._CACHE.clear()
    direct = independent.seen_in(small, models)
    independent._CACHE.clear()
    independent.prefetch(frame)
    early = independent.seen_in(small, models)   # waits for the background detection
    assert [(s.label, s.box, s.score, s.kind) for s in early] == \
        [(s.label, s.box, s.score, s.kind) for s in direct]
    assert direct, "the cat photo shows something the detector knows"
    assert not independent._PENDING


@pytest.mark.parametrize("width", [24, 31, 67])
def test_the_wide_erode_of_object_core_is_opencvs_erode_bit_for_bit(width):
    """``objects._erode_wide`` (a distance transform and an exact test of the ring between)
    against ``cv2.erode`` with the elliptical kernel and replicated border: discs, holes,
    speckle, shapes cut by the frame's edge, a full and an empty mask."""
    from pipelines.editors.objects import _erode_wide

    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * width + 1,) * 2)
    rng = np.random.default_rng(width)
    masks = [np.ones((120, 90), np.uint8), np.zeros((80, 130), np.uint8)]
    for i in range(8):
        h, w = int(rng.integers(150, 420)), int(rng.integers(150, 420))
        m = np.zeros((h, w), np.uint8)
        for _ in range(int(rng.integers(1, 4))):
            cv2.circle(m, (int(rng.integers(-50, w + 50)), int(rng.integers(-50, h + 50))),
                       int(rng.integers(10, 250)), 1, -1)
        if i % 3 == 1:
            m[rng.random((h, w)) < 0.002] ^= 1           # speckle: holes and islands
        if i % 3 == 2:
            cv2.rectangle(m, (3, 3), (w - 1, h // 2), 1, -1)   # along the frame's edge
        masks.append(m)
    for m in masks:
        want = cv2.erode(m, kernel, borderType=cv2.BORDER_REPLICATE) > 0
        got = _erode_wide(m, kernel)
        assert got is not None and np.array_equal(got, want), (m.shape, (got != want).sum())


@pytest.mark.parametrize("size", [(1000, 750), (1003, 751), (4000, 3000)])
def test_the_extent_checks_mask_read_in_its_box_is_the_whole_masks_resize(size):
    """``extent._fit`` resizes only the part of the 12-MP mask around its box where the
    scale allows: the same pixels as the whole mask's resize, on ragged masks too."""
    from agent.brain.extent import _fit

    w, h = size
    rng = np.random.default_rng(w)
    for i in range(4):
        mask = np.zeros((h, w), bool)
        x0, y0 = int(rng.integers(0, w - 10)), int(rng.integers(0, h - 10))
        x1, y1 = int(rng.integers(x0 + 1, w + 1)), int(rng.integers(y0 + 1, h + 1))
        mask[y0:y1, x0:x1] = rng.random((y1 - y0, x1 - x0)) < (0.3 + 0.2 * i)
        if i == 3:
            mask[:] = False
        for shape in ((384, 512), (h // 3, w // 3)):
            plain = cv2.resize(mask.astype(np.uint8) * 255, shape[::-1],
                               interpolation=cv2.INTER_AREA) >= 128
            assert np.array_equal(_fit(mask, shape), plain), (size, i, shape)


class _Graph:
    def __init__(self, image: np.ndarray) -> None:
        self.pixels = image

    def image(self) -> np.ndarray:
        return self.pixels


class _Step:
    def __init__(self, index: int) -> None:
        self.index = index


def _layer(rng: np.random.Generator, w: int, h: int):
    from agent.session.store import StoredLayer

    x0, y0 = int(rng.integers(0, w - 40)), int(rng.integers(0, h - 40))
    x1, y1 = x0 + int(rng.integers(10, 40)), y0 + int(rng.integers(10, 40))
    patch = rng.integers(0, 256, (y1 - y0, x1 - x0, 3), dtype=np.uint8)
    return StoredLayer((x0, y0, x1, y1), _patch=patch, _mask=rng.random(patch.shape[:2]) < 0.7)


def test_a_steps_copies_carried_to_the_next_step_are_its_own_frames_copies(monkeypatch):
    """``WorkingFrame``: each step's copies equal a plain resize of that step's frame, the
    next step's come from the last step's (no whole-frame resize), and an undo in the
    turn carries nothing."""
    from agent.session.working import WorkingFrame

    rng = np.random.default_rng(7)
    h, w = 750, 1000                      # 1000 → 256: 125/32 px per px (the shortcut)
    graph = _Graph(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
    frame = WorkingFrame(graph)
    staged: list = []
    whole = []
    real = cv2.resize

    def counting(src, *args, **kwargs):
        if src.shape[:2] == (h, w):
            whole.append(src.shape)
        return real(src, *args, **kwargs)

    monkeypatch.setattr(work_copies.cv2, "resize", counting)
    for n in range(4):
        image = frame.image(staged, {})
        plain = {side: _plain(image, side) for side in (256, 128)}
        whole.clear()
        with frame.step(image):
            for side in (256, 128):
                assert np.array_equal(work_copy(image, side), plain[side]), (n, side)
            if n in (1, 2, 3):
                assert not whole, n    # carried: only the changed part was resized
        if n == 0:
            assert whole               # the first step resizes its frame
        staged.append((_Step(n), None, [_layer(rng, w, h), _layer(rng, w, h)]))
    staged.pop()                       # an undo inside the turn: back to an older frame
    frame.forget()
    image = frame.image(staged, {})
    plain = _plain(image, 256)
    whole.clear()
    with frame.step(image):
        assert np.array_equal(work_copy(image, 256), plain)
    assert whole                       # nothing carried after the undo: made anew


def test_the_next_steps_detection_starts_while_this_step_is_judged(tmp_path, monkeypatch):
    """Two targeted steps: the nets run once per step's frame (never twice, never on a
    frame no step edits), and step 2's run is started during step 1's critique, on the
    frame step 1 produced (its content key is the one step 2 asks for)."""
    from agent.brain.critic import measured
    from agent.session import EditSession

    image = cv2.resize(data.chelsea(), (1000, 750), interpolation=cv2.INTER_CUBIC)
    cv2.circle(image, (250, 375), 95, (220, 30, 30), -1)
    image[300:450, 675:825] = (30, 70, 220)
    started: list[tuple[str, str]] = []
    real_prefetch, real_detect = independent.prefetch, independent._detect
    phase = ["before"]

    def prefetch(frame):
        started.append((phase[0], independent._key(work_copy(frame))))
        return real_prefetch(frame)

    def critique(self, *args, **kwargs):
        phase[0] = f"critique {kwargs['scene'].next_action is not None}"
        try:
            return real_critique(self, *args, **kwargs)
        finally:
            phase[0] = "between"

    detected: list[str] = []
    real_critique = measured.MeasuredCritic.critique
    monkeypatch.setattr(measured, "prefetch", prefetch)
    monkeypatch.setattr(measured.MeasuredCritic, "critique", critique)
    monkeypatch.setattr(independent, "_detect",
                        lambda key, small, models: detected.append(key) or
                        real_detect(key, small, models))
    independent._CACHE.clear()
    session = EditSession.create(image, tmp_path / "s")
    result = session.turn("make the red circle green and brighten the blue square")
    assert [s.status for s in result.steps] == ["applied", "applied"]
    keys = [key for _, key in started]
    assert started[1][0] == "critique True"          # step 2's frame, during step 1's critique
    assert keys[2:] == [keys[1]]                      # step 2 asks for that very frame
    assert len(detected) == len(set(detected)) == 2   # each frame seen once
    assert independent._key(work_copy(np.asarray(session.current_image()))) not in detected
