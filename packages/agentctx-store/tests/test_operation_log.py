"""The local operation log (migrations.m010_operation_log): what a remote sync sends."""

from __future__ import annotations

import json
from collections.abc import Callable

from agentctx_store import Project, Record, Store

AddRecord = Callable[..., Record]  # the `add` fixture (conftest.py)


def _ops(store: Store) -> list[tuple[str, str, str | None, dict[str, object]]]:
    rows = store.conn.execute("SELECT record_id, kind, parent, op_id, state FROM record_ops ORDER BY seq").fetchall()
    return [(row[0], row[1], row[2], {"op_id": row[3], **json.loads(row[4])}) for row in rows]


def test_every_change_of_a_record_is_one_operation_naming_the_version_it_changed(
    store: Store, project: Project, add: AddRecord
) -> None:
    first = add("Use uv", "We use uv for environments.")
    store.pin(project, first.record_id)
    _, new = store.supersede(project, first.record_id, body="We use uv and its lock file.")
    store.delete(project, new.record_id)

    ops = _ops(store)
    kinds = [(record_id, kind) for record_id, kind, _, _ in ops]
    assert kinds == [
        (first.record_id, "put"),  # added
        (first.record_id, "put"),  # pinned
        (new.record_id, "put"),  # the successor
        (first.record_id, "put"),  # superseded by it
        (first.record_id, "put"),  # current again: its successor was deleted
        (new.record_id, "delete"),
    ]
    assert ops[0][2] is None
    assert ops[1][2] == ops[0][3]["op_id"]  # the pin changed the version the add made
    assert ops[1][3]["pinned"] == 1
    assert ops[3][3]["superseded_by"] == new.record_id
    assert ops[4][3]["superseded_by"] is None


def test_counters_and_scores_are_not_operations(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv")
    before = store.conn.execute("SELECT count(*) FROM record_ops").fetchone()[0]
    store.count_access([record.record_id])
    store.set_scores({record.record_id: 0.5})
    store.set_drift_scores(project, {record.record_id: 0.3})
    Store.mark_embedded(store.conn, [record.record_id])
    store.conn.commit()
    assert store.conn.execute("SELECT count(*) FROM record_ops").fetchone()[0] == before


def test_operation_ids_are_unique_and_stable(store: Store, add: AddRecord) -> None:
    for index in range(50):
        add(f"Record {index}")
    ids = [row[0] for row in store.conn.execute("SELECT op_id FROM record_ops")]
    assert len(ids) == len(set(ids)) == 50
    add("One more")
    assert set(ids) < {row[0] for row in store.conn.execute("SELECT op_id FROM record_ops")}


def test_writes_while_a_sync_applies_are_not_logged_again(store: Store, add: AddRecord) -> None:
    with store.transaction() as conn:
        conn.execute("INSERT INTO record_ops_applying VALUES ('now')")
        add("Pulled from a remote")
        conn.execute("DELETE FROM record_ops_applying")
    assert store.conn.execute("SELECT count(*) FROM record_ops").fetchone()[0] == 0
    add("Made here")
    assert store.conn.execute("SELECT count(*) FROM record_ops").fetchone()[0] == 1
