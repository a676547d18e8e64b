"""The vector phase of a consolidation run (`agentctx_store.consolidate.VectorPhase`).

1. make the vector table match the model (a new model or backend drops the old vectors);
2. drop vectors of records that are no longer current;
3. embed every current record that is pending or has no vector, one model load, in chunks
   (each chunk one transaction: vectors written and `pending_embedding` cleared together,
   so a killed run loses at most the chunk in flight);
4. near-duplicates: within each project and type, cosine > 0.92 → a merge candidate;
5. each project's focus text → the order of its records by similarity (for the digest's RRF).

The model is loaded only when there is something to embed or rank.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from agentctx_store.consolidate import VectorOutcome, VectorRequest
from agentctx_store.consolidate.checkpoints import checkpoint
from agentctx_store.consolidate.merges import stronger_first
from agentctx_store.digest.ranking import DIGEST_TYPES
from agentctx_store.records import utc_now
from agentctx_store.rows import row_to_record

from agentctx_embed.models import Embedder, choose_model, load
from agentctx_embed.vectors import VectorStore

DUPLICATE_COSINE = 0.92
DUPLICATE_TYPES = ("decision", "convention", "preference", "discovery", "bugfix")
CHUNK = 256
# Records are 50–300 tokens by contract, but a body may reach 2,000 characters; past ~1,200
# characters (≈ 280 tokens) the cost grows faster than the meaning (bge reads up to 512 tokens).
EMBED_CHARS = 1200


# What `embedding_text` makes of a record, stored with the vectors (`vector_meta.text`): vectors
# of another form are embedded again, as those of another model are.
TEXT_FORM = "type-title-body"


def embedding_text(record: dict[str, Any]) -> str:
    """`[type] title` + newline + body, cut to EMBED_CHARS. The type word helps a prompt that asks
    for a kind of record ("what did we decide…"); a date does not: a prompt carries none, and the
    same date string in many passages pulls them toward each other (docs/retrieval.md, "What is
    embedded": without it recall@3 and empty precision rose on both dev sets)."""
    return f"[{record['type']}] {record['title']}\n{record['body']}"[:EMBED_CHARS]


class EmbedPhase:
    """Callable vector phase; `loader` is swappable so a caller can reuse a loaded model."""

    def __init__(self, *, loader: Callable[[Any], Embedder] | None = None, allow_download: bool = True) -> None:
        self.allow_download = allow_download
        self.loader = loader
        self._embedder: Embedder | None = None

    def embedder(self, settings: dict[str, Any]) -> Embedder:
        if self._embedder is None:
            choice = choose_model(settings)
            self._embedder = self.loader(choice) if self.loader else load(choice, allow_download=self.allow_download)
        return self._embedder

    def __call__(self, request: VectorRequest) -> VectorOutcome:
        with VectorStore.open(request.db_path) as vectors:
            records = vectors.current_records()
            current_ids = {record["id"] for record in records}
            stored = vectors.stored_ids()
            todo = [record for record in records if record["pending_embedding"] or record["id"] not in stored]
            other_form = bool(stored) and vectors.meta().get("text") != TEXT_FORM  # written by an older version
            needs_model = bool(todo) or other_form or any(text.strip() for text in request.focus.values())
            embedder = self.embedder(request.settings) if needs_model else None
            if embedder is not None and vectors.prepare(embedder.name, embedder.dims, TEXT_FORM):
                stored = set[str]()
                todo = records
            vectors.begin()
            try:
                vectors.delete(stored - current_ids)
                vectors.commit()
            except BaseException:
                vectors.rollback()
                raise
            embedded = self._embed(vectors, embedder, todo, request.deadline) if embedder else 0
            candidates = find_duplicates(vectors, records)
            rankings = self._rank(vectors, embedder, records, request.focus) if embedder else {}
            return VectorOutcome(
                backend=vectors.backend,
                model=embedder.name if embedder else "",
                embedded=embedded,
                pending=len(todo) - embedded,
                merge_candidates=candidates,
                rankings=rankings,
                degraded=[] if vectors.backend == "vec0" else ["no-sqlite-vec: numpy brute force"],
            )

    def _embed(self, vectors: VectorStore, embedder: Embedder, todo: Sequence[dict[str, Any]], deadline: float) -> int:
        done = 0
        for start in range(0, len(todo), CHUNK):
            if time.monotonic() > deadline:
                break
            chunk = todo[start : start + CHUNK]
            matrix = embedder.passages([embedding_text(record) for record in chunk])
            vectors.begin()
            try:
                vectors.put([record["id"] for record in chunk], matrix)
                checkpoint("embed")
                vectors.commit()
            except BaseException:
                vectors.rollback()
                raise
            done += len(chunk)
        return done

    def _rank(
        self, vectors: VectorStore, embedder: Embedder, records: Sequence[dict[str, Any]], focus: dict[str, str]
    ) -> dict[str, list[str]]:
        rankings: dict[str, list[str]] = {}
        for project_id, text in focus.items():
            if not text.strip():
                continue
            ids = [
                record["id"]
                for record in records
                if record["project_id"] == project_id and (record["type"] in DIGEST_TYPES or record["pinned"])
            ]
            rankings[project_id] = vectors.nearest(embedder.query(text), ids)
        return rankings


def find_duplicates(vectors: VectorStore, records: Sequence[dict[str, Any]]) -> int:
    """Record pairs of one project and type with cosine > 0.92 as open merge candidates;
    returns how many new pairs were found. A pair already decided is never reopened."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_id = {record["id"]: record for record in records}
    for record in records:
        if record["type"] in DUPLICATE_TYPES:
            groups[(record["project_id"], record["type"])].append(record["id"])
    known = {(a, b) for a, b in vectors.conn.execute("SELECT keep_id, drop_id FROM merge_candidates")}
    found: list[tuple[str, str, str, str, float]] = []
    for (project_id, record_type), ids in sorted(groups.items()):
        if len(ids) < 2:
            continue
        kept, matrix = vectors.matrix(ids)
        for i, j, similarity in _similar_pairs(matrix):
            keep, drop = stronger_first(row_to_record(by_id[kept[i]]), row_to_record(by_id[kept[j]]))
            pair = (keep.record_id, drop.record_id)
            if pair in known or pair[::-1] in known:
                continue
            known.add(pair)
            found.append((*pair, project_id, record_type, similarity))
    if found:
        now = utc_now()
        vectors.begin()
        try:
            vectors.conn.executemany(
                """INSERT OR IGNORE INTO merge_candidates(keep_id, drop_id, project_id, type, similarity, found_at)
                   VALUES (?, ?, ?, ?, ?, ?)""",
                [(*row, now) for row in found],
            )
            vectors.commit()
        except BaseException:
            vectors.rollback()
            raise
    return len(found)


def _similar_pairs(matrix: np.ndarray, *, block: int = 512) -> list[tuple[int, int, float]]:
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, len(matrix), block):
        similarity = matrix[start : start + block] @ matrix.T
        rows, cols = np.nonzero(similarity > DUPLICATE_COSINE)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + row
            if col > i:
                pairs.append((i, col, round(float(similarity[row, col]), 4)))
    return pairs
