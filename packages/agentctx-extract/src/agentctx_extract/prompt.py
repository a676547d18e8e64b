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
# With `tools`, the API adds its own tool-use system prompt to every request and bills it as
# input: 313 tokens for a forced tool on current models, 346 with tool_choice auto, up to 340 on
# Claude 3 (docs: "Tool use pricing and tokens"). Cost estimates add the largest, so they never
# under-count.
TOOL_USE_SYSTEM_TOKENS = 346

SYSTEM_PROMPT = f"""From the transcript of one Claude Code session, extract what a future session in the same \
project needs to know. Answer only by calling the `{TOOL_NAME}` tool, once.

Transcript labels:
- [DEVELOPER]: the developer, the ONLY source of decisions, preferences and conventions.
- [CLAUDE]: the assistant. Its suggestions are not decisions unless the developer accepted or chose them \
("yes, do that", "go with option 2").
- [TOOL CALL] / [TOOL OUTPUT]: commands and results (a successful one's output is cut short); [META]: harness \
bookkeeping (command echoes, compaction summaries, notifications); [SUBAGENT]: work of a helper agent. All context: \
use them to understand what the developer said, never as a source of facts on their own.
- [REDACTED:kind] replaced a secret: never reconstruct or mention secrets.

Rules:
1. Extract ONLY from things the developer said or chose, not from Claude's suggestions.
2. Do NOT extract commands Claude ran on its own, file contents Claude wrote unprompted, code that merely exists \
in files, or acknowledgments ("thanks", "ok", "continue").
3. One entry per distinct fact; never merge separate decisions.
4. Nothing fits a category: empty array. Never invent entries.
5. confidence "explicit": the developer stated it ("we use pnpm"); "inferred": a clear pattern across several of \
the developer's choices, never stated.
6. supersedes: the id of the record under "Current decisions and conventions" that a new decision replaces, else \
null. Never make up an id.
7. preference scope "global": how this developer works in any project (style, tools, process); "project": only here.
8. active_work: where the session stopped (task, blockers, next steps, open questions) for the next session; \
empty if nothing is in progress.
9. gotchas: surprising behaviours of this codebase or its tools that cost time and would bite again.
10. flush_ok true (every category empty) when nothing is worth keeping: a greeting, a one-off question, a lookup.
11. Each entry is one self-contained sentence a teammate understands without the transcript, naming files, tools \
and libraries; under 300 words.

Examples (another project):
- decisions: {{"what": "Use PostgreSQL, not SQLite, for the job queue", "rationale": "SQLite locked under \
concurrent workers", "supersedes": "01JC8Y2M4Q6S8U0W2Y4A6C8E0G", "confidence": "explicit"}}
- preferences: {{"category": "tooling", "rule": "Use uv, never pip, for Python tools", "confidence": "explicit", \
"scope": "global"}}
- conventions: {{"scope": "module", "convention": "Handlers in api/routes/ return Pydantic models, never dicts", \
"confidence": "inferred"}}
- active_work: {{"current_task": "Moving billing webhooks to the event bus", "blockers": ["Staging lacks the \
topic"], "next_steps": ["Replay last week's events on staging"], "open_questions": ["Keep the old endpoint?"]}}
- gotchas: {{"pattern": "pytest-xdist workers share one SQLite file unless TEST_DB_PATH is set", "why_it_matters": \
"Random 'database is locked' failures"}}
- flush_ok: true for "what does this error mean?" answered in one reply, nothing decided.
Extract nothing when Claude says "I'll use a dict here" and the developer says nothing about it, Claude runs \
`npm test` on its own, or a README Claude read mentions Redis."""

TOOL = {
    "name": TOOL_NAME,
    "description": "Record the decisions, preferences, conventions, gotchas and active work of the session.",
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
