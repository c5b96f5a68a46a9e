"""Loupe's web app, the Space's entry point (``app_file: app.py``).

The UI lives in the ``ui`` package (one module per tab, the API/MCP endpoints, the review
pages, the launch); this file only serves it. Run ``python app.py`` (``make demo``) for
http://127.0.0.1:7860, ``python app.py --share`` (or ``LOUPE_SHARE=1``) for a temporary
public link as well; ``LOUPE_HOST`` / ``LOUPE_PORT`` / ``LOUPE_APP_CONCURRENCY`` /
``LOUPE_MAX_UPLOAD_MB`` tune the server (``pipelines.config.Settings``).
"""

from __future__ import annotations

import spaces  # noqa: F401  (on a ZeroGPU Space it must be imported before CUDA starts)

from ui.common import ASSETS
from ui.edit_tab import EXAMPLES
from ui.launch import build_app, launch_options, main, make_demo

__all__ = ["ASSETS", "EXAMPLES", "build_app", "launch_options", "main", "make_demo"]

if __name__ == "__main__":
    main()
