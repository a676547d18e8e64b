"""Issue 13, items 3 and 4: `uninstall --purge` deletes only what it can name, and everything
agentctx writes is private, in real processes of the installed command under umask 022."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

AGENTCTX = Path(sys.executable).with_name("agentctx")


def agentctx(project: Path, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTCTX), *args],
        cwd=project,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "AGENTCTX_HOOKS_NO_SPAWN": "1"},
        preexec_fn=lambda: os.umask(0o022),  # the usual umask: files would be 0644 without our care
        check=False,
    )


def hook(project: Path, event: str, **fields: object) -> None:
    payload = {"session_id": "purge-1", "transcript_path": "", "cwd": str(project), "hook_event_name": event, **fields}
    done = subprocess.run(
        [str(AGENTCTX), "hook", event],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "AGENTCTX_HOOKS_NO_SPAWN": "1"},
        preexec_fn=lambda: os.umask(0o022),
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def used(project_dir: Path) -> Path:
    """A data dir after real use: records, hooks (state, spool, logs), a consolidation, a digest."""
    assert (
        agentctx(project_dir, "record", "-t", "decision", "--title", "Use SQLite", "--body", "One file.").returncode
        == 0
    )
    hook(project_dir, "SessionStart", source="startup")
    hook(project_dir / "gone", "SessionStart", source="startup")  # a log line: no usable cwd
    hook(project_dir, "UserPromptSubmit", prompt="sqlite?")
    bash = {"command": "pytest -x", "description": "run tests"}
    hook(project_dir, "PostToolUseFailure", tool_name="Bash", tool_input=bash, error="E   KeyError: 'x'\n1 failed")
    done = agentctx(project_dir, "consolidate", "--project", str(project_dir))
    assert done.returncode == 0, done.stderr
    return Path(os.environ["AGENTCTX_HOME"])


def test_everything_agentctx_writes_is_private(used: Path) -> None:
    assert stat.S_IMODE(used.stat().st_mode) == 0o700
    previous = os.umask(0o022)
    reader = sqlite3.connect(used / "agentctx.db")  # SQLite makes the WAL and SHM with the store's mode
    try:
        reader.execute("BEGIN IMMEDIATE")
        reader.execute("UPDATE records SET title = title")
        reader.execute("COMMIT")
        files = {path.name for path in used.rglob("*") if path.is_file()}
        assert {"agentctx.db", "agentctx.db-wal", "agentctx.db-shm", "hooks.log"} <= files, files
        assert any(name.endswith(".json") for name in os.listdir(used / "state"))
        loose = _loose(used)
    finally:
        reader.close()
        os.umask(previous)
    assert loose == {}


def _loose(used: Path) -> dict[str, str]:
    loose = {str(path.relative_to(used)): oct(stat.S_IMODE(path.stat().st_mode)) for path in used.rglob("*")}
    return {name: mode for name, mode in loose.items() if mode not in ("0o600", "0o700")}


def test_doctor_warns_about_loose_modes_and_fixes_them(used: Path, project_dir: Path) -> None:
    os.chmod(used, 0o755)
    os.chmod(used / "agentctx.db", 0o644)
    warned = agentctx(project_dir, "doctor")
    assert "[warn] private files: other users can read or enter 2 path(s)" in warned.stdout
    assert "agentctx doctor --fix-modes" in warned.stdout
    fixed = agentctx(project_dir, "doctor", "--fix-modes")
    assert "Made 2 path(s) private" in fixed.stdout and "[ok  ] private files" in fixed.stdout
    assert stat.S_IMODE(used.stat().st_mode) == 0o700
    assert stat.S_IMODE((used / "agentctx.db").stat().st_mode) == 0o600


def test_purge_deletes_only_our_files_and_lists_each_one(used: Path, project_dir: Path) -> None:
    (used / "agentctx.db.consolidate.lock").touch()  # consolidation leaves it; purge used to forget it
    foreign = [
        used / "someone-elses.txt",
        used / "digests" / "notes.md",
        used / "logs" / "my.log",
        used / "spool" / "keep.json",
        used / "state" / "keep.json",
        used / "models" / "my-model.onnx",
    ]
    for path in foreign:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"mine": true}', encoding="utf-8")
    ours = sorted(
        str(path) for path in used.rglob("*") if path.is_file() and path not in foreign and path.name != "config.json"
    )
    assert any("/state/" in name for name in ours) and any("/digests/" in name for name in ours)
    dry = agentctx(project_dir, "uninstall", "--purge", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = sorted(line.strip() for line in dry.stdout.splitlines() if line.startswith("  /"))
    assert listed == ours  # every file it would delete, and only those
    done = agentctx(project_dir, "uninstall", "--purge", "--yes")
    assert done.returncode == 0, done.stderr
    left = sorted(str(path.relative_to(used)) for path in used.rglob("*") if path.is_file())
    assert left == sorted(str(path.relative_to(used)) for path in foreign)
    assert not (used / "profile").exists() and not (used / "locks").exists()  # emptied folders go
    assert f"Purge: kept {used}" in done.stdout
    for path in foreign:
        path.unlink()
    again = agentctx(project_dir, "uninstall", "--purge", "--yes")
    assert again.returncode == 0 and not used.exists()
