"""Validation of the model's answer against the output contract (docs/contracts.md#extraction):
bad entries dropped, a wrong shape refused."""

from __future__ import annotations

from typing import Any

import pytest

from agentctx_extract.schema import MAX_ENTRIES, MalformedOutput, parse_extraction


def answer(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "decisions": [],
        "preferences": [],
        "conventions": [],
        "active_work": {"current_task": "", "blockers": [], "next_steps": [], "open_questions": []},
        "gotchas": [],
        "flush_ok": False,
    }
    base.update(overrides)
    return base


def test_a_valid_answer_is_kept_whole() -> None:
    parsed = parse_extraction(
        answer(
            decisions=[{"what": "Use SQLite", "rationale": "one file", "supersedes": None, "confidence": "explicit"}],
            preferences=[{"category": "tooling", "rule": "Use uv", "confidence": "inferred", "scope": "global"}],
            conventions=[{"scope": "module", "convention": "Typed errors", "confidence": "explicit"}],
            gotchas=[{"pattern": "WAL needs a writable dir", "why_it_matters": "read-only mounts fail"}],
            active_work={
                "current_task": "Ship extraction",
                "blockers": [],
                "next_steps": ["tests"],
                "open_questions": [],
            },
        )
    )
    assert [d.what for d in parsed.decisions] == ["Use SQLite"]
    assert parsed.preferences[0].scope == "global"
    assert parsed.active_work is not None and parsed.active_work.next_steps == ("tests",)
    assert parsed.dropped == ()


def test_bad_entries_are_dropped_one_by_one() -> None:
    parsed = parse_extraction(
        answer(
            decisions=[
                {"what": "", "rationale": "", "supersedes": None, "confidence": "explicit"},
                {"what": "ok", "rationale": "", "supersedes": None, "confidence": "certain"},
                {"what": "x" * 2001, "rationale": "", "supersedes": None, "confidence": "explicit"},
                {"what": "Keep", "rationale": "", "supersedes": 7, "confidence": "explicit"},
                "not an object",
                {"what": "Use Postgres", "rationale": "load", "supersedes": "", "confidence": "explicit"},
            ],
            preferences=[{"category": "vibes", "rule": "x", "confidence": "explicit", "scope": "global"}],
        )
    )
    assert [d.what for d in parsed.decisions] == ["Use Postgres"]
    assert parsed.decisions[0].supersedes is None  # "" means none
    assert parsed.preferences == ()
    assert len(parsed.dropped) == 6


def test_empty_active_work_is_no_handover() -> None:
    assert parse_extraction(answer()).active_work is None


def test_too_many_entries_are_capped() -> None:
    many = [{"pattern": f"gotcha {i}", "why_it_matters": ""} for i in range(MAX_ENTRIES + 5)]
    parsed = parse_extraction(answer(gotchas=many))
    assert len(parsed.gotchas) == MAX_ENTRIES and len(parsed.dropped) == 5


@pytest.mark.parametrize(
    "data",
    [
        "a string",
        [],
        {k: v for k, v in answer().items() if k != "gotchas"},
        answer(flush_ok="no"),
        answer(decisions={"what": "x"}),
        answer(active_work=["x"]),
        answer(active_work={"current_task": "x", "blockers": "none", "next_steps": [], "open_questions": []}),
    ],
)
def test_a_wrong_shape_is_malformed(data: Any) -> None:
    with pytest.raises(MalformedOutput):
        parse_extraction(data)
