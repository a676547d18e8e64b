"""PreCompact, Stop, SessionEnd and CwdChanged: the hooks that say nothing to the model.

- PreCompact writes a snapshot of the working state into the session's metadata; the next
  SessionStart(`compact`) puts it back into context. It also starts a checkpoint extraction.
- Stop counts what the turn added and starts a checkpoint extraction only once the
  un-extracted part is large (`extraction.on_stop`).
- SessionEnd starts `agentctx extract` for the rest of the session and `agentctx consolidate`,
  detached, then closes the session row; it has 1.5 s in total, so the spawns come first and
  the store write waits at most 500 ms.
- CwdChanged refreshes the profile records of the project the new directory belongs to.
"""

from __future__ import annotations

import os

from agentctx_store.jsontext import is_object, loads
from agentctx_store.projects import resolve_project

from agentctx_hooks import log, state
from agentctx_hooks.payload import HookInput
from agentctx_hooks.prompt import is_developer_prompt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store import Project, Store

CONSOLIDATE_TIMEOUT_SECONDS = 900
TRANSCRIPT_TAIL_BYTES = 256_000
SNAPSHOT_TOKENS = 400
SNAPSHOT_CHARS = 1600


def stop(hook: HookInput) -> str:
    from agentctx_hooks.extraction import on_stop

    return on_stop(hook)


def session_end(hook: HookInput) -> str:
    if not hook.cwd:
        log.write(hook.event, "payload has no usable cwd; no extraction or consolidation", session=hook.session_id)
        return ""
    from agentctx_hooks.extraction import on_session_end
    from agentctx_hooks.spawn import spawn_agentctx

    on_session_end(hook)

    spawn_agentctx(
        ["consolidate", "--project", hook.cwd],
        lock_name=f"consolidate-{resolve_project(hook.cwd).project_id}",
        timeout_seconds=CONSOLIDATE_TIMEOUT_SECONDS,
        cwd=hook.cwd,
    )
    from agentctx_hooks.spawn import sync_remotes_when_due

    sync_remotes_when_due(hook.cwd)
    state.prune()  # session state nobody touched for a month
    if hook.session_id:
        from agentctx_hooks.spool import flush_quietly
        from agentctx_hooks.storage import open_store

        project = resolve_project(hook.cwd)
        with open_store(hook, busy_ms=500) as store:
            flush_quietly(store, hook.event)
            with store.transaction():
                flush_pending(store, project, hook.session_id)
                store.end_session(project, hook.session_id)
    return ""


def cwd_changed(hook: HookInput) -> str:
    new_cwd = hook.get_text("new_cwd") or hook.cwd
    old_cwd = hook.get_text("old_cwd")
    if not new_cwd or not os.path.isabs(new_cwd) or not os.path.isdir(new_cwd):
        return ""
    if (
        old_cwd
        and os.path.isabs(old_cwd)
        and resolve_project(old_cwd).project_id == resolve_project(new_cwd).project_id
    ):
        return ""  # still the same project: nothing to refresh

    from agentctx_hooks.ondemand import profile
    from agentctx_hooks.spool import flush_quietly
    from agentctx_hooks.storage import open_store

    project = resolve_project(new_cwd)
    with open_store(hook, busy_ms=3000) as store:
        flush_quietly(store, hook.event)  # its own transaction: a capture leaves the spool once committed
        with store.transaction():
            store.remember_project(project)
            profile.refresh(store, project, source="hook_observation", session_id=hook.session_id or None)
    return ""


def pre_compact(hook: HookInput) -> str:
    if not hook.cwd or not hook.session_id:
        return ""

    from agentctx_hooks.spool import flush_quietly
    from agentctx_hooks.storage import open_store

    project = resolve_project(hook.cwd)
    with open_store(hook, busy_ms=3000) as store:
        flush_quietly(store, hook.event)  # the files and errors of this turn belong in the snapshot
        snapshot = compose_snapshot(store, project, hook)
        with store.transaction():
            flush_pending(store, project, hook.session_id)
            if snapshot:
                store.update_session_meta(project, hook.session_id, snapshot=snapshot)
    from agentctx_hooks.extraction import on_pre_compact

    on_pre_compact(hook)
    return ""


def compose_snapshot(store: Store, project: Project, hook: HookInput) -> str:
    """The working state compaction would lose, within ~400 tokens: recent prompts, files
    touched, open errors, the last test run, git state, the current handover."""
    from agentctx_store.budget import Budget, truncate

    session = store.get_session(hook.session_id) or {}
    meta: dict[str, Any] = session.get("meta", {}) if isinstance(session.get("meta"), dict) else {}
    lines: list[str] = []
    prompts = recent_prompts(hook.transcript_path) or state.load(hook.session_id).get("prompts") or []
    if prompts:
        lines.append("Recent requests:")
        lines.extend(f"- {' '.join(str(prompt).split())[:300]}" for prompt in prompts[-5:])
    files = [name for name in meta.get("files", []) if isinstance(name, str)]
    if files:
        lines.append("Files changed: " + ", ".join(files[-12:]))
    errors = [
        record
        for record in store.list_records(project, types=["bugfix"], scope="project", limit=20)
        if record.session_id == hook.session_id
    ]
    if errors:
        lines.append("Errors seen this session:")
        lines.extend(f"- [{record.record_id}] {record.title}" for record in errors[:5])
    tests = [entry for entry in meta.get("tests", []) if is_object(entry)]
    if tests:
        last = tests[-1]
        lines.append(f"Last test run: {last.get('outcome')} (`{last.get('command')}`)")
    if isinstance(meta.get("branch"), str):
        lines.append(f"Branch: {meta['branch']}")
    commits = [entry for entry in meta.get("commits", []) if is_object(entry)]
    if commits:
        lines.append("Commits: " + "; ".join(f"{entry.get('sha')} {entry.get('message')}" for entry in commits[-3:]))
    handover = store.list_records(project, types=["handover"], scope="project", limit=1)
    if handover:
        lines.append(f"Current handover: [{handover[0].record_id}] {handover[0].title}")
    return truncate("\n".join(lines), Budget(tokens=SNAPSHOT_TOKENS, chars=SNAPSHOT_CHARS)) if lines else ""


def recent_prompts(transcript_path: str, *, limit: int = 5) -> list[str]:
    """The developer's last typed prompts, read from the tail of the session transcript."""
    from agentctx_store.bounded import read_regular

    raw = read_regular(transcript_path, limit=TRANSCRIPT_TAIL_BYTES, from_end=True)
    if raw is None:
        return []
    tail = raw.decode("utf-8", errors="replace")
    prompts: list[str] = []
    for line in tail.splitlines():
        try:
            entry = loads(line)
        except ValueError:
            continue  # the first line of the tail is usually cut
        if not is_object(entry) or entry.get("type") != "user" or entry.get("isMeta"):
            continue
        if entry.get("isCompactSummary") or entry.get("isSidechain"):
            continue
        message = entry.get("message")
        content = message.get("content") if is_object(message) else None
        if isinstance(content, str) and is_developer_prompt(content):
            prompts.append(content)
    return prompts[-limit:]


def flush_pending(store: Store, project: Project, session_id: str) -> None:
    """Write the token accounting the fast SessionStart path parked in the session state."""
    try:
        data = state.load(session_id)
        pending = state.take_pending(data)
        if pending.count:
            from agentctx_store.prompt_answer import record_pending

            record_pending(store, project, session_id, pending)
            state.save(session_id, data)
    except OSError as exc:
        log.error("accounting", exc, session=session_id)
