"""The service layer: what the UI, the HTTP API, the MCP tools and review pages call.

Gradio-free on purpose: ``app.py`` only wires components to these functions, so every
button is also a plain Python call. One error type, ``SessionError``, carries a message
meant for the person using the app; ``web.errors.user_message`` is the one place that
turns an exception into such a message.

Modules: ``sessions`` (ids, folders, locks, expiry, quotas), ``views`` (previews, page
state, chat, status line), ``wording`` (plain words for actions and backends), ``masks``
(brush canvas, mask files, boxes), ``edit`` (the Edit tab), ``library`` (the session
list), ``share`` (review-link tokens), ``review`` (the review page), ``feedback``
(reviewers' comments, pins and verdicts), ``links`` (read-only file URLs for API/MCP
results), ``autopilot``, ``batch`` (batch jobs), ``benchmark``, ``graph_view`` (SVG
drawings) and ``files`` (private, unguessable download folders; 404 for everything else on
the file route). The names
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
from web.batch import (
    BatchStatus,
    batch_cancel,
    batch_file,
    batch_status,
    batch_url,
    start_batch,
)
from web.benchmark import (
    BenchmarkView,
    benchmark_agents,
    benchmark_choices,
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
    comment_preview,
    crop,
    crop_preview,
    download,
    edit_turn,
    export_archive,
    go_to_comment,
    graph_json,
    import_archive,
    open_image,
    redo,
    suggest_crop,
    undo,
    use_comment,
)
from web.errors import SessionError, user_message
from web.feedback import (
    FeedbackRefused,
    add_feedback,
    comment_instruction,
    delete_comment,
    pending_selection,
    resolve_comment,
    review_comments,
)
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
from web.links import file_url, link_download, link_preview, link_session, link_token
from web.masks import box_mask, load_mask_file, mask_from_editor, parse_bbox
from web.references import add_reference, list_references
from web.review import (
    ReviewNotFound,
    review_download,
    review_page,
    review_preview,
    review_reference,
)
from web.selection import (
    candidate_at,
    choose_region,
    clear_selection,
    marked_preview,
    preview_size,
    select,
    selection_mask,
)
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
    "add_reference", "list_references",
    "add_feedback", "box_mask", "comment_instruction", "comment_preview", "delete_comment",
    "FeedbackRefused", "go_to_comment", "pending_selection", "resolve_comment",
    "review_comments", "use_comment",
    "accept_autopilot_suggestion", "AutopilotView", "batch_cancel", "batch_file",
    "batch_status", "batch_url", "BatchStatus",
    "benchmark_agents", "benchmark_choices", "BenchmarkView", "browser_secret", "cache_policy",
    "cancel_autopilot", "candidate_at", "cards", "checkout", "choose_region",
    "clear_selection", "crop", "crop_preview", "current_preview",
    "delete_session",
    "display_tables", "download", "edit_turn", "empty_slot", "ensure_session",
    "export_archive", "file_url", "find", "get_manager", "get_view", "graph_json", "has_photo",
    "image_size", "import_archive", "import_beside", "in_new_session", "is_review_token",
    "known_sessions", "link_download", "link_preview", "link_session",
    "link_token", "load_mask_file", "marked_preview", "mask_from_editor", "mini_dataset",
    "NotFoundForRefused", "open_beside", "open_image", "parse_bbox", "preview",
    "preview_size", "private_folder", "publish", "redo", "remember", "render_cards", "resolve",
    "review_download", "review_page", "review_preview", "review_reference",
    "ReviewNotFound", "revoke_share",
    "run_autopilot", "run_benchmark", "score_files", "score_rows", "send_autopilot_to_edit",
    "select", "selection_mask", "serve", "SESSION_ID_RE", "SessionCard", "SessionError",
    "SessionManager", "SessionView", "set_manager", "share_link", "share_links", "start_batch",
    "status_line", "suggest_crop",
    "summary_markdown", "turn_messages", "undo", "unpack_dataset", "user_message",
    "WebSession", "with_session", "ZOOM_JS",
]
