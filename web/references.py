"""Reference photos in a web session (issue 35): add one, list them, say so in the chat.

A reference is checked like any upload (``agent.session.references``: size, pixels,
format) and counted against the session's disk quota before it is kept; a refusal names
the user's file and changes nothing. The same bytes added twice are one reference.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from agent.session import SessionError
from agent.session.inputs import source_bytes
from web.sessions import WebSession, get_manager, with_session
from web.views import SessionView, reference_preview_file, session_view


def attach(session: WebSession, src: Any, filename: str | None = None) -> dict[str, Any]:
    """Keep ``src`` as a reference of the session's photo (the caller holds the session);
    an identical file already kept is reused. Says so in the chat.

    Raises:
        SessionError: no photo open, the file refused, or the quota reached.
    """
    raw, found = source_bytes(src)
    name = Path(filename or found or "reference").name[:120] or "reference"
    if raw is None:
        raise SessionError(f"the reference {name} could not be read; nothing was changed")
    edit = session.edit
    digest = hashlib.sha256(raw).hexdigest()
    for entry in edit.references.items:
        if entry["sha256"] == digest:
            return dict(entry)
    get_manager().check_room(session, len(raw), what="Adding that reference")
    entry = edit.add_reference(raw, name)
    reference_preview_file(session, entry["id"])
    session.chat.append({"role": "assistant", "reference": entry["id"], "content": (
        f"Added {entry['name']}: {entry['filename']} ({entry['width']}×{entry['height']}). "
        "Ask “make it look like the reference” (or name it: “like "
        f"{entry['name']}”).")})
    session.save_ui()
    return dict(entry)


def add_reference(session_id: str | None, src: Any, filename: str | None = None
                  ) -> tuple[SessionView, dict[str, Any]]:
    """Add a reference photo to the session's current photo.

    Args:
        session_id: the web session (must hold a photo).
        src: the reference's path or bytes.
        filename: its name as the user gave it (for messages).

    Returns:
        ``(page state, entry)``: the entry's ``id`` ("ref1"), ``name`` ("reference 1"),
        ``filename``, ``width``, ``height`` and ``sha256``.
    """
    def run(session: WebSession) -> tuple[SessionView, dict[str, Any]]:
        entry = attach(session, src, filename)
        return session_view(session, message=f"{entry['name']}: {entry['filename']}"), entry

    return with_session(session_id, run, create=False)


def list_references(session_id: str | None) -> list[dict[str, Any]]:
    """The session's references (id, name, filename, size, checksum), oldest first."""
    return with_session(session_id, lambda s: [dict(e) for e in s.edit.references.items],
                        create=False)
