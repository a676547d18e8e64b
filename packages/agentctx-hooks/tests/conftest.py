"""Fixtures of the hook tests: a project directory, payloads shaped like Claude Code's, and
the in-process hook runner (`agentctx_hooks.__main__.run`, the same code the process runs).

Background spawns are off here (`AGENTCTX_HOOKS_NO_SPAWN=1`); tests-e2e covers real spawns.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Project, Record, Store, resolve_project

from agentctx_hooks.__main__ import run


@pytest.fixture(autouse=True)
def no_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_HOOKS_NO_SPAWN", "1")


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "demo-app"
    root.mkdir()
    return root


@pytest.fixture
def project(project_dir: Path) -> Project:
    return resolve_project(project_dir)


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store.open()
    yield opened
    opened.close()


def make_payload(event: str, cwd: Path | str, session_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """A payload with the common fields every real one has (see tests-e2e/fixtures)."""
    session = session_id or str(uuid.uuid4())
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-x/{session}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": event,
        **fields,
    }


@pytest.fixture
def payload() -> Callable[..., dict[str, Any]]:
    """`payload(event, cwd, session_id=None, **fields)`."""
    return make_payload


Hook = Callable[..., dict[str, Any] | None]


@pytest.fixture
def hook() -> Hook:
    """`hook(event, payload_dict)` → the parsed hook JSON, or None when the hook printed nothing."""

    def call(event: str, data: dict[str, Any] | bytes) -> dict[str, Any] | None:
        raw = data if isinstance(data, bytes) else json.dumps(data).encode("utf-8")
        out = run(event, raw)
        if not out:
            return None
        parsed = json.loads(out)
        assert set(parsed) == {"hookSpecificOutput"}
        assert parsed["hookSpecificOutput"]["hookEventName"] == event
        return parsed

    return call


@pytest.fixture
def context() -> Callable[[dict[str, Any] | None], str]:
    """The additionalContext of a hook result ("" for none)."""
    return lambda result: "" if result is None else result["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def add(store: Store) -> Callable[..., Record]:
    """`add(project, title, body, type="decision", **fields)` → the stored record."""

    def add_record(project: Project, title: str, body: str, **fields: Any) -> Record:
        return store.add(project, NewRecord(type=fields.pop("type", "decision"), title=title, body=body, **fields))

    return add_record


FILLER_TOPICS = [
    "logging format",
    "docker compose ports",
    "release checklist",
    "code review etiquette",
    "feature flags",
    "timezone handling",
    "error budget",
    "password hashing",
    "css naming",
    "api pagination",
    "retry backoff",
    "queue workers",
    "pdf export",
    "email templates",
    "search indexing",
    "image resizing",
    "csv import",
    "oauth scopes",
    "rate limiting",
    "translation files",
    "webhook signatures",
    "backup rotation",
    "metrics labels",
    "cron schedules",
    "session cookies",
    "dependency pinning",
    "monorepo layout",
    "graphql schema",
    "load balancer",
    "migration naming",
]


@pytest.fixture
def filler(store: Store) -> Callable[..., None]:
    """`filler(project, rounds=1)`: 30 unrelated records per round, so BM25 can tell a matching
    record from noise as it does in a real store."""

    def fill(project: Project, rounds: int = 1) -> None:
        with store.transaction():
            for round_index in range(rounds):
                for topic in FILLER_TOPICS:
                    title = f"Rule {round_index} for {topic}"
                    store.add(project, NewRecord(type="convention", title=title, body=f"How we handle {topic}."))

    return fill


@pytest.fixture
def flush() -> Callable[[], int]:
    """Apply the spooled captures, as the next store-opening hook would."""
    from agentctx_hooks.spool import flush as flush_spool

    def run_flush() -> int:
        with Store.open() as opened:
            return flush_spool(opened)

    return run_flush
