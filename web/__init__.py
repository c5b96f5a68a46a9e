"""The service layer: what the UI, the HTTP API, the MCP tools and review pages call.

Gradio-free on purpose: ``app.py`` only wires components to these functions, so every
button is also a plain Python call. One error type, ``SessionError``, carries a message
meant for the person using the app; ``web.errors.user_message`` is the one place that
turns an exception into such a message.

Modules: ``sessions`` (ids, folders, locks, expiry, quotas), ``views`` (previews, page
state, chat, status line), ``masks`` (brush canvas, mask files, boxes), ``edit`` (the Edit
tab), ``autopilot``, ``benchmark``, ``graph_view`` (SVG drawings) and ``files`` (private,
unguessable download folders; 404 for everything else on the file route). The names below are the
public calls, re-exported so that callers can write ``web.open_image(...)``.
"""

from web.autopilot import (
    AutopilotView,
    cancel_autopilot,
    run_autopilot,
    send_autopilot_to_edit,
)
from web.benchmark import (
    BenchmarkView,
    benchmark_agents,
    mini_dataset,
    run_benchmark,
    score_files,
    unpack_dataset,
)
from web.edit import (
    checkout,
    crop,
    download,
    edit_turn,
    export_archive,
    graph_json,
    import_archive,
    open_image,
    redo,
    suggest_crop,
    undo,
)
from web.errors import SessionError, user_message
from web.files import NotFoundForRefused, cache_policy, private_folder, publish
from web.masks import load_mask_file, mask_from_editor, parse_bbox
from web.sessions import (
    SESSION_ID_RE,
    SessionManager,
    WebSession,
    browser_secret,
    ensure_session,
    get_manager,
    in_new_session,
    set_manager,
    with_session,
)
from web.views import SessionView, get_view, image_size, preview, status_line, turn_messages

__all__ = [
    "AutopilotView", "BenchmarkView", "NotFoundForRefused", "SESSION_ID_RE", "SessionError",
    "SessionManager", "cache_policy", "private_folder", "publish",
    "SessionView", "WebSession", "benchmark_agents", "browser_secret", "cancel_autopilot",
    "checkout", "crop", "download", "edit_turn", "ensure_session", "export_archive", "get_manager",
    "get_view", "graph_json", "image_size", "import_archive", "in_new_session",
    "load_mask_file",
    "mask_from_editor", "mini_dataset", "open_image", "parse_bbox", "preview", "redo",
    "run_autopilot", "run_benchmark", "score_files", "send_autopilot_to_edit", "set_manager",
    "status_line", "suggest_crop", "turn_messages", "undo", "unpack_dataset", "user_message",
    "with_session",
]
