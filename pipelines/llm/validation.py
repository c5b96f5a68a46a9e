"""The model-answer protocol shared by every backend: ask for JSON, parse it, check it
against the JSON schema (and an optional extra check), re-ask with the problem spelled
out, and fail with a clear ``LLMError``. Nothing a model writes is ever executed."""

from __future__ import annotations

import base64
import io
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pipelines.arrays import rgb_array
from pipelines.images import downscale

log = logging.getLogger(__name__)

#: An extra check run on a schema-valid answer; raise ``ValueError`` to have it re-asked.
Check = Callable[[dict[str, Any]], Any]


class LLMError(RuntimeError):
    """A backend gave no usable answer (unreachable, or invalid after every retry).

    ``quiet`` is True when the failure was already reported (an open circuit): callers
    fall back without warning again.
    """

    quiet = False


class AnswerError(ValueError):
    """One answer that is not the JSON asked for; the message is fed back to the model."""


@runtime_checkable
class LLM(Protocol):
    """What planners and critics call; see the module doc."""

    name: str

    def complete_json(self, system: str, messages: list[dict[str, Any]],
                      images: list[np.ndarray] | None, schema: dict[str, Any], *,
                      check: Check | None = None) -> dict[str, Any]:
        ...


# --- parsing and validation (shared by every backend) ---------------------------------

def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer (code fences and chatter around it allowed).

    Raises:
        AnswerError: when there is no JSON object in ``text``.
    """
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("the answer was empty; reply with one JSON object")
    text = text.strip()
    if len(text) > 200_000:
        raise AnswerError(f"the answer is too long ({len(text)} characters)")
    decoder = json.JSONDecoder()
    start = text.find("{")
    last_err = "no '{' found"
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as err:
            last_err = f"{err.msg} at character {err.pos}"
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise AnswerError(f"the answer is not a JSON object ({last_err})")


def normalise_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with nested ``$defs`` moved to the root, so ``#/$defs/…`` refs resolve.

    (Pydantic puts a model's ``$defs`` inside the model's own schema; embedding that under
    ``items`` leaves its ``#/$defs/X`` references pointing at nothing.)
    """
    defs: dict[str, Any] = {}

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("$defs"), dict):
                for name, sub in node["$defs"].items():
                    defs.setdefault(name, strip(sub))
            return {k: strip(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    out = strip(schema)
    if defs:
        out["$defs"] = defs
    return out


def validate_answer(data: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
    """Check ``data`` against ``schema``; the error lists up to five problems with paths.

    Raises:
        AnswerError: with every problem found, readable by a person and by the model.
    """
    if not isinstance(data, dict):
        raise AnswerError(f"expected a JSON object, got {type(data).__name__}")
    if not schema:
        return data
    # imported here: ~0.2 s of CPU that every ``python -m agent`` process paid at start-up,
    # where only an endpoint's answer is ever checked against a schema
    from jsonschema import Draft202012Validator  # noqa: PLC0415

    errors = sorted(Draft202012Validator(normalise_schema(schema)).iter_errors(data),
                    key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        shown = []
        for err in errors[:5]:
            where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
            shown.append(f"at {where}: {err.message[:200]}")
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise AnswerError("the JSON does not follow the schema: " + "; ".join(shown) + more)
    return data


def schema_instruction(schema: dict[str, Any] | None) -> str:
    """The sentence appended to every system prompt: answer JSON following ``schema``."""
    if not schema:
        return "Answer with one JSON object and nothing else."
    compact = json.dumps(normalise_schema(schema), separators=(",", ":"))
    return ("Answer with one JSON object and nothing else (no prose, no code fences). "
            f"It must follow this JSON schema: {compact}")


def retry_message(error: str) -> dict[str, Any]:
    """The user turn that feeds a validation error back to the model."""
    return {"role": "user", "content": (
        f"Your previous answer was rejected: {error}. Reply again with one corrected JSON "
        "object only.")}


class RetryingLLM:
    """Base for model backends: ``_generate`` one raw answer; this class validates and
    re-asks. Subclasses set ``name`` and implement ``_generate``."""

    name = "base"

    def __init__(self, attempts: int = 3) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.attempts = attempts

    def _generate(self, system: str, messages: list[dict[str, Any]],
                  images: list[np.ndarray] | None) -> str:
        raise NotImplementedError

    def complete_json(self, system: str, messages: list[dict[str, Any]],
                      images: list[np.ndarray] | None, schema: dict[str, Any], *,
                      check: Check | None = None) -> dict[str, Any]:
        """Ask until the answer is valid JSON that follows ``schema`` and passes ``check``.

        Args:
            system: the system prompt (the schema sentence is appended here).
            messages: chat turns ``{"role": "user"|"assistant", "content": str}``.
            images: RGB/RGBA uint8 images the model sees with the last user turn.
            schema: the JSON schema of the answer.
            check: optional extra validation; a ``ValueError`` from it is re-asked too.

        Returns:
            The validated JSON object.

        Raises:
            LLMError: unreachable backend, or no valid answer after ``attempts`` tries.
        """
        full_system = f"{system.rstrip()}\n\n{schema_instruction(schema)}"
        convo = [dict(m) for m in messages]
        problem = ""
        for attempt in range(1, self.attempts + 1):
            raw = self._generate(full_system, convo, images)
            try:
                data = validate_answer(extract_json(raw), schema)
                if check is not None:
                    check(data)
                return data
            except ValueError as err:  # AnswerError, ActionValidationError, OperationError…
                problem = str(err)[:1500]
                log.info("%s answer %d/%d rejected: %s", self.name, attempt, self.attempts,
                         problem)
                convo += [{"role": "assistant", "content": (raw or "")[:4000]},
                          retry_message(problem)]
        raise LLMError(f"{self.name} gave no valid answer after {self.attempts} attempts; "
                       f"last problem: {problem}")


# --- images -----------------------------------------------------------------------------

def as_rgb(image: np.ndarray, max_side: int) -> np.ndarray:

    return np.ascontiguousarray(downscale(rgb_array(image, "image", grey=True), max_side))


def image_data_url(image: np.ndarray, max_side: int = 1024) -> str:
    """A PNG ``data:`` URL of ``image`` (downscaled so its long side is ≤ ``max_side``)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(as_rgb(image, max_side)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content)


