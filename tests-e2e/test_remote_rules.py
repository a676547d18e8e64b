"""What a remote holds as the rules and the records change (docs/remote.md): a share rule that
widens sends and fetches only what it newly covers, one that narrows stops sending and moves no
cursor; a shared record moved out of the rule is retired on the remote without its new text;
the local operation log is compacted behind every remote's push position, and a remote added
later still gets the whole current state. Against a real PostgreSQL (`pg_cluster`).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pg_cluster import Cluster, cluster_with_logins, pg_bin
from remote_rig import Machine
from test_remote_sync import ROLES, Remote, machine

pytestmark = pytest.mark.skipif(pg_bin() is None, reason="needs Debian's postgresql (.ci/run installs it)")

WIDE = ("--type", "decision", "--type", "convention", "--type", "discovery", "--type", "preference")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with cluster_with_logins(ROLES) as started:
        yield started


@pytest.fixture
def remote(cluster: Cluster, tmp_path: Path) -> Remote:
    return Remote(cluster, tmp_path)


def synced(side: Machine, name: str = "team") -> dict[str, object]:
    report: dict[str, object] = json.loads(side.run("remote", "sync", name, "--json").stdout)[0]
    assert "error" not in report, report
    return report


def cursors(side: Machine) -> tuple[int, int]:
    conn = sqlite3.connect(side.data / "agentctx.db", timeout=30)
    try:
        row = conn.execute("SELECT pushed_seq, pulled_seq FROM remotes WHERE name = 'team'").fetchone()
        return int(row[0]), int(row[1])
    finally:
        conn.close()


# -- a share rule that changes -----------------------------------------------------------------


def test_a_widened_rule_sends_and_fetches_only_what_it_newly_covers(remote: Remote, tmp_path: Path) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")
    desk = machine(remote, tmp_path, "desk", "bob")
    for index in range(3):
        laptop.add(f"Decision {index}")
    for index in range(2):
        laptop.add(f"Preference {index}", type="preference")
    report = synced(laptop)
    assert (report["sent"], report["pushed"]) == (3, 3)
    assert remote.count() == 3

    laptop.run("remote", "share", "team", *WIDE)
    report = synced(laptop)
    assert (report["sent"], report["pushed"]) == (2, 2)  # the two preferences, not the decisions again
    assert remote.count() == 5 == remote.count("state->>'type' IN ('decision', 'preference')")
    assert remote.count("state->>'type' = 'preference'") == 2

    report = synced(desk)  # the default rule: decisions only, the preferences refused
    assert (report["fetched"], report["applied"], report["refused"]) == (5, 3, 2)
    assert len(desk.current()) == 3
    desk.run("remote", "share", "team", *WIDE)
    report = synced(desk)
    assert (report["fetched"], report["applied"], report["sent"]) == (2, 2, 0)  # only the preferences come
    assert desk.current() == laptop.current()
    report = synced(desk)  # and the backfill is over: nothing moves
    assert (report["fetched"], report["sent"]) == (0, 0)


def test_a_narrowed_rule_stops_sending_and_moves_no_cursor(remote: Remote, tmp_path: Path) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")
    laptop.run("remote", "share", "team", *WIDE)
    laptop.add("Decision")
    laptop.add("Preference", type="preference")
    synced(laptop)
    assert remote.count() == 2
    before = cursors(laptop)

    laptop.run("remote", "share", "team")  # back to the default: no preferences
    assert cursors(laptop) == before
    laptop.add("Later preference", type="preference")
    laptop.add("Later decision")
    report = synced(laptop)
    assert (report["sent"], report["pushed"]) == (1, 1)
    assert report["fetched"] == 1  # its own decision, once: the pull did not start over
    assert remote.count() == 3 and remote.count("state->>'title' LIKE 'Later preference%'") == 0


# -- a shared record that leaves the rule ------------------------------------------------------


def test_a_shared_record_moved_out_of_the_rule_is_retired_on_the_remote_without_its_new_text(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")
    desk = machine(remote, tmp_path, "desk", "bob")
    retyped = laptop.add("Tabs in the Makefile", "The Makefile is indented with tabs.")
    redacted = laptop.add("Deploy from CI", "CI deploys on every tag.")
    kept = laptop.add("Use uv", "We use uv.")
    synced(laptop)
    synced(desk)
    assert set(desk.current()) == {retyped, redacted, kept}

    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with laptop.store() as store:  # a person's habit after all, and with words of their own
        store.edit(laptop.project, retyped, type="preference", body="I like tabs; private musing here.")
        store.edit(laptop.project, redacted, body=f"CI deploys on every tag with {secret}.")
        assert "[REDACTED:" in store.get(laptop.project, redacted).body
    report = synced(laptop)
    assert report["retired"] == 2 and report["sent"] == 0
    report = synced(laptop)  # once
    assert report["retired"] == 0 and (report["fetched"], report["pulled"]) == (0, 0)

    synced(desk)
    assert set(desk.current()) == {kept}  # retired there, not current
    assert retyped in desk.ids() and redacted in desk.ids()
    assert set(laptop.current()) == {retyped, redacted, kept}  # and here as they are
    dump = str(remote.sql("SELECT array_agg(state::text) FROM agentctx.ops")[0][0])
    assert "private musing" not in dump and "REDACTED" not in dump and secret not in dump
    assert "preference" not in dump
    assert remote.count(f"record_id = '{retyped}' AND state->>'superseded_at' IS NOT NULL") == 1

    with laptop.store() as store:  # shared again later: current everywhere again, with its text then
        store.edit(laptop.project, retyped, type="convention", body="The Makefile keeps tabs.")
    synced(laptop)
    report = synced(desk)
    assert report["conflicts"] == 0
    assert desk.current()[retyped] == "The Makefile keeps tabs."

    laptop.run("remote", "share", "team", "--confidence", "explicit", "--confidence", "inferred")
    monkeypatch.setenv("AGENTCTX_REMOTE_BATCH", "1")  # each operation a batch of its own
    report = synced(laptop)  # the log is read from the start again: the old change retires nothing now
    assert report["retired"] == 0
    synced(desk)
    assert desk.current()[retyped] == "The Makefile keeps tabs."


# -- compaction of the local log ---------------------------------------------------------------


def log_of(side: Machine) -> tuple[int, int]:
    """(operations in full, compacted stubs) of a machine's local log."""
    conn = sqlite3.connect(side.data / "agentctx.db", timeout=30)
    try:
        rows = conn.execute("SELECT json_extract(state, '$.compacted') IS NULL, count(*) FROM record_ops GROUP BY 1")
        found = {bool(full): int(count) for full, count in rows}
        return found.get(True, 0), found.get(False, 0)
    finally:
        conn.close()


def another(cluster: Cluster, tmp_path: Path, name: str, side: Machine) -> Remote:
    """A second database on the cluster as another remote of `side`."""
    (tmp_path / name).mkdir()
    made = Remote(cluster, tmp_path / name)
    made.grant(side.role, side.project.project_id)
    side.run("remote", "add", name, made.url(side.role))
    return made


def test_the_log_is_compacted_behind_every_remote_and_a_remote_added_later_gets_the_current_state(
    cluster: Cluster, remote: Remote, tmp_path: Path
) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")
    cache = laptop.add("Cache layer", "Version 1.")
    laptop.add("Use uv", "We use uv.")
    with laptop.store() as store:
        for version in (2, 3):
            store.edit(laptop.project, cache, body=f"Version {version}.")
    backup = another(cluster, tmp_path, "backup", laptop)  # not synced yet

    synced(laptop, "team")
    assert remote.count() == 4
    assert log_of(laptop) == (4, 0)  # nothing compacted: `backup` has not pushed any of it
    synced(laptop, "backup")
    assert backup.count() == 4  # the whole history went, none of it was lost to compaction
    assert log_of(laptop) == (2, 2)  # both pushed: the two old versions keep only their ids

    laptop.run("remote", "remove", "team")  # added again: the server sends its log back, all known
    laptop.run("remote", "add", "team", remote.url("alice"))
    report = synced(laptop, "team")
    assert (report["fetched"], report["pulled"], report["conflicts"], report["pushed"]) == (4, 0, 0, 0)
    assert remote.count() == 4

    later = another(cluster, tmp_path, "later", laptop)  # a remote added after compaction
    report = synced(laptop, "later")
    assert report["pushed"] == 2 and later.count() == 2  # the current state, one operation a record
    desk = machine(later, tmp_path, "desk", "bob")
    synced(desk)
    assert desk.current() == laptop.current()
    assert desk.current()[cache] == "Version 3."


def test_a_project_granted_after_the_cursor_passed_its_log_is_fetched_from_its_start(
    remote: Remote, tmp_path: Path
) -> None:
    """The pull cursor is one position over every project the role could read. Bob syncs his
    global records while the shop project is not yet granted to him, so his cursor passes the
    shop's first operations; once an admin grants it, his next sync fetches them (nothing lost)."""
    laptop = machine(remote, tmp_path, "laptop", "alice")
    remote.sql("REVOKE shop_team FROM bob")  # roles are the cluster's: an earlier test may have granted it
    desk = machine(remote, tmp_path, "desk", "bob", grant=False)
    desk.run("remote", "share", "team", "--global")
    early = laptop.add("Use uv for environments", "We use uv, never pip directly.")
    laptop.run("remote", "sync")
    mine = desk.add("Short answers", "Bob wants short answers.", scope="global")
    first = json.loads(desk.run("remote", "sync", "--json").stdout)[0]
    assert first["pushed"] == 1 and early not in desk.current()
    assert remote.count(f"record_id = '{mine}'") == 1  # the cursor is past alice's operation now

    remote.grant("bob", desk.project.project_id)
    later = laptop.add("Postgres 15 in CI", "CI runs PostgreSQL 15 from Debian.")
    laptop.run("remote", "sync")
    desk.run("remote", "sync")
    current = desk.current()
    assert early in current and later in current
    again = json.loads(desk.run("remote", "sync", "--json").stdout)[0]
    assert again["pulled"] == 0 and again["fetched"] == 0  # caught up once, not on every sync
