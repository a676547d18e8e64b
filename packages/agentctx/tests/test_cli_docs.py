"""Every registered CLI command has help text and is documented in docs/cli.md.

The check walks typer's real command tree, so a command another part registers later is
covered without touching this file: it fails until that command has help and a docs entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from agentctx.cli.app import app

ROOT = Path(__file__).resolve().parents[3]
CLI_DOC = ROOT / "docs" / "cli.md"


def command_paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """(path, command) for every command and sub-command. typer vendors click, so groups are
    recognised by their `commands` mapping rather than by class."""
    found: list[tuple[tuple[str, ...], Any]] = []
    if isinstance(getattr(command, "commands", None), dict):
        for name, sub in command.commands.items():
            found.append(((*prefix, name), sub))
            found.extend(command_paths(sub, (*prefix, name)))
    return found


COMMANDS = command_paths(typer.main.get_command(app))


def test_the_core_commands_are_registered() -> None:
    names = {path[0] for path, _ in COMMANDS}
    expected = {"record", "search", "show", "edit", "pin", "unpin", "supersede", "delete", "history"}
    assert expected | {"export", "import", "status", "doctor", "config"} <= names


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_every_command_has_help_and_a_docs_entry(path: tuple[str, ...], command: Any) -> None:
    assert (command.help or command.short_help or "").strip(), f"`agentctx {' '.join(path)}` has no help text"
    for param in command.params:
        if param.param_type_name == "option" and not getattr(param, "hidden", False):
            assert (param.help or "").strip(), f"option {param.opts} of `agentctx {' '.join(path)}` has no help"
    text = CLI_DOC.read_text(encoding="utf-8")
    assert f"agentctx {' '.join(path)}" in text, f"docs/cli.md does not mention `agentctx {' '.join(path)}`"


def test_every_command_takes_project_where_it_acts_on_one() -> None:
    """Commands of this part (records, io, admin except config) all accept --project."""
    mine = {"record", "search", "show", "edit", "pin", "unpin", "supersede", "delete", "history"}
    mine |= {"export", "import", "status", "doctor"}
    for path, command in COMMANDS:
        if path[0] in mine:
            options = {opt for param in command.params for opt in getattr(param, "opts", [])}
            assert "--project" in options, path


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_every_long_option_is_documented(path: tuple[str, ...], command: Any) -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    options = {opt for param in command.params for opt in getattr(param, "opts", []) if opt.startswith("--")}
    missing = sorted(option for option in options if f"`{option}" not in text and f"{option}`" not in text)
    assert missing == [], f"docs/cli.md does not mention {missing} of `agentctx {' '.join(path)}`"
