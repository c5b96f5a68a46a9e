"""The service layer: what the UI, the HTTP API, the MCP tools and review pages call.

Gradio-free on purpose: ``app.py`` only wires components to these functions, so every
button is also a plain Python call. One error type, ``SessionError``, carries a message
meant for the person using the app; ``web.errors.user_message`` is the one place that
turns an exception into such a message.

Modules: ``sessions`` (ids, folders, locks, expiry, quotas), ``views`` (previews, page
state, chat, status line), ``wording`` (plain words for actions and backends), ``masks``
(brush canvas, mask files, boxes), ``edit`` (the Edit tab), ``library`` (the session
list), ``share`` (review-link tokens), ``review`` (the read-only review page),
``autopilot``, ``benchmark``, ``graph_view`` (SVG drawings) and ``files`` (private,
unguessable download folders; 404 for everything else on the file route). The names
below are the public calls, re-exported so that callers can write
``web.open_image(...)``.
"""

from web.autopilot import (
    AutopilotView,
    accept_autopilot_suggestion,
    cancel_autopilot,
    run_autopilot,
    send_autopilot_to_edit,
)
from web.benchmark import (
    BenchmarkView,
    benchmark_agents,
    display_tables,
    mini_dataset,
    run_benchmark,
    score_files,
    score_rows,
    summary_markdown,
    unpack_dataset,
)
from web.edit import (
    checkout,
    crop,
    crop_preview,
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
from web.files import NotFoundForRefused, cache_policy, private_folder, publish, serve
from web.graph_view import ZOOM_JS
from web.library import (
    SessionCard,
    cards,
    delete_session,
    empty_slot,
    find,
    has_photo,
    import_beside,
    known_sessions,
    open_beside,
    remember,
    render_cards,
)
from web.masks import load_mask_file, mask_from_editor, parse_bbox
from web.review import ReviewNotFound, review_download, review_page, review_preview
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
from web.share import is_review_token, resolve, revoke_share, share_link, share_links
from web.views import (
    SessionView,
    current_preview,
    get_view,
    image_size,
    preview,
    status_line,
    turn_messages,
)

__all__ = [
    "AutopilotView", "benchmark_agents", "BenchmarkView", "browser_secret", "cache_policy",
    "accept_autopilot_suggestion", "cancel_autopilot", "cards", "checkout", "crop",
    "crop_preview", "current_preview",
    "delete_session",
    "display_tables", "download", "edit_turn", "empty_slot", "ensure_session",
    "export_archive", "find", "get_manager", "get_view", "graph_json", "has_photo",
    "image_size", "import_archive", "import_beside", "in_new_session", "is_review_token",
    "known_sessions", "load_mask_file", "mask_from_editor", "mini_dataset",
    "NotFoundForRefused", "open_beside", "open_image", "parse_bbox", "preview",
    "private_folder", "publish", "redo", "remember", "render_cards", "resolve",
    "review_download", "review_page", "review_preview", "ReviewNotFound", "revoke_share",
    "run_autopilot", "run_benchmark", "score_files", "score_rows", "send_autopilot_to_edit",
    "serve", "SESSION_ID_RE", "SessionCard", "SessionError", "SessionManager", "SessionView",
    "set_manager", "share_link", "share_links", "status_line", "suggest_crop",
    "summary_markdown", "turn_messages", "undo", "unpack_dataset", "user_message",
    "WebSession", "with_session", "ZOOM_JS",
]
