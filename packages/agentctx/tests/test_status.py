"""`agentctx status` through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentctx_store import Store, paths, resolve_project

from agentctx.cli import _common, status


def test_status_counts_by_type_and_superseded(cli, record, project_dir: Path) -> None:
    old = record("decision", "Use Flask", "The web app runs on Flask.")
    record("decision", "Use FastAPI", "The web app runs on FastAPI.", "--supersedes", old["id"])
    record("convention", "Type hints everywhere", "Every function has type hints.", "--pin")

    status = cli("status", "--project", str(project_dir), "--json").json()

    assert status["records"]["by_type"] == {"convention": 1, "decision": 1}
    assert status["records"]["superseded"] == 1 and status["records"]["pinned"] == 1
    assert status["store"]["bytes"] > 0 and status["store"]["fts5"] is True
    human = cli("status", "--project", str(project_dir)).out
    assert "decision" in human and "1 superseded" in human


def test_status_reports_sessions_tokens_and_this_months_cost(cli, project_dir: Path, other_dir: Path) -> None:
    project = resolve_project(project_dir)
    with Store.open() as store:
        store.record_injection(project, "session-one", [], 420)
        store.record_injection(project, "session-one", [], 80)
        store.add_extraction_cost("session-one", project, 0.0125)
        store.record_injection(resolve_project(other_dir), "session-two", [], 1000)

    status = cli("status", "--project", str(project_dir), "--json").json()
    sessions = status["sessions"]

    assert [session["session_id"] for session in sessions["recent"]] == ["session-one"]
    assert sessions["recent"][0]["tokens_injected"] == 500 and sessions["recent"][0]["injections"] == 2
    assert sessions["tokens_injected_project"] == 500 and sessions["tokens_injected_total"] == 1500
    assert sessions["month_extraction_cost_usd"] == pytest.approx(0.0125)
    assert "500 tokens in 2 injections" in cli("status", "--project", str(project_dir)).out


def test_status_without_a_store_creates_nothing(cli, project_dir: Path) -> None:
    result = cli("status", "--project", str(project_dir))
    assert result.code == 0 and "No store yet" in result.out
    assert not Path(paths.db_path()).exists()


def test_status_names_the_active_degradation_rungs(cli, record, project_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
    created = record("decision", "Use LIKE when FTS5 is missing", "Search still works.")

    rungs = {
        rung["rung"]: rung for rung in cli("status", "--project", str(project_dir), "--json").json()["degradation"]
    }
    hits = cli("search", "search works", "--project", str(project_dir), "--json").json()

    assert rungs[4]["name"] == "like-search"
    assert rungs[3]["name"] == "no-llm" and "ANTHROPIC_API_KEY" in rungs[3]["why"]  # the test env has no key
    assert [hit["id"] for hit in hits] == [created["id"]] and hits[0]["degraded"] == "like-search"


def test_status_says_when_llm_is_switched_off(cli, record, project_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    record("decision", "Anything", "Something.")
    with_key = cli("status", "--project", str(project_dir), "--json").json()["degradation"]
    assert all(rung["rung"] != 3 for rung in with_key)

    assert cli("config", "--no-llm").code == 0
    rungs = cli("status", "--project", str(project_dir), "--json").json()["degradation"]
    assert any(rung["rung"] == 3 and rung["why"] == "LLM extraction is off" for rung in rungs)


def test_status_sections_are_extensible(cli, record, project_dir: Path, monkeypatch) -> None:
    record("decision", "Anything", "Something.")

    def candidates(store, project):
        return _common.StatusSection(key="near_duplicates", title="Near duplicates", lines=["none"], data=[])

    monkeypatch.setattr(status, "SECTIONS", (*status.SECTIONS, candidates))
    assert cli("status", "--project", str(project_dir), "--json").json()["near_duplicates"] == []
    assert "Near duplicates" in cli("status", "--project", str(project_dir)).out


def test_status_shows_the_session_start_digest(cli, record, project_dir: Path) -> None:
    record("decision", "Deploys go through Argo CD", "Every deploy is an Argo CD sync.", "--pin")
    digest = cli("status", "--project", str(project_dir), "--json").json()["digest"]
    assert digest is not None and 0 < digest["tokens"] <= 1500 and digest["stale"] is False
    assert "tokens of 1500" in cli("status", "--project", str(project_dir)).out
