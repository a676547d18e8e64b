"""Consolidation figures with the real embedding model (issue 6 targets).

1. embedding throughput (texts/s) and model cold start;
2. consolidation wall time (`consolidate.run` with the vector phase, in-process) at 1K and 10K
   records: everything embedded, near-duplicates scanned, digest written (goal: 10K ≤ 3 min
   on 2 cores);
3. on the ADR dev set: recall@3 and MRR@10 of hybrid ranking (RRF of the store's `search()`
   and vector similarity) against keyword-only `search()`, overall and per query kind
   (paraphrase queries separately), scored by the set's own `eval.py`.

The model is `../shared/models/all-MiniLM-L6-v2-onnx-int8/` (loaded through the same
`AGENTCTX_EMBED_MODEL` / `AGENTCTX_EMBED_MODEL_DIR` path a user would use); without it the
script falls back to the tiny test model and says so (its figures then mean nothing).

usage: .venv/bin/python bench/bench_consolidate.py [--sizes 1000,10000] [--texts 512] [--skip-eval] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, SHARED_EVAL, load_into_store, load_jsonl, load_module  # bench/ is on sys.path

MODEL_DIR = (REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx-int8").resolve()
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
TYPES = ["decision", "decision", "convention", "discovery", "discovery", "bugfix", "preference"]


def select_model(work: Path) -> str:
    if MODEL_DIR.exists():
        os.environ["AGENTCTX_EMBED_MODEL"] = MODEL_NAME
        os.environ["AGENTCTX_EMBED_MODEL_DIR"] = str(MODEL_DIR)
        return f"{MODEL_NAME} (int8, {MODEL_DIR})"
    from agentctx_embed.tiny import TINY_MODEL_NAME, build_tiny_model, words_of

    adr = load_jsonl(SHARED_EVAL / "adr-dev" / "records.jsonl") if (SHARED_EVAL / "adr-dev").exists() else []
    folder = build_tiny_model(work / "tiny", words_of(record["body"] for record in adr) or ["none"])
    os.environ["AGENTCTX_EMBED_MODEL"] = TINY_MODEL_NAME
    os.environ["AGENTCTX_EMBED_MODEL_DIR"] = str(folder)
    print("!! the real model is absent: using the tiny test model; figures below are meaningless", file=sys.stderr)
    return TINY_MODEL_NAME


def source_texts() -> list[tuple[str, str]]:
    """(title, body) pairs shaped like records: ADR titles, bodies cut to 50–300 tokens."""
    records = load_jsonl(SHARED_EVAL / "adr-dev" / "records.jsonl") if (SHARED_EVAL / "adr-dev").exists() else []
    pairs = [(record["title"][:120], record["body"]) for record in records]
    return pairs or [(f"Synthetic record {i}", "A decision about the cache and the queue. " * 8) for i in range(200)]


def throughput(texts: int) -> dict[str, Any]:
    from agentctx_embed.models import choose_model, load
    from agentctx_store import config

    started = time.perf_counter()
    embedder = load(choose_model(config.load()), allow_download=False)
    cold = time.perf_counter() - started
    rng = random.Random(7)
    pairs = source_texts()
    batch = []
    for index in range(texts):
        title, body = pairs[index % len(pairs)]
        cut = rng.randint(200, 1200)
        batch.append(f"[decision] [2026-03-01] {title}\n{body[:cut]}")
    embedder.passages(batch[:8])  # warm-up
    started = time.perf_counter()
    embedder.passages(batch)
    seconds = time.perf_counter() - started
    return {
        "model_load_s": round(cold, 2),
        "texts": texts,
        "texts_per_s": round(texts / seconds, 1),
        "mean_chars": round(sum(map(len, batch)) / len(batch)),
    }


def consolidation_time(size: int, work: Path) -> dict[str, Any]:
    from agentctx_embed import EmbedPhase
    from agentctx_store import NewRecord, Project, Store, config, consolidate

    home = work / f"home-{size}"
    os.environ["AGENTCTX_HOME"] = str(home)
    rng = random.Random(size)
    pairs = source_texts()
    projects = [Project(project_id=f"bench-{i}", root=work / f"proj-{i}", name=f"proj-{i}") for i in range(3)]
    build = time.perf_counter()
    with Store.open(home / "agentctx.db") as store:
        with store.transaction():
            for index in range(size):
                title, body = pairs[index % len(pairs)]
                cut = rng.randint(200, 1200)
                store.add(
                    projects[index % len(projects)],
                    NewRecord(
                        type=rng.choice(TYPES),
                        title=f"{title} #{index}"[:120],
                        body=body[:cut],
                        confidence=rng.choice(["explicit", "inferred", "reinforced"]),
                    ),
                )
        store.dirty.clear()
    built = time.perf_counter() - build
    started = time.perf_counter()
    report = consolidate.run(
        [projects[0]], settings=config.load(), vector_phase=EmbedPhase(allow_download=False), time_limit=3600
    )
    seconds = time.perf_counter() - started
    again = time.perf_counter()
    skipped = consolidate.run([projects[0]], settings=config.load(), vector_phase=EmbedPhase(allow_download=False))
    unchanged = time.perf_counter() - again
    return {
        "records": size,
        "build_s": round(built, 1),
        "consolidate_s": round(seconds, 1),
        "embedded": report.embedded,
        "pending": report.pending,
        "merge_candidates": report.merge_candidates,
        "backend": report.backend,
        "rerun_unchanged_s": round(unchanged, 3),
        "rerun_skipped": skipped.skipped,
    }


def retrieval_eval(work: Path) -> dict[str, Any] | None:
    set_dir = SHARED_EVAL / "adr-dev"
    if not set_dir.exists():
        print("adr-dev eval set not found: skipped", file=sys.stderr)
        return None
    from agentctx_embed import EmbedPhase, VectorStore
    from agentctx_embed.models import choose_model, load
    from agentctx_store import config, consolidate, ranking
    from agentctx_store.search import search

    records = load_jsonl(set_dir / "records.jsonl")
    queries = load_jsonl(set_dir / "queries.jsonl")
    scorer = load_module(set_dir / "eval.py", "adr_eval")
    home = work / "home-eval"
    os.environ["AGENTCTX_HOME"] = str(home)
    db = home / "agentctx.db"
    loaded = load_into_store(records, db)
    projects = dict(loaded.projects)
    # phase A (stdlib): keyword rankings, then close before apsw opens the file
    keyword: dict[str, list[str]] = {}
    current: dict[str, list[str]] = {}
    for query in queries:
        project = projects.get(query["project"])
        if project is None:
            keyword[query["qid"]] = []
            continue
        found = search(loaded.store, project, query["query"], limit=60, floor=None)
        keyword[query["qid"]] = [hit.record.record_id for hit in found.hits]
    for name, project in projects.items():
        current[name] = [record.record_id for record in loaded.store.list_records(project, scope="project")]
    loaded.store.close()
    # phase B (apsw): embed everything through a normal consolidation, then vector rankings
    run = consolidate.run(list(projects.values()), settings=config.load(), vector_phase=EmbedPhase(), time_limit=3600)
    embedder = load(choose_model(config.load()), allow_download=False)
    vector: dict[str, list[str]] = {}
    with VectorStore.open(db) as vectors:
        for query in queries:
            ids = current.get(query["project"], [])
            vector[query["qid"]] = vectors.nearest(embedder.query(query["query"]), ids)[:60]

    def as_results(rankings: dict[str, list[str]]) -> list[dict[str, Any]]:
        return [
            {"qid": qid, "ids": [loaded.eval_id.get(rid, rid) for rid in ids[:10]]} for qid, ids in rankings.items()
        ]

    hybrid = {qid: ranking.fused_order([keyword[qid], vector[qid]]) for qid in keyword}
    with VectorStore.open(db) as vectors:  # near-duplicate candidates among 229 distinct real ADRs
        pairs = [
            (loaded.eval_id.get(keep, keep), loaded.eval_id.get(drop, drop), round(similarity, 3))
            for keep, drop, similarity in vectors.conn.execute(
                "SELECT keep_id, drop_id, similarity FROM merge_candidates ORDER BY similarity DESC"
            )
        ]
    out: dict[str, Any] = {"merge_candidates": {"count": run.merge_candidates, "pairs": pairs[:10]}}
    for label, rankings in (("keyword", keyword), ("vector", vector), ("hybrid_rrf", hybrid)):
        metrics = scorer.evaluate(queries, as_results(rankings), records)
        out[label] = {
            "recall@3": round(metrics["recall@3"], 3),
            "MRR@10": round(metrics["MRR@10"], 3),
            "stale_rate@3": round(metrics["stale_rate@3"], 3),
            "by_kind": {
                kind: {key: round(value, 3) for key, value in values.items() if key in ("recall@3", "MRR@10", "n")}
                for kind, values in metrics["by_kind"].items()
            },
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--skip-eval", action="store_true")
    parser.add_argument("--eval-only", action="store_true", help="Only the adr-dev retrieval eval.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-consolidate-") as temp:
        work = Path(temp)
        os.environ["AGENTCTX_HOME"] = str(work / "home")
        figures["model"] = select_model(work)
        if not args.eval_only:
            figures["throughput"] = throughput(args.texts)
        if not args.json:
            print(f"model: {figures['model']}")
            print(f"embedding: {figures.get('throughput')}")
        figures["consolidation"] = []
        sizes = [] if args.eval_only else [int(part) for part in args.sizes.split(",") if part.strip()]
        for size in sizes:
            row = consolidation_time(size, work)
            figures["consolidation"].append(row)
            if not args.json:
                print(f"consolidation: {row}")
        if not args.skip_eval:
            figures["adr_dev"] = retrieval_eval(work)
            if not args.json and figures["adr_dev"]:
                print(f"adr-dev near-duplicate candidates (cosine > 0.92): {figures['adr_dev']['merge_candidates']}")
                for label, metrics in figures["adr_dev"].items():
                    if label == "merge_candidates":
                        continue
                    print(f"adr-dev {label:<11} recall@3 {metrics['recall@3']:.3f}  MRR@10 {metrics['MRR@10']:.3f}")
                    for kind, values in metrics["by_kind"].items():
                        print(f"    {kind:<13} {values}")
    print(json.dumps({"consolidation_bench": figures}))


if __name__ == "__main__":
    main()
