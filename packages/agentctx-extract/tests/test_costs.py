"""What extraction costs (issue 14): one price table by model id, the cap checked before a run
is sent, per-run figures on the session, and `review = required`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Store, config, resolve_project
from extract_testkit import MessagesServer, empty_answer, tool_reply, usage

from agentctx_extract import extract_session
from agentctx_extract.prices import PRICES, UNKNOWN_MODEL, is_known, price_for

MakeTranscript = Callable[..., Path]
TALK = [
    ("developer", "We use pnpm, never npm. Also let's keep the API in FastAPI."),
    ("claude", "Noted."),
]
ANSWER = empty_answer(
    decisions=[{"what": "Keep the API in FastAPI", "rationale": "", "supersedes": None, "confidence": "explicit"}],
    preferences=[{"category": "tooling", "rule": "Use pnpm, never npm", "confidence": "explicit", "scope": "project"}],
)


def test_prices_come_from_one_table_by_model_id() -> None:
    haiku = PRICES["claude-haiku-4-5"]
    assert (haiku.input, haiku.output, haiku.cache_write, haiku.cache_read) == (1.0, 5.0, 1.25, 0.1)
    assert price_for("claude-haiku-4-5-20251001") is haiku  # a dated id is priced as its alias
    assert price_for("claude-sonnet-4-5-20250929") is PRICES["claude-sonnet-4-5"]
    assert price_for("claude-sonnet-4-20250514") is PRICES["claude-sonnet-4"]
    assert not is_known("some-new-model") and price_for("some-new-model") is UNKNOWN_MODEL
    assert UNKNOWN_MODEL.input == max(price.input for price in PRICES.values())  # the cap still holds


def test_a_run_is_priced_at_its_models_rates(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    config.save({"extraction_model": "claude-opus-4-1-20250805"})
    api.push(tool_reply(ANSWER, use=usage(10_000, 1_000, cache_read=2_000)))
    outcome = extract_session("s1", make_transcript(project_dir, TALK, session_id="s1"))
    assert outcome.status == "written"
    assert api.bodies[0]["model"] == "claude-opus-4-1-20250805"
    assert outcome.cost_usd == pytest.approx((10_000 * 15 + 1_000 * 75 + 2_000 * 1.5) / 1e6)


def test_the_cap_stops_a_run_before_it_is_sent(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    """Under the cap, but this run would cross it: nothing is sent (no overshoot by its own cost)."""
    config.save({"monthly_cap_usd": "0.02"})
    api.push(tool_reply(ANSWER, use=usage(12_000, 1_000)))  # $0.017
    assert extract_session("s1", make_transcript(project_dir, TALK, session_id="s1")).status == "written"
    outcome = extract_session("s2", make_transcript(project_dir, TALK, session_id="s2"))
    assert outcome.status == "cap_reached" and "nothing sent" in outcome.message
    assert len(api.requests) == 1
    config.save({"monthly_cap_usd": "1"})
    api.push(tool_reply(ANSWER))
    assert extract_session("s2", make_transcript(project_dir, TALK, session_id="s2")).status == "nothing_new"


def test_every_run_is_on_the_session_paid_failures_too(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    path = make_transcript(project_dir, TALK, session_id="s1")
    bad = tool_reply({"decisions": "not a list"}, use=usage(3_000, 200))
    api.push(bad)
    assert extract_session("s1", path, trigger="stop").status == "failed"
    api.push(tool_reply(ANSWER, use=usage(4_000, 300, cache_read=1_000)))
    assert extract_session("s1", path, trigger="end").status == "written"
    with Store.open() as store:
        session = store.get_session("s1")
    assert session is not None
    extraction: dict[str, Any] = session["meta"]["extraction"]
    assert [(run["trigger"], run["status"]) for run in extraction["runs_log"]] == [
        ("stop", "failed"),
        ("end", "written"),
    ]
    assert (extraction["input_tokens"], extraction["cache_read_tokens"], extraction["output_tokens"]) == (
        7_000,
        1_000,
        500,
    )
    assert session["extraction_cost_usd"] == pytest.approx(sum(run["cost_usd"] for run in extraction["runs_log"]))
    assert extraction["cost_usd"] == pytest.approx(session["extraction_cost_usd"])


def test_review_required_keeps_every_extracted_record_unconfirmed(
    api: MessagesServer, project_dir: Path, make_transcript: MakeTranscript
) -> None:
    config.save({"review": "required"})
    api.push(tool_reply(ANSWER), tool_reply(ANSWER), tool_reply(ANSWER))
    for session in ("s1", "s2", "s3"):
        assert extract_session(session, make_transcript(project_dir, TALK, session_id=session)).status in (
            "written",
            "nothing_new",
        )
    with Store.open() as store:
        found = store.list_records(resolve_project(project_dir), types=["decision", "preference"])
    assert {record.title for record in found} == {"Keep the API in FastAPI", "Use pnpm, never npm"}
    # explicit by the model's judgement and seen in three sessions, yet still waiting for a person
    assert all(record.confidence == "inferred" and record.reinforce_count == 3 for record in found)
