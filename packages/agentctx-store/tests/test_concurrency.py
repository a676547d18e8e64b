"""Many short-lived writers at once (hooks, MCP, CLI): WAL + busy timeout + BEGIN IMMEDIATE lose nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentctx_store import NewRecord, Project, Store, search

WRITERS = 8
RECORDS_EACH = 500

WRITER = """
import sys, time
from pathlib import Path
from agentctx_store import NewRecord, Project, Store

db, go, index, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
project = Project(project_id="p-shared", root=str(Path("/tmp/shared")), name="shared")
deadline = time.monotonic() + 60
while not go.exists():  # start together: every writer waits for the same signal
    if time.monotonic() > deadline:
        sys.exit("no start signal")
    time.sleep(0.005)
with Store.open(db) as store:
    for n in range(count):
        store.add(project, NewRecord(type="discovery", title=f"writer {index} fact {n}", body=f"body {index} {n} concurrent"))
"""


@pytest.mark.slow
def test_eight_processes_writing_500_records_each_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with Store.open(db):
        pass  # created and migrated once, as the first hook of a session would
    go = tmp_path / "go"
    env = dict(os.environ)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(go), str(index), str(RECORDS_EACH)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for index in range(WRITERS)
    ]
    go.write_text("go", encoding="utf-8")
    outcomes = [(process.wait(timeout=600), *process.communicate()) for process in processes]
    assert [(code, err) for code, _out, err in outcomes] == [(0, "")] * WRITERS
    project = Project(project_id="p-shared", root=str(Path("/tmp/shared")), name="shared")
    with Store.open(db) as store:
        total = store.conn.execute("SELECT count(*), count(DISTINCT id) FROM records").fetchone()
        assert tuple(total) == (WRITERS * RECORDS_EACH, WRITERS * RECORDS_EACH)
        per_writer = dict(store.conn.execute("SELECT substr(title, 1, 8), count(*) FROM records GROUP BY 1").fetchall())
        assert sorted(per_writer.values()) == [RECORDS_EACH] * WRITERS
        store.conn.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
        fts_rows = store.conn.execute(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'concurrent'"
        ).fetchone()[0]
        assert fts_rows == WRITERS * RECORDS_EACH
        assert len(store.list_records(project)) == WRITERS * RECORDS_EACH


OPENER = """
import sys
from pathlib import Path
from agentctx_store import NewRecord, Project, Store, search

db, index = Path(sys.argv[1]), int(sys.argv[2])
project = Project(project_id="p-shared", root=str(Path("/tmp/shared")), name="shared")
with Store.open(db) as store:
    store.add(project, NewRecord(type="decision", title=f"opener {index}", body="raced the migration"))
    assert search(store, project, "raced migration", floor=None).hits
"""


def test_processes_racing_to_open_a_new_store_migrate_it_once(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(db), str(index)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        for index in range(6)
    ]
    outcomes = [(process.wait(timeout=300), process.communicate()[1]) for process in processes]
    assert outcomes == [(0, "")] * 6
    with Store.open(db) as store:
        assert store.conn.execute("SELECT count(*) FROM records").fetchone()[0] == 6
        store.conn.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
        assert [row[1] for row in store.conn.execute("PRAGMA table_info(records_fts)")] == ["title", "body", "ns"]


def test_a_search_reads_one_state_while_another_writer_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """search() reads the candidates, the visible rows' statistics and the rows holding each
    word in several queries. A record another process commits between them (here: a second
    connection, right after the statistics are read) must not mix two states of the store:
    before, the words' row counts could exceed the rows counted and weigh a word below zero,
    and a prompt found nothing (the racing-openers test above caught it, 2 runs in 360)."""
    from agentctx_store import retrieval

    db = tmp_path / "store.db"
    project = Project(project_id="p-shared", root=str(Path("/tmp/shared")), name="shared")
    with Store.open(db) as store:
        for index in range(3):
            store.add(project, NewRecord(type="decision", title=f"opener {index}", body="raced the migration"))
        quiet = [(hit.record.record_id, hit.relevance) for hit in search(store, project, "raced migration").hits]
        assert quiet
        real = retrieval.namespace_statistics
        writes = []

        def then_another_writer(conn: Any, namespaces: Any) -> Any:
            stats = real(conn, namespaces)
            if not writes:  # once: what another process would commit between two reads
                with Store.open(db) as other:
                    for index in range(3):
                        writes.append(
                            other.add(project, NewRecord(type="decision", title=f"late {index}", body="raced again"))
                        )
            return stats

        monkeypatch.setattr(retrieval, "namespace_statistics", then_another_writer)
        raced = [(hit.record.record_id, hit.relevance) for hit in search(store, project, "raced migration").hits]
    assert writes, "the other writer did not run inside the search"
    assert raced == quiet  # the state the search began with, scored as it was
