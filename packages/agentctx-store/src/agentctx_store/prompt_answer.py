"""The store's half of the prompt hook: rank, compose (`agentctx_store.inject`), account.

One function for both ways a prompt is answered: the keyword path in the hook process and the
warm search service (`agentctx_embed.service`), so the two inject the same text for the same
hits and account for it the same way. Standard library and the store's fast core only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agentctx_store.projects import Project
    from agentctx_store.records import Record
    from agentctx_store.retrieval import SearchHit
    from agentctx_store.store import Store

MAX_QUERY_CHARS = 10_000


def compose_for_prompt(
    store: Store,
    project: Project,
    prompt: str,
    session_id: str,
    already: list[str],
    pending: tuple[int, list[str], int],
    *,
    event: str = "UserPromptSubmit",
    log: Callable[[str, BaseException, str], None] | None = None,
    rank: Callable[..., Sequence[SearchHit]] | None = None,
    late: Callable[[], bool] | None = None,
    served_by: str = "",
    keep: Callable[[Record], bool] | None = None,
    noted: Callable[[list[str], int], None] | None = None,
) -> tuple[str, list[str]]:
    """The store's half of a prompt, shared by the keyword path (the prompt hook) and the warm
    search service (`agentctx_embed.service`, which passes its hybrid `rank`): rank, compose with
    `agentctx_store.inject`, and account for what is injected (and for what the fast
    SessionStart path left pending). `late()` true after ranking: the caller gave up waiting, so
    nothing is recorded and nothing returned. Errors go to `log(event, exc)` when given.
    `served_by` (the service passes "warm") is counted in the session's metadata
    (`prompts_served_warm`), so the record of what was injected says which path served it.
    `keep` (the review gate, `config review = required`) filters the ranked hits before they
    are composed; ten are ranked then, so three kept ones can remain. `noted(ids, tokens)` runs in
    the accounting transaction when something was injected (the hook's provenance note)."""
    import _sqlite3 as sqlite3  # not the `sqlite3` package (agentctx_store/db.py)

    from agentctx_store.inject import PROMPT_TYPES, compose_injection

    query = prompt[:MAX_QUERY_CHARS]
    wanted = 10 if keep is not None else 3
    if rank is None:
        from agentctx_store import search

        hits = search(store, project, query, limit=wanted, types=PROMPT_TYPES, exclude_ids=already).hits
    else:
        hits = rank(store, project, query, limit=wanted, types=PROMPT_TYPES, exclude_ids=already)
    hits = [hit for hit in hits if keep is None or keep(hit.record)][:3]
    checker = None
    if hits:  # anchored records are checked against their files on both paths
        from agentctx_store.freshness import Checker

        checker = Checker(store, project)
    injection = compose_injection(hits, query, already_injected=already, freshness=checker)
    if late is not None and late():
        return "", []
    pending_tokens, pending_ids, pending_count = pending
    if session_id and (injection.text or pending_count):
        try:
            with store.transaction():
                for _ in range(max(0, pending_count - 1)):
                    store.record_injection(project, session_id, [], 0)
                if pending_count:
                    store.record_injection(project, session_id, pending_ids, pending_tokens)
                if injection.text:
                    store.record_injection(
                        project,
                        session_id,
                        injection.full_ids,
                        injection.tokens,
                        title_ids=injection.title_ids,
                        prompt=True,
                    )
                    if noted is not None:
                        noted(list(injection.ids), injection.tokens)
                    if served_by:
                        row = store.conn.execute(
                            "SELECT meta FROM sessions WHERE session_id = ?", (session_id,)
                        ).fetchone()
                        served = 0
                        if row is not None and row[0]:
                            from agentctx_store.jsontext import loads as json_loads

                            served = int(json_loads(row[0]).get(f"prompts_served_{served_by}", 0) or 0)
                        store.update_session_meta(project, session_id, **{f"prompts_served_{served_by}": served + 1})
        except sqlite3.OperationalError as exc:  # locked by a long write: inject anyway
            if log is not None:
                log(event, exc, session_id)
    return injection.text, injection.ids
