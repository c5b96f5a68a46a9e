"""The review page behind a review link: it reads the session and never edits it.

Everything here starts from a review token (:mod:`web.share`), never from a session id,
and calls only functions that read: the graph, the chat, the cached previews, a
full-resolution encoding of any state and the link's comments. The one thing a reviewer
can send is feedback (:mod:`web.feedback`: a comment, a pin, a verdict), stored beside the
session and never run. The page's only script (nonce'd under a strict CSP) moves the
before/after divider, zooms the graph, follows a click on a state, places a pin and posts
a comment; every comment is rendered escaped, as text.

A token that is unknown, revoked or whose session expired raises :class:`ReviewNotFound`
(the server answers 404), as does a state id that is not in the graph.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from pipelines.config import get_settings
from pipelines.files import is_id
from web.edit import download_name
from web.feedback import VERDICTS, link_comments, open_counts
from web.graph_view import ZOOM_JS, node_label, render_svg
from web.sessions import WebSession, with_session
from web.share import resolve, review_path
from web.views import preview_file, reference_preview_file
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


def review_reference(token: str, ref_id: str) -> tuple[Path, str]:
    """The picture of one of the photo's reference photos: ``(path, media type)``."""
    def run(session: WebSession) -> tuple[Path, str]:
        path = reference_preview_file(session, ref_id)
        if path is None:
            raise ReviewNotFound("no such reference")
        return path, _MEDIA.get(path.suffix, "application/octet-stream")

    return _session(token, run)


def _reference_html(session: WebSession, ref_id: object, base: str, caption: str) -> str:
    """A kept reference's picture (served by ``review_reference``) with ``caption``, or ""
    when the photo keeps no such reference. ``{name}`` and ``{file}`` in the caption are
    the reference's name ("reference 1") and the user's file name, escaped."""
    if reference_preview_file(session, ref_id) is None:
        return ""
    entry = next(e for e in session.edit.references.items if e["id"] == ref_id)
    name, file = html.escape(str(entry["name"])), html.escape(str(entry["filename"]))
    return (f'<figure class="reference"><img src="{base}/reference/{html.escape(entry["id"])}" '
            f'alt="{name}: {file}"><figcaption>{caption.format(name=name, file=file)}'
            "</figcaption></figure>")


def review_download(token: str, node: str | None = None) -> Download:
    """One state at full resolution, in the original format with ICC/EXIF."""
    def run(session: WebSession) -> Download:
        node_id = _node(session, node)
        name = download_name(session, node_id)
        data = session.edit.save_image(None, node_id=node_id)
        return Download(bytes(data), name, _MEDIA.get(Path(name).suffix, "image/png"))

    return _session(token, run)


def _chat_html(session: WebSession, base: str) -> str:
    """The chat as escaped text; a message that added a reference shows its picture."""
    items = []
    for msg in session.chat:
        if not isinstance(msg, dict):
            continue
        role = "you" if msg.get("role") == "user" else "loupe"
        text = html.escape(scrub(str(msg.get("content") or ""))).replace("\n", "<br>")
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
        text += _reference_html(session, msg.get("reference"), base, "{name}: {file}")
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
    svg = render_svg(graph, shown, title="States of this photo", zoom=True, marker="shown",
                     notes=open_counts(session))
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
        sw, sh = graph.size_at(shown)
        comments = link_comments(token)
        return PAGE.format(
            comments=_comments_html(comments, session, shown, base),
            pins=_pins_html(comments, shown, (sw, sh)), sw=sw, sh=sh,
            limit=get_settings().review_comment_chars,
            name=name, size=f"{w}×{h}", base=base, shown=html.escape(shown),
            ref=html.escape(ref), state_label=html.escape(_label(graph.nodes[shown])),
            other="previous" if compare != "previous" else "original",
            compare=("the previous state" if compare == "previous" and parent
                     else "the original"),
            states=_states_html(session, shown, base), chat=_chat_html(session, base),
            reference=_reference_html(
                session, ((graph.nodes[shown].action or {}).get("params") or {}).get(
                    "reference"), base, "This state matches the look of {name} ({file})."),
            zoom_js=ZOOM_JS.replace("element.", "document.body."), css=CSS,
            nonce=html.escape(nonce, quote=True))

    return _session(token, run)


def _comments_html(comments: list[dict], session: WebSession, shown: str,
                   base: str) -> str:
    """The link's comments, newest first, as escaped text; those on this state marked."""
    if not comments:
        return '<p class="quiet" id="no-comments">No comments yet.</p>'
    graph = session.edit.graph
    numbers = _pin_numbers(comments, shown)
    items = []
    for c in reversed(comments):
        state = str(c["state"])
        label = _label(graph.nodes[state]) if state in graph.nodes else state
        who = html.escape(c["name"] or "A reviewer")
        verdict = ""
        if c["verdict"]:
            stale = " · out of date: edited since" if c["stale"] else ""
            verdict = (f'<span class="verdict {c["verdict"]}">'
                       f'{html.escape(VERDICTS[c["verdict"]])}{stale}</span>')
        pin = f'<span class="pin-no">pin {numbers[c["id"]]}</span>' if c["id"] in numbers else ""
        cls = "comment here" if state == shown else "comment"
        done = ' <span class="quiet">resolved</span>' if c["resolved"] else ""
        text = html.escape(c["text"]).replace("\n", "<br>")
        items.append(
            f'<li class="{cls}" data-comment="{html.escape(c["id"], quote=True)}">'
            f'<div class="meta"><b>{who}</b> on <a class="plain" href="{base}?state='
            f'{html.escape(state, quote=True)}">{html.escape(label)}</a> {verdict}{pin}'
            f'{done}</div><div class="text">{text}</div></li>')
    return f'<ol class="comments" id="comments">{"".join(items)}</ol>'


def _pin_numbers(comments: list[dict], shown: str) -> dict[str, int]:
    pinned = [c for c in comments if c["state"] == shown and c["pin"]]
    return {c["id"]: i for i, c in enumerate(pinned, 1)}


def _pins_html(comments: list[dict], shown: str, size: tuple[int, int]) -> str:
    """Markers for the pins on the shown state, placed in percent of the photo."""
    width, height = size
    numbers = _pin_numbers(comments, shown)
    marks = []
    for c in comments:
        if c["id"] not in numbers:
            continue
        pin = c["pin"]
        if len(pin) == 2:
            style = f"left:{100 * pin[0] / width:.3f}%;top:{100 * pin[1] / height:.3f}%"
            cls = "pin point"
        else:
            x0, y0, x1, y1 = pin
            style = (f"left:{100 * x0 / width:.3f}%;top:{100 * y0 / height:.3f}%;"
                     f"width:{100 * (x1 - x0) / width:.3f}%;"
                     f"height:{100 * (y1 - y0) / height:.3f}%")
            cls = "pin box"
        marks.append(f'<span class="{cls}" style="{style}" data-pin="{numbers[c["id"]]}">'
                     f'{numbers[c["id"]]}</span>')
    return "".join(marks)


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
.compare .pins{position:absolute;inset:0;pointer-events:none}
.pin{position:absolute;color:#fff;font:bold 11px/18px system-ui,sans-serif;text-align:center}
.pin.point{width:18px;height:18px;margin:-9px 0 0 -9px;border-radius:50%;background:#dc2626;
 box-shadow:0 0 0 2px #fff}
.pin.box{border:2px solid #dc2626;box-shadow:0 0 0 1px #fff;text-indent:2px;text-align:left}
.pin.new{background:#2563eb}.pin.box.new{background:none;border-color:#2563eb}
.compare{cursor:crosshair}
.comments{list-style:none;padding:0;margin:0 0 12px;max-height:420px;overflow:auto}
.comments li{margin:6px 0;padding:6px 10px;border-radius:8px;background:#f3f4f6;
 overflow-wrap:anywhere}
.comments li.here{background:#eef2ff}
.pin-no{font-size:12px;color:#b91c1c;font-weight:bold}
.verdict{font-size:12px;padding:1px 6px;border-radius:6px;background:#e5e7eb}
.verdict.approve{background:#dcfce7}.verdict.changes{background:#fee2e2}
.feedback label{display:block;margin:6px 0 2px;font-size:13px}
.feedback input[type=text],.feedback textarea{width:100%;box-sizing:border-box;font:inherit;
 padding:6px;border:1px solid #d1d5db;border-radius:6px}
.feedback textarea{min-height:80px}
.feedback fieldset{border:0;padding:0;margin:6px 0;display:flex;gap:10px;flex-wrap:wrap}
.feedback button{font:inherit;padding:6px 12px;border-radius:8px;border:1px solid #d1d5db;
 background:#fff}
.feedback button#c-send{background:#4338ca;color:#fff;border-color:#4338ca}
#c-status.error{color:#b91c1c}
figure.reference{margin:10px 0 0;font-size:13px;color:#6b7280}
figure.reference img,.chat figure.reference img{max-width:160px;height:auto;display:block;
 border-radius:6px;margin-bottom:4px}
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Review: {name}</title><style>{css}</style></head>
<body>
<header><h1>Review: {name}</h1>
<p>Review link: look, comment, approve · nothing here edits the photo · {size} pixels ·
showing “{state_label}”</p></header>
<main>
<section class="card">
<div class="compare" id="compare">
<img class="before" src="{base}/preview/{ref}" alt="{compare}">
<img class="after" id="after" src="{base}/preview/{shown}" alt="this state">
<div class="pins" id="pins">{pins}</div>
</div>
<input type="range" id="divider" min="0" max="100" value="50"
 aria-label="Move the divider: left shows {compare}, right this state">
<div class="bar"><span>Left: {compare} · right: this state.</span>
<a class="plain" href="{base}?state={shown}&amp;compare={other}">compare with the {other}</a>
<a class="button" id="download" href="{base}/download/{shown}" download>Download full
resolution</a></div>
{reference}
</section>
<section class="card"><h2>States</h2>{states}<h2>Conversation</h2>{chat}</section>
<section class="card feedback" id="feedback"><h2>Comments</h2>{comments}
<div id="comment-form" data-state="{shown}" data-width="{sw}" data-height="{sh}"
 data-post="{base}/comments">
<h3>Your comment on “{state_label}”</h3>
<label for="c-name">Your name (optional)</label>
<input type="text" id="c-name" maxlength="80" autocomplete="name">
<label for="c-text">Comment</label>
<textarea id="c-text" maxlength="{limit}"
 placeholder="What should change, or what works?"></textarea>
<p class="quiet">Click or tap the photo to pin a point; drag on it to pin a box.
<span id="c-pin">No pin.</span> <button type="button" id="c-unpin">Clear the pin</button></p>
<fieldset><legend class="quiet">Verdict on this state (optional)</legend>
<label><input type="radio" name="verdict" value="" checked> none</label>
<label><input type="radio" name="verdict" value="approve"> approve</label>
<label><input type="radio" name="verdict" value="changes"> request changes</label>
</fieldset>
<button type="button" id="c-send">Send comment</button>
<p id="c-status" role="status"></p>
</div></section>
</main>
<script nonce="{nonce}">
const d = document.getElementById('divider'), a = document.getElementById('after');
d.addEventListener('input', () => {{ a.style.clipPath = `inset(0 0 0 ${{d.value}}%)`; }});
document.getElementById('graph').addEventListener('click', (e) => {{
  const g = e.target.closest('[data-node]');
  if (g) {{ location.href = '{base}?state=' + encodeURIComponent(g.dataset.node); }}
}});
{zoom_js}
const form = document.getElementById('comment-form'), pinText = document.getElementById('c-pin');
const W = +form.dataset.width, H = +form.dataset.height, pins = document.getElementById('pins');
let pin = null, start = null, mark = null;
const cmp = document.getElementById('compare');
const at = (e) => {{
  const r = a.getBoundingClientRect();
  const fx = Math.min(Math.max((e.clientX - r.left) / r.width, 0), 0.9999);
  const fy = Math.min(Math.max((e.clientY - r.top) / r.height, 0), 0.9999);
  return [Math.floor(fx * W), Math.floor(fy * H)];
}};
const draw = () => {{
  if (mark) {{ mark.remove(); mark = null; }}
  if (!pin) {{ pinText.textContent = 'No pin.'; return; }}
  mark = document.createElement('span');
  mark.className = 'pin new ' + (pin.length === 2 ? 'point' : 'box');
  mark.style.left = (100 * pin[0] / W) + '%'; mark.style.top = (100 * pin[1] / H) + '%';
  if (pin.length === 4) {{
    mark.style.width = (100 * (pin[2] - pin[0]) / W) + '%';
    mark.style.height = (100 * (pin[3] - pin[1]) / H) + '%';
  }}
  pins.appendChild(mark);
  pinText.textContent = (pin.length === 2 ? 'Pinned point ' : 'Pinned box ') + pin.join(', ');
}};
cmp.addEventListener('pointerdown', (e) => {{ e.preventDefault(); start = at(e); }});
cmp.addEventListener('pointerup', (e) => {{
  if (!start) {{ return; }}
  const end = at(e);
  const far = Math.abs(end[0] - start[0]) > W / 100 && Math.abs(end[1] - start[1]) > H / 100;
  pin = far ? [Math.min(start[0], end[0]), Math.min(start[1], end[1]),
               Math.max(start[0], end[0]) + 1, Math.max(start[1], end[1]) + 1] : start;
  start = null; draw();
}});
document.getElementById('c-unpin').addEventListener('click', () => {{ pin = null; draw(); }});
document.getElementById('c-send').addEventListener('click', async () => {{
  const status = document.getElementById('c-status');
  const verdict = document.querySelector('input[name=verdict]:checked').value;
  const body = {{state: form.dataset.state, name: document.getElementById('c-name').value,
    text: document.getElementById('c-text').value, pin: pin, verdict: verdict || null}};
  status.className = ''; status.textContent = 'Sending…';
  try {{
    const r = await fetch(form.dataset.post, {{method: 'POST', credentials: 'same-origin',
      referrerPolicy: 'same-origin', headers: {{'Content-Type': 'application/json'}},
      body: JSON.stringify(body)}});
    const answer = await r.json().catch(() => ({{}}));
    if (!r.ok) {{ throw new Error(answer.error || ('The server answered ' + r.status)); }}
    status.textContent = 'Sent. Thank you!';
    location.reload();
  }} catch (err) {{ status.className = 'error'; status.textContent = err.message; }}
}});
</script>
</body></html>
"""
