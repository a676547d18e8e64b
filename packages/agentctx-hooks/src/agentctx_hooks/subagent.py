"""SubagentStart: what a subagent (Claude Code's Agent tool, a custom agent) starts knowing of the
project, within 1,500 tokens (docs/hooks.md, "SubagentStart").

Claude Code loads none of the main session's context into a subagent; this hook's
`additionalContext` reaches it before its first request. What it gets:

- the digest's essentials: the project profile, the current decisions and conventions and the
  developer's preferences, as the SessionStart digest file has them (the pre-compaction
  snapshot and the handover are the parent's working state, left out);
- the records relevant to its task, through the prompt line (`agentctx_store.prompt_answer`:
  rank -> compose -> account) with the task as the query. The payload does not carry the task
  (it has `agent_id`, `agent_type` and the parent's `transcript_path`,
  tests-e2e/fixtures/claude-code/subagent/): the task is the `prompt` of the parent's Agent
  (or Task) tool call: the first prompt of the subagent's own transcript, else the call in the
  tail of the parent's transcript (either may be written a moment after the hook starts: both
  are read again for up to a second), else the parent's last prompt kept in the session state.
  Which one was used is logged.

Each subagent is served once (its `agent_id` is kept in the session state); what it was shown
is counted in the session's accounting (the digest part as a SessionStart-like injection, the
records as the prompt line records them) but not added to the parent's dedup list: the parent
never saw it. `review = required`, freshness and the fences apply as on a prompt.
"""

from __future__ import annotations

from agentctx_store.jsontext import is_array, is_object, loads, strings

from agentctx_hooks import log, state
from agentctx_hooks.payload import HookInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUBAGENT_TOKENS = 1500  # the whole injection (tokens.SESSION_START_TOKENS: a subagent's own start)
SUBAGENT_CHARS = 6000
RECORDS_TOKENS = 800  # the task's records at most; the digest's essentials fill the rest
RECORDS_CHARS = 3200
TRANSCRIPT_TAIL_BYTES = 1 << 20
SUBAGENT_HEAD_BYTES = 256 * 1024  # the subagent's first prompt is its transcript's first line
TASK_WAIT_SECONDS = 1.0
TASK_POLL_SECONDS = 0.05
MAX_SUBAGENTS = 50  # agent ids kept per session (the dedup of "served once")
SUBAGENT_TOOLS = frozenset({"Agent", "Task"})  # Claude Code's names for starting a subagent (2.1, 2.0)
# The digest sections a subagent gets, by their heading's start (`digest.compose`).
ESSENTIAL_SECTIONS = ("## Project:", "## Current decisions and conventions", "## Developer preferences")
LEAD = "agentctx: project context for this subagent"


def handle(hook: HookInput) -> str:
    agent = hook.get_text("agent_id")
    if not hook.cwd or not hook.session_id:
        log.write(hook.event, "payload has no usable cwd or session; nothing injected", session=hook.session_id)
        return ""
    data = state.load_logged(hook.session_id, hook.event)
    served = _served(data)
    if agent and agent in [pair[0] for pair in served]:
        return ""  # injected once per subagent
    claimed = [pair[1] for pair in served if pair[1]]
    task, call_id, source = _wait_for_task(hook.transcript_path, agent, claimed)
    if not task:
        prompts = strings(data.get("prompts"))
        task, source = (prompts[-1], "the parent's last prompt") if prompts else ("", "none")
    text = _compose(hook, task)
    log.write(hook.event, f"subagent {agent or '?'}: task from {source}", session=hook.session_id)
    data["subagents"] = [*served, [agent, call_id]][-MAX_SUBAGENTS:]
    state.save_logged(hook.session_id, hook.event, data)
    return text


def _served(data: dict[str, Any]) -> list[list[str]]:
    value = data.get("subagents")
    pairs = value if is_array(value) else []
    return [[str(pair[0]), str(pair[1])] for pair in pairs if is_array(pair) and len(pair) == 2]


def _wait_for_task(transcript_path: str, agent_id: str, claimed: list[str]) -> tuple[str, str, str]:
    """The task, from the subagent's own transcript or the parent's Agent call. Claude Code may
    run the hook before it has written either (seen with 2.1.332: the parent's call was there
    for a slower hook, not yet for this one), so both are read again for up to `TASK_WAIT_SECONDS`."""
    import time

    deadline = time.monotonic() + TASK_WAIT_SECONDS
    while True:
        first = subagent_prompt(transcript_path, agent_id)
        if first:
            return first, "", "the subagent's transcript"
        found = task_of(transcript_path, agent_id, claimed)
        if found[0] or time.monotonic() >= deadline:
            return found
        time.sleep(TASK_POLL_SECONDS)


def subagent_prompt(transcript_path: str, agent_id: str) -> str:
    """The first prompt of the subagent's own transcript, which Claude Code 2.1 keeps beside the
    parent's: `<parent transcript without .jsonl>/subagents/agent-<agent_id>.jsonl` ("" when
    it is not there, or the id could name another file)."""
    from agentctx_store.bounded import read_regular

    if not (transcript_path.endswith(".jsonl") and agent_id.isascii() and agent_id.isalnum() and len(agent_id) <= 64):
        return ""
    path = f"{transcript_path[: -len('.jsonl')]}/subagents/agent-{agent_id}.jsonl"
    raw = read_regular(path, limit=SUBAGENT_HEAD_BYTES)
    for line in (raw or b"").decode("utf-8", errors="replace").splitlines():
        try:
            entry = loads(line)
        except (ValueError, RecursionError):
            continue
        message = entry.get("message") if is_object(entry) and entry.get("type") == "user" else None
        content = message.get("content") if is_object(message) else None
        if isinstance(content, str) and content.strip():
            return content
        texts = [block.get("text") for block in content if is_object(block)] if is_array(content) else []
        text = "\n".join(part for part in texts if isinstance(part, str))
        if text.strip():
            return text
    return ""


def task_of(transcript_path: str, agent_id: str, claimed: list[str]) -> tuple[str, str, str]:
    """(the task prompt, its tool call's id, where it came from) from the parent's transcript:
    the Agent/Task call whose result names `agent_id` (a background agent's result is written
    at its launch), else the first call with no result yet that no earlier subagent claimed (a
    foreground agent's result comes when it ends). ("", "", "") when none is found."""
    from agentctx_store.bounded import read_regular

    raw = read_regular(transcript_path, limit=TRANSCRIPT_TAIL_BYTES, from_end=True) if transcript_path else None
    if raw is None:
        return "", "", ""
    calls: dict[str, str] = {}
    answered: set[str] = set()
    named = ""
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if '"tool_' not in line:
            continue
        try:
            entry = loads(line)
        except (ValueError, RecursionError):
            continue  # the first line of the tail is usually cut
        message = entry.get("message") if is_object(entry) else None
        content = message.get("content") if is_object(message) else None
        for block in content if is_array(content) else ():
            if not is_object(block):
                continue
            kind = block.get("type")
            if kind == "tool_use" and block.get("name") in SUBAGENT_TOOLS:
                given = block.get("input")
                prompt = given.get("prompt") if is_object(given) else None
                call = block.get("id")
                if isinstance(prompt, str) and prompt.strip() and isinstance(call, str):
                    calls[call] = prompt
            elif kind == "tool_result" and block.get("tool_use_id") in calls:
                call = str(block.get("tool_use_id"))
                answered.add(call)
                if agent_id and f"agentId: {agent_id}" in _result_text(block.get("content")):
                    named = call
    if named:
        return calls[named], named, "the parent's Agent call"
    for call, prompt in calls.items():
        if call not in answered and call not in claimed:
            return prompt, call, "the parent's Agent call"
    return "", "", ""


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = content if is_array(content) else []
    return "\n".join(str(part.get("text", "")) for part in parts if is_object(part))


def _compose(hook: HookInput, task: str) -> str:
    """The digest's essentials and the task's records within the subagent's budget; accounted."""
    import _sqlite3

    from agentctx_store import digest_file
    from agentctx_store.budget import Budget, estimate_tokens, fit_sections
    from agentctx_store.clock import utc_now
    from agentctx_store.digest_file import Pending
    from agentctx_store.fence import DIGEST_CLOSE, DIGEST_OPEN
    from agentctx_store.projects import resolve_project
    from agentctx_store.prompt_answer import Asked, Ranked, account, compose, rank
    from agentctx_store.review import review_required

    from agentctx_hooks.prompt import keyword_floor
    from agentctx_hooks.provenance import client_and_hook
    from agentctx_hooks.storage import open_store

    project = resolve_project(hook.cwd)
    found = digest_file.read(project.project_id)
    sections = essential_sections(found[0]) if found else []
    offered = digest_file.record_ids("\n".join(sections))
    client, name = client_and_hook(hook)
    asked = Asked(
        prompt=task, session_id=hook.session_id, client=client, hook=name, already=offered, gated=review_required()
    )
    lead = f"{LEAD}:"
    with open_store(hook, busy_ms=1000) as store:
        ranked = (
            rank(store, project, asked, floor=keyword_floor(hook, project.project_id)) if task.strip() else Ranked()
        )
        injection = compose(store, project, asked, ranked, budget=Budget(tokens=RECORDS_TOKENS, chars=RECORDS_CHARS))
        used = estimate_tokens(lead) + injection.tokens + 8
        frame = f"{DIGEST_OPEN}\n\n{DIGEST_CLOSE}"
        room = Budget(
            tokens=SUBAGENT_TOKENS - used - estimate_tokens(frame),
            chars=SUBAGENT_CHARS - len(lead) - len(injection.text) - len(frame) - 4,
        )
        inner = fit_sections([("digest", section, SUBAGENT_TOKENS) for section in sections], room) if sections else ""
        digest_part = f"{DIGEST_OPEN}\n{inner}\n{DIGEST_CLOSE}" if inner else ""
        shown = digest_file.record_ids(inner)
        if digest_part:
            asked.pending = Pending(tokens=estimate_tokens(digest_part), ids=shown, count=1)
        if not (digest_part or injection.text):
            return ""
        try:
            account(store, project, asked, injection, path="keyword", at=utc_now())
        except _sqlite3.OperationalError as exc:  # locked by a long write: inject anyway
            log.error(hook.event, exc, session=hook.session_id)
    return "\n\n".join(part for part in (lead, digest_part, injection.text) if part)


def essential_sections(digest_text: str) -> list[str]:
    """The digest's sections a subagent gets (`ESSENTIAL_SECTIONS`), in the digest's order, as
    they are written there (already escaped by `fence.unfence`)."""
    from agentctx_store.digest_file import split_fence

    inner, _ = split_fence(digest_text)
    kept: list[str] = []
    for part in ("\n" + inner).split("\n## ")[1:]:
        section = "## " + part.strip("\n")
        if section.startswith(ESSENTIAL_SECTIONS):
            kept.append(section)
    return kept
