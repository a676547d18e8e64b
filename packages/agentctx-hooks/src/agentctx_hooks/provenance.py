"""Which client and which hook produced what: kept in the session's metadata, so the records
table needs no new column and a record finds its client through its `session_id`.

- `client`: the agent the session ran in (claude, codex, gemini).
- `injections`: the last `SESSION_LOG_ENTRIES` (50) prompt injections: time, client, the client's own hook name
  (`BeforeAgent` for Gemini), record ids and token estimate. Written by
  `agentctx_store.prompt_answer.account` on both prompt paths.
- `hook_records`: records a hook created (error stubs), with the client and hook (`note_record`).

Written with `Store.log_in_session`, inside the caller's transaction, only when something was
injected or created. Read back by `agentctx_store.origin`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store import Project, Store

    from agentctx_hooks.payload import HookInput


def client_and_hook(hook: HookInput) -> tuple[str, str]:
    """The client the hook runs in and the client's own name for the hook."""
    from agentctx_store.clients import DEFAULT

    return hook.get_text("agentctx_client") or DEFAULT, hook.get_text("agentctx_hook") or hook.event


def note_record(store: Store, project: Project, session_id: str, record_id: str, client: str, hook: str) -> None:
    entry = {"id": record_id, "client": client, "hook": hook}
    store.log_in_session(project, session_id, "hook_records", entry)
