"""Loupe's pixel layer: image I/O, layer decomposition, tiling, localisation and editors.

Conventions, stated once for the whole package:

* An image is a ``numpy.ndarray`` of dtype ``uint8``, shape ``(H, W, 3)`` (RGB) or
  ``(H, W, 4)`` (RGBA), C-contiguous.
* A mask is a ``bool`` array of shape ``(H, W)``; ``True`` marks the area to edit.
  A soft mask (alpha) is ``float32`` in ``[0, 1]``.
* A box is ``(x0, y0, x1, y1)`` in full-resolution pixels, end-exclusive.

``pipelines`` knows nothing of agents, Gradio or evaluation.
"""
