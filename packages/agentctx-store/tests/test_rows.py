"""The visibility rule (`rows.visible_namespaces`) and the store's read by ids that applies it
(`Store.current_records`, which the hybrid search and the warm service's callers use)."""

from __future__ import annotations

import pytest

from agentctx_store import GLOBAL_PROJECT_ID, NewRecord, Project, Store, ValidationError, search
from agentctx_store.rows import visible_namespaces


def test_each_scope_names_its_namespaces(project: Project) -> None:
    assert visible_namespaces(project) == (project.project_id, GLOBAL_PROJECT_ID)
    assert visible_namespaces(project, "project") == (project.project_id,)
    assert visible_namespaces(project, "global") == (GLOBAL_PROJECT_ID,)


@pytest.mark.parametrize("scope", ["team", "globl", "", "all"])
def test_an_unknown_scope_is_refused_on_every_read_instead_of_read_as_no_scope(
    store: Store, project: Project, scope: str
) -> None:
    store.add(project, NewRecord(type="decision", title="Use Redis", body="Sessions live in Redis."))
    with pytest.raises(ValidationError, match="Invalid scope"):
        visible_namespaces(project, scope)
    with pytest.raises(ValidationError, match="Invalid scope"):
        search(store, project, "redis sessions", scope=scope)
    with pytest.raises(ValidationError, match="Invalid scope"):
        store.list_records(project, scope=scope)
    with pytest.raises(ValidationError, match="Invalid scope"):
        store.current_records(project, [], scope=scope)


def test_current_records_shows_only_current_visible_records_of_the_wanted_types(
    store: Store, project: Project, other_project: Project
) -> None:
    def add(owner: Project, title: str, *, type: str = "decision", scope: str = "project") -> str:
        return store.add(owner, NewRecord(type=type, title=title, body=title, scope=scope)).record_id

    own = add(project, "Ours")
    old = add(project, "Ours, before")
    newer = store.supersede(project, old, body="Ours, now")[1].record_id
    shared = add(project, "Everyone's", scope="global")
    convention = add(project, "A convention", type="convention")
    foreign = add(other_project, "Theirs")
    everything = [own, old, newer, shared, convention, foreign, "01NOPE"]

    assert set(store.current_records(project, everything)) == {own, newer, shared, convention}
    assert set(store.current_records(project, everything, scope="project")) == {own, newer, convention}
    assert set(store.current_records(project, everything, scope="global")) == {shared}
    assert set(store.current_records(project, everything, types=["decision"])) == {own, newer, shared}
    assert set(store.current_records(other_project, everything)) == {foreign, shared}
    assert store.current_records(project, everything)[own].title == "Ours"


def test_current_records_reads_more_ids_than_one_statement_may_bind(store: Store, project: Project) -> None:
    wanted = [store.add(project, NewRecord(type="decision", title=f"R{n}", body="b")).record_id for n in range(3)]
    padding = [f"01MISSING{n:017d}" for n in range(1000)]
    assert set(store.current_records(project, [*padding, *wanted])) == set(wanted)
