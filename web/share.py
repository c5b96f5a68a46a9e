"""Review links: read-only access to one session through a token of its own.

``create_token(session_id)`` makes an unguessable token (256 bits) and stores it in the
session's folder (``<session>/shares.json``), so the token dies with the session. A
review page resolves a token back to its session by comparing in constant time with the
stored tokens; a revoked or unknown token resolves to nothing (the page answers 404).

A token is never a session id: it starts with ``rv.``, a character that session ids
cannot hold (``SESSION_ID_RE``), so every editing call refuses it as an id. Review pages
call only the read-only functions of :mod:`web.review`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
import time
from pathlib import Path

from agent.session import SessionError
from pipelines.files import atomic_write
from web.sessions import SESSION_ID_RE, get_manager, with_session

log = logging.getLogger(__name__)

TOKEN_PREFIX = "rv."
TOKEN_RE = re.compile(r"^rv\.[A-Za-z0-9_-]{43}$")
SHARES_FILE = "shares.json"
REVIEW_PATH = "/review/"
#: Most live review links per session.
MAX_LINKS = 20

_LOCK = threading.Lock()
_HINTS: dict[str, str] = {}  # sha256(token) → session id (a hint, always re-checked)


def is_review_token(value: object) -> bool:
    """Whether ``value`` has the shape of a review token (not whether it is live)."""
    return isinstance(value, str) and bool(TOKEN_RE.match(value))


def token_from_url(url_or_token: str) -> str:
    """The token in a review URL (``…/review/<token>``), or the text itself when it is one.

    Raises:
        SessionError: when no token can be read from it.
    """
    text = str(url_or_token or "").strip()
    if REVIEW_PATH in text:
        text = text.split(REVIEW_PATH, 1)[1].split("/", 1)[0].split("?", 1)[0]
    if not is_review_token(text):
        raise SessionError("That is not a review link of this app.")
    return text


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _file(session_id: str) -> Path:
    return get_manager().root / session_id / SHARES_FILE


def _read(session_id: str) -> list[dict]:
    try:
        data = json.loads(_file(session_id).read_text())
    except (OSError, ValueError):
        return []
    links = data.get("links") if isinstance(data, dict) else None
    return [x for x in links or [] if isinstance(x, dict) and is_review_token(x.get("token"))]


def _write(session_id: str, links: list[dict]) -> None:
    atomic_write(_file(session_id), json.dumps({"links": links}))


def create_token(session_id: str) -> str:
    """Make a new review token for a session that holds a photo.

    Args:
        session_id: the owner's session id (a review token is refused).

    Returns:
        The token (put it in a URL with :func:`review_path`).
    """
    def run(session) -> str:
        if not session.has_image:
            raise SessionError("Open a photo first: there is nothing to review yet.")
        links = _read(session.id)
        if len(links) >= MAX_LINKS:
            raise SessionError(f"This session already has {MAX_LINKS} review links: revoke "
                               "some first.")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        links.append({"token": token, "created": time.time()})
        _write(session.id, links)
        with _LOCK:
            _HINTS[_digest(token)] = session.id
        log.info("session %s…: review link created", session.id[:6])
        return token

    return with_session(session_id, run, create=False)


def list_tokens(session_id: str) -> list[str]:
    """The live review tokens of a session (oldest first)."""
    return with_session(session_id, lambda s: [x["token"] for x in _read(s.id)],
                        create=False)


def revoke_token(session_id: str, url_or_token: str) -> bool:
    """Revoke one review link of a session; it answers 404 from now on.

    Args:
        session_id: the owner's session id.
        url_or_token: the review URL (or the bare token).

    Returns:
        True when the link existed and is now revoked; False when the session had no such
        link (nothing is revealed about other sessions).
    """
    token = token_from_url(url_or_token)

    def run(session) -> bool:
        links = _read(session.id)
        keep = [x for x in links if not hmac.compare_digest(x["token"], token)]
        if len(keep) == len(links):
            return False
        _write(session.id, keep)
        with _LOCK:
            _HINTS.pop(_digest(token), None)
        log.info("session %s…: review link revoked", session.id[:6])
        return True

    return with_session(session_id, run, create=False)


def _holds(session_id: str, token: str) -> bool:
    return any(hmac.compare_digest(x["token"], token) for x in _read(session_id))


def resolve(token: str) -> str | None:
    """The session a live review token opens, or None (unknown, revoked, expired).

    Args:
        token: from the URL.

    Returns:
        The session id, for read-only use only.
    """
    if not is_review_token(token):
        return None
    digest = _digest(token)
    with _LOCK:
        hint = _HINTS.get(digest)
    if hint and _holds(hint, token):
        return hint
    root = get_manager().root
    for path in root.glob(f"*/{SHARES_FILE}") if root.is_dir() else []:
        sid = path.parent.name
        if SESSION_ID_RE.match(sid) and _holds(sid, token):
            with _LOCK:
                _HINTS[digest] = sid
            return sid
    return None


def review_path(token: str) -> str:
    """The path of a token's review page on this server (``/review/<token>``)."""
    return REVIEW_PATH + token


def share_link(session_id: str, base_url: str = "") -> str:
    """Make a read-only review link for a session.

    Args:
        session_id: the owner's session id.
        base_url: the app's public root (``https://host``); empty gives a path.

    Returns:
        ``<base_url>/review/<token>``.
    """
    return str(base_url or "").rstrip("/") + review_path(create_token(session_id))


def revoke_share(session_id: str, url: str) -> bool:
    """Revoke a review link of a session (see :func:`revoke_token`)."""
    return revoke_token(session_id, url)


def share_links(session_id: str, base_url: str = "") -> list[str]:
    """The session's live review links, as URLs under ``base_url``."""
    root = str(base_url or "").rstrip("/")
    return [root + review_path(t) for t in list_tokens(session_id)]
