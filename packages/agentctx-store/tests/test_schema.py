"""Opening the store: schema, migrations, and refusing files that are not ours without touching them."""

from __future__ import annotations

import hashlib
import multiprocessing
import multiprocessing.queues
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, StoreError, search
from agentctx_store.db import APPLICATION_ID, schema_version
from agentctx_store.migrations import MIGRATIONS
from agentctx_store.paths import db_path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_new_store_is_at_the_current_schema_version_in_wal_mode() -> None:
    with Store.open() as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema_version() == len(MIGRATIONS)
        assert store.conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        tables = {row[0] for row in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"records", "records_fts", "nodes", "edges", "record_entities", "sessions", "projects"} <= tables


def test_reopening_a_current_store_keeps_its_records(project: Project) -> None:
    with Store.open() as store:
        record = store.add(project, NewRecord(type="decision", title="Use SQLite", body="One file, WAL."))
    with Store.open() as store:
        assert store.get(project, record.record_id).title == "Use SQLite"


def test_an_older_store_is_migrated_in_order_keeping_its_rows(project: Project) -> None:
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path, isolation_level=None)
    MIGRATIONS[0](conn, True)  # a store written by a version that only had migration 1
    conn.execute(
        """INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source)
           VALUES ('01JOLDRECORD0000000000000A', 'p-alpha', 'decision', 'Old fact', 'Kept across upgrades',
                   '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', 'cli')"""
    )
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    with Store.open(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema_version()
        assert store.get(project, "01JOLDRECORD0000000000000A").body == "Kept across upgrades"
        assert store.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_a_store_from_a_newer_schema_is_refused_and_left_as_is() -> None:
    with Store.open() as store:
        store.conn.execute(f"PRAGMA user_version = {schema_version() + 1}")
    before = _digest(Path(db_path()))
    with pytest.raises(StoreError, match="newer agentctx"):
        Store.open()
    assert _digest(Path(db_path())) == before


def test_another_programs_sqlite_database_is_refused_and_not_modified() -> None:
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="did not create"):
        Store.open()
    assert _digest(path) == before
    assert sqlite3.connect(path).execute("SELECT total FROM invoices").fetchone()[0] == 12.5


def test_a_sqlite_file_with_a_foreign_application_id_is_refused() -> None:
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="another program"):
        Store.open()
    assert _digest(path) == before


@pytest.mark.parametrize(
    "content",
    [b"# my notes\nnot a database\n", b"\x00\x01\x02garbage" * 100, "ünïcödé text".encode()],
    ids=["text", "binary", "unicode"],
)
def test_a_file_that_is_not_sqlite_is_refused_and_not_overwritten(content: bytes) -> None:
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not an agentctx store"):
        Store.open()
    assert path.read_bytes() == content
    assert sorted(item.name for item in path.parent.iterdir()) == [path.name]  # no -wal/-shm left behind


def test_a_truncated_sqlite_file_is_reported_as_corrupt_without_a_traceback_error_type() -> None:
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    before = _digest(path)
    with pytest.raises(StoreError) as caught:
        Store.open()
    assert "\n" not in str(caught.value)
    assert _digest(path) == before


def test_a_data_dir_that_cannot_be_created_gives_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way", encoding="utf-8")
    monkeypatch.setenv("AGENTCTX_HOME", str(blocker / "agentctx"))
    with pytest.raises(StoreError, match="AGENTCTX_HOME") as caught:
        Store.open()
    assert "\n" not in str(caught.value)
    assert blocker.read_text(encoding="utf-8") == "in the way"


def _open_as_unprivileged_user(data_dir: Path) -> str:
    """`Store.open()` with `AGENTCTX_HOME=data_dir` as a user the permissions apply to.

    Root ignores file modes, so under root (CI containers) a forked child drops to `nobody`
    first. Returns "opened" or the error's type and message.
    """

    def attempt(queue: multiprocessing.queues.Queue[str]) -> None:
        if os.geteuid() == 0:
            os.setgid(65534)
            os.setuid(65534)
        os.environ["AGENTCTX_HOME"] = str(data_dir)
        try:
            Store.open().close()
            queue.put("opened")
        except Exception as exc:  # the outcome is reported to the parent, which asserts on it
            queue.put(f"{type(exc).__name__}: {exc}")

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=attempt, args=(queue,))
    child.start()
    child.join(60)
    return str(queue.get(timeout=10))


@pytest.fixture
def world_readable_dir() -> Iterator[Path]:
    """A directory any user can enter (pytest's temp dirs are private to their owner)."""
    base = Path(tempfile.mkdtemp(prefix="agentctx-ro-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        for path in sorted(base.rglob("*"), reverse=True):
            path.chmod(0o755) if path.is_dir() else path.chmod(0o644)
        shutil.rmtree(base)


def test_a_read_only_data_dir_gives_a_clear_error(world_readable_dir: Path) -> None:
    data = world_readable_dir / "readonly"
    data.mkdir()
    data.chmod(0o555)
    outcome = _open_as_unprivileged_user(data)
    assert outcome.startswith("StoreError: ") and "AGENTCTX_HOME" in outcome and "\n" not in outcome
    assert list(data.iterdir()) == []


def test_a_read_only_store_is_refused_and_left_as_is(world_readable_dir: Path, project: Project) -> None:
    data = world_readable_dir / "store"
    with Store.open(data / "agentctx.db") as store:
        store.add(project, NewRecord(type="decision", title="Keep me", body="Untouched."))
    for leftover in data.glob("agentctx.db-*"):
        leftover.unlink()
    before = _digest(data / "agentctx.db")
    (data / "agentctx.db").chmod(0o444)
    data.chmod(0o555)
    outcome = _open_as_unprivileged_user(data)
    assert outcome.startswith("StoreError: ") and "not writable" in outcome and "\n" not in outcome
    assert _digest(data / "agentctx.db") == before


def test_opening_without_create_does_not_make_a_store() -> None:
    with pytest.raises(StoreError, match="No store"):
        Store.open(create=False)
    assert not Path(db_path()).exists()


def test_a_version_4_store_gets_the_project_column_in_its_index_and_stays_searchable(project: Project) -> None:
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for migrate in MIGRATIONS[:4]:  # the layout before m005: FTS over records(title, body)
        migrate(conn, True)
    conn.execute(
        """INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source)
           VALUES ('01JOLDRECORD0000000000000B', 'p-alpha', 'decision', 'Kestrel telemetry', 'Batches uploads',
                   '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', 'cli')"""
    )
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    with Store.open(path) as store:
        columns = [row[1] for row in store.conn.execute("PRAGMA table_info(records_fts)")]
        assert columns == ["title", "body", "ns"]
        store.conn.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
        hits = search(store, project, "kestrel telemetry uploads", floor=None).hits
        assert [hit.record.record_id for hit in hits] == ["01JOLDRECORD0000000000000B"]
