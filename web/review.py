"""The review page behind a review link: read-only by construction.

Everything here starts from a review token (:mod:`web.share`), never from a session id,
and calls only functions that read: the graph, the chat, the cached previews and a
full-resolution encoding of any state. There is no form and no button that edits; the
page's only script moves the before/after divider, zooms the graph and follows a click
on a state.

A token that is unknown, revoked or whose session expired raises :class:`ReviewNotFound`
(the server answers 404), as does a state id that is not in the graph.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from pipelines.files import is_id
from web.edit import download_name
from web.graph_view import ZOOM_JS, node_label, render_svg
from web.sessions import WebSession, with_session
from web.share import resolve, review_path
from web.views import preview_file
from web.wording import scrub

_MEDIA = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png",
          ".webp": "image/webp", ".tif": "image/tiff", ".tiff": "image/tiff",
          ".bmp": "image/bmp"}


class ReviewNotFound(LookupError):
    """No such review link (unknown, revoked, expired) or no such state."""


@dataclass
class Download:
    """A full-resolution file for the reviewer: bytes, file name and media type."""

    data: bytes
    filename: str
    media_type: str


def _session(token: str, fn):
    sid = resolve(token)
    if sid is None:
        raise ReviewNotFound("no such review link")
    try:
        return with_session(sid, fn, create=False)
    except ReviewNotFound:
        raise
    except ValueError as exc:  # the session went away or holds no photo any more
        raise ReviewNotFound(str(exc)) from exc


def _node(session: WebSession, node: str | None) -> str:
    graph = session.edit.graph
    if node is None or node == "":
        return graph.head
    if not is_id(node) or node not in graph.nodes:
        raise ReviewNotFound("no such state")
    return str(node)


def review_preview(token: str, node: str) -> tuple[Path, str]:
    """The display preview of one state: ``(path, media type)``."""
    def run(session: WebSession) -> tuple[Path, str]:
        path = preview_file(session, _node(session, node))
        return path, _MEDIA.get(path.suffix, "application/octet-stream")

    return _session(token, run)


def review_download(token: str, node: str | None = None) -> Download:
    """One state at full resolution, in the original format with ICC/EXIF."""
    def run(session: WebSession) -> Download:
        node_id = _node(session, node)
        name = download_name(session, node_id)
        data = session.edit.save_image(None, node_id=node_id)
        return Download(bytes(data), name, _MEDIA.get(Path(name).suffix, "image/png"))

    return _session(token, run)


def _chat_html(chat: list[dict]) -> str:
    items = []
    for msg in chat:
        if not isinstance(msg, dict):
            continue
        role = "you" if msg.get("role") == "user" else "loupe"
        text = html.escape(scrub(str(msg.get("content") or ""))).replace("\n", "<br>")
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
        title = (msg.get("metadata") or {}).get("title") if isinstance(
            msg.get("metadata"), dict) else None
        if title:
            items.append(f'<li class="{role}"><details><summary>{html.escape(str(title))}'
                         f"</summary>{text}</details></li>")
        else:
            items.append(f'<li class="{role}">{text}</li>')
    return f'<ol class="chat">{"".join(items)}</ol>' if items else \
        '<p class="quiet">No conversation yet.</p>'


def _label(node) -> str:
    """A state's label as the graph shows it."""
    return node_label(node) or node.id


def _states_html(session: WebSession, shown: str, base: str) -> str:
    graph = session.edit.graph
    svg = render_svg(graph, shown, title="States of this photo", zoom=True, marker="shown")
    links = []
    for node in graph.nodes.values():
        label = html.escape(_label(node))
        cls = ' class="shown"' if node.id == shown else ""
        links.append(f'<li{cls}><a href="{base}?state={html.escape(node.id)}">{label}</a></li>')
    return (f'<div class="graph" id="graph">{svg}</div>'
            f'<ol class="states">{"".join(links)}</ol>')


def review_page(token: str, state: str | None = None, compare: str = "original",
                nonce: str = "") -> str:
    """The review page of a token at one state (default: the owner's current state).

    Args:
        token: the review token from the URL.
        state: a state id of the graph, or None.
        compare: the slider's reference, ``"original"`` or ``"previous"``.
        nonce: the Content-Security-Policy nonce of the page's one script.

    Returns:
        A complete HTML document (no session id in it).
    """
    def run(session: WebSession) -> str:
        graph = session.edit.graph
        shown = _node(session, state)
        parent = graph.nodes[shown].parent
        ref = parent if compare == "previous" and parent else graph.root
        base = review_path(token)
        name = html.escape(str(session.ui.get("filename") or "photo"))
        w, h = graph.size
        return PAGE.format(
            name=name, size=f"{w}×{h}", base=base, shown=html.escape(shown),
            ref=html.escape(ref), state_label=html.escape(_label(graph.nodes[shown])),
            other="previous" if compare != "previous" else "original",
            compare=("the previous state" if compare == "previous" and parent
                     else "the original"),
            states=_states_html(session, shown, base), chat=_chat_html(session.chat),
            zoom_js=ZOOM_JS.replace("element.", "document.body."), css=CSS,
            nonce=html.escape(nonce, quote=True))

    return _session(token, run)


CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1f2937;background:#f9fafb}
header{padding:12px 20px;background:#fff;border-bottom:1px solid #e5e7eb}
header h1{font-size:18px;margin:0} header p{margin:2px 0 0;color:#6b7280;font-size:13px}
main{display:grid;grid-template-columns:minmax(0,3fr) minmax(260px,2fr);gap:16px;padding:16px}
@media (max-width:800px){main{grid-template-columns:1fr}}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:12px}
.compare{position:relative;line-height:0;user-select:none}
.compare img{width:100%;height:auto;display:block}
.compare .after{position:absolute;inset:0;clip-path:inset(0 0 0 50%)}
#divider{width:100%;margin-top:8px}
.bar{display:flex;gap:8px;flex-wrap:wrap;align-items:center;margin-top:8px}
a.button{background:#f97316;color:#fff;padding:7px 12px;border-radius:8px;text-decoration:none}
a.plain{color:#4338ca}
.chat{list-style:none;padding:0;margin:0;max-height:480px;overflow:auto}
.chat li{margin:6px 0;padding:6px 10px;border-radius:8px;background:#f3f4f6}
.chat li.you{background:#fff7ed;margin-left:20%}
.states{font-size:13px;padding-left:20px} .states li.shown{font-weight:bold}
.loupe-zoom-area{overflow:auto;max-height:360px}
.loupe-zoombar button{margin-right:4px}
.quiet{color:#6b7280}
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Review: {name}</title><style>{css}</style></head>
<body>
<header><h1>Review: {name}</h1>
<p>Read-only review link · {size} pixels · showing “{state_label}”</p></header>
<main>
<section class="card">
<div class="compare" id="compare">
<img class="before" src="{base}/preview/{ref}" alt="{compare}">
<img class="after" id="after" src="{base}/preview/{shown}" alt="this state">
</div>
<input type="range" id="divider" min="0" max="100" value="50"
 aria-label="Move the divider: left shows {compare}, right this state">
<div class="bar"><span>Left: {compare} · right: this state.</span>
<a class="plain" href="{base}?state={shown}&amp;compare={other}">compare with the {other}</a>
<a class="button" id="download" href="{base}/download/{shown}" download>Download full
resolution</a></div>
</section>
<section class="card"><h2>States</h2>{states}<h2>Conversation</h2>{chat}</section>
</main>
<script nonce="{nonce}">
const d = document.getElementById('divider'), a = document.getElementById('after');
d.addEventListener('input', () => {{ a.style.clipPath = `inset(0 0 0 ${{d.value}}%)`; }});
document.getElementById('graph').addEventListener('click', (e) => {{
  const g = e.target.closest('[data-node]');
  if (g) {{ location.href = '{base}?state=' + encodeURIComponent(g.dataset.node); }}
}});
{zoom_js}
</script>
</body></html>
"""
