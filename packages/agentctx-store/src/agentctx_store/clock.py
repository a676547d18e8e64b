"""The store's timestamps: aware UTC, ISO 8601 with milliseconds and `Z`, so they sort as text."""

from __future__ import annotations

import time


def utc_now() -> str:
    """Now, as the store writes every timestamp (`2026-12-02T04:30:00.123Z`)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
