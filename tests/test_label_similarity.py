"""The shipped label-similarity table (``pipelines/perception/label_similarity.npz``): it
is what the encoder says, and a request naming a class from the table never loads the
encoder (seconds and ~800 MB on every CLI removal otherwise)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from pipelines.perception import words

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_table_is_what_the_installed_encoder_computes() -> None:
    labels, shipped = words.class_similarity()
    assert labels == words._LABELS
    fresh = words._computed_similarity()
    assert np.allclose(shipped, fresh, atol=1e-5), \
        "stale table: run pipelines.perception.words.write_similarity_table()"
    cup, glass = labels.index("cup"), labels.index("wine glass")
    assert shipped[cup, cup] > 0.99 and shipped[cup, glass] < shipped[cup, cup]


def test_locating_a_class_named_in_the_table_does_not_load_the_encoder() -> None:
    code = ("import sys, numpy as np\n"
            "from pipelines.localizers import get_localizer\n"
            "from pipelines.perception.words import match_noun\n"
            "image = np.full((240, 320, 3), 200, np.uint8)\n"
            "get_localizer().locate(image, 'the cup')\n"
            "assert match_noun('mug').label == 'cup'\n"
            "print('torch' in sys.modules, 'transformers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False"]


def test_a_stale_table_is_computed_again(tmp_path, monkeypatch) -> None:
    stale = tmp_path / "table.npz"
    np.savez_compressed(stale, labels=np.array(words._LABELS),
                        encoder=np.array("some-other-encoder==9"),
                        similarity=np.zeros((len(words._LABELS),) * 2, np.float32))
    monkeypatch.setattr(words, "SIMILARITY_FILE", stale)
    words.class_similarity.cache_clear()
    try:
        _, sims = words.class_similarity()
    finally:
        words.class_similarity.cache_clear()
    assert np.allclose(np.diag(sims), 1.0, atol=1e-4)
