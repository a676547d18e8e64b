"""The stdlib half of consolidation: scores, the cold archive, pruning candidates, RRF ranking,
the developer profile, and a keyword-only run (rung 2 of docs/contracts.md#degradation)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, config, consolidate, digest
from agentctx_store.consolidate import profile as dev_profile
from agentctx_store.consolidate import scoring
from agentctx_store.digest import ranking
from agentctx_store.projects import global_project
from agentctx_store.records import parsed_to_text

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def days_ago(days: float) -> str:
    return parsed_to_text(NOW - timedelta(days=days))


def backdate(store: Store, record_id: str, days: float, *, superseded_days: float | None = None) -> None:
    with store.transaction() as conn:
        conn.execute(
            "UPDATE records SET valid_from = ?, recorded_at = ? WHERE id = ?",
            (days_ago(days), days_ago(days), record_id),
        )
        if superseded_days is not None:
            conn.execute("UPDATE records SET superseded_at = ? WHERE id = ?", (days_ago(superseded_days), record_id))


def new(store: Store, project: Project, type_: str, title: str, **fields) -> str:
    body = fields.pop("body", title + " (body)")
    return store.add(project, NewRecord(type=type_, title=title, body=body, **fields)).record_id


def test_decisions_and_conventions_never_decay_discoveries_do(store: Store, project: Project) -> None:
    decision = new(store, project, "decision", "Use SQLite")
    convention = new(store, project, "convention", "Errors name the fix")
    discovery = new(store, project, "discovery", "The cache warms in 3 s")
    for record_id in (decision, convention, discovery):
        backdate(store, record_id, 400)
    scoring.update_scores(store, NOW)
    score = {record.record_id: record.score for record in store.list_records(project)}
    assert score[decision] == pytest.approx(1.0)
    assert score[convention] == pytest.approx(1.0)
    assert score[discovery] < 0.01


def test_score_is_the_product_of_its_four_factors(store: Store, project: Project) -> None:
    record_id = new(store, project, "bugfix", "Fix the race in the writer", confidence="inferred", pinned=True)
    backdate(store, record_id, 90)  # one half-life of a bugfix
    record = store.get(project, record_id)
    expected = (0.85 * 1.5) * 0.5 * 0.5 * 0.6
    assert scoring.score(record, NOW) == pytest.approx(expected, rel=1e-6)


def test_use_keeps_a_record_alive(store: Store, project: Project) -> None:
    used = new(store, project, "discovery", "The importer needs UTF-8")
    unused = new(store, project, "discovery", "The exporter sorts by id")
    for record_id in (used, unused):
        backdate(store, record_id, 200)
    with store.transaction() as conn:
        conn.execute("UPDATE records SET access_count = 5, last_accessed = ? WHERE id = ?", (days_ago(1), used))
    assert scoring.score(store.get(project, used), NOW) > 2 * scoring.score(store.get(project, unused), NOW)


def test_order_of_two_records_does_not_flip_with_time(store: Store, project: Project) -> None:
    first = new(store, project, "discovery", "One")
    second = new(store, project, "discovery", "Two")
    backdate(store, first, 10)
    backdate(store, second, 40)
    a, b = store.get(project, first), store.get(project, second)
    for later in (0, 30, 365):
        moment = NOW + timedelta(days=later)
        assert scoring.score(a, moment) > scoring.score(b, moment)


def test_pruning_candidates_are_low_for_sixty_days_never_pinned_never_deleted(store: Store, project: Project) -> None:
    stale = new(store, project, "discovery", "An old observation")
    pinned = new(store, project, "discovery", "A pinned old one", pinned=True)
    recent_low = new(store, project, "bugfix", "Dropped below lately")
    decision = new(store, project, "decision", "An old decision")
    backdate(store, stale, 700)
    backdate(store, pinned, 700)
    backdate(store, decision, 700)
    backdate(store, recent_low, 160)  # below 0.1 now (0.07), but not for 60 days yet (0.18 then)
    scoring.update_scores(store, NOW)
    found = [record.record_id for record in scoring.pruning_candidates(store, project, NOW)]
    assert found == [stale]
    sections = {s["key"]: s for s in consolidate.status_sections(store, project, now=NOW)}
    assert [item["id"] for item in sections["pruning_candidates"]["data"]] == [stale]
    assert store.get(project, stale).superseded_at is None  # listed, never deleted


def test_superseded_over_ninety_days_is_archived_and_history_still_sees_it(store: Store, project: Project) -> None:
    old = new(store, project, "decision", "REST for the API")
    _old, replacement = store.supersede(project, old, body="gRPC for the API.")
    recent_old = new(store, project, "decision", "Tabs")
    _recent, spaces = store.supersede(project, recent_old, body="Spaces.")
    backdate(store, old, 200, superseded_days=120)
    backdate(store, recent_old, 40, superseded_days=30)
    assert scoring.archive_superseded(store, NOW) == {project.project_id: 1}
    assert scoring.archive_superseded(store, NOW) == {}  # counted once, when archived
    assert scoring.archived_ids(store.conn) == {old}
    assert [record.record_id for record in store.history(project, replacement.record_id)] == [
        old,
        replacement.record_id,
    ]
    assert old in {record.record_id for record in store.as_of(project, days_ago(150))}
    assert old not in {record.record_id for record in store.list_records(project)}
    store.delete(project, replacement.record_id)  # the old fact is current again: no longer archived
    scoring.archive_superseded(store, NOW)
    assert scoring.archived_ids(store.conn) == set()
    assert spaces.record_id not in scoring.archived_ids(store.conn)


def test_rrf_fuses_ranks_and_breaks_ties_by_id() -> None:
    fused = ranking.rrf([["a", "b", "c"], ["c", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert ranking.fused_order([["a", "b", "c"], ["c", "a"]]) == ["a", "c", "b"]
    assert ranking.fused_order([["y"], ["x"]]) == ["x", "y"]


def test_digest_ranking_puts_pinned_first_then_focus_matches(store: Store, project: Project) -> None:
    pinned = new(store, project, "decision", "Keep the API versioned", pinned=True)
    cache = new(
        store, project, "decision", "Cache invoices in Redis", body="Invoice PDFs are cached in Redis for a day."
    )
    other = new(store, project, "decision", "Use ruff for linting")
    inferred = new(store, project, "decision", "Maybe move to uv", confidence="inferred")
    store.add(
        project,
        NewRecord(type="handover", title="Handover", body="Working on invoice caching in Redis.", key="handover"),
    )
    order = [record.record_id for record in ranking.rank_digest(store, project)]
    assert order[0] == pinned
    assert order.index(cache) < order.index(other)
    assert inferred not in order  # inferred records wait for reinforcement


def test_profile_threshold_promotes_and_export_lists_preferences(store: Store, project: Project) -> None:
    glob = global_project()
    seen_twice = store.add(
        project,
        NewRecord(
            type="preference",
            title="Prefers pytest",
            body="Uses pytest.",
            scope="global",
            confidence="inferred",
            reinforce_count=2,
        ),
    )
    stated = store.add(
        project, NewRecord(type="preference", title="Small commits", body="Commit small.", scope="global")
    )
    assert dev_profile.promote_reinforced(store, threshold=3) == 0
    assert dev_profile.promote_reinforced(store, threshold=2) == 1
    assert store.get(glob, seen_twice.record_id).confidence == "reinforced"
    written = dev_profile.export(store, 2)
    markdown = written[0].read_text(encoding="utf-8")
    assert written[0].parent == Path(config.paths.home()) / "profile"
    assert "Prefers pytest" in markdown and stated.record_id in markdown
    assert [record.record_id for record in dev_profile.preferences(store)] == [stated.record_id, seen_twice.record_id]


def test_a_keyword_only_run_writes_a_full_digest_and_then_skips(store: Store, project: Project) -> None:
    decision = new(store, project, "decision", "Use SQLite in WAL mode")
    store.close()
    report = consolidate.run([project], settings=config.load())
    assert report.backend is None and not report.skipped
    text, info = digest.read(project.project_id)
    assert info.kind == "full" and decision in text
    assert consolidate.run([project], settings=config.load()).skipped
    with digest.refreshing(Store.open()) as again:  # a write marks the full digest stale: the next run works again
        new(again, project, "decision", "Use ULIDs")
    assert digest.read(project.project_id)[1].stale
    assert not consolidate.run([project], settings=config.load()).skipped


@pytest.mark.parametrize(("missing", "with_file", "hint"), [(2, True, True), (1, True, False), (3, False, False)])
def test_digest_drift_hint_from_two_candidates_and_only_with_a_claude_md(
    tmp_path: Path, missing: int, with_file: bool, hint: bool
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    if with_file:
        (root / "CLAUDE.md").write_text("# Notes\n\n- Run the tests with pytest.\n", encoding="utf-8")
    project = Project(project_id="p-hint", root=str(root), name="repo")
    titles = ["Store invoices in S3", "Render PDFs with WeasyPrint", "Send mail through Postmark"]
    with Store.open() as store:
        for title in titles[:missing]:
            new(store, project, "decision", title)
    consolidate.run([project], settings=config.load())
    text = digest.read(project.project_id)[0]
    assert ("`agentctx sync`" in text) is hint
    if hint:
        assert f"behind the store on {missing} points" in text


def test_a_keyword_only_run_flags_exact_and_near_duplicates_of_a_project(
    store: Store, project: Project, other_project: Project
) -> None:
    rule = "Run the unit tests with uv run pytest tests/unit before every commit."
    first = new(store, project, "convention", "Testing: run the unit tests", body=rule)
    exact = new(store, project, "convention", "Testing: run the unit tests", body=rule)
    near = new(store, project, "convention", "Testing: run the unit tests", body=rule.replace("every", "each"))
    new(store, project, "convention", "Name functions for what they return", body="Functions are named for results.")
    new(store, project, "decision", "Testing: run the unit tests", body=rule)  # another type: not a duplicate
    new(store, other_project, "convention", "Testing: run the unit tests", body=rule)  # another project: never
    store.close()
    report = consolidate.run([project], settings=config.load())
    assert report.merge_candidates == 3
    with Store.open() as again:
        pairs = {
            frozenset((row[0], row[1])): row[2]
            for row in again.conn.execute("SELECT keep_id, drop_id, similarity FROM merge_candidates")
        }
        lines = next(s for s in consolidate.status_sections(again, project) if s["key"] == "merge_candidates")["lines"]
    assert set(pairs) == {frozenset((first, exact)), frozenset((first, near)), frozenset((exact, near))}
    assert pairs[frozenset((first, exact))] == 1.0
    assert len(lines) == 4 and "similarity 1.0" in lines[0]
    assert consolidate.run([project], settings=config.load(), force=True).merge_candidates == 0  # never reopened
