"""Derived scores, the cold archive and pruning candidates (docs/consolidation.md#scores).

    score = base relevance × access decay × recency decay × confidence weight

* base relevance: the type weight search uses, ×1.5 when pinned, +10% per reinforcement (max 5);
* access decay: halves every type half-life since the record was last used (read through
  `ctx_get`/injection, else since it was recorded), lifted by how often it was used (≤ ×2);
* recency decay: halves every type half-life since `valid_from`;
* confidence weight: explicit and reinforced 1.0, inferred 0.6.

Decisions, conventions and profile entries never decay (both decay factors are 1). Both decay
factors are exponential, so two records' order never flips with the mere passing of time:
re-running consolidation later ranks the same way.

Everything here is derived from stored fields and a clock: delete the scores and the next run
computes the same values again.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta

from agentctx_store.projects import Project
from agentctx_store.records import Record, parse_time, parsed_to_text
from agentctx_store.retrieval import HALF_LIFE_DAYS, PIN_WEIGHT, TYPE_WEIGHTS
from agentctx_store.rows import RECORD_COLUMNS, row_to_record, visible_namespaces
from agentctx_store.store import Store

CONFIDENCE_WEIGHTS = {"explicit": 1.0, "reinforced": 1.0, "inferred": 0.6}
REINFORCE_BONUS = 0.1
REINFORCE_BONUS_MAX = 5
ACCESS_BOOST_MAX = 2.0
PRUNE_SCORE = 0.1
PRUNE_AFTER_DAYS = 60
ARCHIVE_AFTER_DAYS = 90


def _days(later: datetime, earlier_text: str | None) -> float:
    if not earlier_text:
        return 0.0
    try:
        return max(0.0, (later - parse_time(earlier_text)).total_seconds() / 86400)
    except ValueError:
        return 0.0


def base_relevance(record: Record) -> float:
    base = TYPE_WEIGHTS.get(record.type, 0.8)
    if record.pinned:
        base *= PIN_WEIGHT
    return base * (1 + REINFORCE_BONUS * min(record.reinforce_count, REINFORCE_BONUS_MAX))


def access_decay(record: Record, now: datetime) -> float:
    half_life = HALF_LIFE_DAYS.get(record.type)
    if half_life is None:
        return 1.0
    last_use = max(filter(None, (record.last_accessed, record.recorded_at)))
    boost = min(ACCESS_BOOST_MAX, 1 + 0.25 * math.log2(1 + record.access_count))
    return math.pow(0.5, _days(now, last_use) / half_life) * boost


def recency_decay(record: Record, now: datetime) -> float:
    half_life = HALF_LIFE_DAYS.get(record.type)
    if half_life is None:
        return 1.0
    return math.pow(0.5, _days(now, record.valid_from) / half_life)


def score(record: Record, now: datetime) -> float:
    return (
        base_relevance(record)
        * access_decay(record, now)
        * recency_decay(record, now)
        * CONFIDENCE_WEIGHTS.get(record.confidence, 0.6)
    )


def update_scores(store: Store, now: datetime) -> int:
    """Recompute `score` for every current record of the store; returns how many changed."""
    rows = store.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE superseded_at IS NULL").fetchall()
    changes: dict[str, float] = {}
    for row in rows:
        record = row_to_record(row)
        value = round(score(record, now), 6)
        if abs(value - record.score) > 1e-6:
            changes[record.record_id] = value
    if changes:
        store.set_scores(changes)
    return len(changes)


def is_pruning_candidate(record: Record, now: datetime) -> bool:
    """Score below 0.1 now and for the last 60 days (scores only fall between uses, so
    "below at the window's start and not used since" is the same as "below all along")."""
    if record.pinned or record.superseded_at is not None or HALF_LIFE_DAYS.get(record.type) is None:
        return False
    window_start = now - timedelta(days=PRUNE_AFTER_DAYS)
    if record.last_accessed and _days(window_start, record.last_accessed) <= 0:
        return False  # used within the window
    if _days(window_start, record.recorded_at) <= 0:
        return False  # did not exist for the whole window
    return score(record, window_start) < PRUNE_SCORE and score(record, now) < PRUNE_SCORE


def pruning_candidates(store: Store, project: Project, now: datetime, *, limit: int = 50) -> list[Record]:
    """Current records worth deleting by hand; never deleted automatically."""
    rows = store.conn.execute(
        f"""SELECT {RECORD_COLUMNS} FROM records WHERE project_id IN (?, ?) AND superseded_at IS NULL
            AND pinned = 0 AND type NOT IN ('decision', 'convention', 'profile') AND score < ?
            ORDER BY score, id""",
        (*visible_namespaces(project), PRUNE_SCORE),
    ).fetchall()
    found = [record for record in map(row_to_record, rows) if is_pruning_candidate(record, now)]
    return found[:limit]


def archive_superseded(store: Store, now: datetime) -> dict[str, int]:
    """Mark records superseded for more than 90 days as archived (cold), and unmark records
    that are current again (a deleted successor brings its predecessor back). Archived rows
    stay in `records`, so history and as-of queries see them unchanged.

    Returns how many records this call newly archived, by owning namespace (project id or
    `_global`), so a run reports what it archived for the projects it ran on."""
    cutoff = parsed_to_text(now - timedelta(days=ARCHIVE_AFTER_DAYS))
    with store.transaction() as conn:
        conn.execute(
            """DELETE FROM record_archive WHERE record_id NOT IN
               (SELECT id FROM records WHERE superseded_at IS NOT NULL AND superseded_at < ?)""",
            (cutoff,),
        )
        newly = {
            row[0]: int(row[1])
            for row in conn.execute(
                """SELECT project_id, count(*) FROM records WHERE superseded_at IS NOT NULL AND superseded_at < ?
                   AND id NOT IN (SELECT record_id FROM record_archive) GROUP BY project_id""",
                (cutoff,),
            )
        }
        conn.execute(
            """INSERT OR IGNORE INTO record_archive(record_id, archived_at)
               SELECT id, ? FROM records WHERE superseded_at IS NOT NULL AND superseded_at < ?""",
            (parsed_to_text(now), cutoff),
        )
        return newly


def archived_ids(conn: sqlite3.Connection, record_ids: Sequence[str] | None = None) -> set[str]:
    if record_ids is None:
        return {row[0] for row in conn.execute("SELECT record_id FROM record_archive")}
    marks = ",".join("?" * len(record_ids))
    return {
        row[0]
        for row in conn.execute(f"SELECT record_id FROM record_archive WHERE record_id IN ({marks})", list(record_ids))
    }


def archived_count(store: Store, project: Project) -> int:
    """Archived records `project` sees: its own and `_global` ones (as `agentctx status` counts records)."""
    row = store.conn.execute(
        "SELECT count(*) FROM record_archive a JOIN records r ON r.id = a.record_id WHERE r.project_id IN (?, ?)",
        visible_namespaces(project),
    ).fetchone()
    return int(row[0])
