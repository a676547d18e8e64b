"""Negative tests on every read path: a superseded record and another project's record never come back.

Each test builds the same small world: in our project a current record and the record it
superseded, in another project a current record; all share the words "kestrel telemetry"
and all are pinned (so the pinned-only rung has something to leak if it were wrong).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Record, RecordNotFound, Store, search
from agentctx_store.retrieval import SearchResult

QUERY = "how does kestrel telemetry batch uploads"


@dataclass(frozen=True, kw_only=True)
class World:
    current: Record
    superseded: Record
    foreign: Record
    foreign_superseded: Record


FILLER = [
    ("Use pnpm workspaces", "Packages are managed with pnpm workspaces."),
    ("Postgres for persistence", "All durable state lives in Postgres 16."),
    ("Feature branches", "Work happens on short-lived feature branches."),
    ("Structured logging", "Logs are JSON lines with a request id."),
    ("Deploy on Fridays is fine", "Deploys are automated and can roll back."),
    ("Type hints everywhere", "Public functions carry type hints."),
]


def _build(store: Store, project: Project, other: Project) -> World:
    for owner in (project, other):  # a realistic store: the shared words are not in every record
        for title, body in FILLER:
            store.add(owner, NewRecord(type="convention", title=title, body=body))
    old = store.add(
        project,
        NewRecord(
            type="decision", title="Kestrel telemetry batches uploads hourly", body="Kestrel telemetry uploads hourly."
        ),
    )
    store.pin(project, old.record_id)
    _, current = store.supersede(project, old.record_id, body="Kestrel telemetry uploads in batches every minute.")
    foreign_old = store.add(
        other,
        NewRecord(type="decision", title="Kestrel telemetry batch uploads", body="Kestrel telemetry batch uploads."),
    )
    store.pin(other, foreign_old.record_id)
    _, foreign = store.supersede(other, foreign_old.record_id, body="Kestrel telemetry batch uploads nightly.")
    for record in (current, foreign):
        store.pin(project if record is current else other, record.record_id)
    node = store.upsert_node(project, "file", "src/kestrel/telemetry.py")
    other_node = store.upsert_node(other, "file", "src/kestrel/telemetry.py")
    for record_id, node_id in (
        (current.record_id, node),
        (old.record_id, node),
        (foreign.record_id, other_node),
        (foreign_old.record_id, node),  # even a wrong cross-project link must not leak
    ):
        store.link_entity(record_id, node_id)
    return World(
        current=store.get(project, current.record_id),
        superseded=store.get(project, old.record_id),
        foreign=store.get(other, foreign.record_id),
        foreign_superseded=store.get(other, foreign_old.record_id),
    )


@pytest.fixture
def world(store: Store, project: Project, other_project: Project) -> World:
    return _build(store, project, other_project)


def _ids(result: SearchResult) -> set[str]:
    return {hit.record.record_id for hit in result.hits}


def _assert_clean(ids: set[str], world: World, *, allow_superseded: bool = False) -> None:
    assert world.foreign.record_id not in ids
    assert world.foreign_superseded.record_id not in ids
    if not allow_superseded:
        assert world.superseded.record_id not in ids


@pytest.mark.parametrize("floor", ["production", None])
def test_fts_search_returns_only_the_current_record_of_this_project(
    store: Store, project: Project, world: World, floor: str | None
) -> None:
    kwargs = {} if floor == "production" else {"floor": None}
    result = search(store, project, QUERY, **kwargs)  # type: ignore[arg-type]
    assert result.degraded is None
    assert _ids(result) == {world.current.record_id}


@pytest.mark.parametrize("scope", [None, "project", "global"])
@pytest.mark.parametrize("types", [None, ["decision"], ["decision", "convention"]])
def test_scope_and_type_filters_never_widen_what_is_visible(
    store: Store, project: Project, world: World, scope: str | None, types: list[str] | None
) -> None:
    ids = _ids(search(store, project, QUERY, scope=scope, types=types, floor=None))
    _assert_clean(ids, world)
    assert ids == (set() if scope == "global" else {world.current.record_id})


def test_history_search_may_show_our_superseded_record_but_never_another_projects(
    store: Store, project: Project, world: World
) -> None:
    ids = _ids(search(store, project, QUERY, include_superseded=True, floor=None))
    assert ids == {world.current.record_id, world.superseded.record_id}
    _assert_clean(ids, world, allow_superseded=True)


def test_excluded_ids_are_skipped_and_nothing_else_takes_their_place(
    store: Store, project: Project, world: World
) -> None:
    assert _ids(search(store, project, QUERY, exclude_ids=[world.current.record_id], floor=None)) == set()


def test_the_other_project_sees_only_its_own_current_record(store: Store, other_project: Project, world: World) -> None:
    assert _ids(search(store, other_project, QUERY, floor=None)) == {world.foreign.record_id}


def test_like_search_without_fts5_keeps_both_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Project, other_project: Project
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
    with Store.open(tmp_path / "no-fts.db") as store:
        assert not store.has_fts
        world = _build(store, project, other_project)
        for floor in ("production", None):
            kwargs = {} if floor == "production" else {"floor": None}
            result = search(store, project, QUERY, **kwargs)  # type: ignore[arg-type]
            assert result.degraded == "like-search"
            assert _ids(result) == {world.current.record_id}
        history = search(store, project, QUERY, include_superseded=True, floor=None)
        _assert_clean(_ids(history), world, allow_superseded=True)
        assert _ids(search(store, project, QUERY, scope="global", floor=None)) == set()


def _break_fts(store: Store) -> None:
    store.conn.execute("DROP TABLE records_fts_data")


def test_pinned_only_rung_returns_only_pinned_current_records_of_this_project(
    store: Store, project: Project, world: World
) -> None:
    extra = store.add(project, NewRecord(type="convention", title="Unpinned", body="Not pinned."))
    _break_fts(store)
    result = search(store, project, QUERY)
    assert result.degraded == "pinned-only"
    assert _ids(result) == {world.current.record_id}
    assert extra.record_id not in _ids(result)


def test_get_refuses_other_projects_records(store: Store, project: Project, world: World) -> None:
    for record in (world.foreign, world.foreign_superseded):
        with pytest.raises(RecordNotFound):
            store.get(project, record.record_id)
    with pytest.raises(RecordNotFound):
        store.get(project, world.superseded.record_id, include_superseded=False)
    assert store.get(project, world.current.record_id.lower()).record_id == world.current.record_id


def test_get_many_reports_other_projects_ids_as_missing(store: Store, project: Project, world: World) -> None:
    wanted = [world.current.record_id, world.foreign.record_id, world.foreign_superseded.record_id, "01NOPE"]
    found, missing = store.get_many(project, wanted, touch=True)
    assert [record.record_id for record in found] == [world.current.record_id]
    assert missing == wanted[1:]
    assert found[0].access_count == 1
    assert store.get(store_project_other(world), world.foreign.record_id).access_count == 0


def store_project_other(world: World) -> Project:
    return Project(project_id=world.foreign.project_id, root=str(Path("/")), name="beta")


def test_list_records_and_counts_show_only_current_records_of_this_project(
    store: Store, project: Project, world: World
) -> None:
    listed = [record.record_id for record in store.list_records(project, types=["decision"])]
    assert listed == [world.current.record_id]
    _assert_clean({record.record_id for record in store.list_records(project)}, world)
    assert [record.record_id for record in store.list_records(project, pinned=True)] == [world.current.record_id]
    with_history = {
        record.record_id for record in store.list_records(project, include_superseded=True, types=["decision"])
    }
    assert with_history == {world.current.record_id, world.superseded.record_id}
    assert store.counts_by_type(project) == {"convention": len(FILLER), "decision": 1}


def test_as_of_never_returns_other_projects_records(store: Store, project: Project, world: World) -> None:
    for moment in ("2000-01-01", world.superseded.recorded_at, "2999-01-01"):
        _assert_clean({record.record_id for record in store.as_of(project, moment)}, world, allow_superseded=True)
    latest = {record.record_id for record in store.as_of(project, "2999-01-01", types=["decision"])}
    assert latest == {world.current.record_id}


def test_related_to_file_returns_only_current_records_of_this_project(
    store: Store, project: Project, world: World
) -> None:
    related = {record.record_id for record in store.related_to_file(project, "src/kestrel/telemetry.py")}
    assert related == {world.current.record_id}
    assert {record.record_id for record in store.related_to_file(project, "kestrel/telemetry.py")} == related


def test_history_of_another_projects_record_is_refused(store: Store, project: Project, world: World) -> None:
    with pytest.raises(RecordNotFound):
        store.history(project, world.foreign.record_id)
    chain = [record.record_id for record in store.history(project, world.current.record_id)]
    assert chain == [world.superseded.record_id, world.current.record_id]


def test_find_by_key_ignores_other_projects_and_superseded_records(
    store: Store, project: Project, other_project: Project
) -> None:
    store.add(other_project, NewRecord(type="profile", title="Language", body="Go", key="language"))
    assert store.find_by_key(project, "profile", "language") is None
    old = store.add(project, NewRecord(type="profile", title="Language", body="Python 3.10", key="language"))
    _, new = store.supersede(project, old.record_id, body="Python 3.11")
    found = store.find_by_key(project, "profile", "language")
    assert found is not None and found.record_id == new.record_id


def test_a_broken_index_does_not_make_reads_by_id_fail(store: Store, project: Project, world: World) -> None:
    _break_fts(store)
    assert store.get(project, world.current.record_id).title == world.current.title
    with pytest.raises(sqlite3.Error):
        store.conn.execute("SELECT * FROM records_fts WHERE records_fts MATCH 'kestrel'").fetchall()
