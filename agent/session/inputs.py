"""What a session takes from outside, checked: the instruction, an image to commit, and
the uploaded file's own bytes (kept as the session's root)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from agent.session.store import SessionError
from pipelines.arrays import rgb_array
from pipelines.images import save_image

MAX_INSTRUCTION_CHARS = 2000
#: control characters (other than tab and newline) and bidirectional overrides
_CONTROL_CHARS = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def check_instruction(instruction: Any) -> str:
    """The instruction, cleaned (control characters dropped), or a ``SessionError``: not
    text, not valid UTF-8, empty, or longer than ``MAX_INSTRUCTION_CHARS``."""
    if not isinstance(instruction, str):
        raise SessionError("the instruction must be text")
    try:
        instruction.encode("utf-8")
    except UnicodeEncodeError:
        raise SessionError("the instruction is not valid text: it holds bytes that are not "
                           "UTF-8") from None
    text = _CONTROL_CHARS.sub(" ", instruction.replace("\x00", "")).strip()
    if not text:
        raise SessionError("the instruction is empty: say what to change")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise SessionError(f"the instruction is too long ({len(text)} characters, "
                           f"max {MAX_INSTRUCTION_CHARS})")
    return text


def check_image_like(image: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``image`` checked against the session's ``base``: same size; alpha added or dropped
    to match its channels."""
    image = rgb_array(np.asarray(image), "the image", error=SessionError, alpha=True)
    if image.shape[:2] != base.shape[:2]:
        raise SessionError(f"the image is {image.shape[1]}x{image.shape[0]} but the session "
                           f"is {base.shape[1]}x{base.shape[0]}")
    if image.shape[2] != base.shape[2]:
        if base.shape[2] == 4 and image.shape[2] == 3:
            image = np.dstack([image, base[..., 3]])
        elif base.shape[2] == 3 and image.shape[2] == 4:
            image = image[..., :3]
        else:
            raise SessionError(f"the image has {image.shape[2]} channels, the session "
                               f"{base.shape[2]}")
    return image


def source_bytes(src: Any) -> tuple[bytes | None, str | None]:
    """The uploaded file's own bytes (kept as the root) and its name, when there are any."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src), None
    if isinstance(src, (str, os.PathLike)):
        path = Path(src)
        if path.is_file():
            return path.read_bytes(), path.name
        return None, None
    if hasattr(src, "read") and not hasattr(src, "shape"):
        name = getattr(src, "name", None)
        data = src.read()
        return (bytes(data) if isinstance(data, (bytes, bytearray)) else None,
                Path(name).name if isinstance(name, str) else None)
    return None, None


def named_file(raw: bytes, name: str | None) -> Any:
    """The bytes as a file object carrying the user's file name (for messages)."""
    buffer = io.BytesIO(raw)
    if name:
        buffer.name = name
    return buffer


def encode_original(loaded: Any) -> bytes:
    """A PNG of a loaded image that came without file bytes of its own (an array)."""
    return save_image(loaded.pixels, None, like=loaded, format="PNG")
