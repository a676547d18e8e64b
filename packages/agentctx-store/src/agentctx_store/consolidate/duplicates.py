"""Exact and near duplicates among a project's current records, found without vectors
(docs/consolidation.md#near-duplicates): the same text, or nearly all the same words, in two
current records of one type. Each pair becomes an open merge candidate, as the vector phase's
pairs do, so `agentctx status` shows it and a model (or the developer) decides; nothing is merged
here. A pair already decided is never reopened."""

from __future__ import annotations

import re
from collections import defaultdict

from agentctx_store.consolidate.merges import stronger_first
from agentctx_store.drift.text import terms_of
from agentctx_store.projects import Project
from agentctx_store.records import Record, utc_now
from agentctx_store.store import Store

NEAR = 0.85  # share of the two records' distinct words they have in common (Jaccard)
TYPES = ("decision", "convention", "preference", "discovery", "bugfix")  # as agentctx_embed.phase
MAX_PER_TYPE = 4000  # records of one type compared pairwise in one run (newest first)


def _normal(record: Record) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", f"{record.title} {record.body}".lower()).split())


def flag(store: Store, project: Project) -> int:
    """Open merge candidates for the exact and near duplicates among `project`'s current
    records (its own namespace only); returns how many new pairs were found."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in store.list_records(project, scope="project", limit=None):
        if record.project_id == project.project_id and record.type in TYPES:
            groups[record.type].append(record)
    known = {(row[0], row[1]) for row in store.conn.execute("SELECT keep_id, drop_id FROM merge_candidates")}
    found: list[tuple[str, str, str, str, float]] = []
    for record_type, records in sorted(groups.items()):
        records = sorted(records, key=lambda r: r.recorded_at or "", reverse=True)[:MAX_PER_TYPE]
        words = [terms_of(f"{r.title} {r.body}") for r in records]
        normal = [_normal(r) for r in records]
        by_word: dict[str, list[int]] = defaultdict(list)
        for index, terms in enumerate(words):
            for term in terms:
                by_word[term].append(index)
        for i, first in enumerate(records):
            seen: set[int] = set()
            rarest = sorted(words[i], key=lambda term: len(by_word[term]))[:3]
            for term in rarest:  # a near duplicate shares nearly all words, so one of its rarest
                seen.update(j for j in by_word[term] if j > i)
            for j in sorted(seen):
                if normal[i] == normal[j]:
                    similarity = 1.0
                else:
                    union = len(words[i] | words[j])
                    similarity = len(words[i] & words[j]) / union if union else 0.0
                    if similarity < NEAR:
                        continue
                keep, drop = stronger_first(first, records[j])
                pair = (keep.record_id, drop.record_id)
                if pair in known or pair[::-1] in known:
                    continue
                known.add(pair)
                found.append((*pair, project.project_id, record_type, round(similarity, 4)))
    if found:
        now = utc_now()
        with store.transaction() as conn:
            conn.executemany(
                """INSERT OR IGNORE INTO merge_candidates(keep_id, drop_id, project_id, type, similarity, found_at)
                   VALUES (?, ?, ?, ?, ?, ?)""",
                [(*row, now) for row in found],
            )
    return len(found)
