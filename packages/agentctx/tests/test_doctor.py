"""`agentctx doctor` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx_store import paths

from agentctx.cli import _health


def test_doctor_checks_everything_and_creates_nothing(cli, project_dir: Path) -> None:
    result = cli("doctor", "--project", str(project_dir), "--json")
    checks = {check["name"]: check for check in result.json()}
    assert result.code == 0
    assert checks["fts5"]["state"] == "ok" and checks["data dir"]["state"] == "ok"
    for part in ("embeddings", "sqlite-vec", "dashboard", "mcp", "anthropic"):
        assert part in checks
    assert checks["api key"]["state"] == "warn"
    assert not Path(paths.db_path()).exists() and not Path(paths.home()).exists()


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
    # this test runs from the checkout's own environment: the hint is the checkout's sync
    root = Path(__file__).resolve().parents[3]
    assert f"fix: `uv sync --all-packages --all-extras --frozen` in {root}" in result.out


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
