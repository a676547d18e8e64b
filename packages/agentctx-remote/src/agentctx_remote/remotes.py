"""The remotes this data dir syncs with: kept in the store's `remotes` table (migration m010),
beside the cursors, so a cursor moves in the same transaction as what it counts.

A URL is kept without its password: libpq reads that from `PGPASSFILE` (default `~/.pgpass`) or
`PGPASSWORD` when it connects, so no secret sits in the data dir in clear.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Sequence
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
    backfill_rule: ShareRule | None = None  # what already went both ways before the rule widened
    push_backfill_seq: int = 0
    pull_backfill_seq: int = 0
    # the projects `pulled_seq` has gone through (None: not known, a remote from before m013)
    pulled_projects: tuple[str, ...] | None = None


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
    """Change what `name` shares. A rule that covers something the old one did not (a project,
    type or confidence more) owes a backfill: both cursors start over, and below where they
    were only what the old rule did not cover is sent or fetched (the server's copy of the rest
    is already there, and so is ours). A rule that only narrows moves no cursor: from the next
    sync on, what it no longer covers is neither sent nor accepted.

    Raises:
        ValidationError: no such remote.
    """
    remote = get(store, name)
    assert remote is not None
    # what surely went both ways: with a backfill still under way, only what both rules cover
    done = remote.rule if remote.backfill_rule is None else remote.backfill_rule.both(remote.rule)
    with store.transaction() as conn:
        if rule.widens(done):
            conn.execute(
                """UPDATE remotes SET rule = ?, backfill_rule = ?, push_backfill_seq = ?, pull_backfill_seq = ?,
                   pushed_seq = 0, pulled_seq = 0 WHERE name = ?""",
                (
                    rule.to_json(),
                    done.to_json(),
                    max(remote.push_backfill_seq, remote.pushed_seq),
                    max(remote.pull_backfill_seq, remote.pulled_seq),
                    name,
                ),
            )
        else:
            conn.execute("UPDATE remotes SET rule = ? WHERE name = ?", (rule.to_json(), name))


def backfill_done(store: Store, name: str) -> None:
    """A sync went through both logs to their ends: what a widened rule owed is sent and fetched."""
    with store.transaction() as conn:
        conn.execute(
            """UPDATE remotes SET pushed_seq = max(pushed_seq, push_backfill_seq),
               pulled_seq = max(pulled_seq, pull_backfill_seq), backfill_rule = NULL, push_backfill_seq = 0,
               pull_backfill_seq = 0 WHERE name = ? AND backfill_rule IS NOT NULL""",
            (name,),
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
        backfill_rule=ShareRule.from_json(values["backfill_rule"]) if values["backfill_rule"] else None,
        push_backfill_seq=values["push_backfill_seq"],
        pull_backfill_seq=values["pull_backfill_seq"],
        pulled_projects=_projects(values["pulled_projects"]),
    )


def _projects(text: str | None) -> tuple[str, ...] | None:
    """`pulled_projects` as kept: a JSON list of strings; anything else is not known (None)."""
    if text is None:
        return None
    try:
        value: object = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
    return tuple(item for item in items if isinstance(item, str)) if all(isinstance(i, str) for i in items) else None


def pulled_through(store: Store, name: str, projects: Sequence[str]) -> None:
    """The pull cursor of `name` has now gone through `projects` (`Remote.pulled_projects`)."""
    with store.transaction() as conn:
        conn.execute("UPDATE remotes SET pulled_projects = ? WHERE name = ?", (json.dumps(sorted(set(projects))), name))


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
