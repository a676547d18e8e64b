"""Reading and deciding re-verification proposals (`agentctx_store.stale.reverify`), what
`agentctx review` and the dashboard's Inbox share: `open_proposals` pairs each open proposal with
its record and leaves out those whose record is gone; `open_proposal` finds one only in its project."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agentctx_store import Project, Record, RecordNotFound, Store
from agentctx_store.freshness import anchor_record
from agentctx_store.stale import reverify
from agentctx_store.stale.reverify import Answer, Evidence

AddRecord = Callable[..., Record]  # the `add` fixture of conftest.py


def still_true(record: Record, evidence: Sequence[Evidence]) -> Answer:
    return Answer(verdict="still_true", reason=f"{record.title}: only a comment changed.")


def stale_records(store: Store, project: Project, add: AddRecord, titles: list[str]) -> list[str]:
    root = Path(project.root)
    root.mkdir(exist_ok=True)
    ids = []
    for index, title in enumerate(titles):
        (root / f"f{index}.py").write_text(f"def f{index}():\n    return {index}\n", encoding="utf-8")
        record = add(title, in_project=project)
        anchor_record(store, project, record.record_id, [f"f{index}.py:f{index}"])
        (root / f"f{index}.py").write_text(f"def f{index}():\n    return {index}  # same\n", encoding="utf-8")
        ids.append(record.record_id)
    return ids


def test_open_proposals_pair_records_and_skip_decided_gone_and_foreign_ones(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    kept, rejected, deleted = stale_records(store, project, add, ["Kept", "Rejected", "Deleted"])
    (foreign,) = stale_records(store, other_project, add, ["Beta"])
    for target in (project, other_project):
        assert reverify.reverify(store, target, still_true).proposed == len(reverify.proposals(store, target))
    by_record = {p.record_id: p.proposal_id for t in (project, other_project) for p in reverify.proposals(store, t)}
    assert len(by_record) == 4

    dismissed = reverify.reject(store, project, by_record[rejected])
    assert (dismissed.proposal_id, dismissed.status) == (by_record[rejected], "rejected")
    store.delete(project, deleted)

    found = reverify.open_proposals(store, project)
    assert [(p.proposal_id, r.record_id, r.title) for p, r in found] == [(by_record[kept], kept, "Kept")]
    assert reverify.open_proposal(store, project, by_record[kept]).reason == "Kept: only a comment changed."
    for missing in (by_record[rejected], by_record[foreign], 10_000):
        with pytest.raises(RecordNotFound, match="No open proposal"):
            reverify.open_proposal(store, project, missing)
    assert [r.record_id for _, r in reverify.open_proposals(store, other_project)] == [foreign]
