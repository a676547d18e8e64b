"""`agentctx init` / `agentctx uninstall` through the installed command, on realistic files.

A stand-in `claude` script on PATH answers `--version` and `mcp add/remove` the way the real
CLI does (it writes `mcpServers` into ~/.claude.json) and records how it was called.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

AGENTCTX = Path(sys.executable).with_name("agentctx")
SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "env": {"DISABLE_TELEMETRY": "1"},
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        "deny": ["Read(./.env)"],
        "defaultMode": "acceptEdits",
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|MultiEdit|Write",
                "hooks": [{"type": "command", "command": "jq -r '.tool_input.file_path' | xargs npx prettier --write"}],
            }
        ],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "$HOME/.claude-mem/hook.sh start", "timeout": 60}],
            }
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "terminal-notifier -message 'Claude needs you'"}]}],
    },
    "enabledPlugins": {"formatter@marketplace": True},
}
CLAUDE_JSON = {
    "numStartups": 12,
    "theme": "dark",
    "projects": {"/home/dev/src/app": {"allowedTools": [], "hasTrustDialogAccepted": True}},
    "mcpServers": {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {}}
    },
}
FAKE_CLAUDE = r"""#!{python}
import json, os, sys
from pathlib import Path
with open(os.environ["FAKE_CLAUDE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\n")
args = sys.argv[1:]
config_path = Path.home() / ".claude.json"
if args == ["--version"]:
    print(os.environ.get("FAKE_CLAUDE_VERSION", "2.1.332") + " (Claude Code)")
elif args[:4] == ["mcp", "add", "--scope", "user"]:
    name, rest = args[4], args[args.index("--") + 1 :]
    options = args[5 : args.index("--")]
    env = dict(options[i + 1].split("=", 1) for i in range(0, len(options), 2) if options[i] == "-e")
    config = json.loads(config_path.read_text()) if config_path.exists() else {{}}
    config.setdefault("mcpServers", {{}})[name] = {{"type": "stdio", "command": rest[0], "args": rest[1:], "env": env}}
    config_path.write_text(json.dumps(config, indent=2))
elif args[:4] == ["mcp", "remove", "--scope", "user"]:
    config = json.loads(config_path.read_text())
    del config["mcpServers"][args[4]]
    config_path.write_text(json.dumps(config, indent=2))
else:
    sys.exit(2)
"""


@pytest.fixture
def env(isolated_home: Path, tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    paths = [part for part in os.environ.get("PATH", "").split(os.pathsep) if not (Path(part) / "claude").exists()]
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(bin_dir), *paths]),
        "FAKE_CLAUDE_LOG": str(tmp_path / "claude.log"),
    }


@pytest.fixture
def fake_claude(env: dict[str, str], tmp_path: Path) -> Path:
    script = tmp_path / "bin" / "claude"
    script.write_text(FAKE_CLAUDE.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    (root / "package.json").write_text(
        json.dumps({"scripts": {"test": "vitest", "build": "tsc"}, "devDependencies": {"typescript": "5"}}),
        encoding="utf-8",
    )
    return root


def agentctx(env: dict[str, str], cwd: Path, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTCTX), *args], cwd=cwd, env=env, capture_output=True, text=True, input=input, timeout=120, check=False
    )


def _write(path: Path, data: dict[str, Any], indent: int = 2) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def _hook_commands(settings: dict[str, Any]) -> list[str]:
    return [
        hook["command"] for groups in settings.get("hooks", {}).values() for group in groups for hook in group["hooks"]
    ]


def test_init_then_uninstall_round_trips_realistic_files(
    env: dict[str, str], project: Path, isolated_home: Path
) -> None:
    settings_path = isolated_home / ".claude" / "settings.json"
    _write(settings_path, SETTINGS, indent=4)
    _write(isolated_home / ".claude.json", CLAUDE_JSON)
    done = agentctx(env, project, "init")
    assert done.returncode == 0, done.stderr
    installed = json.loads(settings_path.read_text(encoding="utf-8"))
    ours = [command for command in _hook_commands(installed) if " hook " in command and "agentctx" in command]
    assert ours == [
        f"{AGENTCTX} hook {event}"
        for event in ("PostToolUse", "SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")
    ]
    assert {key: installed[key] for key in SETTINGS if key != "hooks"} == {
        key: SETTINGS[key] for key in SETTINGS if key != "hooks"
    }
    assert list(settings_path.parent.glob("settings.json.agentctx-backup-*"))
    mcp = json.loads((isolated_home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert mcp["agentctx"] == {
        "type": "stdio",
        "command": str(AGENTCTX),
        "args": ["mcp"],
        "env": {"AGENTCTX_CLIENT": "claude"},
    }
    assert mcp["github"] == CLAUDE_JSON["mcpServers"]["github"]

    before_second = settings_path.read_bytes()
    backups = sorted(settings_path.parent.glob("*.agentctx-backup-*"))
    assert agentctx(env, project, "init").returncode == 0
    assert settings_path.read_bytes() == before_second  # init twice changes nothing
    assert sorted(settings_path.parent.glob("*.agentctx-backup-*")) == backups  # and writes no backup

    done = agentctx(env, project, "uninstall")
    assert done.returncode == 0, done.stderr
    assert json.loads(settings_path.read_text(encoding="utf-8")) == SETTINGS
    assert json.loads((isolated_home / ".claude.json").read_text(encoding="utf-8")) == CLAUDE_JSON


def test_init_on_a_fresh_home_and_uninstall_leaves_no_file(
    env: dict[str, str], project: Path, isolated_home: Path
) -> None:
    assert agentctx(env, project, "init").returncode == 0
    assert (isolated_home / ".claude" / "settings.json").exists()
    assert (Path(env["AGENTCTX_HOME"]) / "agentctx.db").exists()
    assert agentctx(env, project, "uninstall").returncode == 0
    assert not (isolated_home / ".claude" / "settings.json").exists()
    assert not (isolated_home / ".claude.json").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(env: dict[str, str], project: Path, isolated_home: Path) -> None:
    settings_path = isolated_home / ".claude" / "settings.json"
    text = _write(settings_path, SETTINGS)
    done = agentctx(env, project, "init", "--dry-run", "--claude-version", "2.1.90")
    assert done.returncode == 0, done.stderr
    added = [line for line in done.stdout.splitlines() if line.startswith("+")]
    assert any(f'"command": "{AGENTCTX} hook CwdChanged"' in line for line in added)
    assert any('"agentctx": {' in line for line in added)
    assert not [line for line in done.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert "profile stack: TypeScript (Node)" in done.stdout
    assert settings_path.read_text(encoding="utf-8") == text
    assert not (isolated_home / ".claude.json").exists()
    assert not Path(env["AGENTCTX_HOME"]).exists()


def test_version_from_claude_gates_events_and_mcp_goes_through_claude(
    env: dict[str, str], project: Path, isolated_home: Path, fake_claude: Path
) -> None:
    old = agentctx({**env, "FAKE_CLAUDE_VERSION": "2.0.77"}, project, "init")
    assert old.returncode == 0, old.stderr
    events = set(json.loads((isolated_home / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"])
    assert events == {"SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"}
    new = agentctx({**env, "FAKE_CLAUDE_VERSION": "2.1.332"}, project, "init", "--mcp-always-load")
    assert new.returncode == 0, new.stderr
    events = set(json.loads((isolated_home / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"])
    assert {"PostToolUseFailure", "CwdChanged"} <= events
    calls = [json.loads(line) for line in Path(env["FAKE_CLAUDE_LOG"]).read_text(encoding="utf-8").splitlines()]
    add = ["mcp", "add", "--scope", "user", "agentctx", "-e", "AGENTCTX_CLIENT=claude", "--", str(AGENTCTX), "mcp"]
    assert add in calls
    assert (
        json.loads((isolated_home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["agentctx"]["alwaysLoad"]
        is True
    )
    assert agentctx(env, project, "uninstall").returncode == 0
    calls = [json.loads(line) for line in Path(env["FAKE_CLAUDE_LOG"]).read_text(encoding="utf-8").splitlines()]
    assert calls[-1] == ["mcp", "remove", "--scope", "user", "agentctx"]
    assert "agentctx" not in json.loads((isolated_home / ".claude.json").read_text(encoding="utf-8")).get(
        "mcpServers", {}
    )


def test_project_scope_writes_the_repository_settings(env: dict[str, str], project: Path, isolated_home: Path) -> None:
    done = agentctx(env, project, "init", "--project", "--no-mcp")
    assert done.returncode == 0, done.stderr
    assert (project / ".claude" / "settings.json").exists()
    assert not (isolated_home / ".claude" / "settings.json").exists()
    assert not (isolated_home / ".claude.json").exists()
    assert agentctx(env, project, "uninstall", "--project").returncode == 0
    assert not (project / ".claude" / "settings.json").exists()


def test_init_detects_the_profile_into_keyed_records(env: dict[str, str], project: Path) -> None:
    assert agentctx(env, project, "init", "--no-mcp").returncode == 0
    shown = agentctx(env, project, "search", "--json", "vitest tsc build test commands")
    assert shown.returncode == 0, shown.stderr
    from agentctx_store import Store, resolve_project

    with Store.open() as store:
        profile = {
            record.key: record.body for record in store.list_records(resolve_project(project), types=["profile"])
        }
    assert profile == {"stack": "TypeScript (Node)", "commands": "build: npm run build; test: npm run test"}


def test_broken_settings_file_is_refused_untouched(env: dict[str, str], project: Path, isolated_home: Path) -> None:
    settings_path = isolated_home / ".claude" / "settings.json"
    settings_path.parent.mkdir(parents=True)
    settings_path.write_text('{"model": "opus",,}', encoding="utf-8")
    done = agentctx(env, project, "init")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and "not valid JSON" in done.stderr
    assert settings_path.read_text(encoding="utf-8") == '{"model": "opus",,}'


def test_purge_deletes_only_what_agentctx_created(env: dict[str, str], project: Path) -> None:
    assert agentctx(env, project, "init", "--no-mcp").returncode == 0
    data = Path(env["AGENTCTX_HOME"])
    (data / "someone-elses.txt").write_text("keep me", encoding="utf-8")
    refused = agentctx(env, project, "uninstall", "--purge", input="n\n")
    assert refused.returncode == 1 and (data / "agentctx.db").exists()
    done = agentctx(env, project, "uninstall", "--purge", "--yes")
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in data.iterdir()) == ["someone-elses.txt"]


def test_claude_config_dir_is_honoured(env: dict[str, str], project: Path, isolated_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    done = agentctx({**env, "CLAUDE_CONFIG_DIR": str(config)}, project, "init")
    assert done.returncode == 0, done.stderr
    assert (config / "settings.json").exists() and (config / ".claude.json").exists()
    assert not (isolated_home / ".claude").exists() and not (isolated_home / ".claude.json").exists()
    assert agentctx({**env, "CLAUDE_CONFIG_DIR": str(config)}, project, "uninstall").returncode == 0
    assert not (config / "settings.json").exists()
