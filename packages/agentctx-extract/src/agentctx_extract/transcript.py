"""Reading a Claude Code transcript (JSONL) and telling the developer's words from everything else.

Extraction may only learn from what the developer said or chose
(docs/adr/0009-extraction-at-session-end.md), so the split matters more than the rendering: a `user`
entry is the developer only when its content is typed text and it is not meta (`isMeta`,
`isCompactSummary`, `<command-name>` echoes, local command output, `<task-notification>` from a
finished background agent). Tool results, assistant blocks, attachments and subagent transcripts are
context. Bookkeeping lines (`api-request`, `queue-operation`, …) and our own injected context
(`hook_additional_context`) are skipped: re-reading our own records would only make the model echo
them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentctx_store.jsontext import is_array, is_object
from agentctx_store.transcripts import LIMITS, TOOL_ERROR_CHARS, is_meta

TurnKind = Literal["developer", "assistant", "tool_call", "tool_output", "meta", "subagent"]

LABELS: dict[str, str] = {
    "developer": "DEVELOPER",
    "assistant": "CLAUDE",
    "tool_call": "TOOL CALL",
    "tool_output": "TOOL OUTPUT",
    "meta": "META",
    "subagent": "SUBAGENT",
}
# inside a subagent the "user" is the main agent handing over a task, never the developer
SIDECHAIN_LABELS: dict[str, str] = {
    "developer": "task from the main agent",
    "assistant": "subagent said",
    "tool_call": "tool call",
    "tool_output": "tool output",
    "meta": "meta",
    "subagent": "subagent",
}
# A failed command's output is where gotchas come from, and its error is at the end: kept
# longer, mostly its tail. So is what the developer typed into a tool (a rejected tool call's
# reason arrives as an error; AskUserQuestion / ExitPlanMode results carry their answers).
DEVELOPER_ANSWER_TOOLS = frozenset({"AskUserQuestion", "ExitPlanMode"})
ATTACHED_FILE_CHARS = 600  # a file the developer @-mentioned: they chose to show it
SUBAGENT_TOTAL_CHARS = 6000
CONVERSATION_TYPES = frozenset({"user", "assistant", "attachment", "system"})
# A transcript is read up to this size (later lines are not extracted), a line up to this one
# (an image or a huge tool output; longer lines are counted as bad): a 2 GB file or one huge
# line never fills the memory of a background extraction.
MAX_TRANSCRIPT_BYTES = 512 << 20
MAX_LINE_BYTES = 32 << 20


@dataclass(frozen=True, kw_only=True)
class Turn:
    kind: TurnKind
    text: str
    detail: str = ""  # e.g. "compact summary", the tool name, the subagent id


@dataclass(frozen=True, kw_only=True)
class Transcript:
    session_id: str | None
    cwd: str | None
    turns: tuple[Turn, ...]
    subagent_turns: tuple[Turn, ...] = ()
    bad_lines: int = 0

    def of_kind(self, kind: TurnKind) -> list[Turn]:
        return [turn for turn in self.turns if turn.kind == kind]

    @property
    def developer_words(self) -> list[str]:
        return [turn.text for turn in self.of_kind("developer")]


def read_entries(path: Path) -> Iterator[dict[str, Any] | None]:
    """One parsed object per line; None for a line that is not a JSON object (a torn write, or
    one over `MAX_LINE_BYTES`). The path comes from a hook payload: only a regular file is read
    (a FIFO or a device never is), and only its first `MAX_TRANSCRIPT_BYTES`.

    Raises:
        OSError: missing, unreadable or not a regular file (`bounded.Unreadable`).
    """
    from agentctx_store.bounded import regular_lines

    lines = regular_lines(str(path), limit=MAX_TRANSCRIPT_BYTES, line_limit=MAX_LINE_BYTES)
    try:
        for raw in lines:
            if not raw.strip():
                continue
            try:
                value = json.loads(raw.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):
                yield None
                continue
            yield value if is_object(value) else None
    finally:
        lines.close()


def _text_of(content: Any) -> str:
    """The text of a tool result or message content: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if is_array(content):
        parts: list[str] = []
        for block in content:
            if is_object(block):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "image":
                    parts.append("[image]")
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(part for part in parts if part)
    return "" if content is None else str(content)


def _tool_call_text(block: dict[str, Any]) -> str:
    name = str(block.get("name", "tool"))
    tool_input = block.get("input")
    if is_object(tool_input):
        for key in ("command", "file_path", "path", "pattern", "query", "url", "description", "prompt"):
            if isinstance(tool_input.get(key), str):
                return f"{name}: {tool_input[key]}"
        return f"{name}: {json.dumps(tool_input, ensure_ascii=False)}"
    return name


def _object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a field that is missing, null or of
    another type reads as empty)."""
    return value if is_object(value) else {}


def _user_turns(entry: dict[str, Any], tool_names: dict[str, str]) -> Iterator[Turn]:
    content = _object(entry.get("message")).get("content")
    if entry.get("isCompactSummary"):
        yield Turn(kind="meta", text=_text_of(content), detail="compact summary")
        return
    if isinstance(content, str):
        kind: TurnKind = "meta" if entry.get("isMeta") or is_meta(content) else "developer"
        yield Turn(kind=kind, text=content)
        return
    if not is_array(content):
        return
    results = [block for block in content if is_object(block) and block.get("type") == "tool_result"]
    if results:
        for block in results:
            name = tool_names.get(str(block.get("tool_use_id")), "")
            detail = "error" if block.get("is_error") else (name if name in DEVELOPER_ANSWER_TOOLS else "")
            yield Turn(kind="tool_output", text=_text_of(block.get("content")), detail=detail)
        return
    # typed text sent with an image arrives as a list of blocks: still the developer's words
    text = _text_of(content)
    if text:
        meta = entry.get("isMeta") or is_meta(text)
        yield Turn(kind="meta" if meta else "developer", text=text)


def _assistant_turns(entry: dict[str, Any], tool_names: dict[str, str]) -> Iterator[Turn]:
    content = _object(entry.get("message")).get("content")
    if isinstance(content, str):
        yield Turn(kind="assistant", text=content)
        return
    for block in content if is_array(content) else []:
        if not is_object(block):
            continue
        if block.get("type") == "text" and block.get("text"):
            yield Turn(kind="assistant", text=str(block["text"]))
        elif block.get("type") == "tool_use":
            tool_names[str(block.get("id"))] = str(block.get("name", ""))
            yield Turn(kind="tool_call", text=_tool_call_text(block), detail=str(block.get("name", "")))
        # thinking blocks are the model's scratchpad: neither the developer nor a result


def turns_of(entries: Iterable[dict[str, Any]]) -> Iterator[Turn]:
    """The turns of a main-session transcript, in order (sidechain entries become subagent turns)."""
    tool_names: dict[str, str] = {}  # tool_use id -> tool name, so a result knows its tool
    for entry in entries:
        kind = entry.get("type")
        produced: Iterable[Turn] = ()
        if kind == "user":
            produced = _user_turns(entry, tool_names)
        elif kind == "assistant":
            produced = _assistant_turns(entry, tool_names)
        elif kind == "attachment":
            attachment = _object(entry.get("attachment"))
            if attachment.get("type") == "file":  # a file the developer @-mentioned
                file = attachment.get("content", {})
                text = _text_of(_object(file.get("file")).get("content") if is_object(file) else file)
                produced = [Turn(kind="tool_output", text=text, detail="attached file")] if text else []
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            produced = [Turn(kind="meta", text="(conversation compacted here)", detail="compact boundary")]
        for turn in produced:
            if entry.get("isSidechain"):
                yield Turn(kind="subagent", text=f"{SIDECHAIN_LABELS[turn.kind]}: {turn.text}", detail="sidechain")
            elif turn.text.strip():
                yield turn


def subagent_paths(transcript_path: Path) -> list[Path]:
    """Subagents write `<session>/subagents/agent-<id>.jsonl` next to `<session>.jsonl`."""
    folder = transcript_path.with_suffix("") / "subagents"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def read_transcript(path: Path, *, with_subagents: bool = True) -> Transcript:
    """Parse a transcript file. Unreadable lines are counted, not fatal.

    Raises:
        OSError: the file cannot be read.
    """
    entries: list[dict[str, Any]] = []
    bad = 0
    for entry in read_entries(path):
        if entry is None:
            bad += 1
        elif entry.get("type") in CONVERSATION_TYPES:  # request blobs can be most of a long file: drop them early
            entries.append(entry)
    session_id = next((str(e["sessionId"]) for e in entries if e.get("sessionId")), None)
    cwd = next((str(e["cwd"]) for e in entries if e.get("cwd") and not e.get("isSidechain")), None)
    subagent: list[Turn] = []
    if with_subagents:
        for sub_path in subagent_paths(path):
            sub_entries = [entry for entry in read_entries(sub_path) if entry is not None]
            for turn in turns_of(sub_entries):
                subagent.append(Turn(kind="subagent", text=turn.text, detail=sub_path.stem))
    return Transcript(
        session_id=session_id, cwd=cwd, turns=tuple(turns_of(entries)), subagent_turns=tuple(subagent), bad_lines=bad
    )


def trim(text: str, limit: int, *, head_share: float = 0.7) -> str:
    """Keep the head and the tail of an over-long text, saying how much was cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = int(limit * head_share)
    tail = limit - head
    return f"{text[:head].rstrip()} …[{len(text) - limit} chars trimmed]… {text[-tail:].lstrip()}"


def _line(turn: Turn) -> str:
    label = LABELS[turn.kind] + (f" ({turn.detail})" if turn.detail and turn.kind in ("meta", "tool_output") else "")
    if turn.kind == "tool_output" and (turn.detail == "error" or turn.detail in DEVELOPER_ANSWER_TOOLS):
        return f"[{label}] {trim(turn.text, TOOL_ERROR_CHARS, head_share=0.3)}"
    if turn.kind == "tool_output" and turn.detail == "attached file":
        return f"[{label}] {trim(turn.text, ATTACHED_FILE_CHARS)}"
    return f"[{label}] {trim(turn.text, LIMITS[turn.kind])}"


def render(transcript: Transcript, *, start: int = 0, context_turns: int = 3) -> str:
    """A compact, role-labelled text of the session for the model; subagent work comes last,
    marked as context only.

    With `start`, only the turns from that index on are new (Stop fires after every turn, so
    a session is extracted in increments); the few turns before it come first, marked as
    already extracted.
    """
    lines: list[str] = []
    if start > 0:
        lines.append(
            "[META] Earlier turns of this session were already extracted; the last few follow as context only:"
        )
        lines.extend(_line(turn) for turn in transcript.turns[max(0, start - context_turns) : start])
        lines.append("[META] New since the last extraction (extract from here on):")
    lines.extend(_line(turn) for turn in transcript.turns[start:])
    if transcript.subagent_turns:
        lines.append("[META] Work done by subagents (context only; none of it is the developer speaking):")
        used = 0
        for turn in transcript.subagent_turns:
            line = f"[SUBAGENT {turn.detail}] {trim(turn.text, LIMITS['subagent'])}"
            if used + len(line) > SUBAGENT_TOTAL_CHARS:
                lines.append("[SUBAGENT] …(more subagent activity omitted)")
                break
            used += len(line)
            lines.append(line)
    return "\n".join(lines)
