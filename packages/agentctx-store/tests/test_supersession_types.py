"""A fact may change type when it is superseded (issue 10, item 1): the chain is followed by
history, `as_of`, search, the graph and the digest like any other; keyed types keep their rule."""

from __future__ import annotations

import pytest

from agentctx_store import NewRecord, Project, Store, digest, search
from agentctx_store.errors import ValidationError
from agentctx_store.graph_view import record_graph
from agentctx_store.sharing import transfer

SWITCH = (
    '{"id": "old", "type": "convention", "title": "Run tests with VSTest", '
    '"body": "Filter tests with VSTest --filter.", "valid_from": "2026-01-10"}\n'
    '{"id": "new", "type": "decision", "title": "Run tests on MTP", '
    '"body": "We now run tests on MTP; never use VSTest --filter.", "valid_from": "2026-03-01", "supersedes": ["old"]}\n'
)


def imported(store: Store, project: Project) -> tuple[str, str]:
    report = transfer.import_items(store, project, transfer.parse_jsonl(SWITCH))
    old, new = report.created
    return old, new


def test_a_decision_superseding_a_convention_is_a_chain_everywhere(store: Store, project: Project) -> None:
    old, new = imported(store, project)
    assert [record.record_id for record in store.history(project, new)] == [old, new]
    assert store.get(project, old, include_superseded=True).superseded_by == new
    assert [record.record_id for record in store.as_of(project, "2026-02-01")] == [old]
    assert [record.record_id for record in store.as_of(project, "2026-03-02")] == [new]
    hits = search(store, project, "VSTest filter tests", floor=None).hits
    assert [hit.record.record_id for hit in hits] == [new]  # the superseded convention never comes back
    graph = record_graph(store, project)  # decisions by default: the convention it replaced is drawn too
    assert {record.record_id for record in graph.records} == {old, new}
    assert graph.supersessions == [(new, old)]
    digest.refresh_changed(store)
    store.close()
    text, _ = digest.read(project.project_id) or ("", None)
    assert "Run tests on MTP" in text and "Run tests with VSTest" not in text


def test_keyed_types_keep_their_rule(store: Store, project: Project) -> None:
    handover = store.add(project, NewRecord(type="handover", title="Where we stopped", body="Mid-migration."))
    with pytest.raises(ValidationError, match="handover is superseded only by a handover"):
        store.add(project, NewRecord(type="decision", title="t", body="b"), supersedes=handover.record_id)
    decision = store.add(project, NewRecord(type="decision", title="Use Redis", body="Cache in Redis."))
    with pytest.raises(ValidationError, match="handover"):
        store.add(project, NewRecord(type="handover", title="t", body="b"), supersedes=decision.record_id)
    profile = store.add(project, NewRecord(type="profile", title="Stack", body="Python", key="stack"))
    with pytest.raises(ValidationError, match="same key"):
        store.add(project, NewRecord(type="profile", title="OS", body="Linux", key="os"), supersedes=profile.record_id)
    assert store.get(project, handover.record_id).is_current and store.get(project, profile.record_id).is_current
    _, newer = store.supersede(project, decision.record_id, body="Cache in memory.", record_type="convention")
    assert newer.type == "convention"
    _, same = store.supersede(project, newer.record_id, body="Cache in process memory.")
    assert same.type == "convention"  # without a type, supersede keeps the old one


def test_import_with_new_ids_copies_another_projects_export(
    store: Store, project: Project, other_project: Project
) -> None:
    old, new = imported(store, project)
    text = transfer.render_markdown(store, project, include_history=True)
    with pytest.raises(ValidationError, match="--new-ids"):
        transfer.import_items(store, other_project, transfer.parse_file_text(text))
    report = transfer.import_items(store, other_project, transfer.parse_file_text(text), new_ids=True)
    assert len(report.created) == 2 and {old, new}.isdisjoint(report.created)
    heads = store.list_records(other_project)
    assert [record.title for record in heads] == ["Run tests on MTP"]
    assert [record.type for record in store.history(other_project, heads[0].record_id)] == ["convention", "decision"]
    assert store.get(project, new).is_current  # the source project is untouched
    again = transfer.import_items(store, other_project, transfer.parse_file_text(text), new_ids=True)
    assert again.created == []  # importing the same export again adds nothing


def test_a_jsonl_name_is_read_as_jsonl() -> None:
    with pytest.raises(ValidationError, match="^Line 1: not valid JSON"):
        transfer.parse_file_text("not json\n", name="records.jsonl")
    assert transfer.parse_file_text("not json\n", name="notes.md") == []
