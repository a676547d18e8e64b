"""Fixtures of the embedding tests: a tiny model built at test time (no network, nothing from
outside the repository), projects with real directories, and a local Messages-API server.
Helpers live in `embed_testkit.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentctx_store import Project, Store

sys.path.insert(0, str(Path(__file__).parent))

from embed_testkit import TEST_TEXTS, MessagesServer, make_project, serve_messages

from agentctx_embed.tiny import TINY_MODEL_NAME, build_tiny_model, words_of


@pytest.fixture
def tiny_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Build the tiny model and select it the way a user would: through the two env vars."""
    folder = build_tiny_model(tmp_path / "tiny-model", words_of(TEST_TEXTS))
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", TINY_MODEL_NAME)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(folder))
    return folder


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store.open()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path, "alpha")


@pytest.fixture
def other_project(tmp_path: Path) -> Project:
    return make_project(tmp_path, "beta")


@pytest.fixture
def messages_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesServer]:
    with serve_messages() as state:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", state.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
        yield state
