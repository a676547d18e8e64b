"""Issue 13, item 10: HEAD is answered like GET without a body (it was a 405), and never writes;
records written through the dashboard are redacted like every other write."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi.testclient import TestClient

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import Seeded

    Snapshot = Callable[[], list[tuple[object, ...]]]


def test_head_answers_as_get_without_a_body(client: TestClient, seeded: Seeded, store_snapshot: Snapshot) -> None:
    before = store_snapshot()
    for path in ("/", "/api/projects", "/api/records", f"/api/records/{seeded.decision}", "/static/app.js"):
        got = client.get(path)
        head = client.head(path)
        assert head.status_code == 200 == got.status_code, path
        assert head.content == b"", path
        assert head.headers["content-length"] == str(len(got.content)), path
        assert head.headers["content-security-policy"] == got.headers["content-security-policy"]
    assert client.head("/api/no-such-thing").status_code == 404
    assert store_snapshot() == before


def test_head_goes_through_the_guard(client: TestClient) -> None:
    assert client.head("/api/projects", headers={"Host": "evil.example"}).status_code == 403
    assert client.head("/", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403


def test_a_record_written_from_the_page_is_redacted(client: TestClient, seeded: Seeded) -> None:
    page = client.get("/").text
    token = page.split('name="agentctx-token" content="', 1)[1].split('"', 1)[0]
    body = "deploy key ghp_YO4EHljlgbQ7vIHbcr8kruOONywonsJouuey and password=hunter2"
    created = client.post(
        "/api/records", json={"type": "decision", "title": "Deploy", "body": body}, headers={"X-Agentctx-Token": token}
    )
    assert created.status_code in (200, 201), created.text
    stored = client.get(f"/api/records/{created.json()['id']}").json()["body"]
    assert "ghp_YO4E" not in stored and "hunter2" not in stored and "[REDACTED:" in stored
