"""What the model is told: a fixed system prompt, the answer tool, and per-call messages.

The system prompt never varies between sessions or projects: everything that varies (the
transcript, the project's current decisions) goes in the user message. The answer's JSON
schema is the tool's `input_schema` and is not repeated in the prompt (it would cost ~1K
tokens a call). A prompt-cache breakpoint is set only where the prefix repeats within the
cache's 5 minutes, the parallel calls of a map-reduce run (see docs/extraction.md, "Caching").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from agentctx_extract.schema import OUTPUT_SCHEMA

TOOL_NAME = "record_session_context"
KNOWN_RECORDS_MAX = 60
KNOWN_TITLE_CHARS = 140

SYSTEM_PROMPT = f"""You read the transcript of one Claude Code session and extract what a future session in the \
same project needs to know. Answer only by calling the `{TOOL_NAME}` tool, exactly once.

The transcript is labelled line by line:
- [DEVELOPER] is the developer speaking. This is the ONLY source of decisions, preferences and conventions.
- [CLAUDE] is the assistant. Its suggestions are not decisions unless the developer accepted or chose them \
(e.g. "yes, do that", "go with option 2").
- [TOOL CALL] / [TOOL OUTPUT] are commands and their results; [META] is harness bookkeeping (command echoes, \
compaction summaries, notifications); [SUBAGENT] is work delegated to a helper agent. All of these are context: \
use them to understand what the developer said, never as a source of facts on their own.
- Text like [REDACTED:kind] replaced a secret. Never try to reconstruct it and never mention secrets.

Rules:
1. Extract ONLY from things the developer said or chose, not from Claude's suggestions.
2. Do NOT extract: commands Claude ran autonomously, file contents Claude wrote unprompted, code that merely \
exists in files, routine acknowledgments ("thanks", "ok", "continue").
3. One entry per distinct fact. Do not merge separate decisions into one entry.
4. If nothing fits a category, return an empty array. Never invent entries to fill a category.
5. confidence "explicit": the developer directly stated it ("we use pnpm", "always squash-merge"). \
confidence "inferred": a pattern you observed across several of the developer's choices without them stating it. \
Only infer when the pattern is clear.
6. supersedes: when a new decision replaces one listed under "Current decisions and conventions", put that \
record's id (e.g. "01JD3W4X5Y6Z7A8B9C0D1E2F3G"); otherwise null. Never make up an id.
7. preferences with scope "global" are about how this developer works in any project (style, tools, process); \
scope "project" when it only applies here.
8. active_work describes where the session stopped: the current task, blockers, next steps and open questions, \
so the next session can pick up. Leave current_task empty and lists empty if nothing is in progress.
9. gotchas are surprising behaviours of this codebase or its tools that cost time and would bite again.
10. flush_ok: true when the session holds nothing worth keeping (a greeting, a one-off question, a trivial \
lookup). Then leave every category empty.
11. Write each entry as one self-contained sentence a teammate understands without the transcript; name files, \
tools and libraries. Keep each under 300 words.

One example per field (from a different project):
- decisions: {{"what": "Use PostgreSQL instead of SQLite for the job queue", "rationale": "SQLite locked under \
concurrent workers in load tests", "supersedes": "01JC8Y2M4Q6S8U0W2Y4A6C8E0G", "confidence": "explicit"}}
- preferences: {{"category": "tooling", "rule": "Use uv, never pip, to install or run Python tools", \
"confidence": "explicit", "scope": "global"}}
- conventions: {{"scope": "module", "convention": "Handlers in api/routes/ return typed Pydantic models, never \
raw dicts", "confidence": "inferred"}}
- active_work: {{"current_task": "Migrating the billing webhooks to the new event bus", "blockers": ["Staging \
lacks the new topic"], "next_steps": ["Replay last week's events against staging"], "open_questions": ["Keep the \
old endpoint for one release?"]}}
- gotchas: {{"pattern": "pytest-xdist runs reuse one SQLite file unless TEST_DB_PATH is set per worker", \
"why_it_matters": "Tests fail at random with 'database is locked'"}}
- flush_ok: true for "what does this error mean?" answered in one reply with nothing decided.

Negative examples (extract nothing): Claude says "I'll use a dict here for speed" and the developer says nothing \
about it; Claude runs `npm test` on its own; a README that Claude read mentions Redis.

The answer's JSON schema is the `{TOOL_NAME}` tool's input schema."""

TOOL = {
    "name": TOOL_NAME,
    "description": "Record the decisions, preferences, conventions, gotchas and active work of the session (SPEC §6).",
    "input_schema": OUTPUT_SCHEMA,
}


@dataclass(frozen=True, kw_only=True)
class KnownRecord:
    record_id: str
    type: str
    title: str


def system_blocks(*, cache: bool = False) -> list[dict[str, object]]:
    """The system prompt as one text block; with `cache`, carrying a prompt-cache breakpoint."""
    block: dict[str, object] = {"type": "text", "text": SYSTEM_PROMPT}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return [block]


def known_section(known: Sequence[KnownRecord]) -> str:
    if not known:
        return "Current decisions and conventions of this project: none recorded yet."
    lines = ["Current decisions and conventions of this project (id · type · title):"]
    for record in list(known)[:KNOWN_RECORDS_MAX]:
        title = " ".join(record.title.split())[:KNOWN_TITLE_CHARS]
        lines.append(f"- {record.record_id} · {record.type} · {title}")
    return "\n".join(lines)


def session_message(text: str, known: Sequence[KnownRecord], *, part: tuple[int, int] | None = None) -> str:
    """The user message for one call over the whole session, its head and tail, or one chunk."""
    if part is None:
        scope = "Here is the session transcript."
    else:
        index, total = part
        scope = (
            f"Here is part {index} of {total} of a long session transcript. Extract only from this part; "
            "another step merges the parts, so do not guess about what other parts contain."
        )
    return f"{known_section(known)}\n\n{scope}\n\n<transcript>\n{text}\n</transcript>"


def synthesis_message(partials: Sequence[dict[str, object]], known: Sequence[KnownRecord]) -> str:
    """The user message of the map-reduce's final call: merge the per-part answers into one."""
    parts = "\n".join(
        f'<part index="{index}">{json.dumps(partial, ensure_ascii=False)}</part>'
        for index, partial in enumerate(partials, start=1)
    )
    return (
        f"{known_section(known)}\n\n"
        f"A long session was read in {len(partials)} parts, in order; each part was extracted on its own. "
        "Merge them into one answer following the same rules: keep every distinct fact once, drop repeats, and when "
        "a later part changes an earlier decision keep only the later one. active_work is where the LAST part "
        "stopped. flush_ok is true only if every part had nothing worth keeping.\n\n"
        f"<parts>\n{parts}\n</parts>"
    )
