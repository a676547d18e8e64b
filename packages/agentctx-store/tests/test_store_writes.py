"""The record writes other parts of agentctx make through `Store` (import, consolidation,
scoring, drift, the hooks' accounting, the embedding phase): each keeps a record's time axes
and counters exactly as its caller asked, and refuses a column it does not own."""

from __future__ import annotations

import pytest

from agentctx_store import NewRecord, Project, Record, Store
from agentctx_store.rows import RECORD_COLUMNS
from agentctx_store.store import REWRITABLE


def _add(store: Store, project: Project, title: str, **fields: object) -> Record:
    return store.add(project, NewRecord(type="decision", title=title, body=title, **fields))  # type: ignore[arg-type]


def test_insert_row_writes_every_column_as_given(store: Store, project: Project) -> None:
    source = _add(store, project, "Exported")
    record_id = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
    row: dict[str, object] = {column.strip(): None for column in RECORD_COLUMNS.split(",")}
    row |= {
        "id": record_id,
        "project_id": project.project_id,
        "type": "decision",
        "title": "Imported",
        "body": "Kept as it was.",
        "scope": "project",
        "pinned": 0,
        "confidence": "explicit",
        "reinforce_count": 2,
        "valid_from": "2020-01-02T00:00:00Z",
        "recorded_at": "2020-01-03T00:00:00Z",
        "superseded_at": "2021-01-01T00:00:00Z",
        "superseded_by": source.record_id,
        "access_count": 5,
        "score": 0.5,
        "claudemd_drift_score": 0.0,
        "source": "import",
        "pending_embedding": 1,
    }
    store.insert_row(row)
    record = store.get(project, record_id)
    assert (record.valid_from, record.recorded_at, record.superseded_at) == (
        "2020-01-02T00:00:00Z",
        "2020-01-03T00:00:00Z",
        "2021-01-01T00:00:00Z",
    )
    assert (record.superseded_by, record.reinforce_count, record.access_count) == (source.record_id, 2, 5)


def test_insert_row_and_rewrite_refuse_columns_they_do_not_own(store: Store, project: Project) -> None:
    record = _add(store, project, "Mine")
    full: dict[str, object] = {column.strip(): None for column in RECORD_COLUMNS.split(",")}
    with pytest.raises(ValueError, match="missing"):
        store.insert_row({key: value for key, value in full.items() if key != "recorded_at"})
    with pytest.raises(ValueError, match="unknown"):
        store.insert_row(full | {"valid_to": None})
    for column in ("recorded_at", "access_count", "score", "updated_at", "id"):
        assert column not in REWRITABLE
        with pytest.raises(ValueError, match="unknown"):
            store.rewrite(record.record_id, {column: "x"}, when="2030-01-01T00:00:00Z")
    assert store.get(project, record.record_id) == record


def test_rewrite_changes_the_fact_in_place_and_asks_for_a_new_vector(store: Store, project: Project) -> None:
    record = _add(store, project, "Old words")
    store.conn.execute("UPDATE records SET pending_embedding = 0")
    store.rewrite(record.record_id, {"title": "New words"}, when="2030-01-01T00:00:00Z")
    changed = store.get(project, record.record_id)
    assert (changed.title, changed.updated_at, changed.pending_embedding) == ("New words", "2030-01-01T00:00:00Z", True)
    assert (changed.recorded_at, changed.valid_from) == (record.recorded_at, record.valid_from)


def test_mark_superseded_ends_only_a_current_record(store: Store, project: Project) -> None:
    old, new, later = (_add(store, project, title) for title in ("Old", "New", "Later"))
    assert store.mark_superseded(old.record_id, by=new.record_id, when="2030-01-01T00:00:00Z")
    ended = store.get(project, old.record_id)
    assert (ended.superseded_at, ended.superseded_by) == ("2030-01-01T00:00:00Z", new.record_id)
    assert not store.mark_superseded(old.record_id, by=later.record_id, when="2031-01-01T00:00:00Z")
    assert store.get(project, old.record_id) == ended  # the first successor stays
    assert [record.record_id for record in store.history(project, new.record_id)] == [old.record_id, new.record_id]
    retired = _add(store, project, "Retired")
    assert store.mark_superseded(retired.record_id, by=None, when="2030-01-01T00:00:00Z")
    assert store.get(project, retired.record_id).superseded_by is None


def test_merge_supersedes_the_weaker_record_and_counts_a_sighting_of_the_stronger(
    store: Store, project: Project
) -> None:
    keep = _add(store, project, "Keep", confidence="inferred", source="llm_extraction")
    drop = _add(store, project, "Drop", confidence="inferred", source="llm_extraction")
    store.merge(keep, drop, threshold=3, when="2030-01-01T00:00:00Z")
    kept, dropped = store.get(project, keep.record_id), store.get(project, drop.record_id)
    assert (kept.reinforce_count, kept.confidence, kept.updated_at) == (1, "inferred", None)
    assert (dropped.superseded_by, dropped.superseded_at) == (keep.record_id, "2030-01-01T00:00:00Z")
    stated = _add(store, project, "Stated", confidence="explicit")
    store.merge(kept, stated, threshold=3, when="2030-01-02T00:00:00Z")
    assert store.get(project, keep.record_id).confidence == "reinforced"  # an explicit duplicate confirms it


def test_count_access_and_derived_scores_leave_the_fact_and_its_version_alone(
    store: Store, project: Project, other_project: Project
) -> None:
    record = _add(store, project, "Used")
    theirs = _add(store, other_project, "Theirs")
    store.count_access([record.record_id, record.record_id])
    store.set_scores({record.record_id: 0.25})
    assert store.set_drift_scores(project, {record.record_id: 0.75}) == 1
    assert store.set_drift_scores(project, {}) == 1  # back to 0.0: not mentioned any more
    assert store.set_drift_scores(other_project, {record.record_id: 0.5}) == 0  # not its record
    used = store.get(project, record.record_id)
    assert (used.access_count, used.score, used.claudemd_drift_score) == (2, 0.25, 0.0)
    assert used.last_accessed is not None and used.updated_at is None
    assert store.get(other_project, theirs.record_id) == theirs


def test_promote_reinforced_applies_a_lowered_threshold_to_current_records_only(store: Store, project: Project) -> None:
    seen = _add(store, project, "Seen twice", confidence="inferred", reinforce_count=2, source="llm_extraction")
    once = _add(store, project, "Seen once", confidence="inferred", reinforce_count=1, source="llm_extraction")
    old = _add(store, project, "Old", confidence="inferred", reinforce_count=5, source="llm_extraction")
    store.mark_superseded(old.record_id, by=None, when="2030-01-01T00:00:00Z")
    assert store.promote_reinforced(2) == 1
    confidences = [store.get(project, r.record_id).confidence for r in (seen, once, old)]
    assert confidences == ["reinforced", "inferred", "inferred"]


def test_mark_embedded_clears_the_flag_on_the_connection_it_is_given(store: Store, project: Project) -> None:
    record = _add(store, project, "Embed me")
    assert store.get(project, record.record_id).pending_embedding
    with store.transaction() as conn:
        Store.mark_embedded(conn, [record.record_id])
    assert not store.get(project, record.record_id).pending_embedding
