"""When the hooks ask for an extraction (issue 14): SessionEnd always, Stop only past the
threshold, PreCompact, and SessionStart sweeping sessions that ended without SessionEnd.

Spawns are off here (`AGENTCTX_HOOKS_NO_SPAWN=1`): each spawn the hooks would make is one
`skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx extract …` line in hooks.log, which is what these
tests read. The real detached runs against a Messages API server are in
packages/agentctx-extract/tests/test_extraction_runs.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentctx_hooks import extraction, log, state, unextracted

Hook = Callable[..., dict[str, Any] | None]
Payload = Callable[..., dict[str, Any]]


def spawned(trigger: str | None = None) -> list[str]:
    """The extract commands the hooks asked for, in order."""
    path = Path(log.log_path())
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    found = [line.split("agentctx extract ", 1)[1] for line in lines if "agentctx extract " in line]
    return [line for line in found if trigger is None or line.endswith(f"--trigger {trigger}")]


def write_turns(path: Path, turns: int, *, words: int = 50, start: int = 0) -> None:
    """Append Claude Code-shaped turns: developer words, a tool call and its output, a reply."""
    entries = []
    for index in range(start, start + turns):
        text = " ".join(f"word{index}x{n}" for n in range(words))
        entries += [
            {"type": "user", "message": {"role": "user", "content": f"rule {index}: {text}"}},
            {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {}}]}},
            {"type": "user", "message": {"content": [{"type": "tool_result", "content": "x " * 5000}]}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": f"ok {text}"}]}},
            {"type": "user", "isMeta": True, "message": {"content": "meta " * 3000}},
            {"type": "user", "message": {"content": "<command-name>/cost</command-name>"}},
        ]
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(entry) + "\n" for entry in entries))


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "claude" / "s1.jsonl"
    path.parent.mkdir()
    path.write_text("", encoding="utf-8")
    return path


def event(payload: Payload, name: str, cwd: Path, session: str, transcript: Path, **fields: Any) -> dict[str, Any]:
    return {**payload(name, cwd, session, **fields), "transcript_path": str(transcript)}


def test_stops_below_the_threshold_extract_nothing_and_session_end_extracts_once(
    hook: Hook, payload: Payload, project_dir: Path, transcript: Path
) -> None:
    for turn in range(10):
        write_turns(transcript, 1, start=turn)
        hook("Stop", event(payload, "Stop", project_dir, "s1", transcript))
    assert spawned() == []
    # words and tool output (cut to the rendering's cap) count; meta entries and command echoes do not
    assert 0 < state.load("s1")["scan"]["tokens"] < extraction.CHECKPOINT_TOKENS
    assert state.load("s1")["scan"]["offset"] == transcript.stat().st_size

    hook("SessionEnd", event(payload, "SessionEnd", project_dir, "s1", transcript, reason="prompt_input_exit"))
    assert spawned() == [f"--session-id s1 --transcript {transcript} --trigger end"]
    marker = extraction.read_marker(extraction.marker_path("s1"))
    assert marker is not None and marker["ended"] is True


def test_clear_ends_the_session_and_extracts_it(
    hook: Hook, payload: Payload, project_dir: Path, transcript: Path
) -> None:
    write_turns(transcript, 2)
    hook("SessionEnd", event(payload, "SessionEnd", project_dir, "s1", transcript, reason="clear"))
    assert spawned("end") == [f"--session-id s1 --transcript {transcript} --trigger end"]


def test_a_stop_past_the_threshold_checkpoints_then_counts_afresh(
    hook: Hook, payload: Payload, project_dir: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extraction, "CHECKPOINT_TOKENS", 5_000)
    write_turns(transcript, 2)
    hook("Stop", event(payload, "Stop", project_dir, "s1", transcript))
    assert spawned() == []
    write_turns(transcript, 30, start=2)
    hook("Stop", event(payload, "Stop", project_dir, "s1", transcript))
    assert spawned("stop") == [f"--session-id s1 --transcript {transcript} --trigger stop"]
    # with spawns off nothing ran, so the count is kept and the next Stop asks again
    assert state.load("s1")["scan"]["tokens"] >= 5_000


def test_stop_reads_only_what_the_transcript_gained(transcript: Path) -> None:
    data: dict[str, Any] = {}
    write_turns(transcript, 2)
    first = unextracted.scan(str(transcript), data)
    assert unextracted.scan(str(transcript), data) == first  # nothing new: nothing added
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "user", "message": {"content": "half a li')  # being written
    assert unextracted.scan(str(transcript), data) == first
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write('ne of words"}}\n')
    assert unextracted.scan(str(transcript), data) > first
    transcript.write_text("", encoding="utf-8")  # a new file under the same name: start again
    assert unextracted.scan(str(transcript), data) == 0


def test_pre_compact_checkpoints(hook: Hook, payload: Payload, project_dir: Path, transcript: Path) -> None:
    write_turns(transcript, 2)
    hook("PreCompact", event(payload, "PreCompact", project_dir, "s1", transcript, trigger="auto"))
    assert spawned() == [f"--session-id s1 --transcript {transcript} --trigger precompact"]


def dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def crashed(session: str, project_dir: Path, transcript: Path, *, pid: int | None = None, ended: bool = False) -> None:
    """A session's marker as its SessionStart left it, its client since gone (or not)."""
    from agentctx_store import resolve_project

    os.makedirs(extraction.open_dir(), exist_ok=True)
    marker = {
        "session_id": session,
        "project_id": resolve_project(project_dir).project_id,
        "cwd": str(project_dir),
        "transcript": str(transcript),
        "pid": dead_pid() if pid is None else pid,
        "ended": ended,
    }
    Path(extraction.marker_path(session)).write_text(json.dumps(marker), encoding="utf-8")


def test_session_start_sweeps_this_projects_crashed_sessions_only(
    hook: Hook, payload: Payload, project_dir: Path, transcript: Path, tmp_path: Path
) -> None:
    write_turns(transcript, 2)
    other_project = tmp_path / "other-app"
    other_project.mkdir()
    crashed("crashed", project_dir, transcript)
    crashed("alive", project_dir, transcript, pid=os.getpid())  # its client still runs
    crashed("elsewhere", other_project, transcript)
    crashed("transcript-gone", project_dir, tmp_path / "missing.jsonl")

    hook("SessionStart", event(payload, "SessionStart", project_dir, "new", transcript, source="startup"))
    assert spawned() == [f"--session-id crashed --transcript {transcript} --trigger sweep"]
    assert not Path(extraction.marker_path("transcript-gone")).exists()
    mine = extraction.read_marker(extraction.marker_path("new"))
    assert mine is not None and mine["ended"] is False and mine["pid"] == os.getppid()


def test_an_ended_session_whose_extraction_did_not_finish_is_swept(
    hook: Hook, payload: Payload, project_dir: Path, transcript: Path
) -> None:
    write_turns(transcript, 1)
    crashed("ended", project_dir, transcript, pid=os.getpid(), ended=True)
    hook("SessionStart", event(payload, "SessionStart", project_dir, "new", transcript, source="startup"))
    assert spawned("sweep") == [f"--session-id ended --transcript {transcript} --trigger sweep"]


def test_a_resumed_session_is_not_swept_by_its_own_start(
    hook: Hook, payload: Payload, project_dir: Path, transcript: Path
) -> None:
    write_turns(transcript, 1)
    crashed("s1", project_dir, transcript)
    hook("SessionStart", event(payload, "SessionStart", project_dir, "s1", transcript, source="resume"))
    assert spawned() == []


def test_a_session_idle_for_a_day_is_swept_even_if_its_pid_was_reused(project_dir: Path, transcript: Path) -> None:
    from agentctx_store import resolve_project

    write_turns(transcript, 1)
    crashed("old", project_dir, transcript, pid=os.getpid())
    project_id = resolve_project(project_dir).project_id
    assert extraction.abandoned(project_id, "new") == []
    later = transcript.stat().st_mtime + extraction.IDLE_SWEEP_SECONDS + 60
    assert [marker["session_id"] for marker in extraction.abandoned(project_id, "new", now=later)] == ["old"]


def test_what_counts_is_what_the_extraction_would_send() -> None:
    def line(entry: dict[str, Any]) -> bytes:
        return json.dumps(entry).encode("utf-8")

    words = "decided to keep the queue in postgres " * 10
    developer = unextracted.rendered_tokens(line({"type": "user", "message": {"content": words}}))
    assert developer > 0
    claude = {"type": "assistant", "message": {"content": [{"type": "text", "text": words * 100}]}}
    assert unextracted.rendered_tokens(line(claude)) < developer * 10  # cut at 1,500 characters
    output = {"type": "user", "message": {"content": [{"type": "tool_result", "content": "passed " * 5000}]}}
    listed = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "content": [{"type": "text", "text": "passed " * 5000}]}]},
    }
    assert 0 < unextracted.rendered_tokens(line(output)) == unextracted.rendered_tokens(line(listed)) < 600
    for skipped in (
        {"type": "user", "isMeta": True, "message": {"content": words}},
        {"type": "user", "isSidechain": True, "message": {"content": words}},
        {"type": "user", "message": {"content": "<command-name>/cost</command-name>"}},
        {"type": "last-prompt", "lastPrompt": words},
    ):
        assert unextracted.rendered_tokens(line(skipped)) == 0, skipped


def test_stop_counts_a_successful_output_short_and_a_failed_one_longer() -> None:
    """As the rendering keeps them: 200 characters of a command that succeeded, 1,000 of one that failed."""

    def result(failed: bool) -> bytes:
        block = {"type": "tool_result", "content": "tests/test_mod.py::test_case PASSED\n" * 100, "is_error": failed}
        return json.dumps({"type": "user", "message": {"content": [block]}}).encode("utf-8")

    passed, failed = unextracted.rendered_tokens(result(False)), unextracted.rendered_tokens(result(True))
    assert 0 < passed < 150
    assert failed > 4 * passed
