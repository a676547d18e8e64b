"""Codex CLI rollouts and Gemini CLI chat recordings (tests-e2e/fixtures/codex-cli/sessions,
gemini-cli/transcripts, captured from the real clients) read into the shared `Transcript`:
the developer's typed words, never the context the client or our hooks put next to them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentctx_extract.client_transcripts import read_codex_rollout, read_for_client, read_gemini_chat
from agentctx_extract.transcript import render

FIXTURES = Path(__file__).resolve().parents[3] / "tests-e2e" / "fixtures"
ROLLOUT = FIXTURES / "codex-cli" / "sessions" / "rollout-main-compact-resume.jsonl"
CHAT = FIXTURES / "gemini-cli" / "transcripts" / "main-session.jsonl"


def test_codex_rollout() -> None:
    transcript = read_codex_rollout(ROLLOUT)
    assert transcript.session_id == "01a23442-0e50-7bf1-87cb-69e974d59e4a"
    assert transcript.developer_words == ["first prompt with compaction", "second prompt after resume"]
    text = render(transcript)
    assert "CTX_SS_MARKER" not in text and "CTX_UPS_MARKER" not in text  # hook context is never re-read
    assert "You are a coding agent" not in text
    assert "exec_command: echo before-compact" in text and "[CLAUDE] Resumed answer." in text
    assert any(turn.detail == "compact summary" for turn in transcript.turns)
    mcp = read_codex_rollout(FIXTURES / "codex-cli" / "sessions" / "rollout-mcp.jsonl")
    assert any(turn.kind == "tool_call" and turn.detail == "ctx_search" for turn in mcp.turns)


def test_gemini_chat_recording() -> None:
    transcript = read_gemini_chat(CHAT)
    assert transcript.session_id == "7fc218d9-f76e-4641-91b5-3e7a02becaeb"
    assert transcript.developer_words == ["Run echo then search context"]
    text = render(transcript)
    assert "SESSIONSTART_MARKER" not in text and "BEFOREAGENT_MARKER" not in text and "AFTERTOOL_MARKER" not in text
    assert "<session_context>" not in text
    assert text.count("run_shell_command: echo hi-from-shell") == 1  # a message written twice counts once
    assert "hi-from-shell" in text and "[CLAUDE] All done." in text


def test_gemini_resume_reads_the_file_that_holds_the_session(tmp_path: Path) -> None:
    """Gemini 0.61.0 on `--resume` points transcript_path at a new, nearly empty file while the
    conversation goes on in the old one: every recording of the session is read, oldest first."""
    chats = tmp_path / "chats"
    chats.mkdir()
    old = chats / "session-2026-12-02T00-58-7fc218d9.jsonl"
    shutil.copy(CHAT, old)
    header = json.loads(CHAT.read_text(encoding="utf-8").splitlines()[0])
    new = chats / "session-2026-12-02T01-10-7fc218d9.jsonl"
    new.write_text(json.dumps({**header, "startTime": "2026-12-02T01:10:00.000Z"}) + "\n", encoding="utf-8")
    with old.open("a", encoding="utf-8") as handle:  # the resumed prompt lands in the old file
        message = {"id": "m-resumed", "timestamp": "2026-12-02T01:10:01Z", "type": "user"}
        handle.write(json.dumps({**message, "content": [{"text": "<hook_context>digest</hook_context>\n\nand now?"}]}))
        handle.write("\n")
    other = chats / "session-2026-12-02T00-59-other.jsonl"
    other.write_text(
        json.dumps({**header, "sessionId": "someone-else"})
        + "\n"
        + json.dumps({"id": "x", "type": "user", "content": [{"text": "another session"}]})
        + "\n",
        encoding="utf-8",
    )

    transcript = read_for_client(new, "gemini", session_id=header["sessionId"])
    assert transcript.developer_words == ["Run echo then search context", "and now?"]


def test_unknown_client() -> None:
    with pytest.raises(ValueError, match="supported"):
        read_for_client(CHAT, "cursor")


def test_gemini_resume_in_the_same_file_keeps_every_turn_in_order(tmp_path: Path) -> None:
    """As Gemini 0.61.0 wrote it in tests-e2e/test_gemini_cli.py: on resume a second header and a
    `$set.messages` history without the first prompt, the earlier reply now a list of parts.
    Turns only ever grow, so incremental extraction picks up exactly the new prompt."""
    header = {"sessionId": "s1", "projectHash": "h", "startTime": "t0", "lastUpdated": "t0", "kind": "main"}
    context = {"id": "ctx", "type": "user", "content": [{"text": "<session_context>\n…</session_context>"}]}
    lines = [
        header,
        {"$set": {"messages": [context]}},
        {"id": "u1", "type": "user", "content": [{"text": "<hook_context>digest</hook_context>\n\nfirst prompt"}]},
        {"id": "g1", "type": "gemini", "content": "First answer."},
        header,
        {"$set": {"messages": [context, {"id": "g1", "type": "gemini", "content": [{"text": "First answer."}]}]}},
        {"id": "u2", "type": "user", "content": [{"text": "<hook_context>digest</hook_context>\n\nsecond prompt"}]},
        {"id": "g2", "type": "gemini", "content": "Second answer."},
    ]
    path = tmp_path / "session-x.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    turns = [(turn.kind, turn.text) for turn in read_gemini_chat(path).turns]
    assert turns == [
        ("developer", "first prompt"),
        ("assistant", "First answer."),
        ("developer", "second prompt"),
        ("assistant", "Second answer."),
    ]


def test_codex_agents_md_is_not_the_developer(tmp_path: Path) -> None:
    """Codex 0.171 sends the AGENTS.md files it found as a user message (seen in a real rollout,
    tests-e2e/test_extract_via_client.py); it is the project's instructions, not what was said."""
    agents = "# AGENTS.md instructions for /src/shop\n\n<INSTRUCTIONS>\nAlways use pnpm.\n</INSTRUCTIONS>"
    line = {
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": agents}]},
    }
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(json.dumps(line) + "\n" + ROLLOUT.read_text(encoding="utf-8"), encoding="utf-8")
    transcript = read_codex_rollout(rollout)
    assert transcript.developer_words == ["first prompt with compaction", "second prompt after resume"]
    assert "Always use pnpm" not in render(transcript)
