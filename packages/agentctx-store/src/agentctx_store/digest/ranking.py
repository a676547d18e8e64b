"""Ranking for the full SessionStart digest: reciprocal rank fusion (RRF) of rankings that
each see the records differently (docs/consolidation.md#the-full-digest).

The digest has no prompt to rank against, so consolidation ranks the project's current
decisions and conventions against its *focus*: the latest handover (what the developer is in
the middle of) and the titles of the most recent records. Fused rankings:

1. FTS5 BM25 of each candidate against the focus words (the real search, `search.search`);
2. vector similarity to the focus (from agentctx-embed, when it ran: else left out, which is
   the keyword-only digest of degradation rung 2, docs/contracts.md#degradation);
3. the stored score (docs/consolidation.md#scores), newest first among equals, so a project with no
   handover still gets its strongest records.

Pinned records always come first. Ties are broken by record id, so one store always gives one
digest: delete the digest and the scores, re-run, and the same text comes back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from agentctx_store.projects import Project
from agentctx_store.records import Record
from agentctx_store.retrieval import search
from agentctx_store.store import Store

RRF_K = 60
DIGEST_TYPES = ("decision", "convention")
FOCUS_RECENT = 5
FOCUS_CHARS = 2000


def rrf(rankings: Iterable[Sequence[str]], *, k: int = RRF_K) -> dict[str, float]:
    """Σ 1 / (k + rank) over the rankings an id appears in (rank from 1)."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for position, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + position)
    return fused


def fused_order(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[str]:
    fused = rrf(rankings, k=k)
    return sorted(fused, key=lambda item: (-fused[item], item))


def digest_candidates(store: Store, project: Project) -> list[Record]:
    """What may appear in the digest's decisions section: pinned records of the project, and
    its explicit or reinforced decisions and conventions (inferred ones wait for reinforcement)."""
    return [
        record
        for record in store.list_records(project, scope="project")
        if record.pinned or (record.type in DIGEST_TYPES and record.confidence != "inferred")
    ]


def focus_text(store: Store, project: Project) -> str:
    """What the project is busy with: the current handover and the latest record titles."""
    current = store.list_records(project, scope="project", limit=200)
    handover = next((record for record in current if record.type == "handover"), None)
    recent = [record.title for record in current if record.type not in ("handover", "profile", *DIGEST_TYPES)][
        :FOCUS_RECENT
    ]
    parts = [handover.title + "\n" + handover.body] if handover else []
    parts.extend(recent)
    return "\n".join(parts)[:FOCUS_CHARS]


def keyword_ranking(store: Store, project: Project, text: str, candidates: Sequence[Record]) -> list[str]:
    if not text.strip() or not candidates:
        return []
    wanted = {record.record_id for record in candidates}
    result = search(store, project, text, limit=len(wanted) + 50, scope="project", floor=None)
    return [hit.record.record_id for hit in result.hits if hit.record.record_id in wanted]


def score_ranking(candidates: Sequence[Record]) -> list[str]:
    """Highest stored score first; newest first among equal scores (two stable sorts)."""
    newest_first = sorted(candidates, key=lambda record: (record.recorded_at, record.record_id), reverse=True)
    ordered = sorted(newest_first, key=lambda record: -round(record.score, 6))
    return [record.record_id for record in ordered]


def rank_digest(
    store: Store,
    project: Project,
    *,
    vector_ranking: Sequence[str] | None = None,
    focus: str | None = None,
) -> list[Record]:
    """The digest's decisions and conventions, best first (pinned first)."""
    candidates = digest_candidates(store, project)
    if not candidates:
        return []
    by_id: Mapping[str, Record] = {record.record_id: record for record in candidates}
    text = focus if focus is not None else focus_text(store, project)
    rankings: list[Sequence[str]] = [keyword_ranking(store, project, text, candidates)]
    if vector_ranking:
        rankings.append([record_id for record_id in vector_ranking if record_id in by_id])
    rankings.append(score_ranking(candidates))
    order = fused_order(rankings)
    pinned = [record_id for record_id in order if by_id[record_id].pinned]
    rest = [record_id for record_id in order if not by_id[record_id].pinned]
    return [by_id[record_id] for record_id in (*pinned, *rest)]
