"""Search latency of the store's real `search()` at 1K / 10K / 100K records, in-process.

Records are synthetic but shaped like real ones: a Zipf-distributed vocabulary of developer
words, per-project identifiers (module names, flags, services) that only that project uses,
titles of 4–10 words and bodies of 20–200 words, spread over several projects plus `_global`.
Prompts are 8–60 words of developer chatter around a few words a record of the project uses
(sometimes none: nothing-relevant prompts must be fast too). Stores are built through
`Store.add` (inside one transaction per project, for build speed) in a temp dir.

usage: .venv/bin/python bench/bench_search.py [--sizes 1000,10000,100000] [--queries 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import median, percentile  # bench/ is on sys.path
from agentctx_store import NewRecord, Project, Store
from agentctx_store.search import search

TYPES = ["decision", "convention", "discovery", "bugfix", "preference", "handover"]
COMMON = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "for",
    "is",
    "that",
    "on",
    "with",
    "we",
    "use",
    "it",
    "this",
    "be",
    "by",
    "from",
    "as",
    "are",
    "our",
    "not",
    "when",
    "should",
    "all",
    "run",
    "test",
    "tests",
    "build",
    "deploy",
    "config",
    "service",
    "services",
    "api",
    "client",
    "server",
    "request",
    "response",
    "error",
    "errors",
    "data",
    "database",
    "table",
    "query",
    "index",
    "cache",
    "queue",
    "worker",
    "job",
    "jobs",
    "user",
    "users",
    "auth",
    "token",
    "session",
    "file",
    "files",
    "path",
    "module",
    "package",
    "version",
    "release",
    "branch",
    "commit",
    "review",
    "ci",
    "pipeline",
    "docker",
    "image",
    "container",
    "cluster",
    "node",
    "log",
    "logs",
    "logging",
    "metric",
    "metrics",
    "alert",
    "timeout",
    "retry",
    "retries",
    "limit",
    "rate",
    "memory",
    "cpu",
    "disk",
    "storage",
    "bucket",
    "migration",
    "schema",
    "column",
    "field",
    "model",
    "type",
    "types",
    "function",
    "class",
    "method",
    "interface",
    "handler",
    "route",
    "endpoint",
    "frontend",
    "backend",
    "component",
    "state",
    "store",
    "event",
    "events",
    "message",
    "messages",
    "payload",
    "json",
    "yaml",
    "env",
    "variable",
    "secret",
    "secrets",
    "key",
    "keys",
    "permission",
    "role",
    "policy",
    "network",
    "proxy",
    "dns",
    "tls",
    "certificate",
    "domain",
    "region",
    "zone",
]
CHATTER = [
    "hey",
    "so",
    "I",
    "am",
    "trying",
    "to",
    "figure",
    "out",
    "why",
    "the",
    "thing",
    "keeps",
    "failing",
    "when",
    "I",
    "run",
    "it",
    "locally",
    "can",
    "you",
    "check",
    "what",
    "we",
    "decided",
    "about",
    "this",
    "again",
    "I",
    "think",
    "it",
    "broke",
    "after",
    "the",
    "last",
    "merge",
    "not",
    "sure",
    "if",
    "that",
    "is",
    "related",
    "please",
    "look",
    "at",
    "the",
    "error",
    "below",
    "and",
    "tell",
    "me",
    "what",
    "to",
    "change",
]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 11))))
    return sorted(words)


class Corpus:
    """A deterministic generator of records and prompts (seeded)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.general = COMMON + _vocabulary(self.rng, 6000)  # the long tail of technical English
        self.weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.general))]

    def words(self, count: int, own: list[str]) -> list[str]:
        picked = self.rng.choices(self.general, weights=self.weights, k=count)
        return [self.rng.choice(own) if self.rng.random() < 0.12 else word for word in picked]

    def record(self, own: list[str]) -> NewRecord:
        title = " ".join(self.words(self.rng.randint(4, 10), own)).capitalize()
        body = " ".join(self.words(self.rng.randint(20, 200), own)) + "."
        return NewRecord(type=self.rng.choice(TYPES), title=title[:120], body=body[:2000], source="import")

    def prompt(self, own: list[str], sample_record: str | None) -> str:
        words = [self.rng.choice(CHATTER) for _ in range(self.rng.randint(6, 40))]
        if sample_record:
            topic = self.rng.sample(sample_record.split(), k=min(4, len(sample_record.split())))
            for word in topic:
                words.insert(self.rng.randrange(len(words) + 1), word)
        if self.rng.random() < 0.3:  # a pasted error line
            words += ["Error:", self.rng.choice(own) + ".py:" + str(self.rng.randint(1, 900)), "failed", "(code=1)"]
        return " ".join(words)


def build_store(path: Path, size: int, projects: int, corpus: Corpus) -> tuple[Store, list[tuple[Project, list[str]]]]:
    store = Store.open(path)
    owners = []
    for index in range(projects):
        own = _vocabulary(corpus.rng, 150)
        owners.append((Project(project_id=f"bench-{index}", root=Path(f"/bench/{index}"), name=f"p{index}"), own))
    per_project = size // projects
    for project, own in owners:
        with store.transaction():
            for _ in range(per_project):
                store.add(project, corpus.record(own))
    store.dirty.clear()  # no digests for a throwaway store
    return store, owners


def measure(size: int, queries: int, corpus: Corpus) -> dict[str, Any]:
    projects = max(3, min(20, size // 2000))
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-") as scratch:
        started = time.perf_counter()
        store, owners = build_store(Path(scratch) / "bench.db", size, projects, corpus)
        build_s = time.perf_counter() - started
        try:
            samples = []
            for project, own in owners:
                titles = sorted(record.title for record in store.list_records(project))[:50]
                samples.append((project, own, titles))
            prompts = []
            for _ in range(queries):
                project, own, titles = corpus.rng.choice(samples)
                topic = corpus.rng.choice(titles) if corpus.rng.random() < 0.8 else None
                prompts.append((project, corpus.prompt(own, topic)))
            for project, prompt in prompts[:20]:  # warm the page cache as a hook's second prompt would be
                search(store, project, prompt)
            timings, returned = [], 0
            for project, prompt in prompts:
                begin = time.perf_counter()
                result = search(store, project, prompt)
                timings.append((time.perf_counter() - begin) * 1000)
                returned += bool(result.hits)
        finally:
            store.close()
    return {
        "records": size,
        "projects": projects,
        "queries": queries,
        "p50_ms": round(median(timings), 3),
        "p95_ms": round(percentile(timings, 0.95), 3),
        "max_ms": round(max(timings), 3),
        "prompt_words_mean": round(sum(len(prompt.split()) for _p, prompt in prompts) / len(prompts), 1),
        "queries_with_hits": returned,
        "build_s": round(build_s, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="print only the JSON figures")
    args = parser.parse_args(argv)
    corpus = Corpus()
    figures = []
    for size in (int(item) for item in args.sizes.split(",")):
        row = measure(size, args.queries, corpus)
        figures.append(row)
        if not args.json:
            print(
                f"{row['records']:>7} records ({row['projects']} projects): search p50 {row['p50_ms']:.2f} ms, "
                f"p95 {row['p95_ms']:.2f} ms, max {row['max_ms']:.2f} ms over {row['queries']} prompts "
                f"({row['prompt_words_mean']} words on average, {row['queries_with_hits']} with hits; "
                f"store built in {row['build_s']} s)",
                file=sys.stderr if args.json else sys.stdout,
            )
    targets = {"10000": 5.0, "100000": 30.0}
    for row in figures:
        target = targets.get(str(row["records"]))
        if target is not None and not args.json:
            verdict = "meets" if row["p50_ms"] <= target else "MISSES"
            print(f"target p50 <= {target} ms at {row['records']}: {verdict} ({row['p50_ms']:.2f} ms)")
    print(json.dumps({"search_latency": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
