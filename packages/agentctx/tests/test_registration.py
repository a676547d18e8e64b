"""What init registers for Claude Code (`agentctx/cli/clients/claude.py`), applied to settings.json
and ~/.claude.json by `agentctx.cli.clients._settings`: only our entries, idempotent, exactly reversible."""

from __future__ import annotations

import copy

import pytest

from agentctx.cli import _config_file as files
from agentctx.cli import clients
from agentctx.cli.clients import _settings as install
from agentctx.cli.clients import claude

BASE = ["/opt/tools/agentctx/bin/agentctx"]
REALISTIC = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "env": {"FOO": "1"},
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": 'npx prettier --write "$FILE"'}]}
        ],
        "SessionStart": [{"hooks": [{"type": "command", "command": "other-tool session-start", "timeout": 30}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send Claude"}]}],
    },
}


def test_events_follow_the_client_version() -> None:
    assert claude.events_for(None) == list(claude.CLASSIC_EVENTS)
    assert claude.events_for((2, 0, 77)) == list(claude.CLASSIC_EVENTS)
    assert "CwdChanged" not in claude.events_for((2, 1, 82))
    assert claude.events_for((2, 1, 332))[-3:] == ["PostToolUseFailure", "CwdChanged", "SubagentStart"]
    assert "SubagentStart" in claude.events_for((2, 1, 0)) and "SubagentStart" not in claude.events_for((2, 0, 99))
    assert claude.parse_version("2.1.332 (Claude Code)") == (2, 1, 332)
    assert claude.parse_version("claude: command not found") is None


def test_hook_command_quotes_paths() -> None:
    assert clients.hook_command(["/path with space/agentctx"], "Stop") == "'/path with space/agentctx' hook Stop"


def test_init_keeps_everything_else_and_is_idempotent() -> None:
    groups = claude.desired_groups(BASE, claude.events_for(None))
    once, created = install.apply_hooks(REALISTIC, groups)
    assert created == ["UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"]
    assert {key: once[key] for key in once if key != "hooks"} == {
        key: REALISTIC[key] for key in REALISTIC if key != "hooks"
    }
    assert once["hooks"]["PostToolUse"][0] == REALISTIC["hooks"]["PostToolUse"][0]  # the foreign group first, unchanged
    assert once["hooks"]["SessionStart"][0] == REALISTIC["hooks"]["SessionStart"][0]
    assert once["hooks"]["Notification"] == REALISTIC["hooks"]["Notification"]
    twice, created_again = install.apply_hooks(once, groups)
    assert twice == once and created_again == []
    assert REALISTIC["hooks"]["PostToolUse"] == [REALISTIC["hooks"]["PostToolUse"][0]]  # input not mutated


def test_uninstall_restores_the_original_exactly() -> None:
    groups = claude.desired_groups(BASE, claude.events_for((2, 1, 90)))
    installed, created = install.apply_hooks(REALISTIC, groups)
    restored = install.remove_hooks(installed, drop_events=set(created), drop_hooks_key=False)
    assert restored == REALISTIC


def test_uninstall_keeps_empty_containers_that_were_there_before() -> None:
    original = {"hooks": {"Stop": []}}
    installed, created = install.apply_hooks(original, claude.desired_groups(BASE, ["Stop", "SessionEnd"]))
    assert created == ["SessionEnd"]
    assert install.remove_hooks(installed, drop_events=set(created), drop_hooks_key=False) == original
    empty = {"hooks": {}}
    installed, created = install.apply_hooks(empty, claude.desired_groups(BASE, ["Stop"]))
    assert install.remove_hooks(installed, drop_events=set(created), drop_hooks_key=False) == empty
    assert install.remove_hooks(installed, drop_events=None, drop_hooks_key=None) == {}


def test_reinstall_from_another_path_replaces_our_old_entries() -> None:
    old, _ = install.apply_hooks(
        REALISTIC, claude.desired_groups(["/old/venv/bin/agentctx"], ["SessionStart", "CwdChanged"])
    )
    new, _ = install.apply_hooks(old, claude.desired_groups(BASE, ["SessionStart"]))
    commands = [h["command"] for groups in new["hooks"].values() for group in groups for h in group["hooks"]]
    assert not any(command.startswith("/old/") for command in commands)
    assert "CwdChanged" not in new["hooks"]  # a stale event of ours is dropped for an older client
    assert commands.count(clients.hook_command(BASE, "SessionStart")) == 1


def test_non_object_hooks_are_refused() -> None:
    with pytest.raises(install.SettingsError):
        install.apply_hooks({"hooks": []}, claude.desired_groups(BASE, ["Stop"]))
    with pytest.raises(install.SettingsError):
        install.apply_hooks({"hooks": {"Stop": "x"}}, claude.desired_groups(BASE, ["Stop"]))


def test_mcp_entry_round_trip_and_foreign_server_refused() -> None:
    config = {"numStartups": 3, "projects": {"/x": {"allowedTools": []}}}
    entry = claude.mcp_entry(BASE, always_load=True)
    env = {"AGENTCTX_CLIENT": "claude"}
    assert entry == {"type": "stdio", "command": BASE[0], "args": ["mcp"], "env": env, "alwaysLoad": True}
    registered, created = install.apply_mcp(config, entry)
    assert created and registered["mcpServers"]["agentctx"] == entry
    assert install.remove_mcp(registered, drop_servers_key=created) == config
    foreign = {"mcpServers": {"agentctx": {"type": "stdio", "command": "npx", "args": ["some-other-agentctx"]}}}
    with pytest.raises(install.SettingsError):
        install.apply_mcp(foreign, entry)
    assert install.remove_mcp(foreign, drop_servers_key=True) == foreign


def test_python_module_form_is_ours_too() -> None:
    entry = claude.mcp_entry(["/usr/bin/python3", "-m", "agentctx"], always_load=False)
    assert entry["args"] == ["-m", "agentctx", "mcp"] and install.is_our_mcp(entry)


def test_inputs_are_never_mutated() -> None:
    snapshot = copy.deepcopy(REALISTIC)
    installed, _ = install.apply_hooks(REALISTIC, claude.desired_groups(BASE, ["Stop"]))
    install.remove_hooks(installed, drop_events=None, drop_hooks_key=None)
    assert snapshot == REALISTIC


def test_a_restore_point_carries_over_only_while_the_file_is_what_init_wrote() -> None:
    first = files.remember(None, "original", "with ours", first=True)
    assert files.restore_point(first, "with ours") == (True, "original")
    assert files.restore_point(first, "with ours, edited") == (False, None)
    again = files.remember(first, "with ours", "with ours v2", first=False)  # init again, nothing edited
    assert files.restore_point(again, "with ours v2") == (True, "original")
    assert files.remember(again, "edited by hand", "with ours v3", first=False) is None  # edited between: none
    created = files.remember(None, None, "ours only", first=True)
    assert files.restore_point(created, "ours only") == (True, None)  # None: init created it, remove it
    assert files.restore_point(None, "anything") == (False, None)  # a manifest from before: surgery
