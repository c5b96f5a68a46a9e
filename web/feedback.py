"""Reviewer feedback on a review link: comments, pins and verdicts, kept with the session.

A reviewer who holds a review link (:mod:`web.share`) may post, about one state of the
photo, a comment (optional name, text up to ``LOUPE_REVIEW_COMMENT_CHARS`` characters),
optionally pinned to a point ``[x, y]`` or a box ``[x0, y0, x1, y1]`` in that state's
full-resolution pixels, and a verdict (``approve`` or ``changes``). Posts start from the
review token only (:func:`add_feedback`); nothing here can edit the session.

Everything is stored as plain text in the session's folder (``<session>/feedback.json``,
written with ``atomic_write``), so it goes when the session is deleted or expires, and it
stays with the owner when the link that brought it is revoked. Exported archives carry it
(``FEEDBACK_MEMBER``, read back through :func:`clean_records` as a stranger's data).

Limits, each refused with a message for the reviewer (:class:`FeedbackRefused` carries the
HTTP status the review route answers with): text and name length, a per-link rate
(``LOUPE_REVIEW_RATE_PER_MIN``), a per-session total (``LOUPE_REVIEW_MAX_COMMENTS``), pins
inside the state's image, and posts only from the review page's own origin
(:func:`check_origin`). No message names a server path, a session id or a token.

The owner reads and tends the feedback with :func:`review_comments`,
:func:`resolve_comment`, :func:`delete_comment` and :func:`comment_instruction` (the
comment's text and pin, for the owner to read and send; a reviewer's text never runs by
itself). ``web.edit.use_comment`` holds the pin as the area of the next instruction on its
state (:func:`hold_selection`); ``web.edit.edit_turn`` takes it when nothing is brushed.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import math
import re
import secrets
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from agent.session import SessionError
from pipelines.config import get_settings
from pipelines.files import atomic_write, is_id
from web.masks import box_mask
from web.sessions import WebSession, with_session
from web.share import resolve

log = logging.getLogger(__name__)

FEEDBACK_FILE = "feedback.json"
#: the archive member that carries the feedback (archives of session version 2 on)
FEEDBACK_MEMBER = "loupe-feedback.json"
FORMAT = "loupe-feedback"
VERSION = 1
MAX_NAME_CHARS = 80
#: largest request body a review post may send (text, name, pin and verdict as JSON)
MAX_BODY_BYTES = 64 * 1024
#: largest feedback member read from an archive
MAX_ARCHIVE_BYTES = 16 * 1024 ** 2
VERDICTS = {"approve": "Approved", "changes": "Changes requested"}
RATE_WINDOW_S = 60.0
#: a point pin becomes a square of this fraction of the shorter side for a selection
POINT_SELECTION = 0.06
#: where ``ui.json`` keeps a comment's pin held as the next instruction's area
SELECTION_KEY = "review_selection"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")

_LOCK = threading.Lock()
_SENT: dict[str, deque[float]] = {}  # sha256(token) → times of its recent posts


class FeedbackRefused(SessionError):
    """A review post that is not accepted; ``status`` is the HTTP answer (400, 403, 404,
    413, 429), the message says why in plain words."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


NOT_FOUND = "This review link does not exist or has been revoked."


# ----------------------------------------------------------------------------- checks


def check_origin(headers: Mapping[str, str]) -> None:
    """Refuse a post that does not come from a page of this server (403).

    A browser says where a request comes from in headers no page can set: with
    ``Sec-Fetch-Site`` (every current browser) the post must be ``same-origin``, which
    holds behind a proxy too (the browser compares the page with the URL it posts to).
    Without it, the ``Origin`` header (else ``Referer``) must name the ``Host`` the request
    was sent to. ``X-Forwarded-Host`` is never trusted: a page elsewhere could set it, and
    Gradio's CORS answers any origin on a public host.

    Args:
        headers: the request's headers (case-insensitive mapping, or lower-case keys).
    """
    def get(name: str) -> str:
        value = headers.get(name) or headers.get(name.title()) or ""
        return str(value).strip()

    refused = FeedbackRefused(403, "Comments are accepted only from the review page itself "
                                   "(this request came from another site, or said nothing "
                                   "about where it came from).")
    site = get("sec-fetch-site").lower()
    if site:
        if site != "same-origin":
            raise refused
        return
    host = get("host").lower()
    source = get("origin")
    if not source or source == "null":
        source = get("referer")
    try:
        netloc = urlsplit(source).netloc.lower() if source else ""
    except ValueError:
        netloc = ""
    if not host or netloc != host:
        raise refused


def clean_text(value: Any, limit: int, what: str) -> str:
    """Text from outside as plain text: NFC, no control or direction characters, trimmed.

    Raises:
        FeedbackRefused: not text (400) or longer than ``limit`` characters (413).
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FeedbackRefused(400, f"The {what} must be text.")
    text = _CONTROL.sub("", unicodedata.normalize("NFC", value.replace("\r\n", "\n")))
    text = text.replace("\r", "\n").strip()
    if len(text) > limit:
        raise FeedbackRefused(413, f"The {what} is {len(text)} characters long; the limit is "
                                   f"{limit}. Shorten it and send it again.")
    return text


def check_pin(pin: Any, size: tuple[int, int]) -> list[int] | None:
    """A pin as ``[x, y]`` or ``[x0, y0, x1, y1]`` inside a ``(width, height)`` image.

    Raises:
        FeedbackRefused: a malformed pin, or one outside the image (400).
    """
    if pin is None or pin == [] or pin == "":
        return None
    width, height = (int(v) for v in size)
    if not isinstance(pin, (list, tuple)) or len(pin) not in (2, 4) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in pin):
        raise FeedbackRefused(400, "A pin is a point [x, y] or a box [x0, y0, x1, y1] in "
                                   "pixels.")
    values = [int(round(v)) for v in pin]
    where = f"the photo, which is {width}×{height} pixels at this state"
    if len(values) == 2:
        x, y = values
        if not (0 <= x < width and 0 <= y < height):
            raise FeedbackRefused(400, f"The pin ({x}, {y}) is outside {where}.")
        return values
    x0, y0, x1, y1 = values
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise FeedbackRefused(400, f"The pinned box ({x0}, {y0})–({x1}, {y1}) is not inside "
                                   f"{where}.")
    return values


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _check_rate(token: str, now: float) -> None:
    limit = get_settings().review_rate_per_min
    key = _digest(token)
    with _LOCK:
        if len(_SENT) > 4096:  # forget links that went quiet
            for k in [k for k, q in _SENT.items() if not q or now - q[-1] > RATE_WINDOW_S]:
                del _SENT[k]
        sent = _SENT.setdefault(key, deque())
        while sent and now - sent[0] > RATE_WINDOW_S:
            sent.popleft()
        if len(sent) >= limit:
            raise FeedbackRefused(429, f"Too many comments from this review link: {limit} a "
                                       "minute at most (LOUPE_REVIEW_RATE_PER_MIN). Wait a "
                                       "minute and send it again.")
        sent.append(now)


# ----------------------------------------------------------------------------- store


def _path(session: WebSession):
    return session.folder / FEEDBACK_FILE


def _read(session: WebSession) -> list[dict]:
    try:
        data = json.loads(_path(session).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("session %s…: unreadable feedback (%s)", session.id[:6],
                    type(exc).__name__)
        return []
    items = data.get("comments") if isinstance(data, dict) else None
    return [x for x in items or [] if isinstance(x, dict) and is_id(x.get("id"))]


def _write(session: WebSession, items: list[dict]) -> None:
    atomic_write(_path(session), json.dumps({"format": FORMAT, "version": VERSION,
                                             "comments": items}, ensure_ascii=False))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def add_feedback(token: str, state: str, text: Any = "", name: Any = "", pin: Any = None,
                 verdict: Any = None, *, now: float | None = None) -> dict:
    """Post a reviewer's comment and/or verdict on one state, through a review token.

    Args:
        token: the review token from the page's URL (never a session id).
        state: the state id the comment is about.
        text: the comment (plain text; may be empty when a verdict is given).
        name: the reviewer's name (optional).
        pin: ``[x, y]`` or ``[x0, y0, x1, y1]`` in the state's full-resolution pixels.
        verdict: ``"approve"``, ``"changes"`` or None.
        now: the time (seconds since the epoch) for the rate limit; default now.

    Returns:
        The stored comment as the review page shows it.

    Raises:
        FeedbackRefused: with the HTTP status and a message for the reviewer.
    """
    sid = resolve(token) if isinstance(token, str) else None
    if sid is None:
        raise FeedbackRefused(404, NOT_FOUND)
    _check_rate(token, time.time() if now is None else now)
    settings = get_settings()
    text = clean_text(text, settings.review_comment_chars, "comment")
    name = clean_text(name, MAX_NAME_CHARS, "name")
    if verdict in ("", None):
        verdict = None
    elif not isinstance(verdict, str) or verdict not in VERDICTS:
        raise FeedbackRefused(400, "A verdict is either approve or request changes.")
    if not text and verdict is None:
        raise FeedbackRefused(400, "Write a comment, or choose approve or request changes.")

    def run(session: WebSession) -> dict:
        graph = session.edit.graph
        if not is_id(state) or state not in graph.nodes:
            raise FeedbackRefused(400, "That state is not in this photo's history.")
        clean_pin = check_pin(pin, graph.size_at(state))
        items = _read(session)
        if len(items) >= settings.review_max_comments:
            raise FeedbackRefused(429, f"This photo already has {len(items)} comments, the "
                                       "most it keeps (LOUPE_REVIEW_MAX_COMMENTS); the owner "
                                       "can delete some.")
        record = {"id": "c" + secrets.token_hex(6), "state": str(state), "name": name,
                  "text": text, "pin": clean_pin, "verdict": verdict, "created": _now(),
                  "states_then": len(graph.nodes), "link": _digest(token)[:12],
                  "resolved": False}
        items.append(record)
        _write(session, items)
        log.info("session %s…: review %s on %s", sid[:6], "verdict" if verdict else
                 "comment", state)
        return _public(record, graph)

    try:
        return with_session(sid, run, create=False)
    except FeedbackRefused:
        raise
    except SessionError as exc:  # the session went away, or holds no photo any more
        raise FeedbackRefused(404, NOT_FOUND) from exc


def _public(record: dict, graph: Any) -> dict:
    """A comment with stable keys; ``stale``: a verdict made before later edits."""
    verdict = record.get("verdict")
    return {"id": record["id"], "state": record.get("state"), "name": record.get("name", ""),
            "text": record.get("text", ""), "pin": record.get("pin"), "verdict": verdict,
            "created": record.get("created", ""), "resolved": bool(record.get("resolved")),
            "stale": bool(verdict) and len(graph.nodes) > int(record.get("states_then") or 0)}


def link_comments(token: str) -> list[dict]:
    """The comments made through one review link (oldest first), for its review page.

    Raises:
        FeedbackRefused: 404 for an unknown or revoked token.
    """
    sid = resolve(token) if isinstance(token, str) else None
    if sid is None:
        raise FeedbackRefused(404, NOT_FOUND)
    link = _digest(token)[:12]

    def run(session: WebSession) -> list[dict]:
        graph = session.edit.graph
        return [_public(x, graph) for x in _read(session) if x.get("link") == link]

    return with_session(sid, run, create=False)


def review_comments(session_id: str | None) -> dict:
    """Every comment and verdict reviewers left on a session (the owner's view).

    Args:
        session_id: the owner's session id.

    Returns:
        ``{"session_id", "count", "open", "comments": [...], "verdicts": [...]}``; each
        comment has ``id, state, name, text, pin, verdict, created, resolved, stale``;
        ``verdicts`` is the latest verdict per state.
    """
    def run(session: WebSession) -> dict:
        items = _read(session)
        graph = session.edit.graph if items else None
        comments = [_public(x, graph) for x in items]
        latest: dict[str, dict] = {}
        for c in comments:
            if c["verdict"]:
                latest[c["state"]] = c
        return {"session_id": session.id, "count": len(comments),
                "open": sum(1 for c in comments if not c["resolved"]),
                "comments": comments, "verdicts": list(latest.values())}

    return with_session(session_id, run, create=False)


def _change(session_id: str | None, comment_id: str, fn) -> tuple[WebSession, list[dict]]:
    if not is_id(comment_id):
        raise SessionError("That is not a comment id.")

    def run(session: WebSession) -> tuple[WebSession, list[dict]]:
        items = _read(session)
        found = next((x for x in items if x["id"] == comment_id), None)
        if found is None:
            raise SessionError("This session has no comment with that id (it may have been "
                               "deleted).")
        items = fn(items, found)
        _write(session, items)
        return session, items

    return with_session(session_id, run, create=False)


def resolve_comment(session_id: str | None, comment_id: str) -> dict:
    """Mark a reviewer's comment as resolved (it stays listed, marked so).

    Returns:
        ``{"session_id", "comment_id", "resolved": True, "open"}`` (open: unresolved left).
    """
    def mark(items: list[dict], found: dict) -> list[dict]:
        found["resolved"] = True
        return items

    session, items = _change(session_id, comment_id, mark)
    return {"session_id": session.id, "comment_id": comment_id, "resolved": True,
            "open": sum(1 for x in items if not x.get("resolved"))}


def delete_comment(session_id: str | None, comment_id: str) -> dict:
    """Delete a reviewer's comment for good.

    Returns:
        ``{"session_id", "comment_id", "deleted": True, "count"}`` (count: comments left).
    """
    session, items = _change(session_id, comment_id,
                             lambda items, found: [x for x in items if x is not found])
    return {"session_id": session.id, "comment_id": comment_id, "deleted": True,
            "count": len(items)}


def selection_box(pin: list[int] | None, size: tuple[int, int]) -> list[int] | None:
    """The area a pin selects: the box itself, or a small square around a point."""
    if not pin:
        return None
    if len(pin) == 4:
        return [int(v) for v in pin]
    width, height = size
    r = max(4, round(min(width, height) * POINT_SELECTION / 2))
    x, y = pin
    return [max(0, x - r), max(0, y - r), min(width, x + r + 1), min(height, y + r + 1)]


def comment_instruction(session_id: str | None, comment_id: str) -> dict:
    """A comment made ready to be the owner's next instruction (nothing runs).

    Returns:
        ``{"session_id", "comment_id", "state", "text", "pin", "box"}``: ``box`` is the
        area the pin selects in full-resolution pixels (None without a pin).
    """
    if not is_id(comment_id):
        raise SessionError("That is not a comment id.")

    def run(session: WebSession) -> dict:
        found = next((x for x in _read(session) if x["id"] == comment_id), None)
        if found is None:
            raise SessionError("This session has no comment with that id (it may have been "
                               "deleted).")
        graph = session.edit.graph
        state = found.get("state")
        size = graph.size_at(state) if state in graph.nodes else graph.size
        return {"session_id": session.id, "comment_id": comment_id, "state": state,
                "text": found.get("text", ""), "pin": found.get("pin"),
                "box": selection_box(found.get("pin"), size)}

    return with_session(session_id, run, create=False)


def hold_selection(session: WebSession, state: str, box: list[int] | None) -> None:
    """Keep a comment's pin as the area the session's next instruction on ``state``
    changes (in ``ui.json``; replaced by another, dropped by the next turn)."""
    if box:
        session.ui[SELECTION_KEY] = {"state": str(state), "box": [int(v) for v in box]}
    else:
        session.ui.pop(SELECTION_KEY, None)
    session.save_ui()


def held_selection(session: WebSession) -> dict | None:
    """The held pin area ``{"state", "box"}`` when it applies to the current state."""
    held = session.ui.get(SELECTION_KEY)
    if not isinstance(held, dict) or not session.has_image \
            or held.get("state") != session.edit.graph.head:
        return None
    return {"state": held["state"], "box": held.get("box")}


def take_selection(session: WebSession) -> np.ndarray | None:
    """The held pin area as a native mask for the turn about to run, and drop it.

    None when nothing is held, or it was held for another state than the current one.
    """
    held = held_selection(session)
    session.ui.pop(SELECTION_KEY, None)
    if held is None:
        return None
    width, height = session.edit.graph.size
    try:
        return box_mask(held["box"], (height, width))
    except SessionError:
        return None


def pending_selection(session_id: str | None) -> dict | None:
    """The pin area the next instruction will change (``{"state", "box"}``), or None."""
    return with_session(session_id, held_selection, create=False)


def open_counts(session: WebSession) -> dict[str, int]:
    """Unresolved comments per state (for markers on the history graph)."""
    counts: dict[str, int] = {}
    for x in _read(session):
        if not x.get("resolved") and isinstance(x.get("state"), str):
            counts[x["state"]] = counts.get(x["state"], 0) + 1
    return counts


# ----------------------------------------------------------------------------- archives


def archive_payload(session: WebSession) -> str | None:
    """The feedback as an archive member's JSON text, or None when there is none."""
    items = _read(session)
    if not items:
        return None
    return json.dumps({"format": FORMAT, "version": VERSION, "comments": items},
                      ensure_ascii=False)


def clean_records(data: Any, graph: Any) -> list[dict]:
    """Comments from an archive (a stranger's file), rebuilt field by field.

    A record whose id, state or pin does not fit the imported graph is dropped; text is
    cleaned and capped as if it were posted.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return []
    items = data.get("comments")
    settings = get_settings()
    out: list[dict] = []
    seen: set[str] = set()
    for x in (items if isinstance(items, list) else [])[:settings.review_max_comments]:
        try:
            if not isinstance(x, dict) or not is_id(x.get("id")) or x["id"] in seen:
                continue
            state = x.get("state")
            if not is_id(state) or state not in graph.nodes:
                continue
            verdict = x.get("verdict") if isinstance(x.get("verdict"), str) \
                and x["verdict"] in VERDICTS else None
            text = clean_text(str(x.get("text") or "")[:settings.review_comment_chars],
                              settings.review_comment_chars, "comment")
            created = str(x.get("created") or "")[:40]
            states_then = x.get("states_then")
            out.append({
                "id": x["id"], "state": state,
                "name": clean_text(str(x.get("name") or "")[:MAX_NAME_CHARS],
                                   MAX_NAME_CHARS, "name"),
                "text": text, "pin": check_pin(x.get("pin"), graph.size_at(state)),
                "verdict": verdict, "created": created,
                "states_then": int(states_then) if isinstance(states_then, int) and not
                isinstance(states_then, bool) else len(graph.nodes),
                "link": str(x.get("link") or "")[:12] if is_id(x.get("link")) else "",
                "resolved": x.get("resolved") is True})
            seen.add(x["id"])
        except (FeedbackRefused, TypeError, ValueError):
            continue
    return out


def restore(session: WebSession, records: list[dict]) -> None:
    """Make ``records`` (from :func:`clean_records`) the session's feedback."""
    if records:
        _write(session, records)
    else:
        _path(session).unlink(missing_ok=True)


# ----------------------------------------------------------------------------- owner's list


def render_list(summary: dict, labels: Mapping[str, str] | None = None) -> str:
    """The owner's feedback list as HTML, grouped by state; all text escaped.

    Each comment carries buttons with ``data-go`` (go to its state, pin drawn),
    ``data-use`` (use as instruction), ``data-resolve`` and ``data-delete``; the Edit tab's
    script turns a click into a call.
    """
    comments = summary.get("comments") or []
    if not comments:
        return ('<p class="loupe-feedback-empty">No feedback yet: reviewers comment on the '
                'review page of a link.</p>')
    labels = labels or {}
    by_state: dict[str, list[dict]] = {}
    for c in comments:
        by_state.setdefault(str(c["state"]), []).append(c)
    parts = ['<div class="loupe-feedback">']
    for state, items in by_state.items():
        title = html.escape(labels.get(state) or state)
        parts.append(f'<section data-state="{html.escape(state, quote=True)}">'
                     f"<h4>{title} <small>({html.escape(state)})</small></h4><ul>")
        for c in items:
            cid = html.escape(c["id"], quote=True)
            who = html.escape(c["name"] or "A reviewer")
            verdict = ""
            if c["verdict"]:
                verdict = (f' <span class="verdict {c["verdict"]}">'
                           f'{html.escape(VERDICTS[c["verdict"]])}'
                           f'{" · out of date" if c["stale"] else ""}</span>')
            pin = ""
            if c["pin"]:
                pin = (f' <span class="pin">pinned at '
                       f'{html.escape(", ".join(map(str, c["pin"])))}</span>')
            text = html.escape(c["text"]).replace("\n", "<br>")
            cls = "comment resolved" if c["resolved"] else "comment"
            resolve = "" if c["resolved"] else \
                f'<button type="button" data-resolve="{cid}">Resolve</button>'
            parts.append(
                f'<li class="{cls}" data-comment="{cid}"><b>{who}</b>{verdict}{pin}'
                f'{" <i>resolved</i>" if c["resolved"] else ""}'
                f'<div class="text">{text}</div><div class="actions">'
                f'<button type="button" data-go="{cid}">Show</button>'
                f'<button type="button" data-use="{cid}">Use as instruction</button>'
                f'{resolve}<button type="button" data-delete="{cid}">Delete</button>'
                f"</div></li>")
        parts.append("</ul></section>")
    parts.append("</div>")
    return "".join(parts)
