"""Loupe's measurements: metrics, no-reference quality, benchmark engines, datasets,
the runner (local or Ray) and reports (``python -m eval …``)."""
