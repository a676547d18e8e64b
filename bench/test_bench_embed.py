"""Embeddings and consolidation (issue 6 targets), with the real model when the shared folder has it.

- `test_embedding_throughput`: `Embedder.passages` over record-sized texts (`texts_per_s`,
  `model_load_s` in `extra_info`); the model is `all-MiniLM-L6-v2` int8 from
  `shared/models/` when present, else the tiny test model (`extra_info["real_model"]` says
  which; the tiny model's figures say nothing about a real one).
- `test_consolidation`: one `consolidate.run` with the vector phase on a copy of the 1K store
  (everything embedded, near-duplicates scanned, digest written), then an unchanged re-run
  (skipped by the fingerprint) in `extra_info`. 10K (goal: ≤ 3 min on 2 cores) only with
  `AGENTCTX_BENCH_LONG=1`: with the real model it takes minutes.
- `test_hybrid_quality`: on adr-dev, recall@3 and MRR@10 of keyword `search()`, vector
  similarity alone and their RRF fusion (the set's own `eval.py`, per query kind).

Under `--benchmark-disable` consolidation and the hybrid eval use the tiny model (CI cost);
throughput embeds 8 texts.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import _eval
import pytest
from _harness import SIZE_IDS

LONG_ENV = "AGENTCTX_BENCH_LONG"


def record_texts(count: int, seed: int = 7) -> list[str]:
    """Texts shaped like what consolidation embeds: `[type] [date] title` then a body of 200–1,200 chars."""
    import _corpus

    corpus = _corpus.Corpus(seed)
    own = _corpus.vocabulary(corpus.rng, 150)
    texts = []
    for _ in range(count):
        record = corpus.record(own)
        texts.append(f"[{record.type}] [2026-03-01] {record.title}\n{record.body[: corpus.rng.randint(200, 1200)]}")
    return texts


def test_embedding_throughput(benchmark, embed_model, bench_mode, monkeypatch) -> None:
    from agentctx_embed.models import choose_model, load
    from agentctx_store import config

    embed_model.select(monkeypatch)
    started = time.perf_counter()
    embedder = load(choose_model(config.load()), allow_download=False)
    load_s = time.perf_counter() - started
    texts = record_texts(bench_mode.scale(128, 8))
    embedder.passages(texts[:8])  # warm-up
    benchmark.group = "embeddings"
    vectors = benchmark.pedantic(embedder.passages, args=(texts,), rounds=bench_mode.scale(3, 1))
    assert vectors.shape == (len(texts), embedder.dims)
    benchmark.extra_info.update(
        real_model=embed_model.real,
        model=embed_model.name,
        model_load_s=round(load_s, 2),
        texts=len(texts),
        mean_chars=round(sum(map(len, texts)) / len(texts)),
    )
    if benchmark.enabled:
        benchmark.extra_info["texts_per_s"] = round(len(texts) / benchmark.stats.stats.median, 1)


@pytest.mark.parametrize("size", [1_000, 10_000], ids=["1K", "10K"])
def test_consolidation(
    benchmark, bench_store, embed_model, tiny_model, bench_mode, tmp_path, monkeypatch, size
) -> None:
    from agentctx_embed import EmbedPhase
    from agentctx_store import config, consolidate

    if size > 1_000 and os.environ.get(LONG_ENV) != "1":
        pytest.skip(f"consolidation at {SIZE_IDS[size]} takes minutes with the real model: set {LONG_ENV}=1")
    model = tiny_model if bench_mode.disabled else embed_model
    model.select(monkeypatch)
    source = bench_store(size)
    copies = iter(range(10_000))

    def fresh_copy() -> tuple[tuple[Any, ...], dict[str, Any]]:
        home = tmp_path / f"home-{next(copies)}"
        shutil.copytree(source.home, home)
        return (home / "agentctx.db",), {}

    def run(db_path):
        report = consolidate.run(
            [source.project],
            settings=config.load(),
            vector_phase=EmbedPhase(allow_download=False),
            time_limit=3600,
            db_path=db_path,
        )
        return db_path, report

    benchmark.group = "consolidation"
    db_path, report = benchmark.pedantic(run, setup=fresh_copy, rounds=1)
    assert not report.skipped and report.embedded > 0
    started = time.perf_counter()
    again = consolidate.run(
        [source.project], settings=config.load(), vector_phase=EmbedPhase(allow_download=False), db_path=db_path
    )
    benchmark.extra_info.update(
        records=size,
        real_model=model.real,
        embedded=report.embedded,
        pending=report.pending,
        merge_candidates=report.merge_candidates,
        backend=report.backend,
        rerun_unchanged_s=round(time.perf_counter() - started, 3),
        rerun_skipped=again.skipped,
    )


def test_hybrid_quality(benchmark, shared_dir, embed_model, tiny_model, bench_mode, tmp_path, monkeypatch) -> None:
    """Keyword vs vector vs RRF hybrid ranking on adr-dev (its own store: consolidation writes vectors)."""
    from agentctx_embed import EmbedPhase, VectorStore
    from agentctx_embed.models import choose_model, load
    from agentctx_store import config, consolidate
    from agentctx_store.digest import ranking
    from agentctx_store.retrieval import search

    folder = shared_dir / "eval" / "adr-dev"
    if not (folder / "records.jsonl").is_file():
        pytest.skip(f"{folder} not found")
    model = tiny_model if bench_mode.disabled else embed_model
    model.select(monkeypatch)
    data = _eval.load_set(folder, tmp_path)
    db = Path(data.loaded.store.path)
    keyword: dict[str, list[str]] = {}
    current: dict[str, list[str]] = {}
    for query in data.queries:
        project = data.loaded.projects.get(query["project"])
        found = search(data.loaded.store, project, query["query"], limit=60, floor=None) if project else None
        keyword[query["qid"]] = [hit.record.record_id for hit in found.hits] if found else []
    for name, project in data.loaded.projects.items():
        current[name] = [record.record_id for record in data.loaded.store.list_records(project, scope="project")]
    data.loaded.store.close()  # the vector phase opens the file through apsw
    run = consolidate.run(
        list(data.loaded.projects.values()), settings=config.load(), vector_phase=EmbedPhase(), db_path=db
    )
    embedder = load(choose_model(config.load()), allow_download=False)

    def vector_rankings() -> dict[str, list[str]]:
        with VectorStore.open(db) as vectors:
            return {
                query["qid"]: vectors.nearest(embedder.query(query["query"]), current.get(query["project"], []))[:60]
                for query in data.queries
            }

    benchmark.group = "hybrid ranking adr-dev"
    vector = benchmark.pedantic(vector_rankings, rounds=1)
    hybrid = {qid: ranking.fused_order([keyword[qid], vector[qid]]) for qid in keyword}

    def as_rows(rankings: dict[str, list[str]]) -> list[dict[str, Any]]:
        return [{"qid": qid, "ids": [data.loaded.eval_id.get(i, i) for i in ids[:10]]} for qid, ids in rankings.items()]

    benchmark.extra_info.update(real_model=model.real, merge_candidates=run.merge_candidates)
    for label, rankings in (("keyword", keyword), ("vector", vector), ("hybrid_rrf", hybrid)):
        metrics = data.score(as_rows(rankings))
        benchmark.extra_info[label] = {
            "recall@3": round(metrics["recall@3"], 3),
            "MRR@10": round(metrics["MRR@10"], 3),
            "by_kind": {
                kind: {key: round(value, 3) for key, value in values.items() if key in ("recall@3", "MRR@10", "n")}
                for kind, values in metrics["by_kind"].items()
            },
        }
