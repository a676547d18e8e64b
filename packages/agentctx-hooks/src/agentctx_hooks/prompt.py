"""UserPromptSubmit: inject the few stored records that match what the developer just typed.

SPEC §4: search the literal prompt (BM25 + rerank + relevance floor, `agentctx_store.search`),
skip records already injected in this session, and inject nothing when nothing clears the floor.
What is injected is composed by `agentctx_store.inject.compose_injection` (the one composition
every injecting path shares): the best record in full (long ones cut to the passages matching
the prompt), close runners-up in full, the others by title, as fenced data within 2,000 tokens
and 8,000 characters. Records shown by title may still be shown in full by a later prompt.
"""

from __future__ import annotations

from agentctx_hooks import log, state
from agentctx_hooks.payload import HookInput

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
    state.add_prompt(data, prompt)  # only a prompt that plainly holds no secret is kept
    already = state.injected_ids(data)

    import sqlite3

    from agentctx_store import search
    from agentctx_store.inject import PROMPT_TYPES, compose_injection

    from agentctx_hooks.review_gate import awaiting_review, review_required
    from agentctx_hooks.spool import flush_quietly
    from agentctx_hooks.storage import open_store, project_of

    project = project_of(hook.cwd)
    with open_store(busy_ms=1000) as store:  # reads never wait under WAL; writes wait 1 s at most
        flush_quietly(store, hook.event)  # captures of the last turn become searchable first
        query = prompt[:MAX_QUERY_CHARS]
        gated = review_required()  # `review = required`: unaccepted extraction results stay out
        result = search(store, project, query, limit=10 if gated else 3, types=PROMPT_TYPES, exclude_ids=already)
        hits = [hit for hit in result.hits if not (gated and awaiting_review(hit.record))][:3]
        injection = compose_injection(hits, query, already_injected=already)
        pending_tokens, pending_ids, pending_count = state.take_pending(data)
        if hook.session_id and (injection.text or pending_count):
            try:
                with store.transaction():
                    for _ in range(max(0, pending_count - 1)):
                        store.record_injection(project, hook.session_id, [], 0)
                    if pending_count:
                        store.record_injection(project, hook.session_id, pending_ids, pending_tokens)
                    if injection.text:
                        store.record_injection(
                            project,
                            hook.session_id,
                            injection.full_ids,
                            injection.tokens,
                            title_ids=injection.title_ids,
                            prompt=True,
                        )
                        from agentctx_hooks._fast import time_now
                        from agentctx_hooks.provenance import note_injection

                        note_injection(store, project, hook, list(injection.ids), injection.tokens, time_now())
            except sqlite3.OperationalError as exc:  # locked by a long write: inject anyway
                log.error(hook.event, exc, session=hook.session_id)
    state.add_injected(data, injection.ids)
    _save_state(hook, data)
    return injection.text


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
