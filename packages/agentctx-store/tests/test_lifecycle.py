"""Correcting the store item by item: delete (FTS, edges, entity links, chains), edit, pin."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentctx_store import Project, Record, RecordNotFound, Store, ValidationError, search

AddRecord = Callable[..., Record]  # the `add` fixture of conftest.py


def _fts_rows(store: Store, word: str) -> int:
    return int(store.conn.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (word,)).fetchone()[0])


def _found(store: Store, project: Project, text: str) -> list[str]:
    return [hit.record.record_id for hit in search(store, project, text, floor=None, include_superseded=True).hits]


def test_delete_removes_the_record_from_search_and_the_fts_index(
    store: Store, project: Project, add: AddRecord
) -> None:
    doomed = add("Zanzibar authorisation", "We check permissions with a zanzibar-style service.")
    kept = add("Session cookies", "Sessions live in signed cookies.")
    assert _found(store, project, "zanzibar permissions") == [doomed.record_id]
    store.delete(project, doomed.record_id)
    assert _found(store, project, "zanzibar permissions") == []
    assert _fts_rows(store, "zanzibar") == 0
    store.conn.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")  # raises on a stale index
    assert _found(store, project, "signed cookies") == [kept.record_id]
    with pytest.raises(RecordNotFound):
        store.get(project, doomed.record_id)


def test_delete_removes_edges_and_entity_links(store: Store, project: Project, add: AddRecord) -> None:
    doomed = add("Retry uploads", "Uploads retry three times.")
    other = add("Upload size", "Uploads are capped at 10 MB.")
    node = store.upsert_node(project, "file", "src/upload.py")
    store.link_entity(doomed.record_id, node)
    store.link_entity(other.record_id, node)
    store.add_edge(doomed.record_id, other.record_id, "relates_to")
    store.add_edge(other.record_id, doomed.record_id, "relates_to")
    store.delete(project, doomed.record_id)
    refs = store.conn.execute(
        "SELECT count(*) FROM edges WHERE from_id = ? OR to_id = ?", (doomed.record_id, doomed.record_id)
    ).fetchone()[0]
    links = store.conn.execute(
        "SELECT count(*) FROM record_entities WHERE record_id = ?", (doomed.record_id,)
    ).fetchone()[0]
    assert (refs, links) == (0, 0)
    assert [record.record_id for record in store.related_to_file(project, "src/upload.py")] == [other.record_id]


def test_deleting_a_middle_link_joins_the_chain_over_the_gap(store: Store, project: Project, add: AddRecord) -> None:
    first = add("Queue on SQS")
    _, middle = store.supersede(project, first.record_id, body="Queue on RabbitMQ.")
    _, head = store.supersede(project, middle.record_id, body="Queue on NATS.")
    store.delete(project, middle.record_id)
    assert store.get(project, first.record_id).superseded_by == head.record_id
    assert [record.record_id for record in store.history(project, head.record_id)] == [first.record_id, head.record_id]
    assert [record.record_id for record in store.list_records(project)] == [head.record_id]


def test_deleting_the_head_brings_back_the_fact_it_replaced(store: Store, project: Project, add: AddRecord) -> None:
    first = add("Lint with flake8")
    _, wrong = store.supersede(project, first.record_id, body="Lint with pylint.")
    store.delete(project, wrong.record_id)
    restored = store.get(project, first.record_id)
    assert restored.is_current and restored.superseded_by is None
    assert _found(store, project, "flake8") == [first.record_id]


def test_another_projects_record_cannot_be_deleted(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    theirs = add("Theirs", in_project=other_project)
    with pytest.raises(RecordNotFound):
        store.delete(project, theirs.record_id)
    assert store.get(other_project, theirs.record_id).title == "Theirs"


def test_edit_keeps_the_fts_index_in_step(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Format with black", "Python is formatted with black.")
    edited = store.edit(project, record.record_id, title="Format with ruff", body="Python is formatted with ruff.")
    assert edited.title == "Format with ruff" and edited.updated_at is not None
    assert _found(store, project, "black") == []
    assert _found(store, project, "ruff") == [record.record_id]
    assert _fts_rows(store, "black") == 0


def test_an_invalid_edit_changes_nothing(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Keep me", "Original body.")
    with pytest.raises(ValidationError):
        store.edit(project, record.record_id, body="x" * 3000)
    with pytest.raises(ValidationError):
        store.edit(project, record.record_id, type="memo")
    assert store.get(project, record.record_id).body == "Original body."
    assert _found(store, project, "original") == [record.record_id]


def test_edit_can_move_a_record_to_global_scope(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    record = add("Prefer small PRs", type="preference")
    with pytest.raises(RecordNotFound):
        store.get(other_project, record.record_id)
    assert _found(store, other_project, "small prs") == []
    store.edit(project, record.record_id, scope="global")
    assert store.get(other_project, record.record_id).project_id == "_global"
    assert _found(store, other_project, "small prs") == [record.record_id]  # the index follows the owner


def test_pin_and_unpin(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Never force-push main")
    assert store.pin(project, record.record_id).pinned
    assert [item.record_id for item in store.list_records(project, pinned=True)] == [record.record_id]
    assert not store.pin(project, record.record_id, pinned=False).pinned
    assert store.list_records(project, pinned=True) == []


def test_reinforce_promotes_an_inferred_record_at_the_threshold(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Tests use pytest", confidence="inferred")
    once = store.reinforce(project, record.record_id, threshold=2)
    assert (once.confidence, once.reinforce_count) == ("inferred", 1)
    assert store.reinforce(project, record.record_id, threshold=2).confidence == "reinforced"
