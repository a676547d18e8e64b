"""The record list says when it does not show everything (issue 10, item 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentctx_store import NewRecord, Store

if TYPE_CHECKING:
    from conftest import Seeded
    from fastapi.testclient import TestClient


def add_decisions(seeded: Seeded, count: int) -> None:
    with Store.open() as store, store.transaction():
        for index in range(count):
            store.add(seeded.project, NewRecord(type="decision", title=f"Decision number {index}", body="b"))


def test_a_list_longer_than_the_page_says_how_many_match(client: TestClient, seeded: Seeded) -> None:
    add_decisions(seeded, 98)  # the seeded project sees 4 current records: 102 in all
    page = client.get("/api/records").json()
    assert page["count"] == 100 and page["total"] == 102 and page["more"] is True
    everything = client.get("/api/records", params={"limit": 200}).json()
    assert everything["count"] == 102 and everything["more"] is False
    assert len({record["id"] for record in everything["records"]}) == 102


def test_a_search_longer_than_the_page_says_more_exist(client: TestClient, seeded: Seeded) -> None:
    add_decisions(seeded, 30)
    page = client.get("/api/records", params={"q": "decision number", "limit": 10}).json()
    assert page["count"] == 10 and page["more"] is True
    page = client.get("/api/records", params={"q": "decision number", "limit": 50}).json()
    assert page["count"] == 30 and page["more"] is False
