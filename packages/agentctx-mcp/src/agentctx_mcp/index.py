"""The compact index: one short line per record, the first step of progressive disclosure.

`ctx_search` and `ctx_related` answer with this index and never with bodies
(docs/contracts.md#mcp-tools): the model reads the titles, then fetches only the records it needs
with `ctx_get`. A line is

    01K2Y5Q8ZB3W7RJ4M6T9XA0CDE | decision | Use SQLite in WAL mode | 3d | explicit | 1.00

and is held to `SEARCH_RESULT_TOKENS` (50) by shortening the title, never by dropping the id.
Lines rather than JSON objects: the same six fields cost fewer tokens per result without the
quotes, colons and key names (docs/mcp.md, "What Claude receives, and why").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from agentctx_store.budget import SEARCH_RESULT_TOKENS, estimate_tokens
from agentctx_store.fence import DATA_NOTE, unfence
from agentctx_store.records import Record, parse_time

COLUMNS = ("id", "type", "title", "age", "confidence", "score")
HEADER = " | ".join(COLUMNS) + f"  (titles are {DATA_NOTE})"
SEPARATOR = " | "
ELLIPSIS = "…"


@dataclass(frozen=True, kw_only=True)
class IndexEntry:
    record: Record
    score: float


def age_of(moment: str, now: datetime) -> str:
    """How long ago `moment` was, in the coarsest unit that still says something: 5m, 3h, 12d, 4mo, 2y."""
    try:
        seconds = max(0.0, (now - parse_time(moment)).total_seconds())
    except Exception:  # a hand-edited timestamp must not break a listing
        return "?"
    minutes = seconds / 60
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{int(minutes)}m"
    hours = minutes / 60
    if hours < 24:
        return f"{int(hours)}h"
    days = hours / 24
    if days < 60:
        return f"{int(days)}d"
    if days < 730:
        return f"{int(days / 30.44)}mo"
    return f"{int(days / 365.25)}y"


def index_line(entry: IndexEntry, now: datetime, *, max_tokens: int = SEARCH_RESULT_TOKENS) -> str:
    """One record as an index line of at most `max_tokens` estimated tokens (the title gives way)."""
    record = entry.record
    head = f"{record.record_id}{SEPARATOR}{record.type}{SEPARATOR}"
    tail = f"{SEPARATOR}{age_of(record.valid_from, now)}{SEPARATOR}{record.confidence}{SEPARATOR}{entry.score:.2f}"
    title = " ".join(unfence(record.title).split())
    line = head + title + tail
    if estimate_tokens(line) <= max_tokens:
        return line
    words = title.split(" ")
    while words:  # drop whole words from the end until it fits
        words.pop()
        line = head + " ".join(words).rstrip(",;:.-") + ELLIPSIS + tail
        if estimate_tokens(line) <= max_tokens:
            return line
    cut = title
    while cut:  # a single very long word: cut characters
        cut = cut[:-1]
        line = head + cut + ELLIPSIS + tail
        if estimate_tokens(line) <= max_tokens:
            return line
    return head + ELLIPSIS + tail


def render_index(
    entries: Sequence[IndexEntry], *, now: datetime | None = None, degraded: str | None = None, mode: str | None = None
) -> str:
    """The whole index: `mode: hybrid` when the warm search service ranked it (no line: the
    keyword search, the format before the service existed), an optional `degraded:` line, the
    column header, one line per record."""
    moment = now or datetime.now(UTC)
    lines: list[str] = []
    if mode and mode != "keyword":
        lines.append(f"mode: {mode}")
    if degraded:
        lines.append(f"degraded: {degraded}")
    if not entries:
        lines.append("No current records match.")
        return "\n".join(lines)
    lines.append(HEADER)
    lines.extend(index_line(entry, moment) for entry in entries)
    return "\n".join(lines)


def parse_index(text: str) -> tuple[list[dict[str, str]], str | None]:
    """Read an index back into dicts (for tests and scripts); returns (rows, degraded)."""
    rows: list[dict[str, str]] = []
    degraded: str | None = None
    for line in text.splitlines():
        if line.startswith("mode: "):
            continue
        if line.startswith("degraded: "):
            degraded = line.removeprefix("degraded: ").strip()
            continue
        parts = line.split(SEPARATOR)
        if line == HEADER or len(parts) < len(COLUMNS):
            continue
        rows.append(
            {
                "id": parts[0],
                "type": parts[1],
                "title": SEPARATOR.join(parts[2:-3]),
                "age": parts[-3],
                "confidence": parts[-2],
                "score": parts[-1],
            }
        )
    return rows, degraded
