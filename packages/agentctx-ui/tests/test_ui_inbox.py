"""The Inbox API (issue 14): `agentctx_store.review` behind `/api/inbox`, writes behind the token;
the re-verification proposals behind `/api/inbox/proposals`; and the Sessions API's extraction figures."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from agentctx_store import NewRecord, Project, Record, RecordNotFound, Store, config
from agentctx_store.anchors import anchors_of
from agentctx_store.stale import reverify, scan
from fastapi.testclient import TestClient

if TYPE_CHECKING:
    from conftest import Proposed, Seeded

WRITE = {"X-Agentctx-Token": "test-token-0123456789"}  # the token conftest gives the app


def extracted(project: Project, title: str, **fields: object) -> Record:
    time.sleep(0.003)  # newest first is by recording time: no two in the same millisecond
    with Store.open() as store:
        return store.add(
            project,
            NewRecord(
                type=str(fields.pop("type", "decision")),
                title=title,
                body=f"{title}, from a session.",
                confidence="inferred",
                source="llm_extraction",
                session_id="s1",
            ),
        )


def test_the_inbox_lists_this_projects_unconfirmed_extraction_newest_first(client: TestClient, seeded: Seeded) -> None:
    older = extracted(seeded.project, "Queue jobs in Postgres")
    newer = extracted(seeded.project, "Deploy on Fridays never")
    extracted(seeded.other, "Beta uses Kafka")
    extracted(seeded.project, "Handover: the queue", type="handover")
    listed = client.get("/api/inbox").json()
    assert [record["id"] for record in listed["records"]] == [newer.record_id, older.record_id]
    everything = client.get("/api/inbox", params={"all": "true"}).json()["records"]
    assert seeded.linked in {record["id"] for record in everything}  # inferred, but written by hand (source cli)


def test_accept_edit_and_reject_need_the_token_and_change_the_store(
    client: TestClient, seeded: Seeded, store_snapshot: Callable[[], list[tuple[object, ...]]]
) -> None:
    first = extracted(seeded.project, "Queue jobs in Postgres")
    second = extracted(seeded.project, "Deploy on Fridays never")
    before = store_snapshot()
    assert client.post(f"/api/inbox/{first.record_id}/accept").status_code == 403
    assert (
        client.post(f"/api/inbox/{second.record_id}/reject", headers={"X-Agentctx-Token": "wrong"}).status_code == 403
    )
    assert store_snapshot() == before

    accepted = client.post(
        f"/api/inbox/{first.record_id}/accept", headers=WRITE, json={"title": "Queue jobs in Postgres 16"}
    )
    assert accepted.status_code == 200, accepted.text
    assert (accepted.json()["title"], accepted.json()["confidence"]) == ("Queue jobs in Postgres 16", "explicit")
    assert client.post(f"/api/inbox/{second.record_id}/reject", headers=WRITE).json()["id"] == second.record_id
    with Store.open() as store:
        assert store.get(seeded.project, first.record_id).confidence == "explicit"
        assert second.record_id not in {
            r.record_id for r in store.list_records(seeded.project, include_superseded=True)
        }
    assert client.get("/api/inbox").json()["records"] == []
    assert client.post(f"/api/inbox/{second.record_id}/accept", headers=WRITE).status_code == 404
    foreign = extracted(seeded.other, "Beta uses Kafka")
    assert client.post(f"/api/inbox/{foreign.record_id}/reject", headers=WRITE).status_code == 404


def test_sessions_carry_their_extraction_runs_and_the_months_spend(client: TestClient, seeded: Seeded) -> None:
    config.save({"monthly_cap_usd": "3"})
    with Store.open() as store:
        store.update_session_meta(
            seeded.project,
            "sess-alpha-1",
            branch="main",
            extraction={
                "calls": 1,
                "input_tokens": 9000,
                "cache_read_tokens": 0,
                "output_tokens": 420,
                "runs_log": [{"trigger": "end"}],
            },
        )
    data = client.get("/api/sessions").json()
    (session,) = data["sessions"]
    assert session["extraction"] == {
        "runs": 1,
        "calls": 1,
        "input_tokens": 9000,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 420,
        "cost_usd": 0.0042,
        "last_trigger": "end",
        "client_tokens": 0,
        "backend": "api",
    }
    assert data["month_extraction_cost_usd"] == 0.0042 and data["monthly_cap_usd"] == 3.0
    assert data["month_client_tokens"] == 0 and data["llm_monthly_tokens"] == 5_000_000


def test_sessions_extracted_through_a_coding_agent_show_tokens(client: TestClient, seeded: Seeded) -> None:
    """Issue 32: a run through a client's headless mode has no price; its tokens are shown, per
    session and against this month's `llm_monthly_tokens`."""
    with Store.open() as store:
        store.update_session_meta(
            seeded.project,
            "sess-alpha-1",
            extraction={
                "calls": 1,
                "input_tokens": 1200,
                "output_tokens": 80,
                "client_tokens": 1280,
                "runs_log": [{"trigger": "end", "backend": "claude"}],
            },
        )
    data = client.get("/api/sessions").json()
    (session,) = data["sessions"]
    assert session["extraction"]["backend"] == "claude" and session["extraction"]["client_tokens"] == 1280
    assert data["month_client_tokens"] == 1280


# -- re-verification proposals (`agentctx_store.stale.reverify`) --------------------------


def test_proposals_list_this_projects_open_ones_oldest_first_with_their_records(
    client: TestClient, seeded: Seeded, proposed: Proposed
) -> None:
    data = client.get("/api/inbox/proposals").json()
    assert data["count"] == 3
    assert [(p["id"], p["record"]["id"]) for p in data["proposals"]] == [
        proposed.update,
        proposed.no_longer_true,
        proposed.still_true,
    ]
    update, gone, still = data["proposals"]
    assert (update["verdict"], update["title"], update["body"]) == (
        "update",
        "Retries: five attempts",
        "retry() calls five times.",
    )
    assert update["reason"] == "range(3) became range(5)." and update["status"] == "open"
    assert update["record"]["title"] == "Retries: three attempts" and update["record"]["type"] == "convention"
    assert update["record"]["body"] == "retry() calls three times."
    assert (gone["verdict"], gone["title"], gone["body"]) == ("no_longer_true", None, None)
    assert (still["verdict"], still["reason"]) == ("still_true", "Only a comment was added.")
    foreign_id, foreign_record = proposed.foreign
    assert foreign_id not in {p["id"] for p in data["proposals"]}
    assert foreign_record not in {p["record"]["id"] for p in data["proposals"]}
    beta = client.get("/api/inbox/proposals", params={"project": seeded.other.project_id}).json()
    assert [(p["id"], p["record"]["id"]) for p in beta["proposals"]] == [proposed.foreign]


def test_accepting_each_verdict_does_what_it_says_in_the_store(
    client: TestClient, seeded: Seeded, proposed: Proposed
) -> None:
    update_id, retry = proposed.update
    accepted = client.post(f"/api/inbox/proposals/{update_id}/accept", headers=WRITE)
    assert accepted.status_code == 200, accepted.text
    body = accepted.json()
    assert (body["outcome"], body["proposal"]["status"], body["proposal"]["record"]["id"]) == (
        "superseded",
        "accepted",
        retry,
    )
    new = body["record"]
    assert new["id"] != retry and new["title"] == "Retries: five attempts"
    assert new["body"].startswith("retry() calls five times.")

    still_id, timeout = proposed.still_true
    confirmed = client.post(f"/api/inbox/proposals/{still_id}/accept", headers=WRITE).json()
    assert (confirmed["outcome"], confirmed["record"]["id"]) == ("confirmed", timeout)

    gone_id, queue = proposed.no_longer_true
    deleted = client.post(f"/api/inbox/proposals/{gone_id}/accept", headers=WRITE).json()
    assert (deleted["outcome"], deleted["record"]) == ("deleted", None)

    with Store.open() as store:
        old = store.get(seeded.project, retry, include_superseded=True)
        assert old.superseded_by == new["id"]
        assert [a.symbol for a in anchors_of(store, seeded.project, new["id"])] == ["retry"]  # anchored where it was
        assert store.get(seeded.project, timeout).superseded_at is None
        with pytest.raises(RecordNotFound):
            store.get(seeded.project, queue, include_superseded=True)
        stale = {item.record.record_id for item in scan(store, seeded.project)}
        assert timeout not in stale and new["id"] not in stale  # re-hashed; the new record anchored as the file is
        assert {p.status for p in reverify.proposals(store, seeded.project, status=None)} == {"accepted"}
        assert [p.status for p in reverify.proposals(store, seeded.other, status=None)] == ["open"]
    assert client.get("/api/inbox/proposals").json() == {"proposals": [], "count": 0}
    again = client.post(f"/api/inbox/proposals/{update_id}/accept", headers=WRITE)
    assert again.status_code == 404 and "No open proposal" in again.json()["error"]


def test_rejecting_changes_nothing_but_the_proposal(
    client: TestClient,
    seeded: Seeded,
    proposed: Proposed,
    store_snapshot: Callable[[], list[tuple[object, ...]]],
) -> None:
    update_id, retry = proposed.update
    before = store_snapshot()
    rejected = client.post(f"/api/inbox/proposals/{update_id}/reject", headers=WRITE)
    assert rejected.status_code == 200, rejected.text
    assert (rejected.json()["id"], rejected.json()["status"], rejected.json()["record"]["id"]) == (
        update_id,
        "rejected",
        retry,
    )
    after = store_snapshot()
    assert [row for row in before if row[0] != "freshness_proposals"] == [
        row for row in after if row[0] != "freshness_proposals"
    ]
    assert before != after
    with Store.open() as store:
        assert store.get(seeded.project, retry).title == "Retries: three attempts"
        assert [p.proposal_id for p in reverify.proposals(store, seeded.project, status="rejected")] == [update_id]
        assert retry in {item.record.record_id for item in scan(store, seeded.project)}  # still marked stale
    listed = client.get("/api/inbox/proposals").json()["proposals"]
    assert [p["id"] for p in listed] == [proposed.no_longer_true[0], proposed.still_true[0]]


def test_proposal_writes_need_the_token_and_stay_in_their_project(
    client: TestClient,
    seeded: Seeded,
    proposed: Proposed,
    store_snapshot: Callable[[], list[tuple[object, ...]]],
) -> None:
    gone_id, _ = proposed.no_longer_true
    before = store_snapshot()
    assert client.post(f"/api/inbox/proposals/{gone_id}/accept").status_code == 403
    assert client.post(f"/api/inbox/proposals/{gone_id}/reject").status_code == 403
    wrong = {"X-Agentctx-Token": "wrong"}
    assert client.post(f"/api/inbox/proposals/{gone_id}/accept", headers=wrong).status_code == 403
    foreign_id, _ = proposed.foreign
    for action in ("accept", "reject"):
        refused = client.post(f"/api/inbox/proposals/{foreign_id}/{action}", headers=WRITE)
        assert refused.status_code == 404 and refused.json()["error"].startswith("No open proposal")
        assert client.post(f"/api/inbox/proposals/{9999}/{action}", headers=WRITE).status_code == 404
        for bad in ("abc", "0", "-1", "1.5"):
            invalid = client.post(f"/api/inbox/proposals/{bad}/{action}", headers=WRITE)
            assert invalid.status_code == 422 and invalid.json()["error"].startswith("Invalid request")
    assert store_snapshot() == before


def two_heads(project: Project) -> tuple[Record, Record, Record]:
    """A record superseded twice at once, as two machines on a remote leave it (docs/remote.md)."""
    with Store.open() as store:
        old = store.add(project, NewRecord(type="decision", title="Cache layer", body="We cache in memory."))
        _, first = store.supersede(project, old.record_id, body="We cache in Redis.")
        second = store.add(project, NewRecord(type="decision", title="Cache layer", body="We cache in Memcached."))
        store.add_edge(second.record_id, old.record_id, "supersedes")
        return old, first, second


def test_two_heads_are_listed_and_keeping_one_supersedes_the_other(client: TestClient, seeded: Seeded) -> None:
    old, first, second = two_heads(seeded.project)
    listed = client.get("/api/inbox/heads").json()
    assert listed["count"] == 1
    assert listed["conflicts"][0]["record"]["id"] == old.record_id
    assert {head["id"] for head in listed["conflicts"][0]["heads"]} == {first.record_id, second.record_id}
    assert client.get("/api/inbox/heads", params={"project": seeded.other.project_id}).json()["count"] == 0

    assert client.post(f"/api/inbox/heads/{second.record_id}/keep").status_code == 403  # a write: the token
    kept = client.post(f"/api/inbox/heads/{second.record_id}/keep", headers=WRITE).json()
    assert kept["kept"]["id"] == second.record_id and kept["retired"] == [first.record_id]
    assert client.get("/api/inbox/heads").json()["count"] == 0
    with Store.open() as store:
        assert store.get(seeded.project, first.record_id).superseded_by == second.record_id
    assert client.post(f"/api/inbox/heads/{old.record_id}/keep", headers=WRITE).status_code == 422  # not a head
