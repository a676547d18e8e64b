"""Ablations of the search pipeline on the shared eval sets: each row switches one idea off (or
changes one setting) and reports what the production-floor search then scores.

The table in docs/retrieval.md ("What we tried") comes from this script. It patches module
constants of `agentctx_store.search` in-process, one row at a time, and restores them after.

usage: .venv/bin/python bench/ablate_retrieval.py [--set DIR ...]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import SHARED_EVAL, load_into_store, load_jsonl, load_module
from eval_retrieval import DEFAULT_SETS, default_now, run_queries, scorer_path

search_module = importlib.import_module("agentctx_store.search")
# The developer-chatter words this work added to search.STOPWORDS.
_ADDED_WORDS = (
    "did decide decided deciding agree agreed anything something someone anyone everything nothing really actually "
    "currently sure quick days works worked working great perfect cool nice done good looks seems fine awesome "
    "sounds lgtm yeah yep nope"
)
ADDED_STOPWORDS = frozenset(_ADDED_WORDS.split())


@contextmanager
def patched(**values: Any) -> Iterator[None]:
    saved = {name: getattr(search_module, name) for name in values}
    try:
        for name, value in values.items():
            setattr(search_module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(search_module, name, value)


def raw_bm25_floor(threshold: float) -> Callable[..., list[Any]]:
    """The floor before this work: each hit's raw BM25 must reach a constant."""

    def apply(conn: Any, scored: list[Any], floor: float, *, like: bool, terms: Any) -> list[Any]:
        return [item for item in scored if item[1] >= threshold]

    return apply


ROWS: list[tuple[str, dict[str, Any], bool | float]] = [
    ("final (production)", {}, True),
    ("no floor (ranking alone)", {}, False),
    ("floor 1.0", {}, 1.0),
    ("floor 1.2 rare-term matches (production: 1.4)", {}, 1.2),
    ("floor 1.3", {}, 1.3),
    ("floor 1.5", {}, 1.5),
    ("floor 1.6", {}, 1.6),
    ("floor 1.8", {}, 1.8),
    ("per-hit raw BM25 >= 7.0 (before)", {"_apply_floor": raw_bm25_floor(7.0)}, True),
    ("no two-distinct-words rule", {"MIN_DISTINCT_TERMS": 0}, True),
    ("no short-query relief (short prompts also need 2 words)", {"SHORT_QUERY_TERMS": 0}, True),
    ("short queries: <= 3 terms", {"SHORT_QUERY_TERMS": 3}, True),
    ("no inheritance from superseded", {"INHERIT_SHARE": 0.0}, True),
    ("no tail cut", {"TAIL_RATIO": 0.0}, True),
    ("tail cut at 0.5 of best", {"TAIL_RATIO": 0.5}, True),
    ("without the chatter stop words", {"STOPWORDS": search_module.STOPWORDS - ADDED_STOPWORDS}, True),
    ("title weight 1 (= body)", {"TITLE_WEIGHT": 1.0}, True),
    ("title weight 4", {"TITLE_WEIGHT": 4.0}, True),
    ("no rerank (type, recency, pin, confidence)", {"rerank_factor": lambda record, now: 1.0}, True),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", type=Path, help="eval set dir (repeatable)")
    args = parser.parse_args(argv)
    set_dirs = args.set or [SHARED_EVAL / name for name in DEFAULT_SETS]
    loaded_sets = []
    scratch = tempfile.TemporaryDirectory(prefix="agentctx-ablate-")
    for set_dir in set_dirs:
        if not (set_dir / "records.jsonl").exists():
            print(f"skipping {set_dir}: no records.jsonl there", file=sys.stderr)
            continue
        records = load_jsonl(set_dir / "records.jsonl")
        queries = load_jsonl(set_dir / "queries.jsonl")
        scorer = load_module(scorer_path(set_dir), f"shared_eval_{set_dir.name.replace('-', '_')}")
        loaded = load_into_store(records, Path(scratch.name) / f"{set_dir.name}.db")
        loaded_sets.append((set_dir.name, records, queries, scorer, loaded, default_now(records)))
    if not loaded_sets:
        print("no eval set found; nothing measured", file=sys.stderr)
        return 0
    header = f"{'variant':<56}" + "".join(f"| {name:^27}" for name, *_ in loaded_sets)
    print(header)
    print(f"{'':<56}" + "| recall@3  MRR@10  empty   " * len(loaded_sets))
    try:
        for label, changes, floor_on in ROWS:
            cells = []
            with patched(**changes):
                for _name, records, queries, scorer, loaded, now in loaded_sets:
                    explicit = None if isinstance(floor_on, bool) else float(floor_on)
                    rows = run_queries(loaded, queries, floor_on=bool(floor_on), now=now, floor=explicit)
                    metrics = scorer.evaluate(queries, rows, records, None, 10)
                    cells.append(
                        f"|  {metrics['recall@3']:.3f}   {metrics['MRR@10']:.3f}  {metrics['empty_precision']:.3f}  "
                    )
            print(f"{label:<56}" + "".join(cells))
    finally:
        for *_rest, loaded, _now in loaded_sets:
            loaded.store.close()
        scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
