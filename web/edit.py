"""The Edit tab's calls: open a photo, run a turn, move in the graph, download, archives."""

from __future__ import annotations

import json
import logging
import secrets
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from agent.session import EditSession, SessionError
from agent.session.archive import archive_limit
from pipelines.archives import ArchiveError, open_zip, read_capped
from pipelines.editors.frame import clamp_box, crop_box, crop_overlay
from pipelines.files import atomic_write, check_id, slug, tree_size
from pipelines.progress import ProgressFn
from pipelines.redact import redact
from web import feedback, references
from web.errors import user_message
from web.graph_view import render_svg
from web.sessions import WebSession, get_manager, with_session
from web.views import (
    REFERENCE_ID,
    SessionView,
    encode_preview,
    get_view,
    move_note,
    preview_file,
    session_view,
    state_words,
    turn_messages,
)

log = logging.getLogger(__name__)

#: where a download goes: a folder, a function that makes one, or None (the session's)
Folder = str | Path | Callable[[], Path] | None


def open_image(session_id: str | None, src: Any, filename: str | None = None) -> SessionView:
    """Start editing a new photo in this session (replacing the previous one).

    Args:
        session_id: the web session.
        src: path, bytes or array of the photo (any size up to the pixel limit).
        filename: the original file name, used to name downloads.

    Returns:
        The new page state. Raises ``SessionError`` for unreadable files, or when the
        photo would take the session past its disk quota.
    """
    def run(session: WebSession) -> SessionView:
        name = Path(filename or (str(src) if isinstance(src, (str, Path)) else "photo")).name
        name = name[:120] or "photo"
        incoming = _size_of(src)
        old = session.edit_folder if session.ui.get("edit_dir") else None
        get_manager().check_room(session, incoming, tree_size(old) if old else 0,
                                 "Opening that photo")
        edit = _new_edit(session, lambda folder: EditSession.create(src, folder))
        session.ui = {"chat": [], "filename": name, "edit_dir": edit.folder.name}
        session.save_ui()
        feedback.restore(session, [])  # comments were about the photo this one replaces
        h, w = edit.current_image().shape[:2]
        return session_view(session, message=f"Opened {name} ({w}×{h}).")

    return with_session(session_id, run)


def _size_of(src: Any) -> int:
    """Bytes a source will take on disk, as far as can be told before reading it."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return len(src)
    if isinstance(src, np.ndarray):
        return int(src.nbytes)
    try:
        return Path(src).stat().st_size if isinstance(src, (str, Path)) else 0
    except OSError:
        return 0


def _new_edit(session: WebSession, make: Callable[[Path], Any]) -> Any:
    """Create an EditSession in a fresh sub-folder, then drop the previous one."""
    old = session.edit_folder if session.ui.get("edit_dir") else None
    folder = session.folder / f"edit-{secrets.token_hex(4)}"
    try:
        edit = make(folder)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    session._edit = edit
    session.autopilot = None
    if old is not None and old != folder:
        shutil.rmtree(old, ignore_errors=True)
    return edit


def edit_turn(session_id: str | None, instruction: str, mask: np.ndarray | None = None, *,
              search: str = "none", progress: ProgressFn | None = None,
              reference: Any = None) -> tuple[SessionView, dict]:
    """Run one instruction turn on the session's current state.

    Args:
        session_id: the web session (must hold a photo).
        instruction: plain-language request (empty text is refused with a message).
        mask: optional native-resolution ``bool`` mask from the brush; without one, the
            area of a reviewer's pin held by ``use_comment`` for this state, if any.
        search: ``"none"`` or ``"tree"`` (multi-instruction tree search).
        progress: called with ``(fraction, text)`` while the turn runs.
        reference: a reference photo (path or bytes) kept before the turn runs (the same
            file again is the same reference); a refused file changes nothing.

    Returns:
        ``(page state, TurnResult.to_dict())``. A failing step never raises: the error is
        reported in the chat and the session stays usable.
    """
    text = (instruction or "").strip()
    if not text:
        raise SessionError("Type an instruction first (e.g. “make it warmer”).")

    def run(session: WebSession) -> tuple[SessionView, dict]:
        edit = session.edit
        width, height = edit.graph.size
        get_manager().check_room(session, width * height, what="This edit")
        if reference is not None:
            references.attach(session, reference)
        held = feedback.take_selection(session)  # a reviewer's pin chosen by the owner
        area = mask if mask is not None else held
        try:
            result = edit.turn(text, mask=area, search=search, progress=progress).to_dict()
        except ValueError as exc:  # the session's own refusals (bad mask, too long…)
            raise SessionError(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - shown in the chat, session stays usable
            log.exception("turn failed")
            result = {"ok": False, "status": "failed", "message": redact(user_message(exc)),
                      "steps": [],
                      "head": edit.graph.head}
        said = turn_messages(text, result)
        session.chat.extend(said)
        session.save_ui()
        view = session_view(session, message=said[-1]["content"])
        topology = (result.get("extra") or {}).get("topology")
        if topology:
            best = topology.get("best") if isinstance(topology, dict) else None
            result["topology_svg"] = (
                "<p><b>Tree-search topology</b> — the chosen (best) state is marked.</p>"
                + render_svg(topology, None if best is None else str(best),
                             title="Tree-search topology"))
        return view, result

    return with_session(session_id, run, create=False)


def crop(session_id: str | None, box: Any, aspect: str = "free") -> tuple[SessionView, dict]:
    """Crop the current photo to an explicit box (the UI's crop handles), one undoable step.

    Args:
        session_id: the web session (must hold a photo).
        box: ``[x0, y0, x1, y1]`` in the current frame's full-resolution pixels (a list, or
            text ``"x0,y0,x1,y1"``); clipped to the frame.
        aspect: ``"free"`` to crop exactly to the box, or a ratio (``"1:1"``, ``"16:9"``…)
            to take the smallest box of that ratio around it.

    Returns:
        ``(page state, TurnResult.to_dict())``; the view's image has the new frame size.
    """
    box = _box_values(box)

    def run(session: WebSession) -> tuple[SessionView, dict]:
        edit = session.edit
        width, height = edit.graph.size
        get_manager().check_room(session, width * height, what="This crop")
        try:
            result = edit.crop(box, aspect).to_dict()
        except ValueError as exc:
            raise SessionError(str(exc)) from exc
        text = f"crop to {list(box)}" + (f" ({aspect})" if aspect != "free" else "")
        session.chat.extend(turn_messages(text, result))
        session.save_ui()
        return session_view(session, message=result.get("message", "")), result

    return with_session(session_id, run, create=False)


def _box_values(box: Any) -> list[Any]:
    """A box given as a list or as text ``"x0,y0,x1,y1"`` (brackets allowed)."""
    if isinstance(box, str):
        return [part for part in box.replace("[", "").replace("]", "").split(",")
                if part.strip()]
    return list(box) if isinstance(box, (list, tuple)) else [box]


def crop_preview(session_id: str | None, box: Any, aspect: str = "free") -> tuple[Path,
                                                                                  list[int]]:
    """What ``crop(session_id, box, aspect)`` would keep, drawn on the current preview:
    the outside dimmed, the kept box framed. Nothing changes in the session.

    Args:
        session_id: the web session (must hold a photo).
        box: as for ``crop`` (clipped to the frame).
        aspect: as for ``crop``: the kept box is the smallest box of that ratio around it.

    Returns:
        ``(preview file, kept box [x0, y0, x1, y1] in full-resolution pixels)``.
    """
    values = _box_values(box)

    def run(session: WebSession) -> tuple[Path, list[int]]:
        edit = session.edit
        width, height = edit.graph.size
        try:
            kept = crop_box(width, height, aspect=aspect,
                            around=clamp_box(values, width, height))
        except ValueError as exc:
            raise SessionError(str(exc)) from exc
        head = edit.graph.head
        source = preview_file(session, head)
        with Image.open(source) as im:
            shown = np.asarray(im.convert("RGB"))
        scale = shown.shape[1] / width
        drawn = crop_overlay(shown, tuple(round(v * scale) for v in kept))
        data, suffix = encode_preview(drawn)
        path = source.parent / f"crop-{head}{suffix}"
        atomic_write(path, data)
        return path, [int(v) for v in kept]

    return with_session(session_id, run, create=False)


def comment_preview(session_id: str | None, comment_id: str) -> tuple[Path, dict]:
    """A reviewer's comment shown on its state: the preview with the pin drawn.

    Nothing changes in the session.

    Returns:
        ``(preview file, web.feedback.comment_instruction's dict)``.
    """
    ask = feedback.comment_instruction(session_id, comment_id)

    def run(session: WebSession) -> tuple[Path, dict]:
        graph = session.edit.graph
        state = ask["state"]
        if state not in graph.nodes:
            raise SessionError("That comment's state is no longer in the history.")
        source = preview_file(session, state)
        if not ask["pin"]:
            return source, ask
        with Image.open(source) as im:
            shown = im.convert("RGB")
        width = graph.size_at(state)[0]
        scale = shown.width / width
        pen = ImageDraw.Draw(shown)
        line = max(2, round(shown.width / 300))
        if len(ask["pin"]) == 2:
            x, y = (v * scale for v in ask["pin"])
            r = max(6, round(shown.width / 80))
            pen.ellipse([x - r - line, y - r - line, x + r + line, y + r + line], fill="white")
            pen.ellipse([x - r, y - r, x + r, y + r], fill="#dc2626")
        else:
            x0, y0, x1, y1 = (v * scale for v in ask["pin"])
            pen.rectangle([x0 - line, y0 - line, x1 + line, y1 + line], outline="white",
                          width=line)
            pen.rectangle([x0, y0, x1, y1], outline="#dc2626", width=line)
        data, suffix = encode_preview(np.asarray(shown))
        path = source.parent / f"pin-{comment_id}{suffix}"
        atomic_write(path, data)
        return path, ask

    return with_session(session_id, run, create=False)


def go_to_comment(session_id: str | None, comment_id: str) -> tuple[SessionView, Path, dict]:
    """Go to a comment's state (a checkout when it is not the current one), pin drawn.

    Returns:
        ``(page state, preview with the pin, the comment as comment_instruction gives it)``.
    """
    ask = feedback.comment_instruction(session_id, comment_id)
    view = get_view(session_id)
    if view.head != ask["state"]:
        view = checkout(session_id, str(ask["state"]))
    path, ask = comment_preview(session_id, comment_id)
    return view, path, ask


def use_comment(session_id: str | None, comment_id: str) -> tuple[SessionView, Path, dict]:
    """Make a reviewer's comment the owner's next instruction, without running it.

    Goes to the comment's state (pin drawn) and holds the pin's area as the area the next
    instruction on that state changes (unless a brushed mask is given); the caller puts
    the text where the owner reads it and sends it.

    Returns:
        As :func:`go_to_comment`.
    """
    view, path, ask = go_to_comment(session_id, comment_id)
    with_session(session_id, lambda s: feedback.hold_selection(s, ask["state"], ask["box"]),
                 create=False)
    return view, path, ask


def suggest_crop(session_id: str | None, aspect: str = "free",
                 margin: float = 0.0) -> list[int]:
    """The box a crop of ``aspect`` (and ``margin`` trimmed per side) would keep in the
    current frame, ``[x0, y0, x1, y1]`` in its full-resolution pixels: the starting crop
    box a UI shows for adjusting before calling ``crop``.

    Raises:
        SessionError: an unknown aspect or a margin that leaves nothing.
    """
    def run(session: WebSession) -> list[int]:
        width, height = session.edit.graph.size
        try:
            return list(crop_box(width, height, aspect=aspect, margin=float(margin)))
        except ValueError as exc:
            raise SessionError(str(exc)) from exc

    return with_session(session_id, run, create=False)


def _graph_move(session_id: str | None, verb: str, node_id: str | None = None) -> SessionView:
    if verb == "checkout":
        try:
            check_id(node_id, "state id")
        except ValueError as exc:
            raise SessionError(f"{exc} (state ids look like n3)") from None

    def run(session: WebSession) -> SessionView:
        edit = session.edit
        before = edit.graph.head
        try:
            if verb == "checkout":
                edit.checkout(str(node_id))
            else:
                getattr(edit, verb)()
        except ValueError as exc:
            raise SessionError(str(exc)) from exc
        after = edit.graph.head
        node = edit.graph.nodes[before if verb == "undo" else after]
        note = move_note(verb, after != before, state_words(node.action, node.description))
        session.chat.append({"role": "assistant", "content": note})
        session.save_ui()
        return session_view(session, message=note)

    return with_session(session_id, run, create=False)


def undo(session_id: str | None) -> SessionView:
    """Move the head to its parent state (nothing is deleted)."""
    return _graph_move(session_id, "undo")


def redo(session_id: str | None) -> SessionView:
    """Move the head forward again along the last undone edit."""
    return _graph_move(session_id, "redo")


def checkout(session_id: str | None, node_id: str) -> SessionView:
    """Make ``node_id`` the head; a later edit from there branches."""
    return _graph_move(session_id, "checkout", node_id)


def graph_json(session_id: str | None) -> dict:
    """The session's graph: nodes (id, parent, description, action) and the head."""
    def run(session: WebSession) -> dict:
        graph = session.edit.graph
        nodes = [{"id": n.id, "parent": n.parent, "description": n.description,
                  "action": n.action} for n in graph.nodes.values()]
        return {"head": graph.head, "nodes": nodes}

    return with_session(session_id, run, create=False)


def download(session_id: str | None, fmt: str | None = None, folder: Folder = None,
             long_side: int | None = None) -> Path:
    """Write the current state at full resolution in the original format (ICC/EXIF kept).

    Args:
        session_id: the web session.
        fmt: override the format (``"PNG"``, ``"JPEG"``…); default: the original's.
        folder: where to write it, or a function making that folder once the session is
            known (the app passes ``web.private_folder``); default the session's
            ``downloads/`` folder, which keeps only the latest file.
        long_side: resize on export to at most this long side (never enlarged).

    Returns:
        Path of the written file, named from the photo's name and the state id only.
    """
    def run(session: WebSession) -> Path:
        edit = session.edit
        out = _out_folder(session, folder, edit.graph.size)
        dest = out / download_name(session, edit.graph.head, fmt, long_side)
        written = edit.save_image(dest, format=fmt, long_side=long_side)
        return Path(written) if isinstance(written, (str, Path)) else dest

    return with_session(session_id, run, create=False)


def _out_folder(session: WebSession, folder: Folder, size: tuple[int, int]) -> Path:
    """The folder a download or export goes to (see ``download``)."""
    if callable(folder):
        return Path(folder())
    if folder is not None:
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        return out
    out = session.folder / "downloads"
    shutil.rmtree(out, ignore_errors=True)
    get_manager().check_room(session, size[0] * size[1] * 3, what="This download")
    out.mkdir()
    return out


def download_name(session: WebSession, node_id: str, fmt: str | None = None,
                  long_side: int | None = None) -> str:
    """File name of a full-resolution download: ``<photo>-loupe-<state>[-<side>px].<ext>``
    (built from a slug of the photo's name and our own state id only)."""
    stem = slug(Path(session.ui.get("filename") or "photo").stem)
    suffix = _suffix(fmt or getattr(session.edit.original, "format", None),
                     session.ui.get("filename"))
    size = f"-{int(long_side)}px" if long_side else ""
    return f"{stem}-loupe-{check_id(node_id or 'n0', 'state id')}{size}{suffix}"


_FORMAT_SUFFIX = {"JPEG": ".jpg", "MPO": ".jpg", "PNG": ".png", "WEBP": ".webp", "TIFF": ".tif",
                  "BMP": ".bmp", "GIF": ".png"}


def _suffix(fmt: str | None, filename: str | None) -> str:
    if fmt and fmt.upper() in _FORMAT_SUFFIX:
        return _FORMAT_SUFFIX[fmt.upper()]
    suffix = Path(filename or "").suffix.lower()
    return suffix if suffix in (".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp") \
        else ".png"


CHAT_MEMBER = "loupe-chat.json"
MAX_CHAT_BYTES = 8 * 1024 ** 2
MAX_CHAT_MESSAGES = 2000
MAX_MESSAGE_CHARS = 20_000


def export_archive(session_id: str | None, folder: Folder = None) -> Path:
    """Export the whole session (graph, layers, original and the chat) as one zip archive.

    Args:
        session_id: the web session.
        folder: where to write it (see ``download``).

    Returns:
        The archive's path.
    """
    def run(session: WebSession) -> Path:
        out = _out_folder(session, folder, (0, 0))
        if folder is None:
            get_manager().check_room(session, tree_size(session.edit_folder),
                                     what="This export")
        stem = slug(Path(session.ui.get("filename") or "photo").stem)
        path = Path(session.edit.export(out / f"{stem}-session.zip"))
        with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(CHAT_MEMBER, json.dumps(
                {"chat": session.chat, "filename": session.ui.get("filename")}))
            notes = feedback.archive_payload(session)
            if notes is not None:
                zf.writestr(feedback.FEEDBACK_MEMBER, notes)
        return path

    return with_session(session_id, run, create=False)


def _clean_message(msg: Any) -> dict | None:
    """One chat message from an archive (role, text, title, the reference it added), or
    None when it is not a plain chat message."""
    if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
        return None
    content = msg.get("content")
    if not isinstance(content, str):
        return None
    out: dict[str, Any] = {"role": msg["role"], "content": content[:MAX_MESSAGE_CHARS]}
    ref = msg.get("reference")
    if isinstance(ref, str) and REFERENCE_ID.fullmatch(ref):  # its picture follows it
        out["reference"] = ref
    meta = msg.get("metadata")
    if isinstance(meta, dict):
        clean = {k: str(meta[k])[:300] for k in ("title", "status") if isinstance(
            meta.get(k), str)}
        if clean.get("status") not in (None, "done", "pending"):
            clean.pop("status")
        if clean:
            out["metadata"] = clean
    return out


def read_chat(archive: str | Path) -> tuple[list[dict], str | None]:
    """The chat and file name stored in an exported archive (checked; none → ``[]``).

    Archives come from outside: the member is size-capped and every message is rebuilt
    from its role, text and title only.
    """
    try:
        with open_zip(archive, "The session archive") as zf:
            info = next((i for i in zf.infolist() if i.filename == CHAT_MEMBER), None)
            if info is None:
                return [], None
            data = json.loads(read_capped(zf, info, MAX_CHAT_BYTES).decode("utf-8"))
    except (ArchiveError, ValueError, UnicodeDecodeError) as exc:
        log.warning("archive chat ignored: %s", exc)
        return [], None
    if not isinstance(data, dict):
        return [], None
    chat = [m for m in map(_clean_message, (data.get("chat") or [])[:MAX_CHAT_MESSAGES]
                           if isinstance(data.get("chat"), list) else []) if m]
    name = data.get("filename")
    return chat, (Path(name).name[:200] if isinstance(name, str) and name.strip() else None)


def read_feedback(archive: str | Path, graph: Any) -> list[dict]:
    """Reviewer comments stored in an exported archive, checked against its graph.

    Only archives of session version 2 on carry them; a version-1 archive has none. The
    member is size-capped and every record rebuilt (``web.feedback.clean_records``).
    """
    try:
        with open_zip(archive, "The session archive") as zf:
            info = next((i for i in zf.infolist()
                         if i.filename == feedback.FEEDBACK_MEMBER), None)
            if info is None:
                return []
            data = json.loads(read_capped(zf, info, feedback.MAX_ARCHIVE_BYTES)
                              .decode("utf-8"))
    except (ArchiveError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        log.warning("archive feedback ignored: %s", exc)
        return []
    return feedback.clean_records(data, graph)


def import_archive(session_id: str | None, archive: str | Path,
                   label: str | None = None) -> SessionView:
    """Replace this session's photo, graph and chat with an exported archive.

    Args:
        session_id: the web session.
        archive: the ``.zip`` on disk.
        label: its name as the user gave it (messages never show a server path).
    """
    label = label or Path(str(archive)).name

    def run(session: WebSession) -> SessionView:
        manager = get_manager()
        old = tree_size(session.edit_folder) if session.ui.get("edit_dir") else 0
        size = Path(archive).stat().st_size if Path(archive).is_file() else 0
        manager.check_room(session, size, old, "Importing that archive")
        room = manager.quota_bytes - tree_size(session.folder) + old
        limit = min(archive_limit(None), max(0, room))
        try:
            edit = _new_edit(session, lambda folder: EditSession.import_archive(
                archive, folder, max_bytes=limit, label=label))
        except ValueError as exc:
            raise SessionError(f"Could not import {label}: {exc}") from exc
        chat, stored_name = read_chat(archive)
        name = stored_name or getattr(edit.original, "filename", None) or "photo.png"
        chat.append({"role": "assistant", "content": f"Imported {label}."})
        session.ui = {"chat": chat, "filename": str(name)[:120], "edit_dir": edit.folder.name}
        session.save_ui()
        feedback.restore(session, read_feedback(archive, edit.graph))
        return session_view(session, message=f"Imported {label}.")

    return with_session(session_id, run)

