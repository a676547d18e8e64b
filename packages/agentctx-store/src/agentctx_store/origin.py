"""Which client and which hook produced a record (issue 20), read back from the session metadata
that wrote it: the hooks keep `client` and `hook_records` there (`agentctx_hooks.provenance`), the
MCP server `client` and `hook: "MCP"` (a session per server process). A record finds its origin
through its `session_id`; records without one (the CLI, the dashboard, import) have none.

Used by `agentctx show`, the dashboard and the export. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from agentctx_store.records import Record
    from agentctx_store.store import Store


def of_record(session: dict[str, Any] | None, record_id: str) -> dict[str, str]:
    """{client, hook?} of a record from its session's metadata ({} when unknown)."""
    meta = (session or {}).get("meta")
    if not isinstance(meta, dict):
        return {}
    for entry in meta.get("hook_records") or []:
        if isinstance(entry, dict) and entry.get("id") == record_id:
            return {"client": str(entry.get("client")), "hook": str(entry.get("hook"))}
    if not isinstance(meta.get("client"), str):
        return {}
    origin = {"client": meta["client"]}
    if isinstance(meta.get("hook"), str):
        origin["hook"] = meta["hook"]
    return origin


def of_records(store: Store, records: Iterable[Record]) -> dict[str, dict[str, str]]:
    """{record id: origin} for the records whose origin is known (one session read per session)."""
    sessions: dict[str, dict[str, Any] | None] = {}
    origins: dict[str, dict[str, str]] = {}
    for record in records:
        if not record.session_id:
            continue
        if record.session_id not in sessions:
            sessions[record.session_id] = store.get_session(record.session_id)
        origin = of_record(sessions[record.session_id], record.record_id)
        if origin:
            origins[record.record_id] = origin
    return origins
