"""Compaction of the local operation log (`record_ops`, migrations.m010_operation_log;
docs/remote.md, "The local log").

The log keeps, for every record, the last operation made here in full: it is the record's
current state as this store made it, which a remote added later (or a rule that widens) is sent
as a snapshot, and the version the next change here names as its parent. An older operation of a
record made here is compacted once every remote has pushed past it (with no remote, at once):

- one no remote ever pushed past (`record_ops_marks.shared_upto`, kept even when a remote is removed)
  is dropped outright: no server can hold it, so none can send it back;
- one a remote may have received keeps its row and id, and loses its state (title, body and
  the rest, but type, scope and confidence): a server that sends it back again (a remote removed
  and added again, a second remote with the same records) finds it known, and it changes
  nothing. Such a row is a stub (`compacted` in its state) and is never sent.

A pulled operation keeps its id the same way once a later operation of its record was applied.
Deletions (tombstones: a deleted record does not come back) and operations kept as conflicts are
never compacted. Run after each successful sync and by `agentctx consolidate`.
"""

from __future__ import annotations

from agentctx_store.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_STUB = """json_object('type', json_extract(state, '$.type'), 'scope', json_extract(state, '$.scope'),
    'confidence', json_extract(state, '$.confidence'), 'compacted', 1)"""


def compact(store: Store) -> int:
    """Compact the operations every remote has pushed past; returns how many were dropped or
    stubbed. Only operations that became eligible since the last run are looked at: those the
    push positions passed since, and those of records changed since."""
    with store.transaction() as conn:
        top = conn.execute("SELECT coalesce(max(seq), 0) FROM record_ops").fetchone()[0]
        horizon = conn.execute("SELECT min(pushed_seq) FROM remotes").fetchone()[0]
        if horizon is None:  # no remote: nothing waits to be pushed
            horizon = top
        upto, below, seen = conn.execute(
            "SELECT shared_upto, compacted_below, compacted_max FROM record_ops_marks"
        ).fetchone()
        # the operations to look at, by their own key: a plan that scans the whole log is never chosen
        fresh = """record_ops.seq IN (SELECT seq FROM record_ops WHERE seq > :below
                    UNION SELECT seq FROM record_ops WHERE record_id IN
                        (SELECT record_id FROM record_ops WHERE seq > :seen))"""
        later_here = """EXISTS (SELECT 1 FROM record_ops later WHERE later.record_id = record_ops.record_id
                            AND later.seq > record_ops.seq AND later.origin IS NULL)"""
        marks = {"below": below, "seen": seen, "upto": upto, "horizon": horizon}
        dropped = conn.execute(
            f"""DELETE FROM record_ops WHERE origin IS NULL AND kind = 'put' AND applied = 1
                AND seq > :upto AND seq <= :horizon AND {fresh} AND {later_here}""",
            marks,
        ).rowcount
        stubbed = conn.execute(
            f"""UPDATE record_ops SET state = {_STUB} WHERE kind = 'put' AND applied = 1
                AND json_extract(state, '$.compacted') IS NULL AND {fresh}
                AND ((origin IS NULL AND seq <= min(:upto, :horizon) AND {later_here})
                     OR (origin IS NOT NULL AND EXISTS (SELECT 1 FROM record_ops later
                         WHERE later.record_id = record_ops.record_id AND later.seq > record_ops.seq
                         AND later.applied = 1)))""",
            marks,
        ).rowcount
        conn.execute("UPDATE record_ops_marks SET compacted_below = ?, compacted_max = ?", (horizon, top))
    return dropped + stubbed


def is_stub(state: Mapping[str, object]) -> bool:
    """Whether an operation's decoded state is a compacted stub (never sent)."""
    return "compacted" in state
