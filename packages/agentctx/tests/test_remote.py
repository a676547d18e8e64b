"""`agentctx remote` without a server: adding, what status shows, refusals in one line, and the
hooks' background sync when agentctx-remote is gone. The sync itself runs against a real
PostgreSQL in tests-e2e/test_remote_sync.py."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from agentctx_store import paths


def test_add_shows_the_rule_and_status_lists_it(cli, project_dir: Path) -> None:
    done = cli("remote", "add", "team", "postgresql://alice@db.example.com/agentctx", "-p", str(project_dir))
    assert done.code == 0, done.err
    assert "projects: alpha (" in done.out and "types: decision, convention, discovery" in done.out
    assert "confidences: explicit" in done.out and "redacted records: never" in done.out
    status = cli("remote", "status")
    assert "team  postgresql://alice@db.example.com/agentctx" in status.out and "last sync: never" in status.out
    assert "Remotes" in cli("status", "--project", str(project_dir)).out
    assert Path(paths.remote_schedule_path()).exists()  # the hooks may start a sync now

    assert cli("remote", "remove", "team").code == 0
    assert "No remote" in cli("remote", "status").out
    assert not Path(paths.remote_schedule_path()).exists()  # nothing left for the hooks to check


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("postgresql://alice:hunter2@db/agentctx",), "~/.pgpass"),
        (("mysql://alice@db/agentctx",), "postgresql:// URL"),
        (("postgresql://alice@db/agentctx", "--type", "secret"), "Unknown record type"),
        (("postgresql://alice@db/agentctx", "--confidence", "sure"), "Unknown confidence"),
    ],
)
def test_a_bad_remote_is_refused_in_one_line(cli, project_dir: Path, args: tuple[str, ...], message: str) -> None:
    done = cli("remote", "add", "team", *args, "-p", str(project_dir))
    assert done.code == 1 and message in done.err and done.err.count("\n") == 1
    assert "hunter2" not in done.err
    assert "No remote" in cli("remote", "status").out


def test_an_unknown_remote_is_one_line(cli) -> None:
    for command in (("sync", "nope"), ("remove", "nope"), ("init", "nope"), ("share", "nope")):
        done = cli("remote", *command)
        assert done.code == 1 and "No remote 'nope'" in done.err, command


def test_the_background_sync_without_the_package_waits_a_day(
    cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("remote", "add", "team", "postgresql://alice@db/agentctx", "-p", str(project_dir)).code == 0
    monkeypatch.setitem(sys.modules, "agentctx_remote", None)  # as if agentctx-remote were uninstalled
    done = cli("remote", "sync", "--background")
    assert done.code == 1 and "agentctx-remote" in done.err
    due = int(Path(paths.remote_schedule_path()).read_text(encoding="utf-8"))
    assert due > time.time() + 23 * 3600
