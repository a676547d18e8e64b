"""status, doctor and config through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentctx_store import Store, paths, resolve_project

from agentctx.cli import _common, _health, status


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
    assert not paths.db_path().exists()


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


def test_doctor_checks_everything_and_creates_nothing(cli, project_dir: Path) -> None:
    result = cli("doctor", "--project", str(project_dir), "--json")
    checks = {check["name"]: check for check in result.json()}
    assert result.code == 0
    assert checks["fts5"]["state"] == "ok" and checks["data dir"]["state"] == "ok"
    for part in ("embeddings", "sqlite-vec", "dashboard", "mcp", "anthropic"):
        assert part in checks
    assert checks["api key"]["state"] == "warn"
    assert not paths.db_path().exists() and not paths.home().exists()


def test_doctor_checks_wal_and_writability_of_an_existing_store(cli, record, project_dir: Path) -> None:
    record("decision", "Anything", "Something.")
    checks = {check["name"]: check for check in cli("doctor", "--project", str(project_dir), "--json").json()}
    assert checks["wal"]["state"] == "ok" and checks["wal"]["detail"] == "journal_mode=wal"
    assert checks["store writable"]["state"] == "ok"
    assert checks["full-text index"]["state"] == "ok"


def test_doctor_names_the_install_command_of_a_missing_part(cli, project_dir: Path, monkeypatch) -> None:
    real = _health.module_available
    monkeypatch.setattr(_health, "module_available", lambda name: name != "fastembed" and real(name))
    result = cli("doctor", "--project", str(project_dir))
    assert "[warn] embeddings" in result.out
    assert "uv tool install --reinstall --compile-bytecode './packages/agentctx[embeddings]'" in result.out


def write_settings(path: Path, command: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}}
    path.write_text(json.dumps(settings), encoding="utf-8")


def test_doctor_sees_claude_code_hooks(cli, project_dir: Path) -> None:
    before = {c["name"]: c for c in cli("doctor", "--project", str(project_dir), "--json").json()}
    write_settings(Path.home() / ".claude" / "settings.json", "agentctx hook UserPromptSubmit")
    after = {c["name"]: c for c in cli("doctor", "--project", str(project_dir), "--json").json()}

    assert before["claude code hooks"]["state"] == "warn" and before["claude code hooks"]["fix"] == "agentctx init"
    assert after["claude code hooks"]["state"] == "ok" and "UserPromptSubmit" in after["claude code hooks"]["detail"]


def test_doctor_survives_unparseable_claude_settings(cli, project_dir: Path) -> None:
    settings = Path.home() / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{ not json", encoding="utf-8")
    result = cli("doctor", "--project", str(project_dir))
    assert result.code == 0 and "could not parse" in result.out
    assert settings.read_text(encoding="utf-8") == "{ not json"


def test_config_lists_gets_and_sets_with_validation(cli) -> None:
    listing = cli("config")
    assert listing.code == 0 and "reinforce_threshold = 3" in listing.out and "Sightings" in listing.out

    assert cli("config", "reinforce_threshold", "5").out.strip() == "reinforce_threshold = 5"
    assert cli("config", "reinforce_threshold").out.strip() == "5"
    assert cli("config", "--json").json()["reinforce_threshold"] == 5

    bad = cli("config", "reinforce_threshold", "many")
    unknown = cli("config", "colour", "blue")
    assert bad.code == 1 and bad.err.startswith("Error: Invalid value 'many' for reinforce_threshold")
    assert unknown.code == 1 and "Unknown setting 'colour'" in unknown.err
    assert cli("config", "reinforce_threshold").out.strip() == "5"


def test_config_flags_switch_llm_and_embeddings(cli) -> None:
    result = cli("config", "--no-llm", "--no-embeddings")
    assert result.code == 0
    values = cli("config", "--json").json()
    assert values["llm"] is False and values["embeddings"] is False
    cli("config", "--llm")
    assert cli("config", "--json").json()["llm"] is True
    stored = json.loads(paths.config_path().read_text(encoding="utf-8"))
    assert stored["_written_by"] == "agentctx"


def test_doctor_sees_the_mcp_registration(cli, project_dir: Path, monkeypatch) -> None:
    def state() -> str:
        checks = {c["name"]: c for c in cli("doctor", "--project", str(project_dir), "--json").json()}
        return checks["mcp server registered"]["state"]

    assert state() == "warn"
    config_dir = project_dir.parent / "claude-config"
    config_dir.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    (config_dir / ".claude.json").write_text(
        json.dumps({"mcpServers": {"agentctx": {"command": "agentctx", "args": ["mcp"]}}}), encoding="utf-8"
    )
    assert state() == "ok"


def test_doctor_reads_hooks_from_claude_config_dir(cli, project_dir: Path, monkeypatch) -> None:
    config_dir = project_dir.parent / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    write_settings(config_dir / "settings.json", "/opt/bin/agentctx hook SessionStart")
    checks = {c["name"]: c for c in cli("doctor", "--project", str(project_dir), "--json").json()}
    assert checks["claude code hooks"]["state"] == "ok"


def test_status_shows_the_session_start_digest(cli, record, project_dir: Path) -> None:
    record("decision", "Deploys go through Argo CD", "Every deploy is an Argo CD sync.", "--pin")
    digest = cli("status", "--project", str(project_dir), "--json").json()["digest"]
    assert digest is not None and 0 < digest["tokens"] <= 1500 and digest["stale"] is False
    assert "tokens of 1500" in cli("status", "--project", str(project_dir)).out
