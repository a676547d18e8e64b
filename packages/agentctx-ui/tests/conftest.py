"""Fixtures of the dashboard tests: a real store seeded through the store API, the app around it.

The root conftest points `AGENTCTX_HOME` and `HOME` into the test's temp dir, so `Store.open()`
here and in the app open the same throwaway file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from agentctx_hooks.provenance import note_record
from agentctx_store import NewRecord, Project, Record, Store, global_project, paths
from agentctx_store.freshness import anchor_record
from agentctx_store.prompt_answer import Asked, Injection, account
from agentctx_store.stale import reverify
from agentctx_store.stale.reverify import Answer, Evidence
from fastapi.testclient import TestClient

from agentctx_ui.app import create_app

PORT = 7327
TOKEN = "test-token-0123456789"
BASE_URL = f"http://127.0.0.1:{PORT}"
WRITE = {"X-Agentctx-Token": TOKEN}


@dataclass(frozen=True, kw_only=True)
class Seeded:
    project: Project
    other: Project
    old_decision: str  # superseded by `decision`
    decision: str  # current head of the chain
    convention: str
    linked: str  # a discovery linked to a file
    preference: str  # a global preference
    foreign: str  # a record of the other project


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    root = tmp_path / "alpha"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# Alpha\n\n- Use MySQL for storage.\n", encoding="utf-8")
    project = Project(project_id="p-alpha", root=str(root), name="alpha")
    other = Project(project_id="p-beta", root=str(tmp_path / "beta"), name="beta")
    with Store.open() as store:
        old = store.add(
            project, NewRecord(type="decision", title="Use MySQL for storage", body="Data lives in MySQL 8.")
        )
        _, new = store.supersede(
            project,
            old.record_id,
            title="Use Postgres for storage",
            body="Data lives in Postgres 16.",
            rationale="JSONB",
        )
        convention = store.add(
            project, NewRecord(type="convention", title="Tabs in Makefiles", body="Makefile recipes use tabs.")
        )
        linked = store.add(
            project,
            NewRecord(
                type="discovery",
                title="Parser is slow on big files",
                body="tokenize() is quadratic.",
                confidence="inferred",
            ),
        )
        node = store.upsert_node(project, "file", "src/parser.py")
        store.link_entity(linked.record_id, node)
        preference = store.add(
            global_project(),
            NewRecord(
                type="preference",
                title="Prefers pytest",
                body="Use pytest, not unittest.",
                scope="global",
                reinforce_count=3,
                confidence="reinforced",
            ),
        )
        foreign = store.add(other, NewRecord(type="decision", title="Beta uses Postgres too", body="Postgres in beta."))
        store.record_injection(project, "sess-alpha-1", [new.record_id], 120)
        store.add_extraction_cost("sess-alpha-1", project, 0.0042)
        store.update_session_meta(project, "sess-alpha-1", branch="main", files=["src/parser.py", "Makefile"])
        store.record_injection(other, "sess-beta-1", [], 999)
    return Seeded(
        project=project,
        other=other,
        old_decision=old.record_id,
        decision=new.record_id,
        convention=convention.record_id,
        linked=linked.record_id,
        preference=preference.record_id,
        foreign=foreign.record_id,
    )


@pytest.fixture
def client(seeded: Seeded) -> Iterator[TestClient]:
    app = create_app(project=seeded.project, port=PORT, token=TOKEN)
    with TestClient(app, base_url=BASE_URL) as test_client:
        yield test_client


@pytest.fixture
def store_snapshot() -> Callable[[], list[tuple[object, ...]]]:
    """`store_snapshot()`: every row of every table of the store file; equal snapshots mean nothing was written."""
    return _snapshot


def _snapshot() -> list[tuple[object, ...]]:
    conn = sqlite3.connect(Path(paths.db_path()))
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE 'records_fts%' ORDER BY name"
            )
        ]
        rows: list[tuple[object, ...]] = []
        for table in tables:
            rows.extend((table, *row) for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1"))
        return rows
    finally:
        conn.close()


ORIGIN_SESSION = "gemini-sess-1"


@pytest.fixture
def origins(seeded: Seeded) -> dict[str, str]:
    """A Gemini session that injected the decision twice (BeforeAgent) and made an error stub
    (AfterTool); a Codex session whose extraction wrote a record (its client, no hook)."""
    asked = Asked(prompt="the parser", session_id=ORIGIN_SESSION, client="gemini", hook="BeforeAgent")
    with Store.open() as store:
        for ids, tokens, at in (
            ([seeded.decision], 85, "2026-12-01T10:00:00Z"),
            ([seeded.convention, seeded.linked], 140, "2026-12-01T10:05:00Z"),
        ):
            injection = Injection(text="(records)", full_ids=ids, tokens=tokens)
            account(store, seeded.project, asked, injection, path="keyword", at=at)
        stub = store.add(
            seeded.project,
            NewRecord(
                type="bugfix", title="pytest failed in test_parser", body="Exit code 1.", session_id=ORIGIN_SESSION
            ),
        )
        note_record(store, seeded.project, ORIGIN_SESSION, stub.record_id, "gemini", "AfterTool")
        extracted = store.add(
            seeded.project,
            NewRecord(type="decision", title="Cache parsed files", body="Keyed by mtime.", session_id="codex-sess-1"),
        )
        store.update_session_meta(seeded.project, "codex-sess-1", client="codex")
    return {"stub": stub.record_id, "extracted": extracted.record_id}


@dataclass(frozen=True, kw_only=True)
class Proposed:
    """Open re-verification proposals, one per verdict, on records whose anchored code changed;
    and one in the other project. Values are (proposal id, record id)."""

    still_true: tuple[int, str]
    update: tuple[int, str]
    no_longer_true: tuple[int, str]
    foreign: tuple[int, str]


WORKER = (
    "def retry(call):\n    for attempt in range(3):\n        call()\n\n\n"
    "def queues():\n    return ['default']\n\n\n"
    "def timeout():\n    return 30\n"
)
ANSWERS = {
    "Retries: three attempts": Answer(
        verdict="update",
        title="Retries: five attempts",
        body="retry() calls five times.",
        reason="range(3) became range(5).",
    ),
    "One queue": Answer(verdict="no_longer_true", reason="queues() lists two queues now."),
    "Timeout is 30 s": Answer(verdict="still_true", reason="Only a comment was added."),
    "Beta retries once": Answer(verdict="still_true", reason="Beta's code only moved."),
}


def _anchored(store: Store, project: Project, title: str, body: str, spec: str) -> str:
    time.sleep(0.003)  # proposals come in recording order: no two records in the same millisecond
    record = store.add(project, NewRecord(type="convention", title=title, body=body))
    anchor_record(store, project, record.record_id, [spec])
    return record.record_id


@pytest.fixture
def proposed(seeded: Seeded) -> Proposed:
    """Seeded through the store's own re-verification (`reverify.reverify` with a verifier that
    answers as Haiku would), the path consolidation takes; no API key, no network."""
    alpha, beta = Path(seeded.project.root), Path(seeded.other.root)
    beta.mkdir(exist_ok=True)
    (alpha / "worker.py").write_text(WORKER, encoding="utf-8")
    (beta / "beta.py").write_text("def retry():\n    return 1\n", encoding="utf-8")
    with Store.open() as store:
        retry = _anchored(
            store, seeded.project, "Retries: three attempts", "retry() calls three times.", "worker.py:retry"
        )
        queue = _anchored(store, seeded.project, "One queue", "queues() lists default.", "worker.py:queues")
        timeout = _anchored(store, seeded.project, "Timeout is 30 s", "timeout() is 30.", "worker.py:timeout")
        foreign = _anchored(store, seeded.other, "Beta retries once", "retry() returns 1.", "beta.py:retry")
    changed = WORKER.replace("range(3)", "range(5)").replace("['default']", "['default', 'mail']")
    (alpha / "worker.py").write_text(changed.replace("return 30", "return 30  # seconds"), encoding="utf-8")
    (beta / "beta.py").write_text("def retry():\n    return 1  # once\n", encoding="utf-8")

    def verifier(record: Record, evidence: Sequence[Evidence]) -> Answer:
        return ANSWERS[record.title]

    with Store.open() as store:
        for project in (seeded.project, seeded.other):
            report = reverify.reverify(store, project, verifier)
            assert report.failed == 0, report.notes
        ids = {
            proposal.record_id: proposal.proposal_id
            for project in (seeded.project, seeded.other)
            for proposal in reverify.proposals(store, project)
        }
    return Proposed(
        still_true=(ids[timeout], timeout),
        update=(ids[retry], retry),
        no_longer_true=(ids[queue], queue),
        foreign=(ids[foreign], foreign),
    )
