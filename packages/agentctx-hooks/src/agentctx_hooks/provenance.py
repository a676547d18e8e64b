"""Which client and which hook produced what (issue 20): kept in the session's metadata, so the
records table needs no new column and a record finds its client through its `session_id`.

- `client`: the agent the session ran in (claude, codex, gemini).
- `injections`: the last 50 prompt injections: time, client, the client's own hook name
  (`BeforeAgent` for Gemini), record ids and token estimate.
- `hook_records`: records a hook created (error stubs), with the client and hook.

Called inside the caller's transaction, only when something was injected or created. Read back
by `agentctx_store.origin`.
"""

from __future__ import annotations

from agentctx_store.jsontext import is_array, is_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store import Project, Store

    from agentctx_hooks.payload import HookInput

MAX_ENTRIES = 50


def client_and_hook(hook: HookInput) -> tuple[str, str]:
    return hook.get_text("agentctx_client") or "claude", hook.get_text("agentctx_hook") or hook.event


def _append(store: Store, project: Project, session_id: str, key: str, entry: dict[str, Any], client: str) -> None:
    session = store.get_session(session_id) or {}
    meta = session.get("meta")
    meta = meta if is_object(meta) else {}
    current = meta.get(key)
    items = list(current) if is_array(current) else []
    items.append(entry)
    store.update_session_meta(project, session_id, client=client, **{key: items[-MAX_ENTRIES:]})


def note_injection(store: Store, project: Project, hook: HookInput, ids: list[str], tokens: int, at: str) -> None:
    client, name = client_and_hook(hook)
    entry = {"at": at, "client": client, "hook": name, "ids": ids, "tokens": tokens}
    _append(store, project, hook.session_id, "injections", entry, client)


def note_record(store: Store, project: Project, session_id: str, record_id: str, client: str, hook: str) -> None:
    _append(store, project, session_id, "hook_records", {"id": record_id, "client": client, "hook": hook}, client)
