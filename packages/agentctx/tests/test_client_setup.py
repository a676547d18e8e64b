"""Registering agentctx in Codex CLI's and Gemini CLI's config files: surgical, idempotent,
refusing malformed files with their line, and undone exactly (`agentctx.cli.clients`: `codex`, `gemini`, `_changes`).
Whether Codex accepts the trust init records is proven by tests-e2e/test_codex_cli.py."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from agentctx.cli import _config_file as files
from agentctx.cli import clients
from agentctx.cli.clients import _changes as changes
from agentctx.cli.clients import codex, gemini

BASE = ["/opt/agentctx/bin/agentctx"]
USER_CONFIG = '# mine\nmodel = "gpt-5.1-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'


def test_codex_trust_hash_is_the_canonical_identity() -> None:
    hook = {"type": "command", "command": "/x/agentctx hook --client codex Stop", "timeout": 10}
    expected = (
        '{"event_name":"stop","hooks":[{"async":false,"command":"/x/agentctx hook --client codex Stop",'
        '"timeout":10,"type":"command"}]}'
    )
    import hashlib

    assert codex.trust_hash("Stop", hook, None) == "sha256:" + hashlib.sha256(expected.encode()).hexdigest()
    assert codex.trust_hash("Stop", hook, "^x$") != codex.trust_hash("Stop", hook, None)
    assert [codex.snake(e) for e in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop")] == [
        "session_start",
        "user_prompt_submit",
        "post_tool_use",
        "stop",
    ]


def test_codex_registration_round_trips(tmp_path: Path) -> None:
    hooks_path, config_path = tmp_path / "hooks.json", tmp_path / "config.toml"
    config_path.write_text(USER_CONFIG, encoding="utf-8")
    hooks_change, record = changes.add_json_entries(hooks_path, codex.groups(BASE), None, {})
    trust = codex.trust_entries(hooks_path, hooks_change.after)
    assert len(trust) == 6 and all(key.startswith(f"{hooks_path}:") for key in trust)
    mcp = {"command": BASE[0], "args": ["mcp"], "env": {"AGENTCTX_CLIENT": "codex"}}
    config_change = codex.config_change(config_path, mcp, trust)
    assert config_change.after.startswith(USER_CONFIG)
    parsed = tomllib.loads(config_change.after)
    assert parsed["mcp_servers"]["agentctx"] == mcp
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert {key: value["trusted_hash"] for key, value in parsed["hooks"]["state"].items()} == trust
    changes.apply(hooks_change)
    changes.apply(config_change)

    # idempotent: planning again changes nothing
    again, _ = changes.add_json_entries(hooks_path, codex.groups(BASE), None, record)
    assert not again.changed
    assert not codex.config_change(config_path, mcp, trust).changed

    # undone exactly
    changes.apply(changes.remove_json_entries(hooks_path, record))
    changes.apply(codex.config_removal(config_path, created_file=False))
    assert not hooks_path.exists()
    assert config_path.read_text(encoding="utf-8") == USER_CONFIG


def test_codex_config_without_trailing_newline_and_created_by_init(tmp_path: Path) -> None:
    config_path = tmp_path / "config.toml"
    config_path.write_text('model = "m"', encoding="utf-8")
    change = codex.config_change(config_path, None, {"k": "sha256:1"})
    changes.apply(change)
    assert tomllib.loads(config_path.read_text(encoding="utf-8"))["hooks"]["state"]["k"]["trusted_hash"] == "sha256:1"
    changes.apply(codex.config_removal(config_path, created_file=False))
    assert config_path.read_text(encoding="utf-8").rstrip("\n") == 'model = "m"'

    fresh = tmp_path / "new" / "config.toml"
    changes.apply(codex.config_change(fresh, {"command": "a", "args": ["mcp"]}, {}))
    assert fresh.exists()
    changes.apply(codex.config_removal(fresh, created_file=True))
    assert not fresh.exists()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('model = "m"\n[features\nplugins = false\n', "line 2"),
        ('mcp_servers = { docs = { command = "d" } }\n', "invalid"),
        ('[mcp_servers.agentctx]\ncommand = "someone-else"\nargs = []\n', "not agentctx"),
    ],
)
def test_codex_config_that_cannot_be_edited_is_refused(tmp_path: Path, text: str, fragment: str) -> None:
    config_path = tmp_path / "config.toml"
    config_path.write_text(text, encoding="utf-8")
    with pytest.raises(changes.ConfigError) as caught:
        codex.config_change(config_path, {"command": BASE[0], "args": ["mcp"]}, {"k": "sha256:1"})
    assert str(config_path) in str(caught.value) and fragment in str(caught.value)
    assert config_path.read_text(encoding="utf-8") == text


def test_malformed_json_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{\n  "ide": {},\n  "x": 1,\n}\n', encoding="utf-8")
    with pytest.raises(changes.ConfigError) as caught:
        changes.add_json_entries(path, gemini.groups(BASE), None, {})
    assert f"{path}, line 4" in str(caught.value)


def test_gemini_registration_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    before = json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": {}}, indent=2) + "\n"
    path.write_text(before, encoding="utf-8")
    mcp = {"command": BASE[0], "args": ["mcp"], "env": {"AGENTCTX_CLIENT": "gemini"}, "timeout": 30000}
    change, record = changes.add_json_entries(path, gemini.groups(BASE), mcp, {})
    changes.apply(change)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data["hooks"]) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"}
    hook = data["hooks"]["AfterTool"][0]
    assert hook["matcher"] == "^(run_shell_command|write_file|replace)$"
    assert hook["hooks"][0]["timeout"] == 10_000 and hook["hooks"][0]["name"] == "agentctx-AfterTool"
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 5000  # milliseconds
    assert data["mcpServers"]["agentctx"] == mcp
    assert changes.our_events(path) == ["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"]
    assert not changes.add_json_entries(path, gemini.groups(BASE), mcp, record)[0].changed
    changes.apply(changes.remove_json_entries(path, record))
    assert path.read_text(encoding="utf-8") == before  # `"hooks": {}` was there before: it stays


def test_config_locations_follow_the_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gh"))
    assert codex.home() == tmp_path / "cx"
    assert gemini.settings() == tmp_path / "gh" / ".gemini" / "settings.json"
    assert gemini.settings(tmp_path / "repo") == tmp_path / "repo" / ".gemini" / "settings.json"


def test_the_mcp_server_env_names_its_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCTX_HOME", raising=False)
    assert clients.mcp_env("codex") == {"AGENTCTX_CLIENT": "codex"}
    monkeypatch.setenv("AGENTCTX_HOME", "/data/agentctx")  # Codex passes a server only HOME and PATH
    assert clients.mcp_env("gemini") == {"AGENTCTX_CLIENT": "gemini", "AGENTCTX_HOME": "/data/agentctx"}


def test_codex_config_unchanged_since_init_comes_back_byte_for_byte(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "config.toml"
    target.parent.mkdir()
    original = '# ✓ mine\nmodel = "m"'  # no final newline: removing our block alone would leave one
    target.write_text(original, encoding="utf-8")
    link = tmp_path / "config.toml"
    link.symlink_to(target)
    change = codex.config_change(link, None, {"k": "sha256:1"})
    restore = files.remember(None, change.before, change.after, first=True)
    changes.apply(change)
    assert link.is_symlink() and "sha256:1" in target.read_text(encoding="utf-8")
    removal = codex.config_removal(link, created_file=False, restore=restore)
    assert removal.restored and removal.after == original
    changes.apply(removal)
    assert link.is_symlink() and target.read_bytes() == original.encode("utf-8")


def test_json_config_edited_since_init_loses_only_our_entries(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{\n\t"ui": {"theme": "a"}\n}', encoding="utf-8")
    change, record = changes.add_json_entries(path, gemini.groups(BASE), None, {})
    changes.apply(change)
    exact = changes.remove_json_entries(path, record)
    assert exact.restored and exact.after == '{\n\t"ui": {"theme": "a"}\n}'
    path.write_text(path.read_text(encoding="utf-8").replace('"a"', '"b"'), encoding="utf-8")  # the user edits
    edited = changes.remove_json_entries(path, record)
    assert not edited.restored and edited.after == '{\n\t"ui": {\n\t\t"theme": "b"\n\t}\n}'


def test_a_file_that_cannot_be_written_is_refused_before_any_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks_path = tmp_path / "hooks.json"
    config_path = tmp_path / "config.toml"
    config_path.write_text('model = "m"\n', encoding="utf-8")
    change, _ = changes.add_json_entries(hooks_path, codex.groups(BASE), None, {})
    config_change = codex.config_change(config_path, None, {"k": "sha256:1"})
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda name, mode: Path(name) != config_path and real_access(name, mode))
    with pytest.raises(changes.ConfigError, match=rf"^{config_path}: read-only"):
        changes.check([change, config_change])
    assert not hooks_path.exists()


def test_a_latin1_config_toml_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes('model = "café"\n'.encode("latin-1"))
    with pytest.raises(
        changes.ConfigError,
        match=rf"^{path}: not UTF-8 text \(byte 12 is 0xE9: Windows-1252 or Latin-1, it seems\); save it as UTF-8",
    ):
        codex.read_toml(path)
