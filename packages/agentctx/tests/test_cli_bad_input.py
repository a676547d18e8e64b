"""Bad input (issue 2, item 7): each case is one `Error: …` line, exit 1, no traceback, and
nothing of the user's overwritten."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from agentctx_store import paths


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.code == 1, (result.out, result.err)
    assert result.err.startswith("Error: "), result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in result.err, result.err


def record_args(project_dir: Path, *extra: str) -> list[str]:
    return ["record", "-t", "decision", "--title", "T", "--body", "B", "--project", str(project_dir), *extra]


def test_a_foreign_file_at_the_store_path_is_refused_and_kept(cli, project_dir: Path) -> None:
    store = Path(paths.db_path())
    store.parent.mkdir(parents=True)
    store.write_bytes(b"my own notes, not a database\n" * 10)
    before = store.read_bytes()

    result = cli(*record_args(project_dir))

    assert_one_line_error(result, "not an agentctx store", "AGENTCTX_HOME")
    assert store.read_bytes() == before


def test_a_corrupt_sqlite_store_is_refused_and_kept(cli, project_dir: Path) -> None:
    assert cli(*record_args(project_dir)).code == 0
    store = Path(paths.db_path())
    data = bytearray(store.read_bytes())
    data[100:4096] = b"\x00\xff" * ((4096 - 100) // 2)  # keep the header, wreck the schema page
    store.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    before = store.read_bytes()

    result = cli("search", "anything", "--project", str(project_dir))

    assert_one_line_error(result)
    assert "corrupt" in result.err or "cannot be used" in result.err or "not an agentctx" in result.err
    assert store.read_bytes() == before


def test_another_programs_sqlite_database_is_refused_and_kept(cli, project_dir: Path) -> None:
    store = Path(paths.db_path())
    store.parent.mkdir(parents=True)
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE bookmarks (url TEXT)")
    conn.execute("INSERT INTO bookmarks VALUES ('https://example.org')")
    conn.commit()
    conn.close()
    before = store.read_bytes()

    result = cli(*record_args(project_dir))

    assert_one_line_error(result, "did not create")
    assert store.read_bytes() == before


def test_a_store_from_a_newer_schema_is_refused(cli, project_dir: Path) -> None:
    assert cli(*record_args(project_dir)).code == 0
    conn = sqlite3.connect(Path(paths.db_path()))
    conn.execute("PRAGMA user_version = 999")
    conn.close()

    result = cli("search", "T", "--project", str(project_dir))

    assert_one_line_error(result, "newer agentctx", "upgrade")
    conn = sqlite3.connect(Path(paths.db_path()))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 999
    conn.close()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores directory permissions")
def test_a_read_only_data_dir_is_one_line(cli, project_dir: Path) -> None:
    home = Path(paths.home())
    home.mkdir(parents=True)
    home.chmod(0o555)
    try:
        result = cli(*record_args(project_dir))
    finally:
        home.chmod(0o755)
    assert_one_line_error(result, "AGENTCTX_HOME")


def test_a_data_dir_that_cannot_be_created_is_one_line(
    cli, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me", encoding="utf-8")
    monkeypatch.setenv("AGENTCTX_HOME", str(blocker / "agentctx"))

    result = cli(*record_args(project_dir))

    assert_one_line_error(result, "AGENTCTX_HOME")
    assert blocker.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-t", "decisionz", "--title", "T", "--body", "B"], "Unknown record type 'decisionz'"),
        (["-t", "decision", "--title", "T", "--body", "x" * 2001], "the limit is 2000"),
        (["-t", "decision", "--title", "x" * 121, "--body", "B"], "the limit is 120"),
        (["-t", "decision", "--title", "   ", "--body", "B"], "The title is empty"),
        (["-t", "decision", "--title", "T", "--body", "B", "--scope", "team"], "Invalid scope 'team'"),
        (["-t", "decision", "--title", "T", "--body", "B", "--valid-from", "yesterday"], "not an ISO 8601"),
        (["-t", "decision", "--title", "T", "--body", "B", "--valid-from", "0001-01-01T00:00+01:00"], "out of range"),
    ],
)
def test_invalid_records_are_refused_and_nothing_is_written(cli, project_dir: Path, args, fragment: str) -> None:
    result = cli("record", *args, "--project", str(project_dir))
    assert_one_line_error(result, fragment)
    assert cli("status", "--project", str(project_dir), "--json").json()["records"]["current"] == 0


@pytest.mark.parametrize(
    "command",
    [
        ["show"],
        ["edit", "--title", "x"],
        ["pin"],
        ["unpin"],
        ["delete", "--yes"],
        ["history"],
        ["supersede", "--body", "x"],
    ],
)
def test_an_unknown_id_is_one_line(cli, project_dir: Path, command: list[str]) -> None:
    result = cli(command[0], "01JUNKNOWNUNKNOWNUNKNOWN00", *command[1:], "--project", str(project_dir))
    assert_one_line_error(result, "No record '01JUNKNOWNUNKNOWNUNKNOWN00'")


def test_a_missing_project_directory_is_one_line(cli, tmp_path: Path) -> None:
    result = cli("search", "x", "--project", str(tmp_path / "gone"))
    assert_one_line_error(result, "No such directory")


def test_a_foreign_config_json_is_never_overwritten(cli, project_dir: Path) -> None:
    config = Path(paths.config_path())
    config.parent.mkdir(parents=True)
    foreign = json.dumps({"apiKey": "someone else's", "theme": "dark"})
    config.write_text(foreign, encoding="utf-8")

    set_result = cli("config", "llm", "false")
    flag_result = cli("config", "--no-embeddings")
    listing = cli("config")
    recorded = cli(*record_args(project_dir))
    doctor = cli("doctor", "--project", str(project_dir))

    assert_one_line_error(set_result, "was not written by agentctx")
    assert_one_line_error(flag_result, "was not written by agentctx")
    assert listing.code == 0 and "llm = auto" in listing.out and "not written by agentctx" in listing.err
    assert recorded.code == 0
    assert doctor.code == 1 and "[FAIL] config" in doctor.out
    assert config.read_text(encoding="utf-8") == foreign


def test_debug_shows_the_traceback(cli, project_dir: Path) -> None:
    from agentctx_store import RecordNotFound

    with pytest.raises(RecordNotFound):
        cli("--debug", "show", "01JUNKNOWNUNKNOWNUNKNOWN00", "--project", str(project_dir))


def test_the_installed_command_prints_one_line_for_a_foreign_store(project_dir: Path) -> None:
    """The real process: stderr is exactly one line and the exit code is 1."""
    store = Path(paths.db_path())
    store.parent.mkdir(parents=True)
    store.write_text("not sqlite", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "agentctx", "status", "--project", str(project_dir)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ") and len(result.stderr.strip().splitlines()) == 1
    assert store.read_text(encoding="utf-8") == "not sqlite"
