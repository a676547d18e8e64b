"""The compact index: line shape, the 50-token cap, ages, and reading it back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from agentctx_store.budget import SEARCH_RESULT_TOKENS, estimate_tokens
from agentctx_store.records import Record

from agentctx_mcp.index import HEADER, IndexEntry, age_of, index_line, parse_index, render_index

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
RECORD_ID = "01K2Y5Q8ZB3W7RJ4M6T9XA0CDE"


def record(title: str, *, valid_from: str = "2026-11-26T12:00:00.000Z") -> Record:
    return Record(
        record_id=RECORD_ID,
        project_id="p",
        type="decision",
        title=title,
        body="BODY",
        confidence="explicit",
        valid_from=valid_from,
        recorded_at=valid_from,
        source="mcp_tool",
    )


def test_a_line_carries_the_six_fields_and_no_body() -> None:
    line = index_line(IndexEntry(record=record("Use SQLite in WAL mode"), score=0.5), NOW)
    assert line == f"{RECORD_ID} | decision | Use SQLite in WAL mode | 3d | explicit | 0.50"


@pytest.mark.parametrize(
    "title",
    [
        "A very long title " * 6,
        "x" * 120,
        "数据库选择和存储引擎的决定以及原因说明" * 6,
        "🙂" * 60,
        "a_b-c.d/e:f(g)[h]" * 7,
    ],
)
def test_a_line_never_exceeds_fifty_tokens_and_keeps_the_id(title: str) -> None:
    line = index_line(IndexEntry(record=record(title[:120]), score=1.0), NOW)
    assert estimate_tokens(line) <= SEARCH_RESULT_TOKENS
    assert line.startswith(RECORD_ID + " | decision | ")
    assert line.endswith(" | 3d | explicit | 1.00")
    assert "…" in line


@pytest.mark.parametrize(
    ("delta", "age"),
    [
        (timedelta(seconds=20), "now"),
        (timedelta(minutes=5), "5m"),
        (timedelta(hours=3), "3h"),
        (timedelta(days=12), "12d"),
        (timedelta(days=130), "4mo"),
        (timedelta(days=800), "2y"),
    ],
)
def test_age_uses_the_coarsest_unit(delta: timedelta, age: str) -> None:
    moment = (NOW - delta).isoformat().replace("+00:00", "Z")
    assert age_of(moment, NOW) == age


def test_age_of_a_broken_timestamp_is_a_question_mark() -> None:
    assert age_of("yesterday-ish", NOW) == "?"


def test_render_and_parse_round_trip_with_a_pipe_in_the_title() -> None:
    text = render_index([IndexEntry(record=record("Use a | b pipes"), score=1.0)], now=NOW, degraded="like-search")
    assert text.splitlines()[:2] == ["degraded: like-search", HEADER]
    rows, degraded = parse_index(text)
    assert degraded == "like-search"
    assert rows == [
        {
            "id": RECORD_ID,
            "type": "decision",
            "title": "Use a | b pipes",
            "age": "3d",
            "confidence": "explicit",
            "score": "1.00",
        }
    ]


def test_an_empty_index_says_so() -> None:
    assert render_index([], now=NOW) == "No current records match."
    assert parse_index("No current records match.") == ([], None)


def test_the_cap_holds_for_the_costliest_id_type_and_confidence() -> None:
    """A ULID alternating digits and letters is the most expensive id for the estimate."""
    costly = Record(
        record_id="0A1B2C3D4E5F6G7H8J9K0M1N2P",
        project_id="p",
        type="convention",
        title="word " * 24,
        body="b",
        confidence="reinforced",
        valid_from="2020-01-01T00:00:00Z",
        recorded_at="2020-01-01T00:00:00Z",
        source="cli",
    )
    line = index_line(IndexEntry(record=costly, score=0.123), NOW)
    assert estimate_tokens(line) <= SEARCH_RESULT_TOKENS
    assert line.startswith("0A1B2C3D4E5F6G7H8J9K0M1N2P | convention | ")
