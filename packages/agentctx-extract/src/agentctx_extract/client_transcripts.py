"""Reading Codex CLI rollouts and Gemini CLI chat recordings into the same `Transcript` the
Claude Code reader gives, so extraction itself knows nothing of clients.

The developer's words are what matters (docs/adr/0009-extraction-at-session-end.md): the typed
prompt, never the context the client or our hooks put next to it.

- Codex rollout (`$CODEX_HOME/sessions/…/rollout-*.jsonl`): `response_item` lines carry the
  conversation. `user` messages are the developer, except Codex's own `<environment_context>`
  and similar tagged blocks; `developer` messages are the system prompt and hook context
  (skipped); `function_call` / `function_call_output` are tool turns; `compacted` is a summary.
  A subagent's rollout is a separate file and is not read.
- Gemini chat recording (`~/.gemini/tmp/<project>/chats/session-*.jsonl`): a header line
  `{sessionId, …}`, message lines `{id, type: "user"|"gemini", content, toolCalls?}` (a message
  is written again when it changes: the last copy wins) and `{"$set": {"messages": […]}}`
  patches. A user message's first text part starts with the SessionStart `<hook_context>`, a
  later part is BeforeAgent's: only the typed text is the developer. On `--resume`, Gemini
  0.61.0 points `transcript_path` at a new, nearly empty file and keeps appending the
  conversation to the old one, so every recording of the session in that folder is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentctx_store import clients
from agentctx_store.bounded import Refused, regular_lines
from agentctx_store.client_text import strip_hook_context
from agentctx_store.jsontext import is_array, is_object

from agentctx_extract.transcript import Transcript, Turn, read_entries

HOOK_CONTEXT = "<hook_context>"
# Codex 0.171 sends the AGENTS.md files it found as a user message opening with this line
CODEX_INSTRUCTIONS = "# AGENTS.md instructions for "
HEADER_BYTES = 64_000  # a recording's first line (its header) is read up to this size


def read_for_client(path: Path, client: str, *, session_id: str | None = None) -> Transcript:
    """The transcript of `client`'s session at `path`, read in the client's format (its
    `transcript` in `agentctx_store.clients`).

    Raises:
        OSError: the file cannot be read.
        ValueError: an unknown client, or a format there is no reader for.
    """
    transcript = clients.get(client).transcript
    if transcript == "codex":
        return read_codex_rollout(path)
    if transcript == "gemini":
        return read_gemini_chat(path, session_id=session_id)
    if transcript == "claude":
        from agentctx_extract.transcript import read_transcript

        return read_transcript(path)
    raise ValueError(f"no reader for {client!r}'s transcript format {transcript!r}")


# -- Codex -------------------------------------------------------------------------------------


def _parts_text(content: Any) -> str:
    """A string, or the `text` of a list of parts (both clients use both)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content if is_array(content) else []:
        if is_object(part) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def _codex_turns(entries: list[dict[str, Any]]) -> Iterator[Turn]:
    for entry in entries:
        payload = entry.get("payload")
        payload = payload if is_object(payload) else {}
        if entry.get("type") == "compacted":
            summary = payload.get("message")  # None when the entry has no payload object
            yield Turn(kind="meta", text=str(summary or "(conversation compacted here)"), detail="compact summary")
            continue
        if entry.get("type") != "response_item":
            continue
        kind = payload.get("type")
        if kind == "message":
            text = _parts_text(payload.get("content"))
            role = payload.get("role")
            if role == "user":
                stripped = text.lstrip()
                if stripped.startswith(CODEX_INSTRUCTIONS):  # the AGENTS.md files Codex sends: `learn`'s job
                    continue
                tagged = stripped.startswith("<") and stripped.split(">", 1)[0][1:].replace("_", "").isalpha()
                yield Turn(kind="meta" if tagged else "developer", text=text)
            elif role == "assistant":
                yield Turn(kind="assistant", text=text)
            # developer: the base prompt, skills, and hook context (ours): never re-extracted
        elif kind in ("function_call", "custom_tool_call"):
            name = str(payload.get("name") or "tool")
            arguments = payload.get("arguments") or payload.get("input") or ""
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
            except ValueError:
                parsed = arguments
            shown = parsed.get("cmd") or parsed.get("command") if is_object(parsed) else None
            text = f"{name}: {shown if isinstance(shown, str) else json.dumps(parsed, ensure_ascii=False)}"
            yield Turn(kind="tool_call", text=text, detail=name)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            yield Turn(kind="tool_output", text=_parts_text(payload.get("output")))


def read_codex_rollout(path: Path) -> Transcript:
    entries: list[dict[str, Any]] = []
    bad = 0
    for entry in read_entries(path):
        if entry is None:
            bad += 1
        else:
            entries.append(entry)
    meta = next((e.get("payload") for e in entries if e.get("type") == "session_meta"), None)
    meta = meta if is_object(meta) else {}
    turns = tuple(turn for turn in _codex_turns(entries) if turn.text.strip())
    session = meta.get("session_id") or meta.get("id")
    return Transcript(
        session_id=str(session) if session else None,
        cwd=str(meta["cwd"]) if meta.get("cwd") else None,
        turns=turns,
        bad_lines=bad,
    )


# -- Gemini ------------------------------------------------------------------------------------


def _gemini_messages(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """(header, messages in order with the last copy of each id, bad lines) of one recording."""
    header: dict[str, Any] = {}
    order: list[str] = []
    by_id: dict[str, dict[str, Any]] = {}
    bad = 0
    for entry in read_entries(path):
        if entry is None:
            bad += 1
            continue
        if "sessionId" in entry and "type" not in entry:
            header = entry
        elif isinstance(entry.get("$set"), dict):
            # `$set.messages` rewrites the history: on resume, Gemini 0.61.0 writes it without the
            # earlier run's first prompt. Nothing said is forgotten here: messages are merged, so
            # the turns only ever grow (extraction resumes from the turns it has done).
            messages = entry["$set"].get("messages")
            for message in messages if is_array(messages) else []:
                if is_object(message) and message.get("id"):
                    key = str(message["id"])
                    if key not in by_id:
                        order.append(key)
                    by_id[key] = message
        elif entry.get("id") and entry.get("type"):
            key = str(entry["id"])
            if key not in by_id:
                order.append(key)
            by_id[key] = entry
    return header, [by_id[key] for key in order], bad


def session_recordings(path: Path, session_id: str | None) -> list[Path]:
    """Every recording of the session in `path`'s folder (oldest first); `path` alone when the
    session id is unknown or none matches."""
    if not session_id or not path.parent.is_dir():
        return [path]
    found: list[tuple[str, Path]] = []
    for candidate in path.parent.glob("session-*.jsonl"):
        try:  # the first line only, of a regular file only (a FIFO named like one would hang)
            first = next(regular_lines(str(candidate), limit=HEADER_BYTES, line_limit=HEADER_BYTES), b"")
            header = json.loads(first.decode("utf-8") or "{}")
        except (Refused, ValueError, RecursionError):
            continue
        if is_object(header) and header.get("sessionId") == session_id:
            found.append((str(header.get("startTime") or ""), candidate))
    if path.exists() and path not in [candidate for _, candidate in found]:
        found.append(("", path))
    return [candidate for _, candidate in sorted(found)] or [path]


def _typed(text: str) -> str:
    return strip_hook_context(text)


def _gemini_turns(message: dict[str, Any]) -> Iterator[Turn]:
    content = message.get("content")
    if message.get("type") == "user":
        parts: list[Any] = content if is_array(content) else [{"text": content}] if isinstance(content, str) else []
        for part in parts:
            if not is_object(part):
                continue
            if isinstance(part.get("text"), str):
                text = _typed(part["text"])
                if text.lstrip().startswith(("<session_context>", HOOK_CONTEXT)):
                    continue  # the CLI's own context, or a hook's (ours)
                yield Turn(kind="developer", text=text)
            elif isinstance(part.get("functionResponse"), dict):
                continue  # the result is shown with the call (toolCalls), once
    elif message.get("type") == "gemini":
        text = _parts_text(content)  # a string, or (as a resume rewrites it) a list of `{text}` parts
        if text.strip():
            yield Turn(kind="assistant", text=text)
        for call in message.get("toolCalls") or ():
            if not is_object(call):
                continue
            name = str(call.get("name") or "tool")
            args = call.get("args")
            args = args if is_object(args) else {}
            shown = args.get("command") or args.get("file_path") or args.get("query")
            text = f"{name}: {shown if isinstance(shown, str) else json.dumps(args, ensure_ascii=False)}"
            yield Turn(kind="tool_call", text=text, detail=name)
            for result in call.get("result") or ():
                found = result.get("functionResponse") if is_object(result) else None
                response = found.get("response") if is_object(found) else None
                output = response.get("output") if is_object(response) else None
                if isinstance(output, str):
                    yield Turn(kind="tool_output", text=output.split("\n\n<hook_context>", 1)[0])


def read_gemini_chat(path: Path, *, session_id: str | None = None) -> Transcript:
    header, _, _ = _gemini_messages(path) if path.exists() else ({}, [], 0)
    session = session_id or header.get("sessionId")
    turns: list[Turn] = []
    seen: set[str] = set()
    bad = 0
    for recording in session_recordings(path, session):
        _, messages, bad_lines = _gemini_messages(recording)
        bad += bad_lines
        for message in messages:
            key = str(message.get("id"))
            if key in seen:
                continue
            seen.add(key)
            turns.extend(turn for turn in _gemini_turns(message) if turn.text.strip())
    return Transcript(session_id=str(session) if session else None, cwd=None, turns=tuple(turns), bad_lines=bad)
