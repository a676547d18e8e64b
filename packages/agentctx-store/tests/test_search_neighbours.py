"""A project's search results do not depend on the other projects in the data dir (issue 31).

The same project's records are searched in a store of their own and in one that also holds
many unrelated projects which use the same everyday words far more often (so FTS5's own
statistics, taken over the whole index, would weigh those words differently): hits, scores
and the inject / say-nothing decision must be the same. With and without the user's global
records, which every project sees.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, search
from agentctx_store.projects import global_project
from agentctx_store.retrieval import namespace_statistics, relevance_gate, visible_rows, word_weights

OURS = [
    (
        "Payments retry with exponential backoff",
        "The payments worker retries a failed charge with backoff, at most five times.",
    ),
    (
        "Ledger entries are append-only",
        "Ledger rows are never updated; a correction is a new entry that reverses the old one.",
    ),
    (
        "Cache invoices for an hour",
        "Rendered invoices go to the cache for an hour; the cache key holds the invoice version.",
    ),
    (
        "Deploy the payments service with blue-green",
        "Deploys switch traffic between two stacks; roll back by switching again.",
    ),
    ("Queue webhooks before processing", "Incoming webhooks land in a queue first, so a slow handler never drops one."),
    ("Idempotency keys on every charge", "Each charge request carries an idempotency key stored for a day."),
    ("Money is integer cents", "Amounts are stored as integer cents, never floats, with the currency beside them."),
    (
        "Reconcile the ledger nightly",
        "A nightly job compares the ledger with the bank statement and flags differences.",
    ),
]
GLOBAL = [
    ("Prefer small pull requests", "Keep pull requests small enough to review in one sitting."),
    ("Tests before refactors", "Write a test that pins behaviour before refactoring a module."),
]
PROMPTS = [
    "how do we retry a failed charge in the payments worker?",
    "where do rendered invoices get cached and for how long",
    "can I update a ledger row to fix a wrong amount?",
    "what happens to webhooks when the handler is slow",
    "how are deploys rolled back",
    "should the cache key include the invoice version",
    "the banana stand keeps asking about kestrel",
    "idempotency",
    "reviewing pull requests",
]
EVERYDAY = [
    "cache",
    "deploy",
    "queue",
    "retry",
    "worker",
    "invoice",
    "ledger",
    "key",
    "service",
    "job",
    "test",
    "review",
]


def _fill(store: Store, *, neighbours: int, with_global: bool, tmp_path: Path) -> Project:
    ours = Project(project_id="p-payments", root=str(tmp_path / "payments"), name="payments")
    rng = random.Random(7)
    for index in range(neighbours):  # before and after ours: row order must not matter either
        if index == neighbours // 2:
            _add_ours(store, ours)
        other = Project(project_id=f"p-other-{index}", root=str(tmp_path / f"other{index}"), name=f"other{index}")
        for number in range(12):
            words = [rng.choice(EVERYDAY) for _ in range(rng.randint(6, 40))]
            title = f"{rng.choice(EVERYDAY)} {rng.choice(EVERYDAY)} note {index} {number}"
            store.add(other, NewRecord(type="convention", title=title, body=" ".join(words) + "."))
    if neighbours == 0:
        _add_ours(store, ours)
    if with_global:
        for title, body in GLOBAL:
            store.add(global_project(), NewRecord(type="preference", title=title, body=body))
    return ours


def _add_ours(store: Store, project: Project) -> None:
    for title, body in OURS:
        store.add(project, NewRecord(type="decision", title=title, body=body))


def _results(store: Store, project: Project) -> list[list[tuple[str, float, float]]]:
    out = []
    for prompt in PROMPTS:
        for floor in (1.4, None):
            found = search(store, project, prompt, limit=10, floor=floor)
            out.append([(hit.record.title, hit.relevance, hit.score) for hit in found.hits])
    return out


@pytest.mark.parametrize("with_global", [False, True], ids=["project only", "with global records"])
def test_results_are_the_same_alone_and_among_many_projects(tmp_path: Path, with_global: bool) -> None:
    alone_store = Store.open(tmp_path / "alone.db")
    shared_store = Store.open(tmp_path / "shared.db")
    try:
        alone = _results(alone_store, _fill(alone_store, neighbours=0, with_global=with_global, tmp_path=tmp_path))
        shared = _results(shared_store, _fill(shared_store, neighbours=24, with_global=with_global, tmp_path=tmp_path))
        ours = Project(project_id="p-payments", root=str(tmp_path / "payments"), name="payments")
        namespaces = (ours.project_id, "_global")
        assert relevance_gate(alone_store.conn, 1.4, namespaces) == relevance_gate(shared_store.conn, 1.4, namespaces)
        # the warm path's word weights (token coverage) too: "cache" fills the neighbours, not ours
        words = ["the", "cache", "ledger", "kestrel", "payments"]
        weights = word_weights(alone_store.conn, words, namespaces)
        assert word_weights(shared_store.conn, words, namespaces) == pytest.approx(weights)
        assert word_weights(shared_store.conn, words, None) != pytest.approx(weights)  # the whole store would differ
        assert weights["kestrel"] > weights["cache"] > weights["ledger"] > weights["the"]  # held by 0, 1, 2, 6 rows
    finally:
        alone_store.close()
        shared_store.close()
    assert any(alone), "nothing found at all: the test would prove nothing"
    assert any(not hits for hits in alone), "every prompt answered: the floor is not exercised"
    for before, after in zip(alone, shared, strict=True):
        assert [title for title, _, _ in before] == [title for title, _, _ in after]
        assert [relevance for _, relevance, _ in after] == pytest.approx([relevance for _, relevance, _ in before])
        assert [score for _, _, score in after] == pytest.approx([score for _, _, score in before])


def test_namespace_statistics_follow_every_write(store: Store, project: Project, other_project: Project) -> None:
    """`fts_namespaces` (kept by the FTS triggers) agrees with the index after inserts, an edit,
    a move to another project and a delete."""
    first = store.add(
        project, NewRecord(type="decision", title="Ledger entries append-only", body="Never update a row.")
    )
    store.add(project, NewRecord(type="decision", title="Cache invoices", body="For an hour, keyed by version."))
    store.add(other_project, NewRecord(type="convention", title="Retry", body="With backoff " * 80))
    store.conn.execute("UPDATE records SET body = ? WHERE id = ?", ("A much longer body " * 50, first.record_id))
    moved = store.add(project, NewRecord(type="convention", title="Moved", body="to the other project"))
    store.conn.execute("UPDATE records SET project_id = ? WHERE id = ?", (other_project.project_id, moved.record_id))
    gone = store.add(other_project, NewRecord(type="convention", title="Gone soon", body="deleted below"))
    store.conn.execute("DELETE FROM records WHERE id = ?", (gone.record_id,))

    def truth(namespace: str) -> tuple[int, int]:
        rows = store.conn.execute(
            "SELECT d.sz FROM records r JOIN records_fts_docsize d ON d.id = r.rowid WHERE r.project_id = ?",
            (namespace,),
        ).fetchall()
        return len(rows), sum(_varints(bytes(sz)) for (sz,) in rows)

    for namespace in (project.project_id, other_project.project_id):
        stats = namespace_statistics(store.conn, [namespace])
        assert (stats.rows, stats.tokens) == truth(namespace)
    assert visible_rows(store.conn, None) == store.conn.execute("SELECT count(*) FROM records").fetchone()[0]
    assert visible_rows(store.conn, [project.project_id]) == 2


def _varints(blob: bytes) -> int:
    total = value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            total, value = total + value, 0
    return total


COMPOUNDS = [
    ("Run pre-commit before pushing", "The pre-commit hooks lint, format and type check every staged file."),
    (
        "Typecheck a single file",
        "Typecheck one file quickly with pyright path/to/file.py; the full typecheck runs in CI.",
    ),
    ("Set up the dev database", "Setup takes one command: make db. Setting up by hand is not supported."),
    (
        "Relational data stays in Postgres",
        "Relationally modelled data, configurations and conditional flags live in Postgres.",
    ),
]


def test_rescoring_equals_fts5_bm25_where_both_apply(store: Store, project: Project, monkeypatch) -> None:
    """In a store holding only the project, FTS5's own scores are over the visible rows; scoring
    the candidates again (`visible_bm25`) with FTS5's IDF must give the same hits and scores,
    compound forms (joins and two-word splits) and Porter's suffix rules included: the counting
    is FTS5's."""
    import agentctx_store.retrieval as retrieval

    for title, body in [*OURS, *COMPOUNDS]:
        store.add(project, NewRecord(type="convention", title=title, body=body))
    prompts = [
        *PROMPTS,
        "how do I type-check just one file quickly?",
        "precommit hooks",
        "how do we setup the database",
        "where do configuration flags and relational data live",
    ]
    real = retrieval.visible_bm25

    def unscored(conn, candidates, forms, namespaces, stats=None, idf_of=None, held=None):
        return [(record, relevance) for _, record, relevance in candidates]

    def with_fts5_idf(conn, candidates, forms, namespaces, stats=None, idf_of=None, held=None):
        return real(conn, candidates, forms, namespaces, stats, fts5_idf, held)

    monkeypatch.setattr(retrieval, "visible_bm25", unscored)
    plain = [search(store, project, prompt, floor=None).hits for prompt in prompts]
    monkeypatch.setattr(retrieval, "visible_bm25", with_fts5_idf)
    rescored = [search(store, project, prompt, floor=None).hits for prompt in prompts]
    assert sum(len(hits) for hits in plain) > len(prompts)
    for before, after in zip(plain, rescored, strict=True):
        assert [hit.record.record_id for hit in after] == [hit.record.record_id for hit in before]
        assert [hit.relevance for hit in after] == pytest.approx([hit.relevance for hit in before], rel=1e-9)


def fts5_idf(rows: int, holding: int) -> float:
    """FTS5's own IDF (fts5_aux.c): no 1 inside the log, never below a token 1e-6."""
    value = math.log((rows - holding + 0.5) / (holding + 0.5))
    return value if value > 0 else 1e-6


def test_stop_word_weights_are_counted_once_until_the_rows_change_by_a_tenth(store: Store, project: Project) -> None:
    """`word_weights` counts a stop word once per database and namespaces (most rows hold one: a
    walk through most of the index), again when the visible rows have changed by a tenth; every
    other word is counted at each call."""
    for number in range(20):
        body = f"the ledger note {number}" if number % 2 else f"a plain note {number}"
        store.add(project, NewRecord(type="decision", title=f"Note {number}", body=body))
    namespaces = [project.project_id]
    first = word_weights(store.conn, ["the", "ledger"], namespaces)
    store.add(project, NewRecord(type="decision", title="More", body="the ledger again, and the ledger"))
    second = word_weights(store.conn, ["the", "ledger"], namespaces)
    assert second["the"] == first["the"]  # 21 rows: within a tenth, remembered
    assert second["ledger"] < first["ledger"]  # counted again: one more row holds it
    for number in range(3):
        store.add(project, NewRecord(type="decision", title=f"Extra {number}", body="the end"))
    third = word_weights(store.conn, ["the"], namespaces)
    assert third["the"] < second["the"]  # 24 rows: counted again, more rows hold it
