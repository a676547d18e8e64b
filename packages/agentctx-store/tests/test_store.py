"""`Store`, the class: opening and closing, transactions, scoping, chains, keys, sessions.

Behaviour that has its own file stays there (deleting and editing: test_lifecycle.py; search:
test_retrieval.py; type rules of supersession: test_supersession_types.py)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agentctx_store import NewRecord, NotHeadError, Project, Record, RecordNotFound, Store, paths

AddRecord = Callable[..., Record]  # the `add` fixture (conftest.py)


def test_open_creates_the_store_at_the_data_dir_and_close_leaves_nothing_derived(project: Project) -> None:
    store = Store.open()
    assert store.path == paths.db_path() and os.path.exists(store.path)
    store.add(project, NewRecord(type="decision", title="Use WAL", body="Many writers."))
    assert store.dirty == {project.project_id}  # what `digest.refreshing` refreshes
    store.close()
    assert not os.path.exists(paths.digests_dir())  # closing only closes
    with pytest.raises(sqlite3.ProgrammingError):
        store.conn.execute("SELECT 1")


def test_open_accepts_a_path_or_its_text(tmp_path: Path) -> None:
    for target in (tmp_path / "a.db", str(tmp_path / "b.db")):
        with Store.open(target) as store:
            assert store.path == os.fspath(target) and os.path.exists(store.path)


def test_a_transaction_commits_all_or_nothing_and_nested_ones_join_the_outer(store: Store, project: Project) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.add(project, NewRecord(type="decision", title="Lost", body="Rolled back."))
        with store.transaction():  # joins: its end commits nothing on its own
            store.add(project, NewRecord(type="decision", title="Also lost", body="Rolled back."))
        raise RuntimeError("abort")
    assert store.list_records(project) == []
    with store.transaction():
        store.add(project, NewRecord(type="decision", title="Kept", body="Committed."))
    assert [record.title for record in store.list_records(project)] == ["Kept"]


def test_reads_see_the_project_and_global_records_never_another_project(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    mine = add("Mine")
    shared = add("Everyone's", scope="global")
    theirs = add("Theirs", in_project=other_project)
    assert {record.record_id for record in store.list_records(project)} == {mine.record_id, shared.record_id}
    with pytest.raises(RecordNotFound):
        store.get(project, theirs.record_id)
    found, missing = store.get_many(project, [theirs.record_id, mine.record_id])
    assert [record.record_id for record in found] == [mine.record_id] and missing == [theirs.record_id]


def test_a_chain_has_one_head_and_only_the_head_can_be_superseded(
    store: Store, project: Project, add: AddRecord
) -> None:
    first = add("Queue on Redis", type="decision")
    old, new = store.supersede(project, first.record_id, title="Queue on Postgres", body="Postgres SKIP LOCKED.")
    assert old.superseded_by == new.record_id and new.superseded_by is None
    assert [record.record_id for record in store.history(project, new.record_id)] == [first.record_id, new.record_id]
    assert store.head_of(project, first.record_id) == store.get(project, new.record_id)
    assert [record.record_id for record in store.list_records(project)] == [new.record_id]  # current only
    with pytest.raises(NotHeadError) as raised:
        store.supersede(project, first.record_id, body="Again.")
    assert raised.value.head_id == new.record_id


def test_a_key_finds_the_current_record_of_its_type(store: Store, project: Project, add: AddRecord) -> None:
    stub = add("Error: KeyError", type="bugfix", key="error:abc", confidence="inferred")
    assert store.find_by_key(project, "bugfix", "error:abc") == stub
    assert store.find_by_key(project, "decision", "error:abc") is None
    assert store.counts_by_type(project) == {"bugfix": 1}


def test_projects_are_remembered_once_with_their_latest_name(store: Store, project: Project) -> None:
    store.remember_project(project)
    store.remember_project(Project(project_id=project.project_id, root=project.root, name="renamed"))
    rows = store.list_projects()
    assert [(row["project_id"], row["name"], row["root"]) for row in rows] == [
        (project.project_id, "renamed", project.root)
    ]


def test_sessions_keep_metadata_and_injection_totals_per_project(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    record = add("Use WAL")
    store.record_injection(project, "s-1", [record.record_id], 120, prompt=True)
    store.record_injection(other_project, "s-2", [], 40)
    store.update_session_meta(project, "s-1", branch="main")
    session = store.get_session("s-1")
    assert session is not None and session["meta"]["branch"] == "main"
    assert store.total_tokens_injected(project) == 120 and store.total_tokens_injected() == 160
    store.end_session(project, "s-1")
    assert store.get_session("s-1")["ended_at"]  # type: ignore[index]
