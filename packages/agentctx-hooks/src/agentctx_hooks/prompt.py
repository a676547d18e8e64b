"""UserPromptSubmit: inject the few stored records that match what the developer just typed.

SPEC §4: search the literal prompt (BM25 + rerank + relevance floor, `agentctx_store.search`),
skip records already injected in this session, and inject nothing when nothing clears the floor.
What is injected is composed by `agentctx_store.inject.compose_injection` (the one composition
every injecting path shares): the best record in full (long ones cut to the passages matching
the prompt), close runners-up in full, the others by title, as fenced data within 2,000 tokens
and 8,000 characters. Records shown by title may still be shown in full by a later prompt.
"""

from __future__ import annotations

from agentctx_hooks import log, state, warm
from agentctx_hooks.payload import HookInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agentctx_store import Project, Store
    from agentctx_store.search import SearchHit

MAX_QUERY_CHARS = 10_000
# Prompts Claude Code submits on the developer's behalf: not something to search for.
_META_PREFIXES = (
    "<task-notification>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "<user-memory-input>",
)
# `re` is not imported on this path (~3 ms): a slash command is `^/[A-Za-z0-9_.:-]+(?:\s|$)`,
# checked by hand in `is_slash_command` (tests/test_prompt_without_re.py holds it to the expression).
_COMMAND_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-")


def is_developer_prompt(prompt: str) -> bool:
    """False for task notifications, slash commands and command echoes."""
    stripped = prompt.lstrip()
    if not stripped:
        return False
    if stripped.startswith(_META_PREFIXES):
        return False
    return not is_slash_command(stripped)


def is_slash_command(text: str) -> bool:
    """`/name` at the very start, followed by whitespace or nothing."""
    if not text.startswith("/"):
        return False
    end = 1
    while end < len(text) and text[end] in _COMMAND_CHARS:
        end += 1
    return end > 1 and (end == len(text) or text[end].isspace())


def handle(hook: HookInput) -> str:
    prompt = hook.get_text("prompt")
    if not is_developer_prompt(prompt):
        return ""
    if not hook.cwd:
        log.write(hook.event, "payload has no usable cwd; nothing injected", session=hook.session_id)
        return ""
    data = _load_state(hook)
    state.add_prompt(data, prompt)
    already = state.injected_ids(data)
    served = warm.ask(hook, prompt, data, already)  # the search service, when it is up
    if served is not None:
        state.add_injected(data, served[1])
        _save_state(hook, data)
        return served[0]
    warm.count_keyword(data)

    from agentctx_hooks.storage import open_store, project_of

    project = project_of(hook.cwd)
    pending = state.take_pending(data)
    with open_store(busy_ms=1000) as store:  # reads never wait under WAL; writes wait 1 s at most
        text, ids = compose_for_prompt(store, project, prompt, hook.session_id, already, pending, event=hook.event)
    state.add_injected(data, ids)
    _save_state(hook, data)
    return text


def compose_for_prompt(
    store: Store,
    project: Project,
    prompt: str,
    session_id: str,
    already: list[str],
    pending: tuple[int, list[str], int],
    *,
    event: str = "UserPromptSubmit",
    rank: Callable[..., Sequence[SearchHit]] | None = None,
    late: Callable[[], bool] | None = None,
) -> tuple[str, list[str]]:
    """The store's half of a prompt, shared by the keyword path (here) and the warm search
    service (`agentctx_embed.service`, which passes its hybrid `rank`): flush the spool, rank,
    compose with `agentctx_store.inject`, and account for what is injected (and for what the
    fast SessionStart path left pending). `late()` true after ranking: the caller gave up
    waiting, so nothing is recorded and nothing returned."""
    import sqlite3

    from agentctx_store.inject import PROMPT_TYPES, compose_injection

    from agentctx_hooks.spool import flush_quietly

    flush_quietly(store, event)  # captures of the last turn become searchable first
    query = prompt[:MAX_QUERY_CHARS]
    if rank is None:
        from agentctx_store import search

        hits = search(store, project, query, limit=3, types=PROMPT_TYPES, exclude_ids=already).hits
    else:
        hits = rank(store, project, query, limit=3, types=PROMPT_TYPES, exclude_ids=already)
    injection = compose_injection(hits, query, already_injected=already)
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
        except sqlite3.OperationalError as exc:  # locked by a long write: inject anyway
            log.error(event, exc, session=session_id)
    return injection.text, injection.ids


def _load_state(hook: HookInput) -> dict[str, object]:
    try:
        return state.load(hook.session_id)
    except OSError as exc:
        log.error(hook.event, exc, session=hook.session_id)
        return {}


def _save_state(hook: HookInput, data: dict[str, object]) -> None:
    try:
        state.save(hook.session_id, data)
    except OSError as exc:  # losing the state only means a re-injection later
        log.error(hook.event, exc, session=hook.session_id)
