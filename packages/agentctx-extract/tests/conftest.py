"""Fixtures of the extraction tests: the local Messages API server, transcripts, a safe default
environment. The server and reply helpers live in `extract_testkit.py`."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.append(str(Path(__file__).parents[2] / "agentctx-store" / "tests"))  # secrets_corpus.py

from extract_testkit import FIXTURES, MessagesServer, transcript_lines


@pytest.fixture(autouse=True)
def no_real_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test can reach api.anthropic.com: the default base URL is a closed local port."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_PROFILE", raising=False)
    monkeypatch.setenv("AGENTCTX_EXTRACT_BACKOFF", "0.01")
    monkeypatch.setenv("AGENTCTX_EXTRACT_TIMEOUT", "10")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesServer]:
    """A Messages API on 127.0.0.1 with the SDK pointed at it and a key set."""
    server = MessagesServer()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-test-key-for-the-local-server-only-0000000000")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "demo-app"
    directory.mkdir()
    return directory


@pytest.fixture
def make_transcript(tmp_path: Path) -> Callable[..., Path]:
    def make(cwd: Path | str, turns: list[tuple[str, Any]], *, session_id: str = "sess-1") -> Path:
        folder = tmp_path / "claude-projects"
        folder.mkdir(exist_ok=True)
        path = folder / f"{session_id}.jsonl"
        lines = transcript_lines(cwd, session_id, turns)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return path

    return make


@pytest.fixture
def fixture_transcripts(tmp_path: Path) -> Path:
    """The captured transcripts, copied to a temp dir (the session-with-subagent one laid out as Claude Code does)."""
    target = tmp_path / "captured"
    shutil.copytree(FIXTURES, target)
    session = "6e1c78f7-6dd4-423e-9ce4-134e3911388c"
    subagents = target / session / "subagents"
    subagents.mkdir(parents=True)
    shutil.copy(target / "session-with-subagent.jsonl", target / f"{session}.jsonl")
    shutil.copy(target / "subagent-foreground.jsonl", subagents / "agent-ae32c4473752fef58.jsonl")
    return target
