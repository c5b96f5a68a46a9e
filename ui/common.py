"""What every UI module shares: error handling for people and for API callers, the
Edit tab's page outputs, and how a session's file is handed to the browser.

Errors reach people as a toast (``gr.Warning``) and leave every component as it was
(``toast``); API and MCP callers get one ``gr.Error`` each, in plain text (``friendly``).
``json_tool`` is the one way an API/MCP endpoint answers: one JSON object as text (see
docs/ARCHITECTURE.md, "API and MCP results").
"""

from __future__ import annotations

import functools
import html
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import route_utils
from gradio import utils as gradio_utils

import web

log = logging.getLogger("loupe.app")
ASSETS = Path(__file__).resolve().parents[1] / "assets"
#: keyword arguments of every UI-only event: callable by the page, not listed in the API
UI = {"api_visibility": "undocumented"}
COMPARE = ["original", "previous"]


def friendly(fn):
    """API/MCP calls: turn any error of a service call into one ``gr.Error`` for people."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure reaches the user as a message
            raise gr.Error(web.user_message(exc), print_exception=False) from exc

    return call


def _jsonable(value: Any) -> Any:
    """``value`` with numpy numbers and arrays as plain JSON values (nothing else changes)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays
        return _jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no inf/NaN (e.g. the PSNR of two identical images)
    return value


def json_tool(fn):
    """Serve ``fn`` as an API/MCP endpoint that answers with one JSON object.

    ``fn`` returns a dict with stable keys (``session_id``, ``head``, ``image_url``, ``url``,
    ``steps`` …; never a server path); the endpoint returns it as JSON text, which is what
    an MCP client reads as the tool's text content and a ``gradio_client`` caller gets as a
    string (``json.loads`` it). Any error becomes one ``gr.Error`` whose message is plain
    text for people (``web.user_message``: no traceback, no path, no HTML escaping); MCP
    clients see it as a result with ``isError`` set.
    """
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> str:
        try:
            result = fn(*args, **kwargs)
            if not isinstance(result, dict):
                raise TypeError(f"{fn.__name__} returned {type(result).__name__}, not a dict")
            return json.dumps(_jsonable(result), ensure_ascii=False, allow_nan=False)
        except gr.Error as exc:
            raise gr.Error(str(exc.message), print_exception=False) from exc
        except Exception as exc:  # noqa: BLE001 - every failure reaches the caller as a message
            raise gr.Error(web.user_message(exc), print_exception=False) from exc

    return call


def toast(fn):
    """UI calls: show any error as a toast and leave every output as it was.

    Raising would paint an error badge over each output component and block the
    instruction box; a warning toast plus ``gr.skip()`` says what went wrong and keeps
    the page usable.
    """
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure reaches the user as a toast
            text = str(exc.message if isinstance(exc, gr.Error) else web.user_message(exc))
            gr.Warning(html.escape(text[:1].upper() + text[1:]), title="That did not work")
            return gr.skip()

    return call


def root_url(request: gr.Request | None) -> str:
    """The app's public address as the caller sees it (behind proxies and share links)."""
    try:
        req = request.request  # the underlying starlette request
        return route_utils.get_root_url(req, route_utils.get_api_call_path(req), None)
    except Exception as exc:  # noqa: BLE001 - a relative link still works in the browser
        log.debug("no root url (%s); review links will be relative", exc)
        return ""



def served(path: Path) -> str:
    """A session's preview as the browser may fetch it: a private copy in Gradio's cache
    (session folders are never served; see ``web.files``)."""
    return str(web.serve(path, gradio_utils.get_upload_folder()))


def private() -> Path:
    """A new unguessable folder in Gradio's own file cache: only the caller gets its URL,
    and ``delete_cache`` removes it (see ``web.files``)."""
    return web.private_folder(gradio_utils.get_upload_folder())



def edit_page(view: web.SessionView, library: Any, compare: str = "original") -> tuple:
    """Every output of the Edit tab for one session (previews are files, never arrays).

    The photo view is a plain image (it updates at once, whatever the photo's size); the
    brush canvas loads only when its tab is opened (``ui_brush``) and is never an output
    here: redrawing it takes seconds in a browser without a GPU. The page's script
    (``assets/loupe.js``) leaves the brush tab for the photo when a change is sent.
    """
    log.info("session %s… at %s", view.session_id[:6], view.head)
    photo = None if view.image_file is None else served(view.image_file)
    pair = view.compare_files(compare)
    slider = None if pair is None else (served(pair[0]), served(pair[1]))
    library = web.remember(library, view.session_id)
    cards = web.render_cards(web.cards(library, view.session_id))
    chat = [{**m, "content": {"path": served(Path(m["content"]["path"]))}}
            if isinstance(m.get("content"), dict) and "path" in m["content"] else m
            for m in view.chat]   # a reference's picture: a private copy, never the session's
    return (view.session_id, library, photo, slider, chat, view.graph_svg, view.status,
            cards)



@dataclass
class Shell:
    """What the tabs share when their events are wired: the browser's session id and list,
    the status line and the Edit tab's components (its page is every tab's landing place).

    ``links`` refreshes the review-link list after the session may have changed.
    """

    demo: gr.Blocks
    sid: gr.BrowserState
    library: gr.BrowserState
    status: gr.Markdown
    edit: dict
    links: Callable[..., Any]

    @property
    def page(self) -> list:
        """The outputs of ``edit_page``, in its order."""
        e = self.edit
        return [self.sid, self.library, e["photo"], e["slider"], e["chat"], e["graph"],
                self.status, e["sessions"]]

    @property
    def state(self) -> list:
        """The inputs every page-changing callback starts with."""
        return [self.sid, self.library, self.edit["compare"]]

    @property
    def quiet(self) -> dict:
        """Event options for page changes: progress in the chat, no spinner over the photo."""
        return {"show_progress_on": [self.edit["chat"]], **UI}

    def then_links(self, event: Any) -> None:
        """After ``event``, refresh the review-link list for the (maybe new) session."""
        event.then(self.links, [self.sid], [self.edit["links"]], api_name="ui_links", **UI)
