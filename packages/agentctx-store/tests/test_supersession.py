"""Supersession (docs/contracts.md#supersession): atomic, only from the head, chains walkable,
history and as_of."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from agentctx_store import NewRecord, NotHeadError, Project, Record, RecordNotFound, Store, ValidationError

AddRecord = Callable[..., Record]  # the `add` fixture of conftest.py


def _later(days: int) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat()


def test_superseding_retires_the_old_record_and_links_the_new_one(
    store: Store, project: Project, add: AddRecord
) -> None:
    old = add("Email via Notify", "We send email through GOV.UK Notify.")
    retired, new = store.supersede(project, old.record_id, body="We send email through Amazon SES.", rationale="cost")
    assert retired.superseded_by == new.record_id and retired.superseded_at is not None
    assert new.is_current and new.title == old.title and new.type == old.type
    assert new.body.endswith("Why: cost")
    edge = store.conn.execute(
        "SELECT count(*) FROM edges WHERE from_id = ? AND to_id = ? AND rel_type = 'supersedes'",
        (new.record_id, old.record_id),
    ).fetchone()[0]
    assert edge == 1
    assert [record.record_id for record in store.list_records(project)] == [new.record_id]


def test_superseding_a_record_that_is_not_the_head_names_the_head(
    store: Store, project: Project, add: AddRecord
) -> None:
    first = add("Deploy with Heroku")
    _, second = store.supersede(project, first.record_id, body="Deploy with Fly.")
    _, third = store.supersede(project, second.record_id, body="Deploy with Kubernetes.")
    with pytest.raises(NotHeadError) as caught:
        store.supersede(project, first.record_id, body="Deploy with Nomad.")
    assert caught.value.head_id == third.record_id
    assert third.record_id in str(caught.value)
    assert store.conn.execute("SELECT count(*) FROM records").fetchone()[0] == 3


def test_a_failed_supersession_changes_nothing(store: Store, project: Project, add: AddRecord) -> None:
    old = add("Use Postgres")
    with pytest.raises(ValidationError):
        store.supersede(project, old.record_id, body="x" * 5000)
    with pytest.raises(ValidationError, match="handover is superseded only by a handover"):
        store.add(project, NewRecord(type="handover", title="t", body="b"), supersedes=old.record_id)
    assert store.get(project, old.record_id).is_current
    assert store.conn.execute("SELECT count(*) FROM records").fetchone()[0] == 1
    assert store.conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 0


def test_a_record_of_another_project_cannot_be_superseded(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    theirs = add("Their decision", in_project=other_project)
    with pytest.raises(RecordNotFound):
        store.supersede(project, theirs.record_id, body="Hijacked.")
    assert store.get(other_project, theirs.record_id).is_current


def test_history_walks_the_whole_chain_from_any_member(store: Store, project: Project, add: AddRecord) -> None:
    first = add("Cache in memory")
    _, second = store.supersede(project, first.record_id, body="Cache in Redis.")
    _, third = store.supersede(project, second.record_id, body="Cache in Valkey.")
    expected = [first.record_id, second.record_id, third.record_id]
    for member in expected:
        assert [record.record_id for record in store.history(project, member)] == expected
    assert store.head_of(project, first.record_id).record_id == third.record_id  # type: ignore[union-attr]


def test_as_of_answers_what_was_true_then(store: Store, project: Project, other_project: Project) -> None:
    old = store.add(
        project, NewRecord(type="decision", title="Node 18", body="Run on Node 18.", valid_from="2020-01-01")
    )
    store.add(other_project, NewRecord(type="decision", title="Other", body="Not ours.", valid_from="2019-01-01"))
    _, new = store.supersede(project, old.record_id, body="Run on Node 22.")
    assert store.as_of(project, "2019-06-01") == []
    assert [record.record_id for record in store.as_of(project, "2021-01-01")] == [old.record_id]
    assert [record.record_id for record in store.as_of(project, _later(1))] == [new.record_id]
    assert [record.title for record in store.as_of(project, "2021-01-01", types=["convention"])] == []


def test_add_with_supersedes_is_the_same_operation(store: Store, project: Project, add: AddRecord) -> None:
    old = add("Use yarn")
    new = store.add(project, NewRecord(type="decision", title="Use pnpm", body="pnpm."), supersedes=old.record_id)
    assert store.get(project, old.record_id).superseded_by == new.record_id
    with pytest.raises(NotHeadError):
        store.add(project, NewRecord(type="decision", title="Use npm", body="npm."), supersedes=old.record_id)
