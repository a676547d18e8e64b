"""Calibrate and ablate the hybrid floor (`agentctx_embed.hybrid.HybridFloor`) on the eval sets.

Each set is loaded into a throwaway store (`_eval.load_into_store`), every current record is
embedded once with the real model (default: the MiniLM int8 export in ../shared/models, else
`AGENTCTX_EMBED_MODEL[_DIR]`), and every query runs through `hybrid_search()` for each floor
variant, in a shared store and with each project alone in its own store.

usage: .venv/bin/python bench/ablate_hybrid.py [--set DIR ...] [--grid] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _eval import default_now, load_into_store, load_jsonl, load_module, scorer_path  # bench/ is on sys.path
from _harness import REPO_ROOT

SHARED = (REPO_ROOT.parent / "shared").resolve()
for candidate in (SHARED, Path("/work/shared")):
    if (candidate / "eval").exists():
        SHARED = candidate
        break
MINILM = SHARED / "models" / "all-MiniLM-L6-v2-onnx-int8"
PROMPT_TYPES = ("decision", "convention", "preference", "discovery", "bugfix", "profile")


def model_env() -> None:
    if not os.environ.get("AGENTCTX_EMBED_MODEL_DIR") and MINILM.exists():
        os.environ["AGENTCTX_EMBED_MODEL"] = "sentence-transformers/all-MiniLM-L6-v2"
        os.environ["AGENTCTX_EMBED_MODEL_DIR"] = str(MINILM)


CACHE: dict[str, Any] = {}


def cached_passages(embedder: Any, texts: list[str]) -> Any:
    """Embeddings of `texts`, each computed once per run (shared and per-project stores)."""
    import numpy as np

    todo = [text for text in dict.fromkeys(texts) if text not in CACHE]
    if todo:
        for text, vector in zip(todo, embedder.passages(todo), strict=True):
            CACHE[text] = vector
    return np.vstack([CACHE[text] for text in texts]) if texts else np.zeros((0, embedder.dims), dtype=np.float32)


def build_index(loaded: Any, embedder: Any) -> Any:
    from agentctx_embed.hybrid import VectorIndex
    from agentctx_embed.phase import embedding_text

    rows = loaded.store.conn.execute(
        "SELECT id, project_id, type, title, body, valid_from FROM records WHERE superseded_at IS NULL"
    ).fetchall()
    index = VectorIndex(embedder.dims)
    vectors = cached_passages(embedder, [embedding_text(dict(row)) for row in rows])
    index.put([(row["id"], row["project_id"], row["type"], "") for row in rows], vectors)
    return index


def gather(loaded: Any, index: Any, queries: list[dict[str, Any]], qvec: dict[str, Any], now: Any) -> list[Any]:
    """Every query's candidates and signals, once; floors are applied to them afterwards."""
    from agentctx_embed.hybrid import candidates

    found = []
    for query in queries:
        project = loaded.projects.get(query["project"])
        if project is None:
            found.append(None)
            continue
        found.append(
            candidates(
                loaded.store,
                project,
                query["query"],
                index=index,
                query_vector=qvec[query["qid"]],
                types=PROMPT_TYPES,
                now=now,
            )
        )
    return found


def run(loaded: Any, queries: list[dict[str, Any]], found: list[Any], floor: Any) -> list[dict[str, Any]]:
    from agentctx_embed.hybrid import apply_floor

    rows = []
    for query, item in zip(queries, found, strict=True):
        hits = apply_floor(item, floor, limit=10).hits if item is not None else []
        rows.append(
            {
                "qid": query["qid"],
                "ids": [loaded.eval_id.get(hit.record.record_id, hit.record.record_id) for hit in hits],
                "scores": [round(hit.score, 5) for hit in hits],
            }
        )
    return rows


def variants(grid: bool) -> list[tuple[str, Any]]:
    from agentctx_embed.hybrid import DEFAULT_FLOOR, HybridFloor

    final = DEFAULT_FLOOR
    replace = dataclasses.replace
    off = 99.0
    out: list[tuple[str, Any]] = [
        ("final", final),
        ("no floor (ranking alone)", None),
        ("keyword floor only", replace(final, z_alone=off, z_with_keyword=off, weak_keyword_share=0.0)),
        ("no vector veto on weak keyword passes", replace(final, weak_keyword_share=0.0)),
        ("no keyword+vector rule", replace(final, z_with_keyword=off)),
        ("no vector-alone rule", replace(final, z_alone=off)),
        ("no tail cut", replace(final, tail_cosine=0.0, tail_keyword=0.0)),
    ]
    for z_kw in (2.5, 3.5):
        out.append((f"z_with_keyword {z_kw}", replace(final, z_with_keyword=z_kw)))
    for share in (0.25, 0.75):
        out.append((f"keyword_share {share}", replace(final, keyword_share=share)))
    for weak, weak_z in ((1.25, 2.5), (1.5, 2.25), (1.5, 2.5)):
        out.append(
            (
                f"veto below {weak} of the gate unless z ≥ {weak_z}",
                replace(final, weak_keyword_share=weak, weak_keyword_z=weak_z),
            )
        )
    for z_alone in (3.5, 4.5):
        out.append((f"z_alone {z_alone}", replace(final, z_alone=z_alone)))
    for tail in (0.85, 0.9):
        out.append((f"tail_cosine {tail}", replace(final, tail_cosine=tail)))
    if grid:
        for z_kw in (2.0, 2.5, 3.0, 3.5):
            for share in (0.25, 0.5, 0.75):
                for weak, weak_z in ((0.0, 0.0), (1.25, 2.25), (1.5, 2.5)):
                    out.append(
                        (
                            f"z_kw={z_kw} share={share} veto={weak}/{weak_z}",
                            HybridFloor(
                                z_with_keyword=z_kw, keyword_share=share, weak_keyword_share=weak, weak_keyword_z=weak_z
                            ),
                        )
                    )
    return out


def evaluate_set(set_dir: Path, embedder: Any, grid: bool) -> dict[str, Any]:
    scorer = load_module(scorer_path(set_dir), f"eval_{set_dir.name.replace('-', '_')}")
    records = load_jsonl(set_dir / "records.jsonl")
    queries = load_jsonl(set_dir / "queries.jsonl")
    now = default_now(records)
    qvec = {query["qid"]: embedder.query(query["query"]) for query in queries}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agentctx-hybrid-") as scratch:
        loaded = load_into_store(records, Path(scratch) / "eval.db")
        alone_sets = []
        for name in sorted({record["project"] for record in records}):
            alone = load_into_store([r for r in records if r["project"] == name], Path(scratch) / f"alone-{name}.db")
            alone_sets.append((alone, build_index(alone, embedder), [q for q in queries if q["project"] == name]))
        try:
            index = build_index(loaded, embedder)
            found = gather(loaded, index, queries, qvec, now)
            alone_found = [(alone, own, gather(alone, ix, own, qvec, now)) for alone, ix, own in alone_sets]
            out["_features"] = [
                {
                    "qid": q["qid"],
                    "kind": q.get("kind"),
                    "answerable": bool(q.get("relevant")),
                    "keyword_pass": f.result.keyword_pass,
                    "share": round(f.result.keyword_share, 3),
                    "z": round(f.result.z, 3),
                    "cos": round(f.result.best_cosine, 3),
                }
                for q, f in zip(queries, found, strict=True)
                if f is not None
            ]
            for label, floor in variants(grid):
                rows = run(loaded, queries, found, floor)
                metrics = scorer.evaluate(queries, rows, records, None, 10)
                alone_rows = []
                for alone, own, own_found in alone_found:
                    alone_rows += run(alone, own, own_found, floor)
                alone_metrics = scorer.evaluate(queries, alone_rows, records, None, 10)
                out[label] = {"shared": metrics, "per_project": alone_metrics}
                print(
                    f"{set_dir.name:<9} {label:<44} recall@3 {metrics['recall@3']:.3f} MRR {metrics['MRR@10']:.3f} "
                    f"empty {metrics['empty_precision']:.3f} stale {metrics['stale_rate@3']:.3f} "
                    f"bleed {metrics['bleed_rate']:.3f}"
                    f" | per-project {alone_metrics['recall@3']:.3f} / {alone_metrics['empty_precision']:.3f}",
                    flush=True,
                )
        finally:
            loaded.store.close()
            for alone, _index, _own in alone_sets:
                alone.store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", type=Path)
    parser.add_argument("--grid", action="store_true", help="sweep the floor's parameters")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args(argv)
    model_env()
    from agentctx_embed.models import choose_model, load

    embedder = load(choose_model({}), allow_download=False)
    sets = args.set or [SHARED / "eval" / "adr-dev", SHARED / "eval" / "conv-dev"]
    report = {}
    for set_dir in sets:
        if not (set_dir / "records.jsonl").exists():
            print(f"skipping {set_dir}: no records.jsonl", file=sys.stderr)
            continue
        report[set_dir.name] = evaluate_set(set_dir, embedder, args.grid)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
