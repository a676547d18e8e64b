"""Merging confirmed near-duplicates (docs/consolidation.md#near-duplicates): the weaker record
is superseded by the stronger one, never deleted, so its provenance (source, session) stays in
the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentctx_store.consolidate.checkpoints import checkpoint
from agentctx_store.records import Record, utc_now
from agentctx_store.rows import RECORD_COLUMNS, row_to_record
from agentctx_store.store import Store

CONFIDENCE_RANK = {"explicit": 2, "reinforced": 1, "inferred": 0}
MAX_JUDGED_PER_RUN = 20

# A judge says whether two records state the same fact: True (merge), False (keep both),
# None (could not tell: ask again next run).
MergeJudge = Callable[[Record, Record], bool | None]


def stronger_first(first: Record, second: Record) -> tuple[Record, Record]:
    """(keep, drop): pinned, then more confident, then more reinforced and used, then newer."""

    def strength(record: Record) -> tuple[Any, ...]:
        return (
            record.pinned,
            CONFIDENCE_RANK.get(record.confidence, 0),
            record.reinforce_count,
            record.access_count,
            record.valid_from,
            record.record_id,
        )

    return (first, second) if strength(first) >= strength(second) else (second, first)


def apply_merges(store: Store, judge: MergeJudge, *, deadline: float, settings: dict[str, Any]) -> int:
    """Ask the judge about open candidate pairs; supersede the weaker record by the stronger
    when it confirms. The weaker record stays in the store, linked by `superseded_by` and a
    `supersedes` edge, with its own provenance (source, session)."""
    with store.transaction() as conn:  # pairs whose records changed meanwhile are moot
        conn.execute(
            """UPDATE merge_candidates SET status = 'gone', decided_at = ? WHERE status = 'open' AND (
                   keep_id NOT IN (SELECT id FROM records WHERE superseded_at IS NULL)
                   OR drop_id NOT IN (SELECT id FROM records WHERE superseded_at IS NULL))""",
            (utc_now(),),
        )
    pairs = store.conn.execute(
        "SELECT keep_id, drop_id FROM merge_candidates WHERE status = 'open' ORDER BY similarity DESC, keep_id LIMIT ?",
        (MAX_JUDGED_PER_RUN,),
    ).fetchall()
    threshold = int(settings.get("reinforce_threshold", 3))
    merged = 0
    for keep_id, drop_id in pairs:
        if time.monotonic() > deadline:
            break
        rows = store.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE id IN (?, ?) AND superseded_at IS NULL", (keep_id, drop_id)
        ).fetchall()
        if len(rows) != 2:
            continue
        keep, drop = stronger_first(*map(row_to_record, rows))
        verdict = judge(keep, drop)
        if verdict is None:
            continue
        with store.transaction() as conn:
            now = utc_now()
            if verdict:
                store.merge(keep, drop, threshold=threshold, when=now)
                checkpoint("merge")
                merged += 1
            conn.execute(
                "UPDATE merge_candidates SET status = ?, decided_at = ? WHERE keep_id = ? AND drop_id = ?",
                ("merged" if verdict else "rejected", now, keep_id, drop_id),
            )
    return merged
