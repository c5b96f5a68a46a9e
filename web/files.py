"""Files handed to browsers and API clients: private, unguessable, short-lived.

The app serves no folder of ours: the sessions, the benchmark runs and the browser-id key
are blocked from the file route. A download, an export or a report is written instead to
a fresh folder named by 256 random bits inside the web server's own file cache; only the
caller receives its URL, so other sessions and strangers cannot reach it. The server
deletes cached files after ``LOUPE_CACHE_TTL_HOURS`` (``cache_policy``), and
``private_folder`` clears folders an earlier run left there.

``NotFoundForRefused`` answers every refused request on the file route with a bare 404
(the server would answer 403 and echo the path), so a stranger cannot tell a session's
file from nothing. It is plain ASGI: no web framework is imported here.
"""

from __future__ import annotations

import secrets
import shutil
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pipelines.config import get_settings
from pipelines.files import remove_stale

PRIVATE_PREFIX = "loupe-"
NOT_FOUND = b"Not found"

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def cache_policy() -> tuple[int, int]:
    """``(every, age)`` in seconds: how often the server deletes its cached files, and
    how old they must be (``LOUPE_CACHE_TTL_HOURS``)."""
    age = max(60, int(get_settings().cache_ttl_hours * 3600))
    return max(60, min(3600, age // 4)), age


def private_folder(root: str | Path) -> Path:
    """A new folder, named by 256 random bits, under the server's file cache ``root``.

    Folders older than the cache age (left by an earlier run) are deleted first.

    Args:
        root: the web server's cache folder (the one its file route serves).

    Returns:
        The empty folder.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    remove_stale(root, cache_policy()[1], prefix=PRIVATE_PREFIX)
    folder = root / f"{PRIVATE_PREFIX}{secrets.token_urlsafe(32)}"
    folder.mkdir(mode=0o700)
    return folder


def publish(path: str | Path, root: str | Path) -> Path:
    """A copy of ``path`` in a new private folder under ``root`` (see ``private_folder``)."""
    source = Path(path)
    dest = private_folder(root) / source.name
    shutil.copyfile(source, dest)
    return dest


_SERVED: OrderedDict[tuple[str, int, int, str], Path] = OrderedDict()
_SERVED_LOCK = threading.Lock()
_SERVED_MAX = 4096


def serve(path: str | Path, root: str | Path) -> Path:
    """``publish`` for files a page shows again and again (previews): one private copy per
    version of the file (its path, size and modification time), reused while it exists.

    Session folders are never served; this is how their previews reach the browser of the
    session's owner (and of nobody else: the copy's folder name is the only key).
    """
    source = Path(path)
    stat = source.stat()
    key = (str(source.resolve()), stat.st_mtime_ns, stat.st_size, str(Path(root).resolve()))
    with _SERVED_LOCK:
        copy = _SERVED.get(key)
        if copy is not None and copy.is_file():
            _SERVED.move_to_end(key)
            return copy
    copy = publish(source, root)
    with _SERVED_LOCK:
        _SERVED[key] = copy
        while len(_SERVED) > _SERVED_MAX:
            _SERVED.popitem(last=False)
    return copy


class NotFoundForRefused:
    """ASGI middleware: on the file route, a 403 or 404 becomes a bare ``404 Not found``.

    Args:
        app: the ASGI app to wrap.
        route: the part of the path that marks the file route.
    """

    def __init__(self, app: Callable[..., Awaitable[None]], route: str = "/file=") -> None:
        self.app, self.route = app, route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or self.route not in str(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        replaced = False

        async def guarded(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message["status"] in (403, 404):
                replaced = True
                await send({"type": "http.response.start", "status": 404,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(NOT_FOUND)).encode())]})
                await send({"type": "http.response.body", "body": NOT_FOUND})
                return
            if not replaced:
                await send(message)

        await self.app(scope, receive, guarded)
