"""PreCompact, Stop, SessionEnd, CwdChanged, and what the entry point does with bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Store, resolve_project

from agentctx_hooks import log, state
from agentctx_hooks.__main__ import main, run
from agentctx_hooks.lifecycle import recent_prompts

Hook = Callable[..., dict[str, Any] | None]
Payload = Callable[..., dict[str, Any]]


def _log() -> str:
    path = Path(log.log_path())
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_an_ordinary_stop_asks_for_no_extraction(hook: Hook, payload: Payload, project_dir: Path) -> None:
    """Stop fires after every turn; extraction waits for SessionEnd (tests/test_extraction_schedule.py)."""
    data = payload("Stop", project_dir, "stop-session", stop_hook_active=False, last_assistant_message="done")
    assert hook("Stop", data) is None
    assert "extract --session-id" not in _log()


def test_session_end_closes_the_session_and_flushes_parked_accounting(
    hook: Hook, payload: Payload, project_dir: Path
) -> None:
    hook("SessionStart", payload("SessionStart", project_dir, "end-session", source="startup"))
    assert hook("SessionEnd", payload("SessionEnd", project_dir, "end-session", reason="other")) is None
    with Store.open() as store:
        session = store.get_session("end-session")
    assert session is not None and session["ended_at"]
    assert session["tokens_injected"] > 0 and session["injections"] == 1
    assert "pending" not in state.load("end-session")
    assert "consolidate --project" in _log()


def test_cwd_changed_to_another_project_refreshes_its_profile(hook: Hook, payload: Payload, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "go.mod").write_text("module example.com/second\n\ngo 1.22\n", encoding="utf-8")
    (first / "sub").mkdir()
    hook("CwdChanged", payload("CwdChanged", first / "sub", old_cwd=str(first), new_cwd=str(first / "sub")))
    with Store.open() as store:
        assert store.list_records(resolve_project(first), types=["profile"]) == []
    hook("CwdChanged", payload("CwdChanged", second, old_cwd=str(first), new_cwd=str(second)))
    with Store.open() as store:
        profile = store.list_records(resolve_project(second), types=["profile"])
        assert {record.key for record in profile} == {"stack", "commands"}
        assert store.list_records(resolve_project(first), types=["profile"]) == []


def test_recent_prompts_come_from_the_transcript_tail(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "first real prompt"}},
        {"type": "user", "isMeta": True, "message": {"content": "meta"}},
        {"type": "user", "message": {"content": "<command-name>/clear</command-name>"}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}},
        {"type": "user", "message": {"content": "second real prompt"}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert recent_prompts(str(transcript)) == ["first real prompt", "second real prompt"]
    assert recent_prompts(str(tmp_path / "missing.jsonl")) == []


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'"text"',
        b"\xff\xfe\x00binary",
        b'{"cwd": 5, "session_id": ["x"]}',
        b'{"prompt": "database"}',
        b"{" * 100_000,
    ],
)
@pytest.mark.parametrize(
    "event", ["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd", "CwdChanged"]
)
def test_bad_input_prints_nothing(event: str, raw: bytes) -> None:
    assert run(event, raw) == ""


def test_unknown_event_and_help_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["Nonsense"]) == 0
    assert main([]) == 0
    assert "usage: agentctx hook" in capsys.readouterr().out
    assert "unknown hook event 'Nonsense'" in _log()


def test_a_broken_store_is_logged_not_raised(hook: Hook, payload: Payload, project_dir: Path) -> None:
    from agentctx_store import paths

    Path(paths.db_path()).parent.mkdir(parents=True, exist_ok=True)
    Path(paths.db_path()).write_bytes(b"this is not a database at all, just text" * 10)
    assert hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, prompt="what database do we use")) is None
    assert "StoreError" in _log()
