"""Compaction of the local operation log (oplog.compact; docs/remote.md, "The local log")."""

from __future__ import annotations

import json
from collections.abc import Callable

from agentctx_store import Project, Record, Store, config, consolidate, oplog

AddRecord = Callable[..., Record]


def _ops(store: Store, record_id: str) -> list[tuple[int, str, dict[str, object]]]:
    rows = store.conn.execute(
        "SELECT seq, kind, state FROM record_ops WHERE record_id = ? ORDER BY seq", (record_id,)
    ).fetchall()
    return [(row[0], row[1], json.loads(row[2])) for row in rows]


def _edit(store: Store, project: Project, record_id: str, times: int) -> None:
    for index in range(times):
        store.edit(project, record_id, body=f"Version {index + 2} of the fact.")


def _add_remote(store: Store, name: str, pushed_seq: int) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO remotes(name, url, added_at) VALUES (?, 'postgresql://u@h/db', '2026-01-01T00:00:00Z')",
            (name,),
        )
        conn.execute("UPDATE remotes SET pushed_seq = ? WHERE name = ?", (pushed_seq, name))


def test_with_no_remote_the_log_keeps_one_operation_per_record(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv", "Version 1 of the fact.")
    other = add("Use ruff")
    _edit(store, project, record.record_id, 5)
    assert len(_ops(store, record.record_id)) == 6

    assert oplog.compact(store) == 5
    (only,) = _ops(store, record.record_id)
    assert only[2]["body"] == "Version 6 of the fact."  # the current state, in full
    assert len(_ops(store, other.record_id)) == 1
    assert oplog.compact(store) == 0
    _edit(store, project, record.record_id, 1)  # the next change names the kept one as its parent
    kept = store.conn.execute("SELECT op_id FROM record_ops WHERE seq = ?", (only[0],)).fetchone()[0]
    parent = store.conn.execute(
        "SELECT parent FROM record_ops WHERE record_id = ? ORDER BY seq DESC LIMIT 1", (record.record_id,)
    ).fetchone()[0]
    assert parent == kept
    assert oplog.compact(store) == 1  # a record changed since the last run: its older operation goes
    assert len(_ops(store, record.record_id)) == 1


def test_compaction_never_touches_what_a_remote_has_not_pushed(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv", "Version 1 of the fact.")
    _edit(store, project, record.record_id, 2)
    pushed = store.conn.execute("SELECT max(seq) FROM record_ops").fetchone()[0]
    _add_remote(store, "team", pushed)
    _add_remote(store, "backup", pushed - 1)  # one operation behind
    _edit(store, project, record.record_id, 2)  # not pushed anywhere yet

    assert oplog.compact(store) == 2  # the two every remote pushed past (neither is the last)
    ops = _ops(store, record.record_id)
    assert len(ops) == 5  # ids kept: a server may send them back, and they must be known here
    assert ops[0][2] == {"type": "decision", "scope": "project", "confidence": "explicit", "compacted": 1}
    assert "compacted" in ops[1][2]
    assert [op[2]["body"] for op in ops[2:]] == [f"Version {n} of the fact." for n in (3, 2, 3)]

    with store.transaction() as conn:
        conn.execute("UPDATE remotes SET pushed_seq = (SELECT max(seq) FROM record_ops)")
    assert oplog.compact(store) == 2
    assert ["compacted" in op[2] for op in _ops(store, record.record_id)] == [True, True, True, True, False]


def test_a_removed_remote_leaves_ids_and_deletions_stay(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv", "Version 1 of the fact.")
    doomed = add("Wrong fact")
    _edit(store, project, record.record_id, 1)
    _add_remote(store, "team", store.conn.execute("SELECT max(seq) FROM record_ops").fetchone()[0])
    with store.transaction() as conn:
        conn.execute("DELETE FROM remotes")
    _edit(store, project, record.record_id, 1)
    store.delete(project, doomed.record_id)

    oplog.compact(store)
    ops = _ops(store, record.record_id)
    assert len(ops) == 2 and "compacted" in ops[0][2] and "compacted" not in ops[1][2]  # pushed once: id kept
    assert [op[1] for op in _ops(store, doomed.record_id)] == ["put", "delete"]  # the tombstone stays


def test_pulled_operations_keep_their_ids(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv", "Version 1 of the fact.")
    with store.transaction() as conn:  # as a pull logs what it applied
        for index in range(2):
            conn.execute(
                """INSERT INTO record_ops(op_id, record_id, project_id, kind, state, origin, made_at)
                   VALUES (?, ?, ?, 'put', ?, 'team', '2026-01-01T00:00:00Z')""",
                (f"pulled{index}", record.record_id, project.project_id, json.dumps({"type": "decision", "body": "x"})),
            )
    _add_remote(store, "team", store.conn.execute("SELECT max(seq) FROM record_ops").fetchone()[0])
    oplog.compact(store)
    states = {row[0]: json.loads(row[1]) for row in store.conn.execute("SELECT op_id, state FROM record_ops")}
    assert "compacted" in states["pulled0"] and "compacted" not in states["pulled1"]


def test_consolidate_compacts_the_log(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv", "Version 1 of the fact.")
    _edit(store, project, record.record_id, 3)
    report = consolidate.run([project], settings=config.load())
    assert report.compacted_ops == 3
    assert len(_ops(store, record.record_id)) == 1
