"""`clock.epoch_seconds`: stored timestamps read by arithmetic, always what `parse_time` says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctx_store import ValidationError
from agentctx_store.clock import epoch_seconds, utc_now
from agentctx_store.records import normalize_time, parse_time

# hypothesis takes naive bounds; every moment drawn is made UTC
MOMENTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(  # noqa: DTZ001
    lambda moment: moment.replace(microsecond=moment.microsecond // 1000 * 1000, tzinfo=UTC)
)


@given(MOMENTS)
def test_a_stored_timestamp_is_the_moment_it_names(moment: datetime) -> None:
    text = normalize_time(moment.isoformat())  # the form the store writes: 2026-12-02T04:30:00.123Z
    assert len(text) == 24
    assert epoch_seconds(text) == pytest.approx(moment.timestamp(), abs=1e-6)
    assert epoch_seconds(text[:10]) == parse_time(text[:10]).timestamp()  # a bare date: midnight UTC


def assert_agrees_with_parse_time(text: str) -> None:
    try:
        expected = parse_time(text).timestamp()
    except ValidationError:
        with pytest.raises(ValidationError):
            epoch_seconds(text)
    else:
        assert epoch_seconds(text) == pytest.approx(expected, abs=1e-6)


@given(st.text(alphabet="0123456789-T:.Z+ ", min_size=8, max_size=26))
def test_any_other_text_gets_what_parse_time_gives(text: str) -> None:
    assert_agrees_with_parse_time(text)


@pytest.mark.parametrize(
    "text",
    ["2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29", "2026-13-01", "2026-04-31", "0000-01-01",
     "2026-12-02T24:00:00.000Z", "2026-12-02T23:60:00.000Z", "2026-12-02T23:59:60.000Z", "2026-12-02T10:00:00.000+01:00",
     "２０２６-12-02", "2026-12-02t10:00:00.000z"],
)  # fmt: skip
def test_edges_of_the_calendar_agree_with_parse_time(text: str) -> None:
    assert_agrees_with_parse_time(text)


def test_now_as_written_reads_back_as_now() -> None:
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    seconds = epoch_seconds(utc_now())
    assert before.timestamp() <= seconds <= datetime.now(UTC).timestamp()
