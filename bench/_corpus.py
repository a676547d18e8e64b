"""Synthetic stores for the benchmarks: records and prompts shaped like real ones, built fast.

Records: a Zipf-distributed vocabulary of developer words plus identifiers that only one
project uses (module names, flags, services); titles of 4–10 words, bodies of 20–200 words;
types mixed. Prompts: 6–40 words of developer chatter, around a few words of a record title
(`topic`), around nothing in the store (`nothing`), or a topic with a pasted error line
(`error`). Everything is seeded, so two runs build the same texts.

A store is inserted in bulk (`executemany` into `records` inside one transaction, the FTS
triggers indexing as production does): building 100K records takes seconds, not the minutes
`Store.add` one by one took. The rows carry the same columns `Store.add` writes.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentctx_store import NewRecord, Project, Store, resolve_project
from agentctx_store.records import normalize_time, validate
from agentctx_store.rows import RECORD_COLUMNS
from agentctx_store.ulid import new_ulid

TYPES = ("decision", "convention", "discovery", "bugfix", "preference", "handover")
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
PROMPT_CLASSES = ("topic", "nothing", "error")
PROMPTS_PER_CLASS = 200
# Records carry `valid_from` dates spread over two years before this fixed day, so recency
# ranking sees a realistic spread and a run next year builds the same store.
EPOCH = datetime(2026, 6, 1, tzinfo=UTC)


def vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 11))))
    return sorted(words)


class Corpus:
    """A deterministic generator of records and prompts (seeded)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.general = COMMON + vocabulary(self.rng, 6000)  # the long tail of technical English
        weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.general))]
        self.cum_weights = list(itertools.accumulate(weights))  # same draws as weights=, 100× cheaper

    def words(self, count: int, own: list[str]) -> list[str]:
        picked = self.rng.choices(self.general, cum_weights=self.cum_weights, k=count)
        return [self.rng.choice(own) if self.rng.random() < 0.12 else word for word in picked]

    def record(self, own: list[str]) -> NewRecord:
        title = " ".join(self.words(self.rng.randint(4, 10), own)).capitalize()
        body = " ".join(self.words(self.rng.randint(20, 200), own)) + "."
        valid_from = (EPOCH - timedelta(days=self.rng.randint(0, 730))).isoformat().replace("+00:00", "Z")
        return NewRecord(
            type=self.rng.choice(TYPES), title=title[:120], body=body[:2000], source="import", valid_from=valid_from
        )

    def prompt(self, own: list[str], title: str | None, *, error: bool) -> str:
        words = [self.rng.choice(CHATTER) for _ in range(self.rng.randint(6, 40))]
        if title:
            topic = self.rng.sample(title.split(), k=min(4, len(title.split())))
            for word in topic:
                words.insert(self.rng.randrange(len(words) + 1), word)
        if error:  # a pasted error line
            words += ["Error:", self.rng.choice(own) + ".py:" + str(self.rng.randint(1, 900)), "failed", "(code=1)"]
        return " ".join(words)


PADDING_PROJECTS, PADDING_RECORDS = 24, 120  # synthetic neighbours of the dev sets, 2,880 records


def padding(
    projects: int = PADDING_PROJECTS, records: int = PADDING_RECORDS, seed: int = 31
) -> list[tuple[str, NewRecord]]:
    """Neighbours for a store holding real projects (issue 31: a project's figures must not
    depend on them): `projects` projects named `padding-<n>`, each with `records` records of
    developer vocabulary and 40 identifiers of its own; (project name, record) pairs, seeded."""
    corpus = Corpus(seed)
    owns = vocabulary(corpus.rng, 40 * projects)
    return [
        (f"padding-{index}", corpus.record(owns[index::projects])) for index in range(projects) for _ in range(records)
    ]


def padding_records(projects: int = PADDING_PROJECTS, records: int = PADDING_RECORDS) -> list[dict[str, Any]]:
    """`padding()`'s neighbours as eval records (`_eval.load_into_store`)."""
    return [
        {
            "id": f"{name}-{number}",
            "project": name,
            "type": record.type,
            "title": record.title,
            "body": record.body,
            "valid_from": record.valid_from,
        }
        for number, (name, record) in enumerate(padding(projects, records))
    ]


@dataclass(kw_only=True)
class BenchStore:
    """A built store: `home/agentctx.db` (so `AGENTCTX_HOME=home` finds it) and a real project
    directory `project_dir` whose `Project` (`project`) holds half of the records; the other
    half is spread over `others`. `prompts[cls]` are prompts about `project` (see PROMPT_CLASSES)."""

    size: int
    root: Path
    home: Path
    project_dir: Path
    project: Project
    others: list[Project]
    own_words: list[str]
    titles: list[str] = field(default_factory=list)  # titles of some of `project`'s records
    prompts: dict[str, list[str]] = field(default_factory=dict)
    build_s: float = 0.0

    @property
    def db(self) -> Path:
        return self.home / "agentctx.db"

    def open(self) -> Store:
        return Store.open(self.db)


def bulk_insert(store: Store, rows: list[tuple[Project, NewRecord]]) -> None:
    """Insert records in one transaction, as `Store.add` would write them (validated, FTS-indexed)."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    values = []
    for project, new in rows:
        new = validate(new)
        values.append(
            (
                new_ulid(),
                project.project_id,
                new.type,
                new.title,
                new.body,
                new.scope,
                int(new.pinned),
                new.confidence,
                new.reinforce_count,
                normalize_time(new.valid_from) if new.valid_from else now,  # as Store.add stores it
                now,
                new.source,
                new.session_id,
                new.key,
            )
        )
    with store.transaction() as conn:
        conn.executemany(
            f"""INSERT INTO records ({RECORD_COLUMNS})
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 0, NULL, 1.0, 0.0, ?, ?, 1, ?, NULL)""",
            values,
        )
    for project in dict.fromkeys(project for project, _new in rows):
        store.remember_project(project)


def build(root: Path, size: int, *, seed: int = 1) -> BenchStore:
    """Build a store of `size` records under `root` (which must not exist yet)."""
    started = time.perf_counter()
    corpus = Corpus(seed)
    home, project_dir = root / "home", root / "project"
    project_dir.mkdir(parents=True)
    home.mkdir()
    (project_dir / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    # a git origin makes the project id independent of the folder's path (copies are the same project)
    (project_dir / ".git").mkdir()
    (project_dir / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = https://example.com/bench/project.git\n', encoding="utf-8"
    )
    project = resolve_project(project_dir)
    own = vocabulary(corpus.rng, 150)
    others = [
        (
            Project(project_id=f"bench-{index}", root=str(Path(f"/bench/{index}")), name=f"p{index}"),
            vocabulary(corpus.rng, 150),
        )
        for index in range(max(2, min(19, size // 5000)))
    ]
    rows = [(project, corpus.record(own)) for _ in range(size // 2)]
    per_other = (size - len(rows)) // len(others)
    for other, words in others:
        rows += [(other, corpus.record(words)) for _ in range(per_other)]
    with Store.open(home / "agentctx.db") as store:
        bulk_insert(store, rows)
        store.dirty.clear()  # no digests at build: the first SessionStart composes one, as in real use
    titles = [new.title for owner, new in rows[:200] if owner == project]
    prompts = {
        cls: [
            corpus.prompt(own, None if cls == "nothing" else corpus.rng.choice(titles), error=cls == "error")
            for _ in range(PROMPTS_PER_CLASS)
        ]
        for cls in PROMPT_CLASSES
    }
    return BenchStore(
        size=size,
        root=root,
        home=home,
        project_dir=project_dir,
        project=project,
        others=[other for other, _words in others],
        own_words=own,
        titles=titles,
        prompts=prompts,
        build_s=time.perf_counter() - started,
    )
