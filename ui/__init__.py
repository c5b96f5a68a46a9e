"""Loupe's web UI: the Edit, Autopilot and Benchmark tabs, the API/MCP endpoints and the
review pages, built into one ``gr.Blocks`` by ``ui.launch.build_app``.

UI only: every callback is a short call into ``web`` (sessions, edits, the session list,
review links, autopilot, benchmarks), so the same actions are plain Python calls,
``gradio_client`` endpoints and MCP tools. Nothing heavy happens at import time; models
load on first use. Imports go ``app.py → ui/ → web/``; nothing below imports ``ui``.

Modules: ``common`` (errors for people and API callers, served files, the shared page),
``edit_tab``, ``autopilot_tab``, ``benchmark_tab`` (each ``build()`` + ``wire()``),
``api`` (the named endpoints, also MCP tools), ``review_routes`` (``/review/<token>``),
``launch`` (``build_app``, ``make_demo``, ``launch_options``, ``main``).
"""
