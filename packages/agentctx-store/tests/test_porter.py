"""`porter.stem` stems every word as SQLite's FTS5 `porter` tokenizer indexes it, and every word
begins with what `retrieval._stem_head` says its stem's words begin with (the pre-filter of
`visible_bm25`'s word counts)."""

from __future__ import annotations

import random
import sqlite3

from agentctx_store.porter import stem
from agentctx_store.retrieval import _stem_head

SUFFIXES = [
    "",
    "s",
    "es",
    "ies",
    "sses",
    "ss",
    "ed",
    "eed",
    "ing",
    "ly",
    "ness",
    "ful",
    "ational",
    "tional",
    "ization",
    "ation",
    "ator",
    "alism",
    "iveness",
    "fulness",
    "ousness",
    "aliti",
    "iviti",
    "biliti",
    "icate",
    "ative",
    "alize",
    "iciti",
    "ical",
    "ement",
    "ment",
    "ent",
    "ion",
    "sion",
    "tion",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "able",
    "ible",
    "ance",
    "ence",
    "er",
    "ic",
    "al",
    "ll",
    "e",
    "y",
    "yy",
    "yed",
    "ying",
    "bli",
    "logi",
    "entli",
    "eli",
    "ousli",
    "izer",
    "enci",
    "anci",
    "at",
    "bl",
    "iz",
]
EVERYDAY = [
    "testing",
    "tests",
    "tested",
    "deployments",
    "deploying",
    "configuration",
    "configured",
    "caching",
    "queues",
    "running",
    "happy",
    "relational",
    "conditional",
    "possibility",
    "hoping",
    "hoped",
    "agreed",
    "sensitivity",
    "organizer",
    "generalization",
    "eed",
    "ies",
    "typecheck",
    "precommit",
    "setup",
    "e2e",
    "py311",
    "utf8",
    "a",
    "an",
    "go",
    "db",
    "ci",
    "x",
]


def fts5_stems(words: list[str]) -> dict[str, str]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(words, 1)))
        return {words[doc - 1]: term for term, doc in conn.execute("SELECT term, doc FROM v")}
    finally:
        conn.close()


def test_stems_as_fts5_does() -> None:
    rng = random.Random(31)
    words = set(EVERYDAY)
    while len(words) < 6000:
        letters = "".join(
            rng.choice("bcdfghjklmnpqrstvwxz" if rng.random() < 0.6 else "aeiouy") for _ in range(rng.randint(1, 8))
        )
        words.add(letters + rng.choice(SUFFIXES))
    ordered = sorted(words)
    expected = fts5_stems(ordered)
    wrong = [(word, expected[word], stem(word)) for word in ordered if stem(word) != expected[word]]
    assert not wrong, wrong[:20]
    assert all(word.startswith(_stem_head(stem(word))) for word in ordered)
