"""`agentctx extract` as a subprocess of the installed entry point, talking to the local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from agentctx_store import Store, paths, resolve_project
from extract_testkit import MessagesServer, empty_answer, tool_reply, usage

AGENTCTX = str(Path(sys.executable).parent / "agentctx")
SESSION = "3f2a9c1e-5b7d-4e21-9a6b-0c8d7e6f5a41"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGENTCTX, *args], capture_output=True, text=True, timeout=120, env=dict(os.environ))


def test_extract_of_a_captured_transcript_writes_records(api: MessagesServer, fixture_transcripts: Path) -> None:
    answer = empty_answer(
        decisions=[
            {
                "what": "The team uses SQLite",
                "rationale": "chosen in March",
                "supersedes": None,
                "confidence": "explicit",
            }
        ],
        active_work={
            "current_task": "Recall the database decision",
            "blockers": [],
            "next_steps": [],
            "open_questions": [],
        },
    )
    api.push(tool_reply(answer, use=usage(1500, 250)))
    result = run(
        "extract", "--session-id", SESSION, "--transcript", str(fixture_transcripts / "main-session.jsonl"), "--json"
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["status"] == "written" and output["mode"] == "whole" and output["calls"] == 1
    assert output["cost_usd"] == round((1500 * 1.0 + 250 * 5.0) / 1_000_000, 6)
    (request,) = api.requests
    assert request["body"]["model"] == "claude-haiku-4-5"
    sent = request["body"]["messages"][0]["content"]
    assert "[DEVELOPER] Look up what we decided about the database" in sent
    assert "[DEVELOPER] What did we decide?" in sent
    assert "[META (compact summary)]" in sent
    project = resolve_project("/home/dev/src/demo-app")  # the transcript's cwd
    assert output["project_id"] == project.project_id
    with Store.open() as store:
        titles = sorted(record.title for record in store.list_records(project))
        session = store.get_session(SESSION)
    assert titles == ["Handover: Recall the database decision", "The team uses SQLite"]
    assert session is not None and session["extraction_cost_usd"] > 0

    again = run("extract", "--session-id", SESSION, "--transcript", str(fixture_transcripts / "main-session.jsonl"))
    assert again.returncode == 0 and again.stdout.startswith("already_done")
    assert len(api.requests) == 1


def test_extract_without_a_key_exits_0_and_sends_nothing(api: MessagesServer, fixture_transcripts: Path) -> None:
    env = dict(os.environ)
    env.pop("ANTHROPIC_API_KEY")
    transcript = fixture_transcripts / "main-session.jsonl"
    result = subprocess.run(
        [AGENTCTX, "extract", "--session-id", SESSION, "--transcript", str(transcript)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0 and result.stdout.startswith("no_key")
    assert api.requests == []
    lines = (Path(paths.logs_dir()) / "extract.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1


def test_extract_of_a_missing_transcript_is_a_one_line_error(tmp_path: Path) -> None:
    result = run("extract", "--session-id", "s", "--transcript", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 1
    assert result.stderr.startswith("Error: No transcript at") and "Traceback" not in result.stderr


def test_extract_project_override(api: MessagesServer, fixture_transcripts: Path, project_dir: Path) -> None:
    api.push(tool_reply(empty_answer(gotchas=[{"pattern": "Compaction drops tool output", "why_it_matters": "x"}])))
    transcript = fixture_transcripts / "2.0.77-main-session.jsonl"
    result = run("extract", "--session-id", "s-2077", "--transcript", str(transcript), "--project", str(project_dir))
    assert result.returncode == 0, result.stderr
    with Store.open() as store:
        assert [r.type for r in store.list_records(resolve_project(project_dir))] == ["discovery"]
        assert store.list_records(resolve_project("/home/dev/src/demo-app")) == []


def test_config_no_llm_turns_extraction_off(api: MessagesServer, fixture_transcripts: Path) -> None:
    assert run("config", "--no-llm").returncode == 0
    result = run("extract", "--session-id", SESSION, "--transcript", str(fixture_transcripts / "main-session.jsonl"))
    assert result.returncode == 0 and result.stdout.startswith("disabled")
    assert api.requests == []


def test_the_no_key_path_never_imports_the_sdk(fixture_transcripts: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    code = (
        "import sys; from pathlib import Path; from agentctx_extract import extract_session; "
        f"outcome = extract_session('s', Path({str(fixture_transcripts / 'main-session.jsonl')!r})); "
        "print(outcome.status, 'anthropic' in sys.modules, 'httpx' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert result.stdout.split() == ["no_key", "False", "False"], result.stderr


def wait_for(predicate: Callable[[], bool], *, seconds: float = 90.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_the_session_end_hook_starts_extraction_in_the_background(
    api: MessagesServer, fixture_transcripts: Path
) -> None:
    """The real wiring: `agentctx hook SessionEnd` returns at once; the detached run reaches the server
    and writes records. The test waits (polling, with a deadline) until the background runner
    has finished, so no process outlives it."""
    api.push(tool_reply(empty_answer(gotchas=[{"pattern": "Compaction re-injects context", "why_it_matters": "x"}])))
    transcript = fixture_transcripts / "main-session.jsonl"
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": "/home/dev/src/demo-app",
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    env = {k: v for k, v in os.environ.items() if k != "AGENTCTX_HOOKS_NO_SPAWN"}
    result = subprocess.run(
        [AGENTCTX, "hook", "SessionEnd"], input=json.dumps(payload), capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    hooks_log = Path(paths.logs_dir()) / "hooks.log"
    finished = wait_for(
        lambda: (
            hooks_log.exists()
            and any(
                "extract" in line and " in " in line
                for line in hooks_log.read_text(encoding="utf-8").splitlines()
                if "background" in line
            )
        )
    )
    assert finished, hooks_log.read_text(encoding="utf-8") if hooks_log.exists() else "no hooks.log"
    assert len(api.requests) == 1
    with Store.open() as store:
        assert [r.title for r in store.list_records(resolve_project("/home/dev/src/demo-app"))] == [
            "Compaction re-injects context"
        ]
