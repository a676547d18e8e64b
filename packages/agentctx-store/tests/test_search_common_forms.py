"""In a big store, a row holding nothing but a prompt's most common words is not a candidate
(`retrieval.distinctive_forms`, `COMMON_FORM_SHARE`): FTS5 would read the positions of every
such row to rank it. Every other row keeps its candidacy, score and order; common words still
count in their scores. Other projects' and superseded records stay out as on every search.

The mechanism starts at 20,000 visible rows (`COMMON_FORM_ROWS` / `COMMON_FORM_SHARE`), and a
common word is one a twentieth of them hold. These tests count a word a quarter of the rows hold
as common from the first row on (`_big`), so a store of a few hundred rows shows it.
"""

from __future__ import annotations

import pytest

import agentctx_store.retrieval as retrieval
from agentctx_store import NewRecord, Project, Store, search
from agentctx_store.retrieval import distinctive_forms

COMMON_ONLY = 120  # rows holding the prompt's four common words only
FILLER = 200  # rows holding none of its words, so a common word is held by fewer than half
# distinctive rows: enough for FTS5's ranked preselection (≥ CANDIDATES), or few (its full join)
DISTINCTIVE = {"preselected": 80, "joined": 12}
PROMPT = "how do we deploy the service through the pipeline or rollback when a ledger correction is needed"


def _fill(store: Store, project: Project, distinctive: int) -> tuple[set[str], set[str]]:
    def add(kind: str, title: str, body: str) -> str:
        return store.add(project, NewRecord(type=kind, title=title, body=body)).record_id

    common = {
        add(
            "convention",
            f"Deploy service pipeline rollback {number}",
            f"Deploy the service through the pipeline; rollback the service if pipeline step {number} fails.",
        )
        for number in range(COMMON_ONLY)
    }
    for number in range(FILLER):
        add("discovery", f"Cache invoices {number}", "Invoices stay cached.")
    ledger = {
        add(
            "decision",
            f"Ledger rule {number}",
            f"Ledger rows are append-only, correction {number} reverses an entry."
            + (" Deploy the service after it." if number % 2 else ""),
        )
        for number in range(distinctive)
    }
    return common, ledger


def _big(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrieval, "COMMON_FORM_ROWS", 1)
    monkeypatch.setattr(retrieval, "COMMON_FORM_SHARE", 0.25)
    monkeypatch.setattr(retrieval, "COMMON_FORM_SHARE", 0.25)


def _hits(store: Store, project: Project, prompt: str, *, limit: int = 200) -> list[tuple[str, float]]:
    found = search(store, project, prompt, floor=None, limit=limit)
    return [(hit.record.record_id, hit.relevance) for hit in found.hits]


@pytest.mark.parametrize("distinctive", DISTINCTIVE.values(), ids=DISTINCTIVE.keys())
def test_rows_holding_only_common_words_are_not_candidates_and_the_rest_keep_their_scores(
    store: Store, project: Project, monkeypatch: pytest.MonkeyPatch, distinctive: int
) -> None:
    common, ledger = _fill(store, project, distinctive)
    before = _hits(store, project, PROMPT)  # the store is below the bound: every row a candidate
    assert {record_id for record_id, _ in before} & common  # rows holding only common words were candidates

    _big(monkeypatch)
    after = _hits(store, project, PROMPT)
    assert after, "rows holding the rare word are still found"
    assert {record_id for record_id, _ in after} <= ledger  # no row holding only common words
    kept = [(record_id, relevance) for record_id, relevance in before if record_id in ledger]
    assert kept
    # every row that was a candidate still is, in the same order with the same score: common words
    # still count in it ("deploy the service"); freed places go to more rows holding the rare word
    again = [(record_id, relevance) for record_id, relevance in after if record_id in dict(kept)]
    assert [record_id for record_id, _ in again] == [record_id for record_id, _ in kept]
    assert [relevance for _, relevance in again] == pytest.approx([relevance for _, relevance in kept])
    assert len(after) == min(len(ledger), retrieval.CANDIDATES)
    scores = sorted({round(relevance, 9) for _, relevance in after})
    assert len(scores) > 1, "rows holding the common words too score apart from those that do not"


def test_common_words_alone_still_find_rows(store: Store, project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt whose every word is common, or whose other words no row holds, is searched as
    before: there is no rarer word to ask for."""
    _fill(store, project, DISTINCTIVE["joined"])
    prompts = ["deploy the service", "deploy the service with kestrelwing"]
    before = [_hits(store, project, prompt) for prompt in prompts]
    _big(monkeypatch)
    assert [_hits(store, project, prompt) for prompt in prompts] == before
    assert all(before)


def test_other_projects_and_superseded_records_stay_out(
    store: Store, project: Project, other_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the rare words asked for, rows of another project holding them, and superseded rows
    holding them, are never returned (their current heads are)."""
    _, ledger = _fill(store, project, DISTINCTIVE["preselected"])
    theirs = {
        store.add(
            other_project, NewRecord(type="decision", title=f"Ledger note {n}", body="ledger deploy service")
        ).record_id
        for n in range(30)
    }
    old = store.add(project, NewRecord(type="decision", title="Ledger kestrelwing export", body="Export the ledger."))
    superseded, head = store.supersede(project, old.record_id, body="Export the ledger as CSV through the service.")
    _big(monkeypatch)
    for prompt in ["deploy the service for a ledger kestrelwing export", "ledger kestrelwing"]:
        found = {record_id for record_id, _ in _hits(store, project, prompt)}
        assert found, prompt
        assert not found & theirs
        assert old.record_id not in found and superseded.record_id not in found
        assert head.record_id in found
        assert found <= ledger | {head.record_id}


def test_the_bound_and_the_counts_decide_which_forms_are_asked_for() -> None:
    rows = 1000
    held = {"deploy": 600, "service": 50, "ledger": 49, "kestrelwing": 0}
    assert distinctive_forms(["deploy", "ledger"], held, rows) == ["ledger"]
    assert distinctive_forms(["deploy", "service", "ledger"], held, rows) == ["ledger"]  # 50 of 1000: common
    assert distinctive_forms(["deploy", "kestrelwing"], held, rows) == []  # no rarer form held by any row
    assert distinctive_forms(["ledger", "kestrelwing"], held, rows) == []  # none common: no condition
    assert distinctive_forms(["deploy", "ledger"], None, rows) == []  # not counted (a small store)


def test_a_store_below_the_bound_counts_nothing_more(store: Store, project: Project, monkeypatch) -> None:
    """Below `COMMON_FORM_ROWS` / `COMMON_FORM_SHARE` visible rows, search counts only the forms
    its candidates hold, as before: the mechanism costs a small store nothing."""
    _fill(store, project, DISTINCTIVE["joined"])
    counted: list[list[str]] = []
    real = retrieval.rows_holding

    def counting(conn, forms, namespaces):
        counted.append(list(forms))
        return real(conn, forms, namespaces)

    monkeypatch.setattr(retrieval, "rows_holding", counting)
    search(store, project, "how do we deploy the service when a ledger kestrelwing correction is needed", floor=None)
    assert counted and all("kestrelwing" not in forms for forms in counted)
