"""The client backend's rules around the call (issue 32), with a stand-in `claude` on PATH: a
client that is not signed in is reported once, the monthly token cap stops a run before the client
starts, one headless run at a time per data dir, tokens counted on the session, and the strict
schema Codex gets. The real clients are in tests-e2e/test_extract_via_client.py."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from agentctx_store import Store, config, paths, resolve_project
from agentctx_store.spend import month_client_tokens
from extract_testkit import empty_answer

from agentctx_extract import extract_session
from agentctx_extract.backends import strict_schema
from agentctx_extract.prompt import TOOL

MakeTranscript = Callable[..., Path]
TALK = [("developer", "We use pnpm, never npm."), ("claude", "Noted.")]
ANSWER = empty_answer(
    preferences=[{"category": "tooling", "rule": "Use pnpm, never npm", "confidence": "explicit", "scope": "project"}]
)


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """`claude` on PATH printing `output` (a JSON result); each start appends a line to the
    returned file."""
    tools = tmp_path / "bin"
    tools.mkdir()
    started = tmp_path / "started"
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    monkeypatch.setenv("AGENTCTX_CLIENT_TIMEOUT", "20")

    def install(output: str, *, code: int = 0) -> Path:
        script = tools / "claude"
        (tmp_path / "out.json").write_text(output, encoding="utf-8")
        script.write_text(
            f"#!/bin/sh\ncat > /dev/null\necho run >> {started}\ncat {tmp_path / 'out.json'}\nexit {code}\n"
        )
        script.chmod(0o755)
        return started

    return install


def ok_result(answer: dict, *, tokens: tuple[int, int] = (1200, 80)) -> str:
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "cache_read_input_tokens": 0}
    return json.dumps({"type": "result", "is_error": False, "result": "", "structured_output": answer, "usage": usage})


def lines(started: Path) -> int:
    return len(started.read_text().splitlines()) if started.exists() else 0


def test_through_the_client_records_land_and_tokens_count(
    fake_claude, make_transcript: MakeTranscript, project_dir: Path
) -> None:
    started = fake_claude(ok_result(ANSWER))
    outcome = extract_session("s1", make_transcript(project_dir, TALK))
    assert outcome.status == "written", outcome.message
    assert "through claude" in outcome.message and lines(started) == 1
    with Store.open() as store:
        session = store.get_session("s1")
        assert session is not None
        extraction = session["meta"]["extraction"]
        assert extraction["client_tokens"] == 1280 and extraction["runs_log"][-1]["backend"] == "claude"
        assert extraction["cost_usd"] == 0 and month_client_tokens(store) == 1280
        titles = [record.title for record in store.list_records(resolve_project(project_dir))]
    assert titles == ["Use pnpm, never npm"]


def test_a_client_not_signed_in_is_reported_once(
    fake_claude, make_transcript: MakeTranscript, project_dir: Path
) -> None:
    result = json.dumps({"type": "result", "is_error": True, "result": "Invalid API key · Please run /login"})
    started = fake_claude(result, code=1)
    log = Path(paths.logs_dir()) / "extract.log"
    first = extract_session("s1", make_transcript(project_dir, TALK, session_id="s1"))
    assert first.status == "failed" and "not signed in" in first.message
    warnings = [line for line in log.read_text().splitlines() if "not signed in" in line and " WARNING " in line]
    assert len(warnings) == 2  # the problem, once, and the run's summary
    second = extract_session("s2", make_transcript(project_dir, TALK, session_id="s2"))
    assert second.status == "no_client" and "not signed in" in second.message
    assert lines(started) == 1  # not started again within the hour
    third = extract_session("s3", make_transcript(project_dir, TALK, session_id="s3"))
    assert third.status == "no_client" and lines(started) == 1
    after = [line for line in log.read_text().splitlines() if " WARNING " in line]
    assert len(after) == 2  # the later runs are INFO lines


def test_the_token_cap_stops_a_run_before_the_client_starts(
    fake_claude, make_transcript: MakeTranscript, project_dir: Path
) -> None:
    started = fake_claude(ok_result(ANSWER))
    config.save({"llm_monthly_tokens": "1000"})
    outcome = extract_session("s1", make_transcript(project_dir, TALK))
    assert outcome.status == "cap_reached" and "llm_monthly_tokens" in outcome.message
    assert lines(started) == 0
    config.save({"llm_monthly_tokens": "100000"})
    assert extract_session("s1", make_transcript(project_dir, TALK)).status == "written"


def test_one_headless_run_at_a_time_per_data_dir(
    fake_claude, make_transcript: MakeTranscript, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = fake_claude(ok_result(ANSWER))
    monkeypatch.setenv("AGENTCTX_CLIENT_TIMEOUT", "1")
    path = Path(paths.home()) / "locks" / "extract-client.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another extraction's headless run
        outcome = extract_session("s1", make_transcript(project_dir, TALK))
    assert outcome.status == "locked" and lines(started) == 0
    assert extract_session("s1", make_transcript(project_dir, TALK)).status == "written"


def test_a_malformed_answer_stores_nothing(fake_claude, make_transcript: MakeTranscript, project_dir: Path) -> None:
    fake_claude(ok_result({"decisions": "not a list"}))
    outcome = extract_session("s1", make_transcript(project_dir, TALK))
    assert outcome.status == "failed"
    with Store.open() as store:
        assert store.list_records(resolve_project(project_dir)) == []


def test_codex_gets_a_strict_schema() -> None:
    schema = strict_schema(TOOL["input_schema"])
    decisions = schema["properties"]["decisions"]["items"]
    assert decisions["additionalProperties"] is False
    assert set(decisions["required"]) == set(decisions["properties"])
    assert "maxLength" not in json.dumps(schema) and schema["additionalProperties"] is False
    optional = strict_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": []})
    assert optional["properties"]["a"]["type"] == ["string", "null"] and optional["required"] == ["a"]


def test_learn_llm_and_reverification_go_through_the_client(fake_claude, tmp_path: Path, project_dir: Path) -> None:
    """The same backend serves `learn --llm` (here as a subprocess) and re-verification."""
    import os
    import subprocess
    import sys

    from agentctx_store.records import NewRecord
    from test_learn_llm import AGENTS_MD, learned

    from agentctx_extract.reverify import make_verifier

    rules = [{"id": number, "type": "discovery", "title": f"Client title {number}"} for number in range(1, 5)]
    started = fake_claude(ok_result({"rules": rules}))
    (project_dir / ".git").mkdir()
    (project_dir / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    agentctx = str(Path(sys.executable).parent / "agentctx")
    done = subprocess.run(
        [agentctx, "learn", "--llm", "-p", str(project_dir)], capture_output=True, text=True, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr
    assert "--llm: Claude Code answered for 4 of 4 rules (1 request, 1,280 tokens)" in done.stdout, done.stdout
    assert sorted(learned(project_dir).values()) == [("discovery", f"Client title {n}") for n in range(1, 5)]
    assert lines(started) == 1

    fake_claude(ok_result({"verdict": "still_true", "reason": "the code still does it"}))
    verify = make_verifier(config.load())
    assert verify is not None
    with Store.open() as store:
        record = store.add(resolve_project(project_dir), NewRecord(type="decision", title="Queue", body="SQLite."))
    answer = verify(record, [])
    assert answer is not None and answer.verdict == "still_true" and lines(started) == 2
    config.save({"llm": "off"})
    assert make_verifier(config.load()) is None


def test_init_and_doctor_ask_the_client_whether_it_is_signed_in(fake_claude) -> None:
    """`claude auth status` says `"loggedIn": false` (exit 1): the line says so; status (no
    probe) only knows the client is there."""
    from agentctx_extract.backends import describe

    fake_claude(json.dumps({"loggedIn": False, "authMethod": "none"}), code=1)
    settings = config.load()
    assert describe(settings, probe=True) == (
        "extraction: none (Claude Code is installed but not signed in: run `claude` and sign in)"
    )
    assert describe(settings).startswith("extraction: through Claude Code headless (`claude -p`)")
    fake_claude(json.dumps({"loggedIn": True, "authMethod": "claude.ai"}))
    assert describe(settings, probe=True).startswith("extraction: through Claude Code headless")
