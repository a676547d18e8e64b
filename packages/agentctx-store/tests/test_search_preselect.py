"""FTS5 candidates are ranked before the join to `records` (`search._fts_candidates`); the result
must be exactly that of ranking every filtered match, whether the filters keep enough of the
preselected rows or not (then the full join runs)."""

from __future__ import annotations

import sys

import pytest

from agentctx_store import NewRecord, Project, Store
from agentctx_store.retrieval import CANDIDATES, PRESELECT, fts_query

search_module = sys.modules["agentctx_store.retrieval"]


def _reference(store: Store, match: str, filters: str, params: list[object]) -> list[tuple[str, float]]:
    """Every filtered match ranked, as the search did before the preselection."""
    rows = store.conn.execute(
        f"""SELECT r.id, -bm25(records_fts, 2.0, 1.0, 0.0) AS relevance
            FROM records_fts JOIN records r ON r.rowid = records_fts.rowid
            WHERE records_fts MATCH ? AND {filters} ORDER BY relevance DESC, r.rowid LIMIT {CANDIDATES}""",
        [match, *params],
    ).fetchall()
    return [(row["id"], row["relevance"]) for row in rows]


@pytest.fixture
def crowded(store: Store, project: Project, other_project: Project) -> list[str]:
    """More matches of "ledger" than PRESELECT, with many ties, most of them handovers."""
    ids = []
    with store.transaction():
        for index in range(PRESELECT + 120):
            kind = "handover" if index % 5 else "decision"
            words = " ".join(["ledger"] * (1 + index % 4))
            record = store.add(
                project, NewRecord(type=kind, title=f"Note {index % 7} {words}", body=f"Body {index % 3} about ledger")
            )
            ids.append(record.record_id)
        for index in range(50):
            store.add(other_project, NewRecord(type="decision", title=f"ledger {index}", body="ledger ledger ledger"))
    store.dirty.clear()
    return ids


@pytest.mark.parametrize("case", ["all types", "decisions only", "most excluded", "nothing left"])
def test_preselected_candidates_equal_ranking_every_filtered_match(
    store: Store, project: Project, crowded: list[str], case: str
) -> None:
    namespaces = (project.project_id, "_global")
    types = None if case == "all types" else ("decision",)
    exclude = {"most excluded": crowded[: PRESELECT + 60], "nothing left": crowded}.get(case, [])
    filters, params = search_module._filters(namespaces, types, True, exclude)
    match = fts_query(["ledger"], namespaces)
    got = [
        (record.record_id, relevance)
        for _, record, relevance in search_module._fts_candidates(store.conn, match, filters, params)
    ]
    expected = _reference(store, match, filters, params)
    assert got == expected
    assert len(got) == (0 if case == "nothing left" else min(CANDIDATES, len(expected)))
    if case != "nothing left":
        assert len(got) > 0
    rows = {row["id"]: row for row in store.conn.execute("SELECT id, type, project_id FROM records")}
    assert all(rows[record_id]["project_id"] == project.project_id for record_id, _ in got)
    assert all(types is None or rows[record_id]["type"] in types for record_id, _ in got)
    assert not set(exclude) & {record_id for record_id, _ in got}
