"""settings.json and ~/.claude.json surgery: only our entries, idempotent, exactly reversible."""

from __future__ import annotations

import copy

import pytest

from agentctx_hooks import install

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
    assert install.events_for(None) == list(install.CLASSIC_EVENTS)
    assert install.events_for((2, 0, 77)) == list(install.CLASSIC_EVENTS)
    assert "CwdChanged" not in install.events_for((2, 1, 82))
    assert install.events_for((2, 1, 332))[-2:] == ["PostToolUseFailure", "CwdChanged"]
    assert install.parse_version("2.1.332 (Claude Code)") == (2, 1, 332)
    assert install.parse_version("claude: command not found") is None


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/opt/tools/agentctx/bin/agentctx hook SessionStart", True),
        ("'/path with space/agentctx' hook Stop", True),
        ("/usr/bin/python3 -m agentctx hook Stop", True),
        ("agentctx hook UserPromptSubmit", True),
        ("other-tool session-start", False),
        ("echo agentctx hook Stop", False),
        ("/bin/agentctx-other hook Stop", False),
        ("agentctx mcp", False),
        ("unbalanced 'quote", False),
        (None, False),
    ],
)
def test_our_hook_commands_are_recognised(command: object, ours: bool) -> None:
    assert install.is_our_hook(command) is ours


def test_hook_command_quotes_paths() -> None:
    assert install.hook_command(["/path with space/agentctx"], "Stop") == "'/path with space/agentctx' hook Stop"


def test_init_keeps_everything_else_and_is_idempotent() -> None:
    groups = install.desired_groups(BASE, install.events_for(None))
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
    groups = install.desired_groups(BASE, install.events_for((2, 1, 90)))
    installed, created = install.apply_hooks(REALISTIC, groups)
    restored = install.remove_hooks(installed, drop_events=set(created), drop_hooks_key=False)
    assert restored == REALISTIC


def test_uninstall_keeps_empty_containers_that_were_there_before() -> None:
    original = {"hooks": {"Stop": []}}
    installed, created = install.apply_hooks(original, install.desired_groups(BASE, ["Stop", "SessionEnd"]))
    assert created == ["SessionEnd"]
    assert install.remove_hooks(installed, drop_events=set(created), drop_hooks_key=False) == original
    empty = {"hooks": {}}
    installed, created = install.apply_hooks(empty, install.desired_groups(BASE, ["Stop"]))
    assert install.remove_hooks(installed, drop_events=set(created), drop_hooks_key=False) == empty
    assert install.remove_hooks(installed, drop_events=None, drop_hooks_key=None) == {}


def test_reinstall_from_another_path_replaces_our_old_entries() -> None:
    old, _ = install.apply_hooks(
        REALISTIC, install.desired_groups(["/old/venv/bin/agentctx"], ["SessionStart", "CwdChanged"])
    )
    new, _ = install.apply_hooks(old, install.desired_groups(BASE, ["SessionStart"]))
    commands = [h["command"] for groups in new["hooks"].values() for group in groups for h in group["hooks"]]
    assert not any(command.startswith("/old/") for command in commands)
    assert "CwdChanged" not in new["hooks"]  # a stale event of ours is dropped for an older client
    assert commands.count(install.hook_command(BASE, "SessionStart")) == 1


def test_our_hook_inside_a_shared_group_is_removed_alone() -> None:
    shared = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "say done"},
                        {"type": "command", "command": "/x/agentctx hook Stop"},
                    ]
                }
            ]
        }
    }
    cleaned = install.remove_hooks(shared, drop_events=None, drop_hooks_key=None)
    assert cleaned == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}


def test_non_object_hooks_are_refused() -> None:
    with pytest.raises(install.SettingsError):
        install.apply_hooks({"hooks": []}, install.desired_groups(BASE, ["Stop"]))
    with pytest.raises(install.SettingsError):
        install.apply_hooks({"hooks": {"Stop": "x"}}, install.desired_groups(BASE, ["Stop"]))


def test_mcp_entry_round_trip_and_foreign_server_refused() -> None:
    config = {"numStartups": 3, "projects": {"/x": {"allowedTools": []}}}
    entry = install.mcp_entry(BASE, always_load=True)
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
    entry = install.mcp_entry(["/usr/bin/python3", "-m", "agentctx"], always_load=False)
    assert entry["args"] == ["-m", "agentctx", "mcp"] and install.is_our_mcp(entry)


def test_dump_keeps_the_files_indentation() -> None:
    original = '{\n    "model": "opus"\n}\n'
    assert install.dump_json({"model": "opus"}, original) == original
    tabbed = '{\n\t"model": "opus"\n}\n'
    assert install.dump_json({"model": "opus"}, tabbed) == tabbed


def test_inputs_are_never_mutated() -> None:
    snapshot = copy.deepcopy(REALISTIC)
    installed, _ = install.apply_hooks(REALISTIC, install.desired_groups(BASE, ["Stop"]))
    install.remove_hooks(installed, drop_events=None, drop_hooks_key=None)
    assert snapshot == REALISTIC
