"""What extraction cost (issue 14), read back from the sessions table for `agentctx status`, the
dashboard's Sessions view and the monthly cap.

Each extraction run adds its cost to `sessions.extraction_cost_usd` and its tokens to the
session's metadata (`meta.extraction`: sums over runs, and `runs_log`, one line per run).
"""

from __future__ import annotations

from agentctx_store.jsontext import is_object
from agentctx_store.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

USAGE_KEYS = ("runs", "calls", "input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens")


def month_start(now: datetime | None = None) -> str:
    """The first instant of the current calendar month (UTC), as the store writes times."""
    from datetime import UTC, datetime

    return (now or datetime.now(UTC)).strftime("%Y-%m-01T00:00:00.000Z")


def month_spent(store: Store, *, now: datetime | None = None) -> float:
    """Extraction spending of the current calendar month (UTC), over sessions started in it."""
    row = store.conn.execute(
        "SELECT coalesce(sum(extraction_cost_usd), 0) FROM sessions WHERE started_at >= ?", (month_start(now),)
    ).fetchone()
    return float(row[0])


def month_client_tokens(store: Store, *, now: datetime | None = None) -> int:
    """Tokens sent and received this calendar month (UTC) through a coding agent's headless mode
    (no per-call price; `llm_monthly_tokens` caps them), over sessions started in it."""
    row = store.conn.execute(
        "SELECT coalesce(sum(json_extract(meta, '$.extraction.client_tokens')), 0) FROM sessions "
        "WHERE started_at >= ? AND json_valid(meta)",
        (month_start(now),),
    ).fetchone()
    return int(row[0] or 0)


def session_usage(session: dict[str, Any]) -> dict[str, Any]:
    """A session's extraction figures: runs, calls, tokens in / cached (cache reads) / cache
    writes / out, and cost (the column, which also counts runs from before per-run figures)."""
    meta = session.get("meta")
    meta = meta if is_object(meta) else {}
    extraction = meta.get("extraction")
    extraction = extraction if is_object(extraction) else {}
    runs = [entry for entry in extraction.get("runs_log", []) if is_object(entry)]

    def number(key: str) -> int:
        try:
            return int(extraction.get(key, 0) or 0)
        except (TypeError, ValueError):
            return 0

    return {
        "runs": max(len(runs), number("runs")),
        "calls": number("calls"),
        "input_tokens": number("input_tokens"),
        "cached_tokens": number("cache_read_tokens"),
        "cache_write_tokens": number("cache_write_tokens"),
        "output_tokens": number("output_tokens"),
        "cost_usd": round(float(session.get("extraction_cost_usd") or 0.0), 6),
        "client_tokens": number("client_tokens"),
        "backend": runs[-1].get("backend", "api") if runs else None,
        "last_trigger": runs[-1].get("trigger") if runs else None,
    }
