"""SessionStart: hand Claude the project's precomputed digest, within 1,500 tokens
(docs/contracts.md#hook-events).

Fast path (every source but `compact`): read the digest file and its metadata, check the
budget (with the token count saved beside the digest while its text is unchanged), print. The
store is not opened, so it costs little more than interpreter start-up. The token accounting is
parked in the session state and written by the next hook that opens the store.

Slow path: no digest yet (compose the cheap one once, detecting the profile if the project
has none), a digest over budget (cut it), or `compact` (add the PreCompact snapshot). A
missing, stale or day-old digest also starts a detached `agentctx consolidate`. Every source
also notes the session as open and sweeps the project's sessions that ended without
SessionEnd into a detached extraction (`extraction.sweep`).
"""

from __future__ import annotations

from agentctx_store import digest_file, paths, projects, tokens

from agentctx_hooks import log, state
from agentctx_hooks.payload import HookInput

REFRESH_AFTER_SECONDS = 24 * 3600
CONSOLIDATE_TIMEOUT_SECONDS = 900
RESET_SOURCES = frozenset({"startup", "clear", "compact", "fork"})
# What marks a transcript whose client replays hook output on `resume`: the entry of hook output
# Claude Code 2.1 writes, and the first line of a Codex rollout (Codex replays its response items,
# the hooks' developer messages among them).
REPLAY_MARKS = (b'"type":"hook_additional_context"', b'"type":"session_meta"')
TRANSCRIPT_HEAD_BYTES = 4 << 20  # what a resume reads at most (bench/README.md#the-hook-path)


def handle(hook: HookInput) -> str:
    import os

    if not hook.cwd or not os.path.isdir(hook.cwd):  # a missing or file cwd: no phantom project (issue 13)
        log.write(hook.event, "payload has no usable cwd; nothing injected", session=hook.session_id)
        return ""
    source = hook.get_text("source") or "startup"
    project = projects.resolve_project(hook.cwd)
    project_id = project.project_id
    text: str | None = None
    shown_tokens = 0
    refresh = False
    if source != "compact":
        found = digest_file.read(project_id)
        if found is not None:
            digest_text, meta, age = found
            too_long = len(digest_text) > tokens.SESSION_START_CHARS
            size = tokens.SESSION_START_TOKENS + 1 if too_long else digest_file.token_count(digest_text, meta)
            if size <= tokens.SESSION_START_TOKENS:
                text, shown_tokens = digest_text, size
                refresh = bool(meta.get("stale")) or age > REFRESH_AFTER_SECONDS
    recorded = False
    if text is None:
        text, refresh = _compose_slowly(hook, project, source)
        recorded = True
    _remember(hook, source, digest_file.record_ids(text), shown_tokens, already_recorded=recorded)
    from agentctx_hooks.extraction import sweep

    sweep(hook, project_id)  # sessions of this project that ended without SessionEnd
    text = _with_team_line(hook, project, text)
    if os.path.exists(paths.remote_schedule_path()):  # a remote is added: sync it detached when due
        from agentctx_hooks.spawn import sync_remotes_when_due

        sync_remotes_when_due(hook.cwd)
    if refresh:
        from agentctx_hooks.spawn import spawn_agentctx

        spawn_agentctx(
            ["consolidate", "--project", hook.cwd],
            lock_name=f"consolidate-{project_id}",
            timeout_seconds=CONSOLIDATE_TIMEOUT_SECONDS,
            cwd=hook.cwd,
        )
    return text


def _with_team_line(hook: HookInput, project: projects.Project, text: str) -> str:
    """The digest and, when the committed team file changed, one line saying so."""
    from agentctx_hooks import team_notice

    try:
        notice = team_notice.line(project)
    except Exception as exc:  # the notice is a courtesy: never cost the session its digest
        log.error(hook.event, exc, session=hook.session_id)
        return text
    return f"{text.rstrip()}\n\n{notice}\n" if notice else text


def _is_old(written_at: str) -> bool:
    import time

    from agentctx_store.clock import epoch_seconds
    from agentctx_store.errors import AgentctxError

    try:
        return time.time() - epoch_seconds(written_at) > REFRESH_AFTER_SECONDS
    except (ValueError, AgentctxError):  # an unreadable date: treat the digest as old
        return True


def _remember(hook: HookInput, source: str, ids: list[str], shown_tokens: int, *, already_recorded: bool) -> None:
    """Seed the session's dedup state with what the digest already shows (so prompts do not
    inject it again) and park the token accounting when the store was not opened."""
    if not hook.session_id:
        return
    try:
        data = state.load(hook.session_id)
        if source in RESET_SOURCES or (source == "resume" and not _replays_hook_context(hook.transcript_path)):
            data["injected"] = []  # a new or compacted context: earlier injections are gone
        state.add_injected(data, ids)
        if not already_recorded and shown_tokens:
            state.add_pending(data, tokens=shown_tokens, ids=ids)
        state.save(hook.session_id, data)
    except OSError as exc:
        log.error(hook.event, exc, session=hook.session_id)


def _replays_hook_context(transcript_path: str) -> bool:
    """Whether a resumed conversation still holds what the hooks injected before.

    Claude Code 2.1 keeps hook output in the transcript and replays it on `resume`, so the
    session's injected ids stay valid; so does Codex (0.171.0: a resumed session's first request
    carries the earlier records again). Claude Code 2.0.x keeps none and replays nothing: there the list must
    start afresh, or a record injected before the resume never reaches the resumed session.
    Reads the first `TRANSCRIPT_HEAD_BYTES` of a regular file only (the first SessionStart
    entry is near its top; a FIFO or a device would hang the hook, a huge file would blow its
    budget); a transcript it cannot read counts as replaying (the old behaviour: at worst a
    record is not repeated).
    """
    from agentctx_store.bounded import read_regular

    head = read_regular(transcript_path, limit=TRANSCRIPT_HEAD_BYTES)
    return head is None or any(mark in head for mark in REPLAY_MARKS)


def _compose_slowly(hook: HookInput, project: projects.Project, source: str) -> tuple[str, bool]:
    """The digest through the store: composed once when missing, cut to budget, and with the
    PreCompact snapshot after compaction. Returns (text, whether to start a consolidation)."""
    from agentctx_store import budget, digest

    from agentctx_hooks.ondemand import profile
    from agentctx_hooks.spool import flush_quietly
    from agentctx_hooks.storage import open_store

    with open_store(hook, busy_ms=3000) as store:
        flush_quietly(store, hook.event)
        existing = digest.read(project.project_id)
        if existing is None:
            if not store.list_records(project, types=["profile"], scope="project", limit=1):
                profile.refresh(store, project, source="hook_observation", session_id=hook.session_id or None)
            text = digest.compose(store, project)
            digest.write(project.project_id, text, kind="cheap")
            refresh = True
        else:
            text, info = existing
            refresh = info.stale or _is_old(info.written_at)
        if source == "compact" and hook.session_id:
            session = store.get_session(hook.session_id) or {}
            snapshot = session.get("meta", {}).get("snapshot")
            if isinstance(snapshot, str) and snapshot.strip():
                text = with_snapshot(text, snapshot)
        text = budget.truncate(text, budget.SESSION_START)
        with store.transaction():
            store.remember_project(project)
            if hook.session_id:
                store.record_injection(
                    project, hook.session_id, digest_file.record_ids(text), budget.estimate_tokens(text)
                )
    return text, refresh


def with_snapshot(digest_text: str, snapshot: str) -> str:
    """The digest with the pre-compaction snapshot right after the profile section, inside the
    digest's fence (the snapshot is the session's own text: data, escaped like a record)."""
    from agentctx_store import budget, digest
    from agentctx_store.fence import unfence

    inner, ours = digest.split_fence(digest_text)
    head, _, rest = inner.partition("\n\n")
    sections = [
        ("profile", head, digest.PROFILE_TOKENS),
        ("snapshot", "## Before compaction\n" + unfence(snapshot.strip()), digest.HANDOVER_TOKENS),
        ("rest", rest, budget.SESSION_START_TOKENS),
    ]
    return digest.fenced(sections, [("ours", ours, budget.SESSION_START_TOKENS)], budget.SESSION_START)
