"""Photos that ship inside our dependencies, split by photo, and the degradations we apply.

Everything here works offline: the photos are files inside installed packages
(scikit-image's data folder, Gradio's media assets, Matplotlib's and scikit-learn's sample
images), found through the import system without importing those packages.

The split is by PHOTO, never by degradation:

* ``TRAIN_PHOTOS`` — what the learned evaluator (``scripts/train_naturalness.py``) is fitted
  on and what Autopilot's knobs may be tuned on. It holds every photo that earlier
  Autopilot tuning used (scikit-image's astronaut, coffee, chelsea, rocket, camera —
  ``bench/notes/search.md``) and others never tuned on.
* ``HELDOUT_PHOTOS`` — ordinary colour photos that no training or tuning has seen
  (``bench/autopilot_quality.py`` reports on them). scikit-image's retina,
  immunohistochemistry, coins, page and hubble_deep_field were looked at in earlier notes,
  so they are in neither list.

``BENCH_DEGRADATIONS`` are the six ordinary faults of issue 15 (one stop dark, 0.7 stop
bright, tungsten cast, cool shade, faded, dark and cool); ``random_degradation`` draws
from wider families of the same kinds for training, with other strengths and mixtures.
"""

from __future__ import annotations

import importlib.util
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from eval import realphotos
from pipelines.color import linear_to_srgb, srgb_to_linear
from pipelines.images import downscale

#: name → (package, path inside the package)
PHOTO_FILES: dict[str, tuple[str, str]] = {
    "astronaut": ("skimage", "data/astronaut.png"),
    "coffee": ("skimage", "data/coffee.png"),
    "chelsea": ("skimage", "data/chelsea.png"),
    "rocket": ("skimage", "data/rocket.jpg"),
    "camera": ("skimage", "data/camera.png"),
    "motorcycle": ("skimage", "data/motorcycle_left.png"),
    "cheetah_cub": ("gradio", "test_data/cheetah2.jpg"),
    "cheetah_face": ("gradio", "media_assets/images/cheetah1.jpg"),
    "groot": ("gradio", "media_assets/images/groot.jpeg"),
    "cheetah_run": ("gradio", "media_assets/images/cheetah.jpg"),
    "lion": ("gradio", "media_assets/images/lion.jpg"),
    "tower": ("gradio", "media_assets/images/tower.jpg"),
    "grace_hopper": ("matplotlib", "mpl-data/sample_data/grace_hopper.jpg"),
    "china": ("sklearn", "datasets/images/china.jpg"),
    "flower": ("sklearn", "datasets/images/flower.jpg"),
    "hubble": ("skimage", "data/hubble_deep_field.jpg"),
    "retina": ("skimage", "data/retina.jpg"),
}

TRAIN_PHOTOS: tuple[str, ...] = ("astronaut", "coffee", "chelsea", "rocket", "camera",
                                 "motorcycle", "cheetah_cub", "cheetah_face", "groot")
HELDOUT_PHOTOS: tuple[str, ...] = ("cheetah_run", "lion", "tower", "grace_hopper", "china",
                                   "flower")


#: Real photographs (``eval.realphotos``, from Debian packages; issue 33), split by photo
#: for the Autopilot's evaluator and its confidence model. The learned evaluator is fitted
#: on ``REAL_TRAIN`` (with ``TRAIN_PHOTOS``); the confidence model's calibration and every
#: threshold are chosen on ``REAL_VALIDATION``; ``REAL_HELDOUT`` (colour photos of every
#: kind: leaves against sky, an interior, a sunset, a butterfly, fog, a dinner table, cut
#: fruit, a bus, a black dog, a lake) is only reported, once. ``HELDOUT_PHOTOS`` stays a
#: second held-out set. The three photos of the same two dogs (forensics-samples-files) are
#: kept together in training. solvay_1927 is a greyscale print: it stays in training (a
#: cast on a grey photo is still a cast to remove) and out of the colour held-out split.
REAL_TRAIN: tuple[str, ...] = (
    "picture_0b", "picture_1a", "aitzgorri", "free", "friends", "greentock", "life",
    "seeding", "butterfly_kw", "this_is_not_windows", "valendas", "beam", "drop", "flowers",
    "dogs_under_tree", "dog_on_floor", "dogs_on_grass", "circuit_board", "castle_maintenon",
    "cincinnati_bridge", "panther_chameleon_female", "solvay_1927", "voc_2011_000003",
    "street_truck", "shelf_objects")
REAL_VALIDATION: tuple[str, ...] = (
    "bridge", "picosdeeuropa", "appleflower", "cloud", "european_honey_bee", "kitten_white",
    "voc_2011_000006", "city_rail", "after_the_rain")
REAL_HELDOUT: tuple[str, ...] = (
    "dragonfly", "wine", "sunset", "butterfly", "fog", "christmas_table", "citrus_fruits",
    "voc_2011_000025", "black_dog", "lake_hill")
#: Real photographs added after the Autopilot's evaluator and confidence model were fitted
#: (wave 11: five monochrome photos for issue 32's localisation set; wave 12: six more, also
#: monochrome, from the same package, then eight colour ones from kphotoalbum's demo album;
#: wave 16: two more from that album, held out for issue 32; wave 20: eight from
#: tuxpaint-data's templates, tune for issue 32; wave 21: eleven cut out of jigzo-data's
#: puzzles, tune for issue 32; wave 22: twenty-five cut out of gcompris-qt-data's Qt resource
#: bundles, tune for issue 32; wave 23: twenty-four more from its animal bundles,
#: explore_world_animals and explore_farm_animals, and twenty-two more monuments from
#: explore_monuments (skies against stone, desert, haze, mountains and water), tune for
#: issue 32; wave 27: three more, two tuxpaint-data templates of a sky through a canopy and
#: a kphotoalbum sunset, tune for issue 32): in none of the three splits above, so the
#: Autopilot's recorded training set and its figures stay what they were.
REAL_NOT_FOR_AUTOPILOT: tuple[str, ...] = (
    "cat_watching_tv", "globe_phone", "tv_in_leaves", "blank_screen", "clouds_beach",
    "aquarium", "constellation", "punishment", "sand", "motherboard", "village_moonlight",
    "kpa_pool", "kpa_snow", "kpa_spiff", "kpa_cold_water", "kpa_donna_2", "kpa_bar55_2",
    "kpa_skagen", "kpa_grand_canyon_2", "kpa_skagen_2", "kpa_anne_helene",
    "tux_lighthouse", "tux_cliff", "tux_sheep", "tux_mossy_log", "tux_ocean_waves",
    "tux_sun_behind_clouds", "tux_jellyfish", "tux_rocks", "tux_trees_above",
    "tux_redwoods_above", "kpa_sunset",
    "jz_bike", "jz_blackberries", "jz_castle", "jz_gorilla", "jz_helicopter", "jz_horse",
    "jz_kookaburra", "jz_slide", "jz_train", "jz_tree_clouds", "jz_windmill",
    "gc_squirrel", "gc_chameleon", "gc_kingfisher", "gc_red_panda", "gc_toucan", "gc_kitten",
    "gc_meerkats", "gc_swans", "gc_spoonbills", "gc_horse", "gc_goat", "gc_taj_mahal",
    "gc_victoria_memorial", "gc_golden_temple", "gc_chenonceau", "gc_mont_saint_michel",
    "gc_eiffel_tower", "gc_chambord", "gc_cheetah", "gc_gibbon", "gc_proboscis_monkeys",
    "gc_schwerin_palace", "gc_colosseum", "gc_christ_the_redeemer", "gc_neuschwanstein",
    "gc_kangaroos", "gc_moose", "gc_garden_lizard", "gc_crocodile", "gc_hedgehog", "gc_macaw",
    "gc_koala", "gc_lemurs", "gc_komodo_dragon", "gc_polar_bear", "gc_bison", "gc_narwhals",
    "gc_jaguars", "gc_panda", "gc_giraffes", "gc_duck", "gc_cow", "gc_sheep", "gc_horses",
    "gc_cat_wool", "gc_hens", "gc_piglet", "gc_dog", "gc_owl",
    "gc_meidum_pyramid", "gc_great_pyramid", "gc_red_pyramid", "gc_bent_pyramid",
    "gc_arles_arena", "gc_palais_des_papes", "gc_reims_cathedral", "gc_carcassonne",
    "gc_pont_du_gard", "gc_qutub_minar", "gc_mysore_palace", "gc_sanchi_stupa",
    "gc_mount_rushmore", "gc_canyon_de_chelly", "gc_statue_of_liberty", "gc_lincoln_memorial",
    "gc_petra", "gc_chichen_itza", "gc_machu_picchu", "gc_great_wall", "gc_berlin_cathedral",
    "gc_brandenburg_gate")


#: Untouched photos the do-no-harm rule is validated on (issue 28): label → (photo, crop box
#: as fractions (x0, y0, x1, y1) of the photo or None, the kind of scene). All but rocket
#: lie outside ``TRAIN_PHOTOS`` (the held-out photos, close-ups cut from them, and two
#: scikit-image photos in neither split); rocket, the only twilight photo shipped here, is a
#: training photo (the evaluator has seen it) and is reported as such. Nothing is tuned on
#: these; the margins come from ``scripts/calibrate_harm.py`` on the training photos.
VALIDATION_UNTOUCHED: dict[str, tuple[str, tuple[float, float, float, float] | None, str]] = {
    "cheetah_run": ("cheetah_run", None, "one hue (dry grass)"),
    "cheetah_closeup": ("cheetah_run", (0.45, 0.15, 0.95, 0.75), "one hue, close-up"),
    "lion": ("lion", None, "strong natural colour"),
    "lion_face": ("lion", (0.2, 0.0, 0.8, 0.6), "strong natural colour, close-up"),
    "flower": ("flower", None, "strong natural colour, dark background"),
    "flower_closeup": ("flower", (0.3, 0.15, 0.75, 0.8), "strong natural colour, close-up"),
    "tower": ("tower", None, "strong colour against a blue sky"),
    "grace_hopper": ("grace_hopper", None, "low key portrait"),
    "china": ("china", None, "water, level landscape"),
    "china_water": ("china", (0.45, 0.45, 1.0, 0.85), "water"),
    "hubble": ("hubble", None, "low key, night sky"),
    "retina": ("retina", (0.15, 0.15, 0.85, 0.85), "one hue, close-up"),
    "rocket": ("rocket", None, "twilight (a training photo)"),
}


def load_validation(label: str, long_side: int = 512) -> np.ndarray:
    """An untouched validation photo (``VALIDATION_UNTOUCHED``), cropped, long side at most
    ``long_side``.

    Raises:
        PhotoError: unknown label, or its photo is not installed.
    """
    if label not in VALIDATION_UNTOUCHED:
        raise PhotoError(f"unknown validation photo {label!r}; known: "
                         f"{', '.join(VALIDATION_UNTOUCHED)}")
    photo, box, _ = VALIDATION_UNTOUCHED[label]
    with Image.open(photo_path(photo)) as img:
        rgb = np.asarray(img.convert("RGB"), dtype=np.uint8)
    if box is not None:
        h, w = rgb.shape[:2]
        rgb = rgb[int(box[1] * h): int(box[3] * h), int(box[0] * w): int(box[2] * w)]
    return np.ascontiguousarray(downscale(np.ascontiguousarray(rgb), long_side))


class PhotoError(FileNotFoundError):
    """A named photo is unknown or its package is not installed."""


def photo_path(name: str) -> Path:
    """The file of a named photo inside its installed package.

    Raises:
        PhotoError: unknown name, or the package (or file) is missing.
    """
    if name not in PHOTO_FILES:
        raise PhotoError(f"unknown photo {name!r}; known: {', '.join(PHOTO_FILES)}")
    package, rel = PHOTO_FILES[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise PhotoError(f"photo {name!r} needs the {package} package, which is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    if not path.is_file():
        raise PhotoError(f"photo {name!r} is missing from the installed {package} package")
    return path


def load_photo(name: str, long_side: int = 512) -> np.ndarray:
    """A named photo as ``uint8`` RGB with its long side at most ``long_side`` (never enlarged).

    ``name`` is a photo of ``PHOTO_FILES`` or a real photograph's id (``eval.realphotos``,
    fetched and cached on first use).
    """
    if name not in PHOTO_FILES and name in realphotos.catalogue():
        return realphotos.load(name, long_side)
    with Image.open(photo_path(name)) as img:
        rgb = np.asarray(img.convert("RGB"), dtype=np.uint8)
    return np.ascontiguousarray(downscale(rgb, long_side))


# ----------------------------------------------------------------------------- degradations

def _u8(x: np.ndarray) -> np.ndarray:
    return np.clip(x * 255.0 + 0.5, 0, 255).astype(np.uint8)


def linear_gains(img: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    """Multiply each channel in linear light (exposure and illuminant changes), clipped."""
    lin = srgb_to_linear(img.astype(np.float32) / 255.0) * np.asarray(gains, np.float32)
    return _u8(linear_to_srgb(np.clip(lin, 0.0, 1.0)))


def fade(img: np.ndarray, *, black: float, white: float, saturation: float = 1.0) -> np.ndarray:
    """Faded print: tones squeezed into [black, white] (0–1) and colour reduced."""
    x = img.astype(np.float32) / 255.0
    grey = x @ np.array([0.299, 0.587, 0.114], np.float32)
    x = grey[..., None] + (x - grey[..., None]) * saturation
    return _u8(black + x * (white - black))


def atmospheric_haze(img: np.ndarray, rng: random.Random) -> np.ndarray:
    """``img`` seen through haze or fog, as a photographer would have taken it.

    Koschmieder's model in linear light, I = J t + A (1 - t), with t = exp(-beta d) and a
    depth d that spans 0 (near: t = 1, the scene's own blacks stay) to 1 (far): mostly the
    top of the frame, blended with a smooth random field. The airlight A is a grey from dim
    (an overcast, misty morning) to bright, slightly cool or warm. Unlike a fade it lifts
    black by different amounts across the frame, and never where the scene is near.
    """
    h, w = img.shape[:2]
    np_rng = np.random.default_rng(rng.randrange(2**32))
    field = cv2.GaussianBlur(np_rng.random((h, w)).astype(np.float32), (0, 0),
                             max(h, w) / 6.0)
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-6)
    ramp = np.linspace(1.0, 0.0, h, dtype=np.float32)[:, None] * np.ones((1, w), np.float32)
    weight = rng.uniform(0.4, 1.0) if rng.random() < 0.8 else 0.0
    depth = weight * ramp + (1.0 - weight) * field
    depth = (depth - depth.min()) / max(float(np.ptp(depth)), 1e-6)
    t = np.exp(-rng.uniform(0.8, 3.0) * depth)[..., None]
    grey = rng.uniform(0.35, 0.95)
    tint = rng.uniform(-0.04, 0.04)
    air = srgb_to_linear(np.clip(np.float32(grey) * np.asarray(
        (1.0 - tint, 1.0, 1.0 + tint), np.float32), 0.0, 1.0))
    lin = srgb_to_linear(img.astype(np.float32) / 255.0) * t + air * (1.0 - t)
    return _u8(linear_to_srgb(np.clip(lin, 0.0, 1.0)))


def _stops(s: float) -> tuple[float, float, float]:
    g = 2.0 ** s
    return (g, g, g)


#: The six ordinary faults of the held-out benchmark (issue 15).
BENCH_DEGRADATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "one_stop_dark": lambda im: linear_gains(im, _stops(-1.0)),
    "bright_0.7_stop": lambda im: linear_gains(im, _stops(0.7)),
    "tungsten_cast": lambda im: linear_gains(im, (1.0, 0.82, 0.55)),
    "cool_shade": lambda im: linear_gains(im, (0.78, 0.9, 1.0)),
    "faded": lambda im: fade(im, black=0.16, white=0.86, saturation=0.75),
    "dark_and_cool": lambda im: linear_gains(im, (0.39, 0.45, 0.5)),
}


@dataclass(frozen=True)
class Degradation:
    """One drawn degradation: a readable label and its parameters."""

    label: str
    stops: float = 0.0
    cast: tuple[float, float] = (0.0, 0.0)     # log2 gains of red and blue against green
    black: float = 0.0
    white: float = 1.0
    saturation: float = 1.0

    def apply(self, img: np.ndarray) -> np.ndarray:
        """The degraded copy of ``img``."""
        out = img
        if self.stops or any(self.cast):
            g = 2.0 ** self.stops
            out = linear_gains(out, (g * 2.0 ** self.cast[0], g, g * 2.0 ** self.cast[1]))
        if self.black or self.white != 1.0 or self.saturation != 1.0:
            out = fade(out, black=self.black, white=self.white, saturation=self.saturation)
        return out


def random_degradation(rng: random.Random) -> Degradation:
    """Draw a training degradation: exposure, illuminant cast, fading, or a mixture.

    Strengths run past the benchmark's on both sides (±1.8 stops, casts up to a factor of
    two between red and blue, fades from mild to strong) so the evaluator learns the
    families rather than six points.
    """
    kind = rng.choice(("exposure", "cast", "fade", "exposure+cast", "fade+cast",
                       "exposure+fade"))
    stops, cast, black, white, sat = 0.0, (0.0, 0.0), 0.0, 1.0, 1.0
    if "exposure" in kind:
        stops = rng.choice((-1, 1)) * rng.uniform(0.3, 1.8)
    if "cast" in kind:
        warmth = rng.uniform(-0.9, 0.9)            # + = warm (red up, blue down)
        tint = rng.uniform(-0.25, 0.25)
        cast = (0.5 * warmth + tint, -0.6 * warmth + tint)
        if abs(warmth) < 0.15:
            warmth = math.copysign(0.15, warmth)
            cast = (0.5 * warmth + tint, -0.6 * warmth + tint)
    if "fade" in kind:
        black, white = rng.uniform(0.04, 0.28), rng.uniform(0.72, 1.0)
        sat = rng.uniform(0.55, 1.0)
    label = (f"{kind}: stops {stops:+.2f}, cast {cast[0]:+.2f}/{cast[1]:+.2f}, "
             f"levels {black:.2f}-{white:.2f}, saturation {sat:.2f}")
    return Degradation(label, stops, cast, black, white, sat)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR in dB of two same-size ``uint8`` images (capped at 100 for identical ones)."""
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 100.0 if mse <= 1e-10 else min(100.0, 10.0 * math.log10(255.0 ** 2 / mse))
