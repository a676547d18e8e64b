"""The store's timestamps: aware UTC, ISO 8601 with milliseconds and `Z`, so they sort as text.

Standard library `time` only: `datetime` (with `math` and the C `_datetime`) costs the prompt
hook, a fresh process on every prompt, an import it does not need (docs/hooks.md#speed;
bench/README.md#the-hook-path).
"""

from __future__ import annotations

import time


def utc_now() -> str:
    """Now, as the store writes every timestamp (`2026-12-02T04:30:00.123Z`)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def epoch_seconds(text: str) -> float:
    """A stored timestamp (`utc_now`'s form) or a bare date (`2026-12-02`, midnight UTC) as
    seconds since the epoch, by arithmetic; any other ISO 8601 text through
    `records.parse_time`, which loads `datetime`. Always what `parse_time(text).timestamp()` is.

    Raises:
        ValidationError: the text is not an ISO 8601 date or time (from `parse_time`).
    """
    fields = _canonical_fields(text)
    if fields is None:
        from agentctx_store.records import parse_time

        return parse_time(text).timestamp()
    year, month, day, hour, minute, second, millisecond = fields
    days = _days_from_civil(year, month, day)
    return days * 86400 + hour * 3600 + minute * 60 + second + millisecond / 1000


_DIGITS = frozenset("0123456789")
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _canonical_fields(text: str) -> tuple[int, int, int, int, int, int, int] | None:
    """(year, month, day, hour, minute, second, millisecond) of `YYYY-MM-DD` or
    `YYYY-MM-DDTHH:MM:SS.mmmZ` naming a real moment; None for any other text."""
    if len(text) == 10:
        shape = "dddd-dd-dd"
    elif len(text) == 24:
        shape = "dddd-dd-ddTdd:dd:dd.dddZ"
    else:
        return None
    for char, expected in zip(text, shape, strict=True):
        if (char not in _DIGITS) if expected == "d" else (char != expected):
            return None
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    hour, minute, second, millisecond = (
        (int(text[11:13]), int(text[14:16]), int(text[17:19]), int(text[20:23])) if len(text) == 24 else (0, 0, 0, 0)
    )
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not (year >= 1 and 1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month - 1] + leap):
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    return year, month, day, hour, minute, second, millisecond


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to that date of the proleptic Gregorian calendar (H. Hinnant's
    `days_from_civil`)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468
