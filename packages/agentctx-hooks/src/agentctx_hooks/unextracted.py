"""What a session's transcript gained since the last extraction, as the extraction would render
it: the count a `Stop` compares with `extraction.CHECKPOINT_TOKENS`.

Only `Stop` and `PreCompact` need it; `SessionStart` (which sweeps through `extraction`) does
not load it.
"""

from __future__ import annotations

import os

from agentctx_store.bounded import read_regular
from agentctx_store.jsontext import is_array, is_object, loads
from agentctx_store.tokens import estimate_tokens
from agentctx_store.transcripts import LIMITS, TOOL_ERROR_CHARS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_SCAN_BYTES = 64 << 20  # a Stop never reads more than this of a transcript at once


def scan(transcript_path: str, data: dict[str, Any]) -> int:
    """Add the developer's and Claude's words written since the last scan to `data["scan"]`
    and return the estimated tokens not yet extracted. Reads only the transcript's new bytes
    (up to the last complete line); a transcript that shrank is read again from the start."""
    progress = data.get("scan")
    progress = progress if is_object(progress) else {}
    offset = progress.get("offset")
    offset = offset if isinstance(offset, int) else 0
    tokens = progress.get("tokens")
    tokens = tokens if isinstance(tokens, int) else 0
    try:
        size = os.path.getsize(transcript_path)  # a stat: never blocks, whatever the path names
    except (OSError, ValueError):
        size = 0
    if size < offset:
        offset, tokens = 0, 0
    # A regular file only (a FIFO would block the open, a device never end the read), bounded.
    chunk = read_regular(transcript_path, limit=min(size - offset, MAX_SCAN_BYTES), offset=offset) or b""
    end = chunk.rfind(b"\n") + 1
    for line in chunk[:end].splitlines():
        tokens += rendered_tokens(line)
    data["scan"] = {"offset": offset + end, "tokens": tokens}
    return tokens


def rendered_tokens(line: bytes) -> int:
    """Estimated tokens one transcript line adds to the extraction's input: the developer's and
    Claude's words and tool output, each cut to the rendering's cap (0 for meta entries, command
    echoes, sidechains and bookkeeping; tool calls are short and not counted)."""
    if b'"user"' not in line and b'"assistant"' not in line:
        return 0
    try:
        entry = loads(line)
    except (ValueError, RecursionError):
        return 0
    if not is_object(entry) or entry.get("isSidechain") or entry.get("isMeta"):
        return 0
    kind = entry.get("type")
    message = entry.get("message")
    content = message.get("content") if is_object(message) else None
    if kind == "user":
        if isinstance(content, str):
            return 0 if content.lstrip().startswith("<") else estimate_tokens(content[: LIMITS["developer"]])
        texts = _texts(content)
        words = estimate_tokens(texts[: LIMITS["developer"]]) if texts else 0
        return words + sum(
            estimate_tokens(output[: TOOL_ERROR_CHARS if failed else LIMITS["tool_output"]])
            for output, failed in _tool_outputs(content)
        )
    if kind == "assistant":
        texts = _texts(content)
        return estimate_tokens(texts[: LIMITS["assistant"]]) if texts else 0
    return 0


def _tool_outputs(content: object) -> list[tuple[str, bool]]:
    """The text of each `tool_result` block (a string, or text blocks), and whether it failed."""
    if not is_array(content):
        return []
    found: list[tuple[str, bool]] = []
    for block in content:
        if is_object(block) and block.get("type") == "tool_result":
            inner = block.get("content")
            found.append((inner if isinstance(inner, str) else _texts(inner), block.get("is_error") is True))
    return [(text, failed) for text, failed in found if text]


def _texts(content: object) -> str:
    if not is_array(content):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if is_object(block) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )
