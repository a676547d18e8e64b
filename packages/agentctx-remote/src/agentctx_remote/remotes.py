"""The remotes this data dir syncs with: kept in the store's `remotes` table (migration m010),
beside the cursors, so a cursor moves in the same transaction as what it counts.

A URL is kept without its password: libpq reads that from `PGPASSFILE` (default `~/.pgpass`) or
`PGPASSWORD` when it connects, so no secret sits in the data dir in clear.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentctx_store import Store, paths
from agentctx_store.clock import utc_now
from agentctx_store.errors import ValidationError

from agentctx_remote.rule import ShareRule

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
MIN_INTERVAL_SECONDS = 300  # at most one detached sync every five minutes
MAX_BACKOFF_SECONDS = 3600


@dataclass(frozen=True, kw_only=True)
class Remote:
    name: str
    url: str
    rule: ShareRule
    pushed_seq: int
    pulled_seq: int
    added_at: str
    last_ok: str | None
    failing_since: str | None
    last_error: str | None
    attempts: int
    next_attempt: str | None


def check_url(url: str) -> str:
    """The URL as kept: a `postgresql://` URL without a password.

    Raises:
        ValidationError: another scheme, or a password in the URL.
    """
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValidationError(f"A remote is a postgresql:// URL, not {parts.scheme or text!r}.")
    if parts.password is not None:
        raise ValidationError(
            "Keep the password out of the URL: put it in ~/.pgpass (or PGPASSFILE, or PGPASSWORD) "
            "and add the URL without it."
        )
    return text


def shown_url(url: str) -> str:
    """The URL for display (it holds no password: `check_url`)."""
    return url


def add(store: Store, name: str, url: str, rule: ShareRule) -> Remote:
    """Add the remote `name`.

    Raises:
        ValidationError: a bad name or URL, or the name is taken.
    """
    if not NAME.match(name):
        raise ValidationError(f"Remote names are letters, digits, '.', '_' or '-' (up to 40), not {name!r}.")
    kept = check_url(url)
    if get(store, name, missing_ok=True) is not None:
        raise ValidationError(f"Remote {name!r} exists; `agentctx remote remove {name}` first.")
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO remotes(name, url, rule, added_at) VALUES (?, ?, ?, ?)",
            (name, kept, rule.to_json(), utc_now()),
        )
    schedule(0)
    found = get(store, name)
    assert found is not None
    return found


def set_rule(store: Store, name: str, rule: ShareRule) -> None:
    """Change what `name` shares; both cursors start over (resending is idempotent), so what the
    new rule covers goes and comes even if it is older than the last sync."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE remotes SET rule = ?, pushed_seq = 0, pulled_seq = 0 WHERE name = ?", (rule.to_json(), name)
        )


def remove(store: Store, name: str) -> bool:
    with store.transaction() as conn:
        removed = conn.execute("DELETE FROM remotes WHERE name = ?", (name,)).rowcount == 1
        left = conn.execute("SELECT count(*) FROM remotes").fetchone()[0]
    if not left:
        with contextlib.suppress(OSError):
            os.unlink(paths.remote_schedule_path())
    return removed


def get(store: Store, name: str, *, missing_ok: bool = False) -> Remote | None:
    """The remote `name`.

    Raises:
        ValidationError: no such remote (unless `missing_ok`).
    """
    row = store.conn.execute("SELECT * FROM remotes WHERE name = ?", (name,)).fetchone()
    if row is None:
        if missing_ok:
            return None
        raise ValidationError(f"No remote {name!r}; `agentctx remote status` lists them.")
    return _remote(row)


def all_remotes(store: Store) -> list[Remote]:
    return [_remote(row) for row in store.conn.execute("SELECT * FROM remotes ORDER BY name")]


def _remote(values: sqlite3.Row) -> Remote:
    return Remote(
        name=values["name"],
        url=values["url"],
        rule=ShareRule.from_json(values["rule"]),
        pushed_seq=values["pushed_seq"],
        pulled_seq=values["pulled_seq"],
        added_at=values["added_at"],
        last_ok=values["last_ok"],
        failing_since=values["failing_since"],
        last_error=values["last_error"],
        attempts=values["attempts"],
        next_attempt=values["next_attempt"],
    )


def record_success(store: Store, name: str) -> None:
    with store.transaction() as conn:
        conn.execute(
            """UPDATE remotes SET last_ok = ?, failing_since = NULL, last_error = NULL, attempts = 0,
               next_attempt = NULL WHERE name = ?""",
            (utc_now(), name),
        )
    schedule(MIN_INTERVAL_SECONDS)


def record_failure(store: Store, name: str, error: str) -> int:
    """Note a failed sync; returns the seconds until the next detached attempt (doubling from
    a minute up to an hour)."""
    remote = get(store, name, missing_ok=True)
    if remote is None:
        return MIN_INTERVAL_SECONDS
    delay = min(60 * 2**remote.attempts, MAX_BACKOFF_SECONDS)
    with store.transaction() as conn:
        conn.execute(
            """UPDATE remotes SET failing_since = coalesce(failing_since, ?), last_error = ?, attempts = attempts + 1,
               next_attempt = ? WHERE name = ?""",
            (utc_now(), error[:500], _later(delay), name),
        )
    schedule(delay)
    return delay


def _later(seconds: int) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def schedule(seconds_from_now: int) -> None:
    """When a hook may next start a detached sync (`paths.remote_schedule_path`, read by
    `agentctx_hooks.spawn.sync_remotes_when_due`)."""
    import time
    from pathlib import Path

    from agentctx_store.files import atomic_write

    try:
        os.makedirs(paths.home(), exist_ok=True)
        atomic_write(Path(paths.remote_schedule_path()), f"{int(time.time()) + seconds_from_now}\n")
    except OSError:
        pass
