"""The JSON API against a real seeded store: every endpoint, its errors, and project scoping."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from agentctx_store import Store, global_project
from fastapi.testclient import TestClient

if TYPE_CHECKING:
    from conftest import Seeded

WRITE = {"X-Agentctx-Token": "test-token-0123456789"}  # the token conftest gives the app


def ids(payload: dict[str, Any]) -> list[str]:
    return [record["id"] for record in payload["records"]]


def test_meta_lists_the_choices_and_the_default_project(client: TestClient, seeded: Seeded) -> None:
    meta = client.get("/api/meta").json()
    assert meta["default_project"] == seeded.project.project_id
    assert "decision" in meta["types"] and meta["scopes"] == ["project", "global"]


def test_projects_lists_each_project_with_counts(client: TestClient, seeded: Seeded) -> None:
    data = client.get("/api/projects").json()
    by_id = {project["project_id"]: project for project in data["projects"]}
    assert data["projects"][0]["project_id"] == seeded.project.project_id  # the default leads
    alpha = by_id["p-alpha"]
    assert alpha["is_default"] and alpha["name"] == "alpha"
    # current records only: the superseded MySQL decision is not counted; the global preference is
    assert alpha["counts"] == {"convention": 1, "decision": 1, "discovery": 1, "preference": 1}
    assert by_id["p-beta"]["counts"] == {"decision": 1, "preference": 1}
    assert alpha["last_activity"]


def test_search_uses_the_store_search_and_hides_superseded_and_foreign(client: TestClient, seeded: Seeded) -> None:
    found = client.get("/api/records", params={"q": "storage"}).json()
    assert ids(found) == [seeded.decision]
    assert found["query_terms"] == ["storage"] and found["records"][0]["rank"] > 0
    postgres = ids(client.get("/api/records", params={"q": "postgres"}).json())
    assert seeded.foreign not in postgres  # beta's record never shows in alpha
    assert seeded.old_decision not in postgres


def test_search_with_history_shows_the_superseded_record(client: TestClient, seeded: Seeded) -> None:
    found = ids(client.get("/api/records", params={"q": "storage", "superseded": "include"}).json())
    assert set(found) == {seeded.decision, seeded.old_decision}
    only = ids(client.get("/api/records", params={"q": "storage", "superseded": "only"}).json())
    assert only == [seeded.old_decision]


def test_list_filters_by_type_scope_confidence_and_superseded(client: TestClient, seeded: Seeded) -> None:
    everything = ids(client.get("/api/records").json())
    assert set(everything) == {seeded.decision, seeded.convention, seeded.linked, seeded.preference}
    assert ids(client.get("/api/records", params={"type": "convention"}).json()) == [seeded.convention]
    assert ids(client.get("/api/records", params={"scope": "global"}).json()) == [seeded.preference]
    assert seeded.preference not in ids(client.get("/api/records", params={"scope": "project"}).json())
    assert ids(client.get("/api/records", params={"confidence": "inferred"}).json()) == [seeded.linked]
    assert ids(client.get("/api/records", params={"superseded": "only"}).json()) == [seeded.old_decision]
    both = ids(client.get("/api/records", params=[("type", "decision"), ("type", "convention")]).json())
    assert set(both) == {seeded.decision, seeded.convention}


def test_records_of_another_project_are_chosen_by_project_id(client: TestClient, seeded: Seeded) -> None:
    beta = ids(client.get("/api/records", params={"project": "p-beta"}).json())
    assert set(beta) == {seeded.foreign, seeded.preference}
    assert client.get(f"/api/records/{seeded.foreign}").status_code == 404  # not visible from alpha
    assert client.get(f"/api/records/{seeded.foreign}", params={"project": "p-beta"}).status_code == 200


def test_unknown_project_is_a_404_with_a_message(client: TestClient) -> None:
    response = client.get("/api/records", params={"project": "nope"})
    assert response.status_code == 404
    assert "GET /api/projects" in response.json()["error"]


def test_read_one_record_and_a_missing_one(client: TestClient, seeded: Seeded) -> None:
    record = client.get(f"/api/records/{seeded.decision}").json()
    assert record["title"] == "Use Postgres for storage" and "Why: JSONB" in record["body"]
    missing = client.get("/api/records/01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert missing.status_code == 404 and "No record" in missing.json()["error"]


def test_reading_takes_a_unique_start_or_end_of_an_id(client: TestClient, seeded: Seeded) -> None:
    assert client.get(f"/api/records/{seeded.decision[-8:].lower()}").json()["id"] == seeded.decision
    chain = client.get(f"/api/records/{seeded.decision[-8:]}/history").json()
    assert [record["id"] for record in chain["records"]] == [seeded.old_decision, seeded.decision]
    assert client.get(f"/api/records/{seeded.foreign[-8:]}").status_code == 404  # another project's stays hidden
    detail = client.get(f"/api/records/{seeded.decision}").json()
    assert detail["anchors"] == []  # not tied to a file: said, not left out


def test_history_returns_the_chain_oldest_first(client: TestClient, seeded: Seeded) -> None:
    chain = client.get(f"/api/records/{seeded.old_decision}/history").json()
    assert [record["id"] for record in chain["records"]] == [seeded.old_decision, seeded.decision]
    assert chain["head_id"] == seeded.decision


def test_create_records_and_reads_it_back(client: TestClient, seeded: Seeded) -> None:
    response = client.post(
        "/api/records",
        json={"type": "decision", "title": "Deploy with Docker", "body": "Images built in CI."},
        headers=WRITE,
    )
    assert response.status_code == 201
    created = response.json()
    assert created["project_id"] == "p-alpha" and created["confidence"] == "explicit"
    assert seeded.foreign not in ids(client.get("/api/records", params={"q": "docker"}).json())
    assert ids(client.get("/api/records", params={"q": "docker"}).json()) == [created["id"]]


def test_create_keeps_every_field_of_the_payload(client: TestClient) -> None:
    payload = {"type": "preference", "title": "Tabs", "body": "Tabs, not spaces.", "scope": "global"}
    payload |= {"confidence": "inferred", "pinned": True, "valid_from": "2024-01-02T00:00:00.000Z"}
    created = client.post("/api/records", json=payload, headers=WRITE).json()
    assert {name: created[name] for name in payload} == payload
    assert created["source"] == "cli"


def test_create_with_supersedes_retires_the_old_record(client: TestClient, seeded: Seeded) -> None:
    response = client.post(
        "/api/records",
        json={"type": "decision", "title": "Use SQLite", "body": "One file.", "supersedes": seeded.decision},
        headers=WRITE,
    )
    assert response.status_code == 201
    assert client.get(f"/api/records/{seeded.decision}").json()["superseded_by"] == response.json()["id"]


def test_create_rejects_a_broken_record_with_422(client: TestClient) -> None:
    long_title = client.post("/api/records", json={"type": "decision", "title": "x" * 200, "body": "b"}, headers=WRITE)
    assert long_title.status_code == 422 and "limit is 120" in long_title.json()["error"]
    bad_type = client.post("/api/records", json={"type": "rumour", "title": "t", "body": "b"}, headers=WRITE)
    assert bad_type.status_code == 422 and bad_type.json()["error"].startswith("Invalid request")
    bad_date = client.post(
        "/api/records", json={"type": "decision", "title": "t", "body": "b", "valid_from": "yesterday"}, headers=WRITE
    )
    assert bad_date.status_code == 422 and "ISO 8601" in bad_date.json()["error"]


def test_patch_corrects_in_place_and_pins(client: TestClient, seeded: Seeded) -> None:
    response = client.patch(
        f"/api/records/{seeded.convention}", json={"title": "Tabs in every Makefile", "pinned": True}, headers=WRITE
    )
    assert response.status_code == 200
    record = response.json()
    assert record["title"] == "Tabs in every Makefile" and record["pinned"] is True
    assert record["id"] == seeded.convention and record["superseded_at"] is None  # a correction, not a new version
    unpinned = client.patch(f"/api/records/{seeded.convention}", json={"pinned": False}, headers=WRITE).json()
    assert unpinned["pinned"] is False


def test_patch_errors(client: TestClient, seeded: Seeded) -> None:
    assert client.patch(f"/api/records/{seeded.convention}", json={}, headers=WRITE).status_code == 422
    assert client.patch(f"/api/records/{seeded.convention}", json={"body": " "}, headers=WRITE).status_code == 422
    assert client.patch(f"/api/records/{seeded.foreign}", json={"title": "x"}, headers=WRITE).status_code == 404
    assert client.patch(f"/api/records/{seeded.convention}", json={"colour": "red"}, headers=WRITE).status_code == 422


def test_supersede_returns_both_and_refuses_a_superseded_record(client: TestClient, seeded: Seeded) -> None:
    response = client.post(
        f"/api/records/{seeded.decision}/supersede",
        json={"body": "SQLite in WAL mode.", "title": "Use SQLite", "rationale": "No server to run"},
        headers=WRITE,
    )
    assert response.status_code == 201
    result = response.json()
    assert result["old"]["superseded_by"] == result["new"]["id"]
    assert result["new"]["body"].endswith("Why: No server to run")
    again = client.post(f"/api/records/{seeded.decision}/supersede", json={"body": "again"}, headers=WRITE)
    assert again.status_code == 409
    assert again.json()["head_id"] == result["new"]["id"]


def test_delete_removes_the_record_and_restores_the_previous_head(client: TestClient, seeded: Seeded) -> None:
    response = client.delete(f"/api/records/{seeded.decision}", headers=WRITE)
    assert response.status_code == 200 and response.json()["id"] == seeded.decision
    assert client.get(f"/api/records/{seeded.decision}").status_code == 404
    assert client.get(f"/api/records/{seeded.old_decision}").json()["superseded_at"] is None
    assert client.delete(f"/api/records/{seeded.decision}", headers=WRITE).status_code == 404


def test_graph_has_the_chain_and_the_file_link(client: TestClient, seeded: Seeded) -> None:
    data = client.get("/api/graph", params=[("type", "decision")]).json()
    record_ids = {record["id"] for record in data["records"]}
    assert {seeded.old_decision, seeded.decision, seeded.linked} <= record_ids
    assert seeded.foreign not in record_ids
    assert data["supersedes"] == [{"from": seeded.decision, "to": seeded.old_decision}]
    assert [entity["name"] for entity in data["entities"]] == ["src/parser.py"]
    assert data["links"] == [{"record": seeded.linked, "entity": data["entities"][0]["id"]}]
    current_only = client.get("/api/graph", params={"superseded": "false"}).json()
    assert seeded.old_decision not in {record["id"] for record in current_only["records"]}


def test_profile_lists_global_preferences_with_evidence(client: TestClient, seeded: Seeded) -> None:
    data = client.get("/api/profile").json()
    assert ids(data) == [seeded.preference]
    assert data["records"][0]["reinforce_count"] == 3 and data["records"][0]["confidence"] == "reinforced"
    removed = client.delete(f"/api/records/{seeded.preference}", params={"project": "_global"}, headers=WRITE)
    assert removed.status_code == 200
    assert client.get("/api/profile").json()["records"] == []


def test_sessions_show_tokens_and_cost_of_this_project_only(client: TestClient, seeded: Seeded) -> None:
    data = client.get("/api/sessions").json()
    assert [session["session_id"] for session in data["sessions"]] == ["sess-alpha-1"]
    assert data["sessions"][0]["tokens_injected"] == 120
    assert data["sessions"][0]["extraction_cost_usd"] == 0.0042
    assert data["total_tokens_injected"] == 120  # beta's 999 tokens are not counted
    assert client.get("/api/sessions", params={"project": "p-beta"}).json()["total_tokens_injected"] == 999


def test_sync_reports_drift_against_claude_md(client: TestClient, seeded: Seeded) -> None:
    data = client.get("/api/sync").json()
    assert data["available"] is True
    report = data["report"]
    assert [entry["id"] for entry in report["contradicted"]] == [seeded.old_decision]  # MySQL still written
    assert seeded.decision in {entry["id"] for entry in report["missing"]}
    assert "+++ b/CLAUDE.md" in report["proposed_diff"]


def test_writes_go_through_the_store_like_the_cli(client: TestClient, seeded: Seeded) -> None:
    """A write made in the dashboard is visible to any other store reader at once."""
    client.patch(f"/api/records/{seeded.convention}", json={"body": "Recipes use tabs, always."}, headers=WRITE)
    with Store.open() as store:
        assert store.get(seeded.project, seeded.convention).body == "Recipes use tabs, always."
        assert store.get(global_project(), seeded.preference).scope == "global"


def test_openapi_documents_the_api(client: TestClient) -> None:
    schema = client.get("/api/openapi.json").json()
    paths = schema["paths"]
    assert {"get", "post"} <= set(paths["/api/records"])
    assert {"get", "patch", "delete"} <= set(paths["/api/records/{record_id}"])
    assert "post" in paths["/api/records/{record_id}/supersede"]
    assert client.get("/docs").status_code == 404  # Swagger UI would load from a CDN: not served


def test_text_sqlite_cannot_store_is_a_422_not_a_crash(client: TestClient, seeded: Seeded) -> None:
    """JSON may carry a lone surrogate (`\\ud800`); UTF-8 (and so SQLite) cannot hold one."""
    raw = b'{"type": "decision", "title": "\\ud800 broken", "body": "b"}'
    response = client.post("/api/records", content=raw, headers={**WRITE, "Content-Type": "application/json"})
    assert response.status_code == 422 and "surrogate" in response.json()["error"]
    patch = b'{"body": "fine \\udfff"}'
    response = client.patch(
        f"/api/records/{seeded.convention}", content=patch, headers={**WRITE, "Content-Type": "application/json"}
    )
    assert response.status_code == 422


def test_every_refusal_has_the_same_error_shape(client: TestClient, seeded: Seeded) -> None:
    unreadable = client.patch(
        f"/api/records/{seeded.convention}",
        content=b"\xf9_\xa71#\xff",
        headers={**WRITE, "Content-Type": "application/json"},
    )
    assert unreadable.status_code in (400, 422) and unreadable.json()["error"]
    unknown = client.get("/api/nothing-here")
    assert unknown.status_code == 404 and "openapi.json" in unknown.json()["error"]
    wrong_method = client.put("/api/records", json={}, headers=WRITE)
    assert wrong_method.status_code == 405 and wrong_method.json() == {"error": "Method Not Allowed"}


def test_a_write_refreshes_the_session_digest_like_the_cli(client: TestClient, seeded: Seeded) -> None:
    from agentctx_store import paths

    digest = Path(paths.digest_path(seeded.project.project_id))
    digest.unlink(missing_ok=True)
    client.patch(f"/api/records/{seeded.decision}", json={"title": "Use Postgres 17 for storage"}, headers=WRITE)
    assert "Use Postgres 17 for storage" in digest.read_text(encoding="utf-8")


def test_a_store_locked_by_another_writer_is_a_503(
    client: TestClient, seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from agentctx_store import db, paths

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 100)  # wait 0.1 s for the lock instead of 10 s
    holder = sqlite3.connect(Path(paths.db_path()), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing
    try:
        response = client.patch(f"/api/records/{seeded.convention}", json={"pinned": True}, headers=WRITE)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert response.status_code == 503 and "busy" in response.json()["error"]
    assert client.patch(f"/api/records/{seeded.convention}", json={"pinned": True}, headers=WRITE).status_code == 200


def test_projects_count_stale_records_per_project(client: TestClient, seeded: Seeded) -> None:
    from agentctx_store.freshness import anchor_record
    from agentctx_store.stale import scan

    root = Path(seeded.project.root)
    (root / "Makefile").write_text("test:\n\tpytest\n", encoding="utf-8")
    with Store.open() as store:
        anchor_record(store, seeded.project, seeded.convention, ["Makefile"])
        assert client.get("/api/projects").json()["projects"][0]["stale"] == 0
        (root / "Makefile").unlink()
        scan(store, seeded.project)  # what consolidation, `stale` or an edit capture store
    by_id = {project["project_id"]: project for project in client.get("/api/projects").json()["projects"]}
    assert by_id["p-alpha"]["stale"] == 1 and by_id["p-beta"]["stale"] == 0


def test_create_with_anchors_stores_them_and_a_bad_anchor_stores_nothing(client: TestClient, seeded: Seeded) -> None:
    from agentctx_store.anchors import anchors_of

    (Path(seeded.project.root) / "deploy.sh").write_text("docker build .\n", encoding="utf-8")
    response = client.post(
        "/api/records",
        json={"type": "decision", "title": "Deploy with Docker", "body": "deploy.sh builds.", "anchors": ["deploy.sh"]},
        headers=WRITE,
    )
    assert response.status_code == 201
    with Store.open() as store:
        assert [anchor.path for anchor in anchors_of(store, seeded.project, response.json()["id"])] == ["deploy.sh"]
    bad = client.post(
        "/api/records",
        json={"type": "decision", "title": "Ghost", "body": "x", "anchors": ["nope.sh"]},
        headers=WRITE,
    )
    assert bad.status_code == 422 and "cannot read" in bad.json()["error"]
    assert ids(client.get("/api/records", params={"q": "ghost"}).json()) == []
