"""Hybrid ranking's fusion and what the prompt gets from it (docs/retrieval.md, "Fusion").

Real stores in temp dirs; the vectors are written by hand (a few dimensions), so each test says
exactly what the vector side sees; no model is loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from agentctx_store import Project, Record, Store
from agentctx_store.inject import compose_injection
from agentctx_store.prompt_answer import PROMPT_TYPES
from embed_testkit import add

from agentctx_embed.hybrid import VectorIndex, hybrid_search

DIMS = 8


def unit(*weights: float) -> np.ndarray:
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[: len(weights)] = weights
    return vector / np.linalg.norm(vector)


def index_of(records: dict[Record, np.ndarray]) -> VectorIndex:
    index = VectorIndex(DIMS)
    items = [(record.record_id, record.project_id, record.type, "") for record in records]
    index.put(items, np.vstack(list(records.values())))
    return index


def fillers(store: Store, project: Project, count: int) -> dict[Record, np.ndarray]:
    """Records about nothing the prompts ask, spread over the dimensions the prompts do not use."""
    out: dict[Record, np.ndarray] = {}
    for number in range(count):
        record = add(
            store, project, "convention", f"Widget rule {number}", f"Widget {number} follows checklist {number}."
        )
        out[record] = unit(0.05, 0.0, 0.0, *[(number * 7 + k) % 5 + 1.0 for k in range(5)])
    return out


def answer(store: Store, project: Project, prompt: str, index: VectorIndex, query: np.ndarray) -> Any:
    hits = hybrid_search(store, project, prompt, index=index, query_vector=query, limit=3, types=PROMPT_TYPES).hits
    return hits, compose_injection(hits, prompt)


def test_one_clearly_relevant_record_is_shown_in_full_and_the_weaker_ones_by_title_at_most(
    store: Store, project: Project
) -> None:
    vectors = fillers(store, project, 24)
    best = add(
        store, project, "decision", "Use PostgreSQL as the main database", "All services persist into PostgreSQL."
    )
    backups = add(store, project, "convention", "Database backups run nightly", "The database is dumped at 02:00.")
    moves = add(store, project, "convention", "Database changes use Alembic", "Every database change is a migration.")
    vectors |= {best: unit(1.0), backups: unit(0.8, 0.6), moves: unit(0.8, 0.0, 0.6)}
    prompt = "which database do the services persist into, PostgreSQL?"
    hits, injection = answer(store, project, prompt, index_of(vectors), unit(1.0))
    assert hits[0].record.record_id == best.record_id
    # the best hit leads both signals by a wide margin, and its fused value says so (a rank
    # fusion gives the first three nearly equal values, and every one of them was shown in full)
    assert hits[1].score < 0.8 * hits[0].score
    assert injection.full_ids == [best.record_id]
    assert len(injection.title_ids) <= 2
    assert set(injection.title_ids) <= {backups.record_id, moves.record_id}


def test_two_equally_relevant_records_are_both_shown_in_full(store: Store, project: Project) -> None:
    vectors = fillers(store, project, 24)
    first = add(store, project, "convention", "Deploys go through the release pipeline", "Deploy with the pipeline.")
    second = add(
        store, project, "convention", "Deploys go through the release pipeline too", "Deploy with the pipeline."
    )
    vectors |= {first: unit(1.0), second: unit(1.0)}
    prompt = "how do deploys go out, through the release pipeline?"
    _hits, injection = answer(store, project, prompt, index_of(vectors), unit(1.0))
    assert set(injection.full_ids) == {first.record_id, second.record_id}


def test_in_a_small_store_the_vector_side_breaks_a_keyword_tie(store: Store, project: Project) -> None:
    # five records: too few for the floor's z, but the fused order still uses the vectors
    vectors = fillers(store, project, 3)
    older = add(store, project, "convention", "Cache keys carry the tenant", "Keys are prefixed per tenant.")
    newer = add(store, project, "convention", "Cache entries expire in an hour", "Entries expire after an hour.")
    vectors |= {older: unit(0.2, 1.0), newer: unit(1.0)}
    prompt = "cache question: how long do the cached things last?"
    hits, _injection = answer(store, project, prompt, index_of(vectors), unit(1.0))
    assert [hit.record.record_id for hit in hits[:2]] == [newer.record_id, older.record_id]


def test_hits_keep_their_text_match_as_relevance(store: Store, project: Project) -> None:
    vectors = fillers(store, project, 24)
    worded = add(
        store, project, "decision", "Use PostgreSQL as the main database", "All services persist into PostgreSQL."
    )
    meant = add(store, project, "decision", "Relational storage for every app", "One server, one schema each.")
    vectors |= {worded: unit(1.0, 0.3), meant: unit(1.0)}
    prompt = "which database do the services persist into, PostgreSQL?"
    hits, _injection = answer(store, project, prompt, index_of(vectors), unit(1.0))
    relevance = {hit.record.record_id: hit.relevance for hit in hits}
    assert relevance[worded.record_id] > 0  # its BM25 relevance, as `search()` gives it
    assert relevance[meant.record_id] == 0.0  # found by meaning alone: no text match


def test_one_record_carrying_both_kinds_of_evidence_answers() -> None:
    from agentctx_embed.hybrid import DEFAULT_FLOOR, _answers

    floor = DEFAULT_FLOOR
    # the keyword floor fails and no record stands out enough on the vector side alone …
    assert not _answers(floor, keyword_pass=False, share=0.9, z=2.9)
    # … but when the best fused hit itself matches 0.9 of the gate and stands 2.9 sd out, it answers
    assert _answers(floor, keyword_pass=False, share=0.9, z=2.9, top=(0.9, 2.9))
    # not when the two kinds of evidence belong to different records
    assert not _answers(floor, keyword_pass=False, share=0.9, z=2.9, top=(0.3, 2.9))
    assert not _answers(floor, keyword_pass=False, share=0.9, z=2.9, top=(0.9, 1.0))
