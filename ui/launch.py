"""Building the Blocks from the tab modules, and serving them.

``build_app`` lays out the three tabs and the API section and wires them; ``make_demo``
adds the queue; ``launch_options`` reads the server settings; ``main`` is ``python app.py``.
"""

from __future__ import annotations

import argparse
import logging

import gradio as gr
from starlette.middleware import Middleware

import web
from pipelines.config import get_settings
from pipelines.perception import store as perception_store
from pipelines.redact import install_log_redaction
from pipelines.weights import downloads_allowed
from ui import api, autopilot_tab, batch_tab, benchmark_tab, edit_tab
from ui.common import ASSETS, Shell, log
from ui.review_routes import review_router


def build_app() -> gr.Blocks:
    """Build the Blocks app (no model is loaded and nothing is launched here).

    Returns:
        The ``gr.Blocks`` with the three tabs and the API/MCP endpoints.
    """
    with api.ApiBlocks(title="Loupe", delete_cache=web.cache_policy()) as demo:
        sid = gr.BrowserState(None, storage_key="loupe-session",
                              secret=web.browser_secret())
        library = gr.BrowserState([], storage_key="loupe-library",
                                  secret=web.browser_secret())
        gr.Markdown("# Loupe\nEdit photos by saying what to change — at full resolution, "
                    "with every step undoable.")
        status = gr.Markdown(web.status_line(None), elem_id="status-line")
        with gr.Tabs():
            with gr.Tab("Edit", id="edit"):
                e = edit_tab.build()
            with gr.Tab("Autopilot", id="autopilot"):
                a = autopilot_tab.build()
            with gr.Tab("Batch", id="batch"):
                batch = batch_tab.build()
            with gr.Tab("Benchmark", id="benchmark"):
                b = benchmark_tab.build()
        api.build()
        shell = Shell(demo=demo, sid=sid, library=library, status=status, edit=e,
                      links=edit_tab.ui_links)
        edit_tab.wire(shell)
        autopilot_tab.wire(shell, a)
        batch_tab.wire(batch)
        benchmark_tab.wire(b)
    return demo


def launch_options(share: bool | None = None) -> dict:
    """``launch()`` keyword arguments from the environment (also used by tests/benches).

    Args:
        share: also open a temporary public Gradio link (default: ``LOUPE_SHARE``).
    """
    settings = get_settings()
    settings.sessions_dir.mkdir(parents=True, exist_ok=True)
    private = [settings.sessions_dir, settings.data_dir / "benchmarks",
               settings.data_dir / "batches", settings.data_dir / "browser-secret"]
    return {
        "server_name": settings.host or ("0.0.0.0" if settings.space_id else "127.0.0.1"),
        "server_port": settings.port,
        # Nothing of ours is served by path: files go out through web.private_folder.
        "allowed_paths": [str(ASSETS)],
        "blocked_paths": [str(p.resolve()) for p in private],
        "app_kwargs": {"middleware": [Middleware(web.NotFoundForRefused)],
                       "routes": list(review_router.routes)},
        "max_file_size": f"{settings.max_upload_mb}mb",
        "mcp_server": True,
        "css_paths": [str(ASSETS / "loupe.css")],
        "js": (ASSETS / "loupe.js").read_text(encoding="utf-8"),
        "show_error": True,
        "share": settings.share if share is None else share,
    }


def make_demo() -> gr.Blocks:
    """The app with its queue configured (concurrency from ``LOUPE_APP_CONCURRENCY``)."""
    demo = build_app()
    settings = get_settings()
    demo.queue(default_concurrency_limit=settings.app_concurrency, max_size=settings.queue_size)
    return demo


def main(argv: list[str] | None = None) -> None:
    """``python app.py [--share]``: serve the app (and a public share link if asked)."""
    parser = argparse.ArgumentParser(description="Serve Loupe's web app.")
    parser.add_argument("--share", action="store_true", default=None,
                        help="also open a temporary public Gradio share link "
                             "(same as LOUPE_SHARE=1)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=get_settings().log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per internal request
    install_log_redaction()  # no key, token or password in the logs
    settings = get_settings()
    log.info(perception_store.ensure(downloads_allowed(settings)))  # a Space's first start
    make_demo().launch(**launch_options(share=args.share))


if __name__ == "__main__":
    main()
