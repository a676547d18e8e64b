"""Shared test setup: every test gets its own data dir and home, so nothing touches the real ones."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest


def pytest_report_header() -> list[str]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        fts5 = "yes"
    except sqlite3.OperationalError:
        fts5 = "no"
    return [f"sqlite {sqlite3.sqlite_version}, fts5: {fts5}"]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`AGENTCTX_HOME` and `HOME` point into the test's temp dir; no API key, no model hub."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENTCTX_HOME", str(home / ".agentctx"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # No test may reach a model hub: a background consolidation spawned by a hook fails fast.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("AGENTCTX_SIMULATE_NO_FTS5", raising=False)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    return home
