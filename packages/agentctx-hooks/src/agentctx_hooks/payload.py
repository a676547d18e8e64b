"""The hook's stdin: read it defensively and expose the few fields every handler needs.

The payload comes from Claude Code, but a hook must survive anything on stdin (nothing, a
terminal, 10 MB, binary, the wrong JSON shape). Fields are read by name and type-checked;
unknown fields are ignored because they appear between client versions.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store.jsontext import JsonValue

MAX_STDIN_BYTES = 64 * 1024 * 1024


class PayloadError(ValueError):
    """The payload cannot be used (not JSON, not an object)."""


class HookInput:
    """The parsed payload. `ends_process`: the hook owns its process and ends it with
    `os._exit` (run as `agentctx hook …`), so it may leave the store open (`storage`)."""

    __slots__ = ("cwd", "data", "ends_process", "event", "session_id", "transcript_path")

    def __init__(self, *, event: str, data: dict[str, Any], ends_process: bool = False) -> None:
        self.event = event
        self.data = data
        self.ends_process = ends_process
        # Both name files and go on command lines (`agentctx extract`) and into the session's
        # marker, which every later SessionStart of the project reads: one that no file system
        # call accepts is dropped here, once, and never stored.
        self.session_id = path_text(data, "session_id")
        self.transcript_path = path_text(data, "transcript_path")
        self.cwd = project_dir(data)
        kept = {"session_id": self.session_id, "transcript_path": self.transcript_path}
        unusable = [name for name, value in kept.items() if text(data, name) and not value]
        if unusable:
            from agentctx_hooks import log

            log.write(event, f"payload {' and '.join(unusable)} not usable (a NUL or a lone surrogate); ignored")

    def get_text(self, name: str) -> str:
        return text(self.data, name)

    def get_dict(self, name: str) -> dict[str, Any]:
        value: JsonValue = self.data.get(name)
        return value if isinstance(value, dict) else {}


def text(data: dict[str, Any], name: str) -> str:
    """A string field, or "" when it is missing or not a string."""
    value = data.get(name)
    return value if isinstance(value, str) else ""


def is_usable_path(value: str) -> bool:
    """Whether a string from a payload can name a file: no NUL, and encodable as a file name
    (JSON can carry a lone surrogate such as `"\\ud800"`, which no file system call accepts)."""
    if "\x00" in value:
        return False
    try:
        os.fsencode(value)
    except UnicodeError:
        return False
    return True


def path_text(data: dict[str, Any], name: str) -> str:
    """A path field: `text`, or "" when it is not a usable path (`is_usable_path`)."""
    value = text(data, name)
    return value if is_usable_path(value) else ""


def project_dir(data: dict[str, Any]) -> str:
    """The directory the project is resolved from: the payload's `cwd`, else the
    `CLAUDE_PROJECT_DIR` Claude Code sets for hooks; "" when neither is a usable absolute path."""
    for candidate in (text(data, "cwd"), os.environ.get("CLAUDE_PROJECT_DIR", "")):
        if candidate and is_usable_path(candidate) and os.path.isabs(candidate):
            return candidate
    return ""


def read_stdin() -> bytes:
    """All of stdin (capped), or b"" when there is none or it is a terminal."""
    stream = sys.stdin
    if stream is None:
        return b""
    try:
        if stream.isatty():
            return b""
        data = stream.buffer.read(MAX_STDIN_BYTES + 1)
    except (OSError, ValueError, AttributeError):
        return b""
    if len(data) > MAX_STDIN_BYTES:
        raise PayloadError(f"payload over {MAX_STDIN_BYTES} bytes")
    return data


def parse(event: str, raw: bytes, *, ends_process: bool = False) -> HookInput:
    """Raises:
    PayloadError: empty, not UTF-8 JSON, or not a JSON object."""
    if not raw.strip():
        raise PayloadError("empty payload")
    from agentctx_store.jsontext import loads

    try:
        data: JsonValue = loads(raw)
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"payload is not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise PayloadError(f"payload is a JSON {type(data).__name__}, not an object")
    return HookInput(event=event, data=data, ends_process=ends_process)
