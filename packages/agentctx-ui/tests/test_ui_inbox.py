"""The Inbox API (issue 14): `agentctx_store.review` behind `/api/inbox`, writes behind the token;
and the Sessions API's extraction figures."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentctx_store import NewRecord, Project, Record, Store
from agentctx_store.upkeep import config
from fastapi.testclient import TestClient

if TYPE_CHECKING:
    from conftest import Seeded

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
    }
    assert data["month_extraction_cost_usd"] == 0.0042 and data["monthly_cap_usd"] == 3.0
