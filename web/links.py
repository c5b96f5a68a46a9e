"""Read-only file links for API and MCP callers: a session's states as URLs of our own.

An MCP client cannot read a file that stays on the server, and a URL of Gradio's file
route (``/gradio_api/file=/tmp/…``) spells out a server path. So results name images by
``/files/<token>/<node>/preview`` (the display preview), ``/files/<token>/<node>/download``
(full resolution, original format, ICC/EXIF kept) and ``/files/<token>/export`` (the
session archive), served by ``ui.review_routes``.

The token is ``fl.`` + an HMAC of the session id under the server's secret: the caller who
holds the session id gets it, nobody can turn it back into the session id (which is the
right to edit), and it stops working when the session is deleted or expires. Like a review
link it only reads; every unknown token or state raises :class:`ReviewNotFound` (404).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import threading
from pathlib import Path

from web.edit import download_name
from web.review import _MEDIA, Download, ReviewNotFound, _node
from web.sessions import SESSION_ID_RE, WebSession, browser_secret, get_manager, with_session
from web.views import preview_file

LINK_PREFIX = "fl."
LINK_RE = re.compile(r"^fl\.[A-Za-z0-9_-]{43}$")
FILES_PATH = "/files/"

_LOCK = threading.Lock()
_KNOWN: dict[str, str] = {}  # token → session id (a cache; the HMAC is always re-checked)


def _key() -> bytes:
    return hashlib.sha256(("loupe file links\0" + browser_secret()).encode()).digest()


def _token(key: bytes, session_id: str) -> str:
    mac = hmac.new(key, session_id.encode("ascii"), hashlib.sha256).digest()
    return LINK_PREFIX + base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def link_token(session_id: str) -> str:
    """The read-only link token of a session (the same for every call)."""
    token = _token(_key(), session_id)
    with _LOCK:
        if len(_KNOWN) > 10_000:  # a cache, not a record: start again rather than grow
            _KNOWN.clear()
        _KNOWN[token] = session_id
    return token


def _resolve(token: str) -> str:
    """The session behind a token: the cached one if its HMAC still matches, else a scan of
    the live sessions (a deleted or expired session resolves to nothing)."""
    if not isinstance(token, str) or not LINK_RE.match(token):
        raise ReviewNotFound("no such link")
    key, root = _key(), get_manager().root
    with _LOCK:
        hint = _KNOWN.get(token)
    candidates = [hint] if hint else []
    candidates += [p.name for p in (root.iterdir() if root.is_dir() else [])
                   if SESSION_ID_RE.match(p.name) and p.name != hint]
    for sid in candidates:
        if hmac.compare_digest(_token(key, sid), token) and (root / sid).is_dir():
            return sid
    raise ReviewNotFound("no such link")


def _open(token: str, fn):
    sid = _resolve(token)
    try:
        return with_session(sid, fn, create=False)
    except ReviewNotFound:
        raise
    except ValueError as exc:  # the session went away or holds no photo any more
        raise ReviewNotFound(str(exc)) from exc


def file_url(session_id: str, node: str | None = None, kind: str = "preview",
             base_url: str = "") -> str:
    """The URL of one state's preview or full-resolution file, or of the session archive.

    Args:
        session_id: the owner's session id (never part of the URL).
        node: a state id (``kind`` "preview" or "download"); ignored for "export".
        kind: ``"preview"``, ``"download"`` or ``"export"``.
        base_url: the app's public root (``https://host``); empty gives a path.
    """
    token = link_token(session_id)
    tail = "export" if kind == "export" else f"{node}/{kind}"
    return str(base_url or "").rstrip("/") + FILES_PATH + f"{token}/{tail}"


def link_preview(token: str, node: str) -> tuple[Path, str]:
    """The display preview of one state: ``(path, media type)``."""
    def run(session: WebSession) -> tuple[Path, str]:
        path = preview_file(session, _node(session, node))
        return path, _MEDIA.get(path.suffix, "application/octet-stream")

    return _open(token, run)


def link_download(token: str, node: str) -> Download:
    """One state at full resolution, in the original format with ICC/EXIF."""
    def run(session: WebSession) -> Download:
        node_id = _node(session, node)
        name = download_name(session, node_id)
        data = session.edit.save_image(None, node_id=node_id)
        return Download(bytes(data), name, _MEDIA.get(Path(name).suffix, "image/png"))

    return _open(token, run)


def link_session(token: str) -> str:
    """The session id behind a link token, for a read-only export (404 when unknown)."""
    def run(session: WebSession) -> str:
        if not session.has_image:
            raise ReviewNotFound("no photo")
        return session.id

    return _open(token, run)
