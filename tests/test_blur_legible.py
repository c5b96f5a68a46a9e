"""Issue 32: "blur the number plate" must leave it unreadable at any size. On the bus
photo enlarged to 16 MP the default 4-px blur left the plate reading 'EBY-584' and was
reported done (its fine-detail energy fell to 0.68); the critic now reads the target
before and after, fails writing that still reads as it did, and retries with a radius of a
fifth of the line. Checked on the real plate, enlarged as the bench enlarges it (only
the plate's neighbourhood, to keep the test small)."""

from __future__ import annotations

import cv2
import numpy as np

from agent.brain.critic.legible import legible
from eval import realset
from pipelines.upscale import lanczos


def _plate_16mp() -> tuple[np.ndarray, np.ndarray]:
    """The plate's neighbourhood of the bus photo at the 16-MP enlargement."""
    image = realset.photo("voc_2011_000025")
    k = realset.upscale_factor(image.shape[1], image.shape[0], 16.0)
    crop = image[280:360, 190:330]
    big = lanczos(crop, (round(crop.shape[1] * k), round(crop.shape[0] * k)))
    inside = np.zeros(big.shape[:2], bool)
    inside[round(29 * k):round(48 * k), round(33 * k):round(106 * k)] = True  # the plate
    return big, inside


def _blur(image: np.ndarray, inside: np.ndarray, sigma: float) -> np.ndarray:
    out = image.copy()
    out[inside] = cv2.GaussianBlur(image, (0, 0), sigma)[inside]
    return out


def test_a_light_blur_of_a_large_plate_is_still_legible_and_the_retry_hides_it() -> None:
    image, inside = _plate_16mp()
    light = legible(image, _blur(image, inside, 4.0), inside)
    assert light is not None and light.before.replace("·", "-") == "EBY-584"
    assert light.still, light
    assert light.radius > 30                       # a fifth of a ~175-px line
    strong = legible(image, _blur(image, inside, light.radius), inside)
    assert strong is not None and not strong.still, strong


def test_nothing_legible_before_means_no_reading_check() -> None:
    image = realset.photo("voc_2011_000025")
    sky = np.zeros(image.shape[:2], bool)
    sky[5:60, 300:480] = True
    assert legible(image, _blur(image, sky, 4.0), sky) is None
