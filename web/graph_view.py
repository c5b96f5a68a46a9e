"""Draw a state graph (or any search tree) as a small SVG tree.

The Edit tab shows the session's :class:`~agent.session.state.StateGraph` with the head marked and
every node clickable (each node's ``<g>`` carries ``data-node="<id>"``; the page's script
turns a click into a checkout). The Autopilot tab draws the MCTS tree and the
multi-instruction mode its topology with the same code.

Input is normalised first (:func:`tree_nodes`), so the drawing accepts a ``StateGraph``, its
``to_json()`` dict, a ``{"nodes": [...]}`` dict, a nested ``{"id", "children": [...]}`` tree
or a plain list of node dicts. Nothing here knows about Gradio.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from web.wording import describe_action, scrub

X_STEP = 132
Y_STEP = 64
NODE_R = 13
LABEL_CHARS = 18
MAX_NODES = 400


@dataclass
class TreeNode:
    """One node as drawn: id, parent id, a short label and optional extra text."""

    id: str
    parent: str | None
    label: str
    detail: str = ""
    children: list[str] = field(default_factory=list)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def node_label(node: Any) -> str:
    """A node's label in plain words: its own label, else its action, else its description."""
    for key in ("label", "name", "instruction", "text"):
        value = _get(node, key)
        if value:
            return str(value)
    action = _get(node, "action")
    if isinstance(action, Mapping) and (action.get("operation") or action.get("kind")):
        return describe_action(action)
    value = _get(node, "description")
    if value:
        return scrub(str(value))
    return str(action) if action else ""


def _detail_of(node: Any) -> str:
    parts = []
    for key in ("score", "value", "mean_reward", "visits", "evaluations", "share",
                "preservation"):
        value = _get(node, key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(f"{key} {value:.3g}" if isinstance(value, float) else f"{key} {value}")
    return " · ".join(parts)


def _flatten_nested(node: Any, parent: str | None, out: list[dict], counter: list[int],
                    prefix: str = "") -> None:
    node_id = _get(node, "id")
    node_id = f"{prefix}{node_id if node_id is not None else 'n' + str(counter[0])}"
    counter[0] += 1
    if len(out) >= MAX_NODES:
        return
    out.append({"id": node_id, "parent": parent, "label": node_label(node),
                "detail": _detail_of(node)})
    for child in _get(node, "children", None) or []:
        if not isinstance(child, (str, int, float)):
            _flatten_nested(child, node_id, out, counter, prefix)


def _search_records(data: Mapping) -> list[dict]:
    """An MCTS run: ``{"iterations": [{"iteration", "root": nested tree}, ...]}``."""
    out: list[dict] = [{"id": "search", "parent": None, "label": "start", "detail": ""}]
    for k, it in enumerate(data.get("iterations") or [], 1):
        it_id = f"it{k}"
        out.append({"id": it_id, "parent": "search", "label": f"iteration {k}",
                    "detail": _detail_of(it)})
        if it.get("root") is not None:
            _flatten_nested(it["root"], it_id, out, [0], prefix=f"{k}:")
    return out


def _node_records(data: Any) -> list[dict]:
    if isinstance(data, str):
        data = json.loads(data) if data.strip() else {}
    if data is None:
        return []
    if isinstance(data, Mapping) and isinstance(data.get("iterations"), list):
        return _search_records(data)
    nodes = _get(data, "nodes", None)
    if nodes is None and isinstance(data, Iterable) and not isinstance(data, Mapping):
        nodes = list(data)
    if nodes is None:
        if _get(data, "children", None) is not None or _get(data, "id", None) is not None:
            out: list[dict] = []
            _flatten_nested(data, None, out, [0])
            return out
        return []
    if isinstance(nodes, Mapping):
        items = [(str(k), v) for k, v in nodes.items()]
    else:
        items = [(str(_get(v, "id")), v) for v in nodes]
    records = []
    for node_id, node in items:
        parent = _get(node, "parent")
        records.append({"id": node_id, "parent": None if parent is None else str(parent),
                        "label": node_label(node), "detail": _detail_of(node)})
    return records


def tree_nodes(data: Any) -> tuple[dict[str, TreeNode], list[str]]:
    """Normalise a graph or tree into drawable nodes.

    Args:
        data: a ``StateGraph``, its ``to_json()`` dict (or JSON text), ``{"nodes": [...]}``,
            a nested ``{"id", "children"}`` tree, or a list of node dicts/objects with
            ``id`` and ``parent``.

    Returns:
        ``(nodes by id, root ids)``; a node whose parent is unknown becomes a root.
    """
    records = _node_records(data)[:MAX_NODES]
    nodes = {r["id"]: TreeNode(r["id"], r["parent"], r["label"], r["detail"]) for r in records}
    roots = []
    for node in nodes.values():
        if node.parent is not None and node.parent in nodes:
            nodes[node.parent].children.append(node.id)
        else:
            node.parent = None
            roots.append(node.id)
    return nodes, roots


def _layout(nodes: dict[str, TreeNode], roots: list[str]) -> dict[str, tuple[float, int]]:
    """Tidy-ish layout: leaves get consecutive columns, parents sit over their children."""
    pos: dict[str, tuple[float, int]] = {}
    next_col = [0]

    def place(node_id: str, depth: int) -> float:
        stack_guard = len(pos)
        if node_id in pos or stack_guard > MAX_NODES:
            return pos.get(node_id, (0.0, depth))[0]
        kids = nodes[node_id].children
        if not kids:
            col = float(next_col[0])
            next_col[0] += 1
        else:
            pos[node_id] = (0.0, depth)  # guard against cycles
            cols = [place(k, depth + 1) for k in kids]
            col = (min(cols) + max(cols)) / 2
        pos[node_id] = (col, depth)
        return col

    for root in roots:
        place(root, 0)
    return pos


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_svg(data: Any, head: str | None = None, *, title: str = "State graph",
               zoom: bool = False, marker: str = "current",
               notes: Mapping[str, int] | None = None) -> str:
    """Draw a graph/tree as an SVG string, head marked, nodes carrying ``data-node`` ids.

    Args:
        data: anything :func:`tree_nodes` accepts; a ``StateGraph``'s own ``head`` is used
            when ``head`` is not given.
        head: id of the node to mark as the current state.
        title: accessible title of the drawing.
        zoom: wrap it with zoom buttons (:func:`zoomable`); it always scales to fit its box.
        marker: the word written beside the marked node.
        notes: open reviewer comments per node id: a numbered speech mark beside each
            node that has some (``class="loupe-note"``, ``data-notes``).

    Returns:
        An ``<svg>`` element as text (empty-state text when there are no nodes).
    """
    if head is None:
        head_attr = _get(data, "head", None)
        head = None if head_attr is None else str(_get(head_attr, "id", head_attr))
    nodes, roots = tree_nodes(data)
    if not nodes:
        return '<div class="loupe-graph-empty">No states yet: open a photo to start.</div>'
    pos = _layout(nodes, roots)
    on_path = _path_to(nodes, head)
    cols = max(c for c, _ in pos.values()) + 1
    depth = max(d for _, d in pos.values()) + 1
    x_step = X_STEP if cols <= 10 else max(36, X_STEP * 10 // int(cols))
    width, height = int(cols * x_step + 20), int(depth * Y_STEP + 40)

    def xy(node_id: str) -> tuple[float, float]:
        col, d = pos[node_id]
        return 10 + x_step / 2 + col * x_step, 24 + d * Y_STEP

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="loupe-graph" width="100%" '
             f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMidYMin meet" '
             f'style="max-width:{width}px" data-width="{width}" role="img">'
             f"<title>{html.escape(title)}</title>"]
    for node in nodes.values():
        if node.parent is not None and node.id in pos and node.parent in pos:
            (x0, y0), (x1, y1) = xy(node.parent), xy(node.id)
            cls = "edge on-path" if node.id in on_path else "edge"
            parts.append(f'<path class="{cls}" d="M{x0:.0f},{y0 + NODE_R:.0f} '
                         f'C{x0:.0f},{(y0 + y1) / 2:.0f} {x1:.0f},{(y0 + y1) / 2:.0f} '
                         f'{x1:.0f},{y1 - NODE_R:.0f}" fill="none" '
                         f'stroke="{"#4f46e5" if node.id in on_path else "#9ca3af"}" '
                         f'stroke-width="{2.5 if node.id in on_path else 1.5}"/>')
    for node in nodes.values():
        if node.id not in pos:
            continue
        parts.append(_node_svg(node, xy(node.id), node.id == head, node.id in on_path,
                               max(6, int(LABEL_CHARS * x_step / X_STEP)), marker,
                               int((notes or {}).get(node.id) or 0)))
    parts.append("</svg>")
    svg = "".join(parts)
    return zoomable(svg) if zoom else svg


ZOOM_BAR = ('<div class="loupe-zoombar" aria-label="Zoom">'
            '<button type="button" data-zoom="out" title="Zoom out">−</button>'
            '<button type="button" data-zoom="fit" title="Fit to the box">fit</button>'
            '<button type="button" data-zoom="in" title="Zoom in">+</button></div>')

#: Script for a page or component holding zoomable drawings (``element``: their container).
ZOOM_JS = """
element.addEventListener('click', (e) => {
  const b = e.target.closest('[data-zoom]');
  if (!b) { return; }
  const box = b.closest('.loupe-zoom');
  const svg = box && box.querySelector('svg');
  if (!svg) { return; }
  if (b.dataset.zoom === 'fit') { svg.style.width = ''; svg.style.maxWidth =
    svg.dataset.width + 'px'; return; }
  const w = svg.getBoundingClientRect().width * (b.dataset.zoom === 'in' ? 1.25 : 0.8);
  svg.style.maxWidth = 'none'; svg.style.width = Math.max(120, w) + 'px';
});
"""


def zoomable(svg: str) -> str:
    """Wrap a drawing so it fits its box, with zoom buttons (see ``ZOOM_JS``)."""
    return f'<div class="loupe-zoom">{ZOOM_BAR}<div class="loupe-zoom-area">{svg}</div></div>'


def _node_svg(node: TreeNode, at: tuple[float, float], is_head: bool, on_path: bool,
              chars: int = LABEL_CHARS, marker: str = "current", notes: int = 0) -> str:
    x, y = at
    nid = html.escape(node.id, quote=True)
    full = node.label or node.id
    tip = html.escape(f"{full} ({node.id})" + (f" — {node.detail}" if node.detail else ""))
    cls = "node head" if is_head else ("node on-path" if on_path else "node")
    fill = "#f59e0b" if is_head else ("#6366f1" if on_path else "#e5e7eb")
    ring = (f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{NODE_R + 5}" fill="none" '
            f'stroke="#f59e0b" stroke-width="2"/>' if is_head else "")
    label = html.escape(_short(full, chars))
    detail = html.escape(_short(node.detail, chars + 6))
    extra = (f'<text x="{x:.0f}" y="{y + NODE_R + 24:.0f}" text-anchor="middle" font-size="9" '
             f'fill="#6b7280">{detail}</text>' if node.detail and chars >= 12 else "")
    head_tag = (f'<text x="{x + NODE_R + 7:.0f}" y="{y - NODE_R:.0f}" font-size="10" '
                f'font-weight="bold" fill="#b45309">{html.escape(marker)}</text>'
                if is_head else "")
    note = ""
    if notes > 0:
        nx, ny = x - NODE_R - 9, y - NODE_R + 1
        note = (f'<g class="loupe-note" data-notes="{notes}"><title>{notes} open reviewer '
                f'comment(s)</title><rect x="{nx - 8:.0f}" y="{ny - 8:.0f}" width="16" '
                f'height="14" rx="4" fill="#dc2626"/><path d="M{nx - 2:.0f},{ny + 6:.0f} '
                f'l2,4 l2,-4z" fill="#dc2626"/><text x="{nx:.0f}" y="{ny + 3:.0f}" '
                f'text-anchor="middle" font-size="10" font-weight="bold" fill="#fff">'
                f'{min(notes, 99)}</text></g>')
    return (f'<g class="{cls}" data-node="{nid}" style="cursor:pointer">'
            f"<title>{tip}</title>{ring}{note}"
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{NODE_R}" fill="{fill}" stroke="#374151" '
            f'stroke-width="1"/>'
            f'<text x="{x:.0f}" y="{y + NODE_R + 12:.0f}" text-anchor="middle" font-size="11" '
            f'fill="currentColor">{label}</text>{extra}{head_tag}</g>')


def _path_to(nodes: dict[str, TreeNode], head: str | None) -> set[str]:
    path: set[str] = set()
    current = head
    while current is not None and current in nodes and current not in path:
        path.add(current)
        current = nodes[current].parent
    return path
