"""The JSON surgery init and uninstall share across clients: which hooks are ours, removing ours
alone, and keeping a file's own indentation (what init registers is tested in the CLI package,
`packages/agentctx/tests/test_registration.py`)."""

from __future__ import annotations

import pytest

from agentctx.cli import _hook_settings as install


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


def test_dump_keeps_the_files_indentation() -> None:
    original = '{\n    "model": "opus"\n}\n'
    assert install.dump_json({"model": "opus"}, original) == original
    tabbed = '{\n\t"model": "opus"\n}\n'
    assert install.dump_json({"model": "opus"}, tabbed) == tabbed
