"""The whole extraction against a real Messages API server on 127.0.0.1 (the SDK is not patched)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Store, config, paths, resolve_project
from extract_testkit import MessagesServer, Reply, empty_answer, error_reply, text_reply, tool_reply, usage

from agentctx_extract import extract_session
from agentctx_extract.llm import PRICE_CACHE_WRITE, PRICE_INPUT, PRICE_OUTPUT
from agentctx_extract.prompt import SYSTEM_PROMPT

MakeTranscript = Callable[..., Path]

DB_TALK = [
    ("developer", "Let's drop SQLite for the job queue and move to PostgreSQL; SQLite locks under our workers."),
    ("claude", "I could also add Redis as a cache."),
    ("tool", ("Bash", {"command": "pytest -q"}, "12 passed in 0.3s")),
    ("developer", "No Redis. Next I'll write the migration script, still unsure about keeping the old table."),
]

NORMAL_ANSWER = empty_answer(
    decisions=[
        {
            "what": "Use PostgreSQL for the job queue instead of SQLite",
            "rationale": "SQLite locks under concurrent workers",
            "supersedes": None,
            "confidence": "explicit",
        }
    ],
    preferences=[{"category": "tooling", "rule": "Avoid adding Redis", "confidence": "inferred", "scope": "project"}],
    conventions=[{"scope": "project", "convention": "Run pytest -q before each commit", "confidence": "inferred"}],
    gotchas=[{"pattern": "SQLite locks when several workers write the queue", "why_it_matters": "jobs stall"}],
    active_work={
        "current_task": "Moving the job queue to PostgreSQL",
        "blockers": [],
        "next_steps": ["Write the migration script"],
        "open_questions": ["Keep the old table?"],
    },
)


def records(project_dir: Path, *, include_superseded: bool = False, types: list[str] | None = None) -> list[Any]:
    with Store.open() as store:
        return store.list_records(resolve_project(project_dir), include_superseded=include_superseded, types=types)


def all_rows() -> list[dict[str, Any]]:
    with Store.open() as store:
        return [dict(row) for row in store.conn.execute("SELECT * FROM records")]


def extract_log() -> list[str]:
    path = Path(paths.logs_dir()) / "extract.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_a_normal_extraction_sends_the_contract_and_writes_records(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    with Store.open() as store:
        existing = store.add(
            resolve_project(project_dir),
            NewRecord(type="decision", title="Use SQLite for everything", body="One file, no server."),
        )
    api.push(tool_reply(NORMAL_ANSWER, use=usage(2000, 400, cache_write=1500, cache_read=0)))
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))

    assert outcome.status == "written", outcome.message
    (request,) = api.requests
    body = request["body"]
    # SDK 2.x sends the API key as a bearer token
    assert request["headers"]["authorization"].startswith("Bearer sk-ant-api03-test-key")
    assert body["model"] == "claude-haiku-4-5"
    # one call per run: no cache breakpoint (a cache write costs 1.25x and nothing would read it)
    assert body["system"] == [{"type": "text", "text": SYSTEM_PROMPT}]
    assert "Extract ONLY from things the developer said or chose" in SYSTEM_PROMPT
    (tool,) = body["tools"]
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    assert set(tool["input_schema"]["required"]) == {
        "decisions",
        "preferences",
        "conventions",
        "active_work",
        "gotchas",
        "flush_ok",
    }
    message = body["messages"][0]["content"]
    assert f"- {existing.record_id} · decision · Use SQLite for everything" in message
    assert "[DEVELOPER] Let's drop SQLite" in message and "[CLAUDE] I could also add Redis" in message
    assert "[TOOL OUTPUT] 12 passed" in message

    current = {record.type: record for record in records(project_dir)}
    decision = next(r for r in records(project_dir, types=["decision"]) if "PostgreSQL" in r.title)
    assert decision.source == "llm_extraction" and decision.confidence == "explicit" and decision.session_id == "sess-1"
    assert (
        decision.body
        == "Use PostgreSQL for the job queue instead of SQLite\n\nWhy: SQLite locks under concurrent workers"
    )
    assert current["convention"].confidence == "inferred"
    assert current["preference"].scope == "project"
    assert current["discovery"].title == "SQLite locks when several workers write the queue"
    handover = current["handover"]
    assert handover.key == "handover" and "Next steps:\n- Write the migration script" in handover.body

    expected_cost = (2000 * PRICE_INPUT + 400 * PRICE_OUTPUT + 1500 * PRICE_CACHE_WRITE) / 1_000_000
    assert outcome.cost_usd == pytest.approx(expected_cost)
    with Store.open() as store:
        session = store.get_session("sess-1")
    assert session is not None and session["extraction_cost_usd"] == pytest.approx(expected_cost)
    assert session["meta"]["extraction"]["input_tokens"] == 2000
    (run,) = session["meta"]["extraction"]["runs_log"]
    assert run["trigger"] == "manual" and run["status"] == "written" and run["mode"] == "whole"
    assert (run["input_tokens"], run["cache_write_tokens"], run["cached_tokens"], run["output_tokens"]) == (
        2000,
        1500,
        0,
        400,
    )
    assert run["cost_usd"] == pytest.approx(expected_cost)
    assert "extract: 2000 input, 0 cache read, 1500 cache write, 400 output tokens" in "\n".join(extract_log())
    assert session["project_id"] == resolve_project(project_dir).project_id


def test_flush_ok_writes_nothing(api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript) -> None:
    api.push(tool_reply(empty_answer(flush_ok=True, decisions=NORMAL_ANSWER["decisions"])))
    outcome = extract_session("sess-1", make_transcript(project_dir, [("developer", "hi, what does ENOENT mean?")]))
    assert outcome.status == "flush_ok"
    assert all_rows() == []
    assert outcome.cost_usd > 0  # the call was still paid for


@pytest.mark.parametrize(
    "reply",
    [
        text_reply('{"decisions": [ {"what": "Use Postg'),  # malformed JSON, no tool call
        tool_reply(NORMAL_ANSWER, stop_reason="max_tokens"),  # truncated
        tool_reply({"decisions": "Use PostgreSQL"}),  # wrong shape
        Reply(status=200, raw=b'{"id": "msg_x", "type": "mess'),  # a torn response body
    ],
    ids=["malformed-json", "truncated", "wrong-shape", "torn-body"],
)
def test_a_malformed_answer_is_logged_and_nothing_is_written(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript, reply: Reply
) -> None:
    api.push(reply)
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "failed"
    assert len(api.requests) == 1  # a bad answer is not retried
    assert all_rows() == []
    assert any("extraction skipped" in line for line in extract_log())


def test_429_then_success_retries_and_writes(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    api.push(error_reply(429, "rate_limit_error", **{"retry-after-ms": "20"}), tool_reply(NORMAL_ANSWER))
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "written"
    assert len(api.requests) == 2
    assert api.bodies[0] == api.bodies[1]
    assert any("HTTP 429, retrying" in line for line in extract_log())


def test_persistent_500_gives_up_after_bounded_retries(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    api.push(*[error_reply(500) for _ in range(10)])
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "failed" and "HTTP 500 after 3 attempt(s)" in outcome.message
    assert len(api.requests) == 3
    assert all_rows() == []


def test_a_client_error_is_not_retried(api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript) -> None:
    api.push(error_reply(400, "invalid_request_error"), tool_reply(NORMAL_ANSWER))
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "failed" and len(api.requests) == 1


def test_a_timeout_is_logged_and_skipped(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTX_EXTRACT_TIMEOUT", "0.3")
    monkeypatch.setenv("AGENTCTX_EXTRACT_ATTEMPTS", "2")
    slow = tool_reply(NORMAL_ANSWER)
    slow.delay_s = 1.5
    api.push(slow, slow)
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "failed" and "Timeout" in outcome.message
    assert len(api.requests) == 2
    assert all_rows() == []


def test_no_key_makes_no_network_call(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "no_key"
    assert api.requests == []
    assert len(extract_log()) == 1 and "no ANTHROPIC_API_KEY" in extract_log()[0]
    assert not Path(paths.db_path()).exists() or all_rows() == []


def test_llm_off_makes_no_network_call(api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript) -> None:
    config.save({"llm": "false"})
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "disabled" and api.requests == [] and len(extract_log()) == 1


def test_an_auth_token_goes_out_as_bearer(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "local-test-token")
    api.push(tool_reply(NORMAL_ANSWER))
    assert extract_session("sess-1", make_transcript(project_dir, DB_TALK)).status == "written"
    assert api.requests[0]["headers"]["authorization"] == "Bearer local-test-token"


def test_the_monthly_cap_stops_extraction_with_one_log_line(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    config.save({"monthly_cap_usd": "0.01"})
    api.push(tool_reply(NORMAL_ANSWER, use=usage(10_000, 1_000)))  # $0.015: over the cap after this one
    assert extract_session("sess-1", make_transcript(project_dir, DB_TALK, session_id="sess-1")).status == "written"
    before = len(extract_log())
    outcome = extract_session("sess-2", make_transcript(project_dir, DB_TALK, session_id="sess-2"))
    assert outcome.status == "cap_reached"
    assert len(api.requests) == 1
    assert len(extract_log()) == before + 1 and "monthly extraction cap reached" in extract_log()[-1]


def test_a_session_without_developer_words_is_not_sent(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    path = make_transcript(project_dir, [("notification", "Agent finished"), ("claude", "Done.")])
    assert extract_session("sess-1", path).status == "empty"
    assert api.requests == []


def parts_of(body: dict[str, Any]) -> tuple[int, int] | None:
    match = re.search(r"part (\d+) of (\d+) of a long session", body["messages"][0]["content"])
    return (int(match.group(1)), int(match.group(2))) if match else None


def test_a_long_session_goes_through_map_reduce(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    filler = "We discussed the queue design, retries and the worker pool in detail today. " * 10
    turns: list[tuple[str, Any]] = [("developer", f"Decision {i}: keep going. {filler}") for i in range(400)]
    turns.insert(0, ("developer", "Always use structured logging with structlog in this repo."))

    def respond(body: dict[str, Any]) -> Reply:
        part = parts_of(body)
        if part is not None:
            index, _total = part
            answer = empty_answer(gotchas=[{"pattern": f"gotcha from part {index}", "why_it_matters": "x"}])
            return tool_reply(answer, use=usage(11_000, 200))
        assert "<parts>" in body["messages"][0]["content"]
        return tool_reply(
            empty_answer(
                conventions=[{"scope": "project", "convention": "Use structlog for logging", "confidence": "explicit"}]
            ),
            use=usage(3_000, 300),
        )

    api.responder = respond
    outcome = extract_session("sess-long", make_transcript(project_dir, turns, session_id="sess-long"))
    assert outcome.status == "written", outcome.message
    assert outcome.mode == "map_reduce" and outcome.tokens_estimated > 50_000
    chunk_requests = [body for body in api.bodies if parts_of(body)]
    synthesis = [body for body in api.bodies if not parts_of(body)]
    total = parts_of(chunk_requests[0])[1]  # type: ignore[index]
    assert sorted(parts_of(body) for body in chunk_requests) == [(i, total) for i in range(1, total + 1)]
    assert len(synthesis) == 1 and len(api.requests) == total + 1
    merged = synthesis[0]["messages"][0]["content"]
    assert all(f"gotcha from part {i}" in merged for i in range(1, total + 1))
    assert all(body["system"][0]["cache_control"] == {"type": "ephemeral"} for body in api.bodies)
    assert [r.title for r in records(project_dir)] == ["Use structlog for logging"]
    assert outcome.usage.calls == total + 1


def test_a_failed_chunk_writes_nothing(api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript) -> None:
    filler = "word " * 500
    turns: list[tuple[str, Any]] = [("developer", f"Point {i}. {filler}") for i in range(200)]

    def respond(body: dict[str, Any]) -> Reply:
        part = parts_of(body)
        if part == (2, part[1] if part else 0):
            return text_reply("not json")
        return tool_reply(empty_answer(gotchas=[{"pattern": "something", "why_it_matters": "x"}]))

    api.responder = respond
    outcome = extract_session("sess-long", make_transcript(project_dir, turns, session_id="sess-long"))
    assert outcome.status == "failed" and "chunk 2/" in outcome.message
    assert all_rows() == []
    assert not any("<parts>" in body["messages"][0]["content"] for body in api.bodies)  # no synthesis


def decision(what: str, supersedes: str | None = None, confidence: str = "explicit") -> dict[str, Any]:
    return {"what": what, "rationale": "", "supersedes": supersedes, "confidence": confidence}


def test_a_decision_supersedes_an_existing_one(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    project = resolve_project(project_dir)
    with Store.open() as store:
        old = store.add(project, NewRecord(type="decision", title="Use SQLite for the queue", body="Simple."))
    api.push(
        tool_reply(empty_answer(decisions=[decision("Use PostgreSQL for the queue", supersedes=old.record_id.lower())]))
    )
    assert extract_session("sess-1", make_transcript(project_dir, DB_TALK)).status == "written"
    current = records(project_dir, types=["decision"])
    assert [r.title for r in current] == ["Use PostgreSQL for the queue"]
    with Store.open() as store:
        retired = store.get(project, old.record_id)
    assert retired.superseded_by == current[0].record_id and retired.superseded_at is not None


def test_a_supersedes_naming_another_projects_or_a_retired_record_is_ignored(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript, tmp_path: Path
) -> None:
    other_dir = tmp_path / "other-app"
    other_dir.mkdir()
    project, other = resolve_project(project_dir), resolve_project(other_dir)
    with Store.open() as store:
        foreign = store.add(other, NewRecord(type="decision", title="Other project uses MySQL", body="Theirs."))
        retired, _ = store.supersede(
            project, store.add(project, NewRecord(type="decision", title="Old", body="Old.")).record_id, body="Newer"
        )
        convention = store.add(project, NewRecord(type="convention", title="Tabs", body="Tabs."))
    api.push(
        tool_reply(
            empty_answer(
                decisions=[
                    decision("Adopt MariaDB", supersedes=foreign.record_id),
                    decision("Adopt CockroachDB", supersedes=retired.record_id),
                    decision("Adopt Spaces", supersedes=convention.record_id),
                    decision("Adopt Nothing", supersedes="01NOTAREALID0000000000000"),
                ]
            )
        )
    )
    assert extract_session("sess-1", make_transcript(project_dir, DB_TALK)).status == "written"
    body = api.bodies[0]["messages"][0]["content"]
    assert foreign.record_id not in body and "MySQL" not in body  # another project's records are never shown
    with Store.open() as store:
        assert store.get(other, foreign.record_id).superseded_at is None
        assert store.get(project, convention.record_id).superseded_at is None
    titles = {r.title for r in records(project_dir, types=["decision"])}
    assert {"Adopt MariaDB", "Adopt CockroachDB", "Adopt Spaces", "Adopt Nothing"} <= titles
    assert sum("ignored" in line for line in extract_log()) >= 4


def test_the_new_handover_replaces_the_previous_one(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    work = {"blockers": [], "next_steps": [], "open_questions": []}
    api.push(
        tool_reply(empty_answer(active_work={"current_task": "Write the migration", **work})),
        tool_reply(empty_answer(active_work={"current_task": "Test the migration", **work})),
    )
    extract_session("sess-1", make_transcript(project_dir, DB_TALK, session_id="sess-1"))
    extract_session("sess-2", make_transcript(project_dir, DB_TALK, session_id="sess-2"))
    current = records(project_dir, types=["handover"])
    assert [r.title for r in current] == ["Handover: Test the migration"]
    history = records(project_dir, types=["handover"], include_superseded=True)
    assert len(history) == 2
    first = next(r for r in history if r.record_id != current[0].record_id)
    assert first.superseded_by == current[0].record_id


def preference(rule: str, confidence: str = "inferred", scope: str = "global") -> dict[str, Any]:
    return {"category": "style", "rule": rule, "confidence": confidence, "scope": scope}


def test_an_inferred_preference_seen_in_three_sessions_becomes_reinforced(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    wordings = [
        "Prefers early returns over nested ifs",
        "prefers early returns over nested ifs.",
        "Prefers early returns over nested ifs!",
    ]
    for index, wording in enumerate(wordings, start=1):
        api.push(tool_reply(empty_answer(preferences=[preference(wording)])))
        extract_session(f"sess-{index}", make_transcript(project_dir, DB_TALK, session_id=f"sess-{index}"))
        (record,) = records(project_dir, types=["preference"])
        assert record.project_id == "_global"
        assert record.reinforce_count == index
        assert record.confidence == ("reinforced" if index == 3 else "inferred")


def test_an_explicit_statement_reinforces_at_once_and_the_same_session_never_counts_twice(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    api.push(
        tool_reply(empty_answer(preferences=[preference("Use pathlib, not os.path")])),
        tool_reply(empty_answer(preferences=[preference("Use pathlib, not os.path")])),
        tool_reply(empty_answer(preferences=[preference("Use pathlib not os.path", confidence="explicit")])),
    )
    extract_session("sess-1", make_transcript(project_dir, DB_TALK, session_id="sess-1"))
    extract_session("sess-1", make_transcript(project_dir, [*DB_TALK, ("developer", "more")], session_id="sess-1"))
    (record,) = records(project_dir, types=["preference"])
    assert record.reinforce_count == 1 and record.confidence == "inferred"  # same session: no count
    extract_session("sess-2", make_transcript(project_dir, DB_TALK, session_id="sess-2"))
    (record,) = records(project_dir, types=["preference"])
    assert record.confidence == "reinforced" and record.reinforce_count == 2


def test_running_twice_creates_no_duplicates(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    path = make_transcript(project_dir, DB_TALK)
    api.push(tool_reply(NORMAL_ANSWER), tool_reply(NORMAL_ANSWER))
    assert extract_session("sess-1", path).status == "written"
    rows = all_rows()
    again = extract_session("sess-1", path)
    assert again.status == "already_done" and len(api.requests) == 1  # unchanged transcript: no call
    forced = extract_session("sess-1", path, force=True)
    assert forced.status == "nothing_new" and len(api.requests) == 2
    assert all_rows() == rows


def test_a_verbatim_repeat_of_an_explicit_record_is_dropped(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    with Store.open() as store:
        store.add(
            resolve_project(project_dir),
            NewRecord(type="decision", title="Use PostgreSQL for the queue", body="Use PostgreSQL for the queue"),
        )
    api.push(tool_reply(empty_answer(decisions=[decision("Use PostgreSQL for the queue")])))
    assert extract_session("sess-1", make_transcript(project_dir, DB_TALK)).status == "nothing_new"
    assert len(records(project_dir)) == 1


def test_a_held_lock_stops_a_second_extraction(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    from agentctx_extract.locks import session_lock

    with session_lock("sess-1") as held:
        assert held
        outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "locked" and api.requests == []


SECRET_TALK = [
    (
        "developer",
        "Here is my key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOp, use it for the deploy.",
    ),
    (
        "tool",
        (
            "Bash",
            {"command": "cat .env"},
            "DB_PASSWORD=correct-horse-battery\nGITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\nNODE_ENV=production",
        ),
    ),
    ("developer", "Also the AWS key is AKIAIOSFODNN7EXAMPLE, connect to postgres://app:Sup3rS3cret@db/app"),
]
SECRETS = [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOp",
    "correct-horse-battery",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "AKIAIOSFODNN7EXAMPLE",
    "Sup3rS3cret",
]


def test_secrets_never_reach_the_server_nor_the_store(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    with Store.open() as store:  # a secret someone recorded by hand is not sent either
        store.add(resolve_project(project_dir), NewRecord(type="decision", title=f"Deploy with {SECRETS[2]}", body="x"))
    leaky = empty_answer(  # a model that echoes secrets back (it never saw them: still scrubbed before writing)
        decisions=[decision(f"Deploy with the key {SECRETS[0]}")],
        gotchas=[{"pattern": f"The .env sets DB_PASSWORD={SECRETS[1]}", "why_it_matters": f"token {SECRETS[2]}"}],
        active_work={"current_task": f"Rotate {SECRETS[3]}", "blockers": [], "next_steps": [], "open_questions": []},
    )
    api.push(tool_reply(leaky))
    outcome = extract_session("sess-1", make_transcript(project_dir, SECRET_TALK))
    assert outcome.status == "written" and outcome.secrets_redacted >= 5
    received = api.everything_received()
    for secret in SECRETS:
        assert secret not in received
    assert "NODE_ENV=production" in received and "[REDACTED:" in received
    stored = json.dumps([row for row in all_rows() if row["source"] == "llm_extraction"])
    assert stored.count("[REDACTED:") >= 3
    for secret in SECRETS:
        assert secret not in stored
    with Store.open() as store:
        assert SECRETS[0] not in json.dumps(store.list_sessions())
    assert not any(secret in line for line in extract_log() for secret in SECRETS)


def test_the_project_comes_from_the_transcript_cwd_or_the_override(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript, tmp_path: Path
) -> None:
    override = tmp_path / "elsewhere"
    override.mkdir()
    api.push(tool_reply(NORMAL_ANSWER), tool_reply(NORMAL_ANSWER))
    extract_session("sess-1", make_transcript(project_dir, DB_TALK, session_id="sess-1"))
    extract_session("sess-2", make_transcript(project_dir, DB_TALK, session_id="sess-2"), project_path=override)
    assert records(project_dir) and records(override)
    assert {r.session_id for r in records(project_dir) if r.project_id != "_global"} == {"sess-1"}
    assert {r.session_id for r in records(override) if r.project_id != "_global"} == {"sess-2"}


def test_a_grown_transcript_sends_only_the_new_turns(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    first = [("developer", f"First-part remark number {i}") for i in range(6)]
    api.push(tool_reply(NORMAL_ANSWER), tool_reply(empty_answer(flush_ok=True)))
    extract_session("sess-1", make_transcript(project_dir, first))
    grown = [*first, ("developer", "Brand new remark after the first extraction")]
    outcome = extract_session("sess-1", make_transcript(project_dir, grown))
    assert outcome.status == "flush_ok"
    second = api.bodies[1]["messages"][0]["content"]
    assert "First-part remark number 0" in api.bodies[0]["messages"][0]["content"]
    assert "First-part remark number 0" not in second  # long extracted: not sent again
    assert "First-part remark number 5" in second  # the last turns come back as context
    assert "already extracted" in second and "[DEVELOPER] Brand new remark" in second
    assert second.index("First-part remark number 5") < second.index("New since the last extraction")
    with Store.open() as store:
        meta = store.get_session("sess-1")["meta"]["extraction"]  # type: ignore[index]
    assert meta["runs"] == 2 and meta["calls"] == 2 and meta["input_tokens"] == 2 * 1200
    assert meta["turns_done"] == 7


def test_a_write_failing_midway_leaves_nothing_behind(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    """A real SQLite trigger aborts the 4th insert (the gotcha): the decision, convention and
    preference written before it in the same run must be rolled back, and the session's
    progress mark must not advance (so the next Stop retries)."""
    with Store.open() as store:
        store.conn.execute(
            "CREATE TRIGGER fail_discovery BEFORE INSERT ON records WHEN new.type = 'discovery' "
            "BEGIN SELECT RAISE(ABORT, 'disk trouble'); END"
        )
    api.push(tool_reply(NORMAL_ANSWER))
    outcome = extract_session("sess-1", make_transcript(project_dir, DB_TALK))
    assert outcome.status == "failed" and "nothing written" in outcome.message
    assert all_rows() == []
    with Store.open() as store:
        session = store.get_session("sess-1")
        store.conn.execute("DROP TRIGGER fail_discovery")
    assert session is not None and "extraction" not in session["meta"]
    assert session["extraction_cost_usd"] > 0  # the call was paid for
    api.push(tool_reply(NORMAL_ANSWER))
    assert extract_session("sess-1", make_transcript(project_dir, DB_TALK)).status == "written"  # retried later


def test_a_medium_session_sends_its_head_and_tail(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    filler = "We keep discussing the retry policy and the worker pool sizes at length. " * 6
    turns: list[tuple[str, Any]] = [("developer", f"Remark {i:03d}. {filler}") for i in range(200)]
    api.push(tool_reply(NORMAL_ANSWER))
    outcome = extract_session("sess-1", make_transcript(project_dir, turns))
    assert outcome.mode == "head_tail" and 15_000 < outcome.tokens_estimated <= 50_000
    (body,) = api.bodies
    sent = body["messages"][0]["content"]
    assert "Remark 000." in sent and "Remark 199." in sent and "Remark 060." not in sent
    assert "lines from the middle of the session omitted" in sent


def test_no_secret_of_the_corpus_reaches_the_server_and_near_misses_arrive_intact(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    from secrets_corpus import NEAR_MISSES
    from secrets_corpus import SECRETS as CORPUS

    turns: list[tuple[str, Any]] = []
    for label, text, _secret in CORPUS:
        turns.append(("developer", f"About {label}: {text}"))
        turns.append(("tool", ("Bash", {"command": text[:200]}, text)))
    turns.extend(("developer", text) for _label, text in NEAR_MISSES)
    echo = empty_answer(gotchas=[{"pattern": text, "why_it_matters": "echoed"} for _l, text, _s in CORPUS[:20]])
    api.push(tool_reply(echo))
    outcome = extract_session("sess-1", make_transcript(project_dir, turns))
    assert outcome.status == "written", outcome.message
    received = api.everything_received()
    leaked = [label for label, _text, secret in CORPUS if secret in received]
    assert leaked == []
    sent = api.bodies[0]["messages"][0]["content"]
    for _label, text in NEAR_MISSES:
        assert text.split("\n")[0] in sent
    stored = json.dumps(all_rows())
    assert [label for label, _text, secret in CORPUS if secret in stored] == []


def test_unusable_answers_stop_being_paid_for_after_three_tries(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    turns: list[tuple[str, Any]] = [("developer", "The stretch that always confuses the model")]
    api.push(*[error_reply(500) for _ in range(3)])  # free failures (no answer) never count
    assert extract_session("sess-1", make_transcript(project_dir, turns)).status == "failed"
    for attempt in range(3):
        turns.append(("developer", f"More words {attempt}"))
        api.push(text_reply("not json"))
        outcome = extract_session("sess-1", make_transcript(project_dir, turns))
        assert outcome.status == "failed"
    assert "gave up on turns 0-4 after 3 unusable answers" in outcome.message
    turns.append(("developer", "A fresh remark after the bad stretch"))
    api.push(tool_reply(empty_answer(flush_ok=True)))
    assert extract_session("sess-1", make_transcript(project_dir, turns)).status == "flush_ok"
    last = api.bodies[-1]["messages"][0]["content"]
    assert "New since the last extraction" in last and "[DEVELOPER] A fresh remark" in last
    assert "The stretch that always confuses the model" not in last
