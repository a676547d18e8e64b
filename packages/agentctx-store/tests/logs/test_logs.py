"""The long-running processes' log files (`agentctx_store.logs`): every line redacted,
the traceback of a failure included."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentctx_store.logs import log_to_file

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape


def test_a_logged_failure_reaches_the_file_without_the_secret_it_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path))
    handler = log_to_file("mcp.log")
    logger = logging.getLogger("agentctx.test-logfile")
    logger.setLevel(logging.INFO)
    try:
        try:
            raise ValueError(f"tool input was {{'token': '{SECRET}'}}")
        except ValueError:
            logger.exception("ctx_record failed (GITHUB_TOKEN=%s)", SECRET)
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    text = (tmp_path / "logs" / "mcp.log").read_text(encoding="utf-8")
    assert "ctx_record failed" in text and "Traceback" in text and "ValueError" in text
    assert SECRET not in text
    assert text.count("[REDACTED") >= 2  # the message and the exception's own text


def test_an_unwritable_log_directory_gives_a_handler_that_drops_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "logs").write_text("a file where the directory should be", encoding="utf-8")
    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path))
    handler = log_to_file("service.log")
    try:
        assert isinstance(handler, logging.NullHandler)
        logging.getLogger("agentctx.test-logfile").warning("nowhere to go")  # and nothing raises
    finally:
        logging.getLogger().removeHandler(handler)
