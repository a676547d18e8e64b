"""The command list of `agentctx/cli/app.py`: every command module is in it, in `--help` order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

import agentctx.cli
from agentctx.cli import app, status

CLI_DIR = Path(agentctx.cli.__file__).parent

# `agentctx --help`, everyday commands first; typer lists plain commands before sub-apps.
HELP_ORDER = [
    "record", "search", "show", "edit", "pin", "unpin", "supersede", "delete", "history",
    "export", "import", "init", "uninstall", "demo", "status", "doctor", "config",
    "consolidate", "sync", "extract", "learn", "mcp", "review", "serve", "ui",
    "profile", "models", "stale", "team", "remote",
]  # fmt: skip
HIDDEN = ["calibrate"]  # registered, not listed: the prompt hook starts it


def test_every_command_module_in_the_folder_is_listed_in_app() -> None:
    """A new module in agentctx/cli/ that is not private is a command and must be in COMMANDS."""
    on_disk = {path.stem for path in CLI_DIR.glob("*.py") if not path.stem.startswith("_")} - {"app"}
    listed = [module.__name__.removeprefix("agentctx.cli.") for module in app.COMMANDS]
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert set(listed) == on_disk


def test_each_module_registers_its_own_commands_on_any_app() -> None:
    """`register(app)` is all app.py calls: on a fresh app each module adds its own commands, and
    together they are exactly the CLI's commands, each registered once."""
    names: list[str] = []
    for module in app.COMMANDS:
        fresh = typer.Typer()
        module.register(fresh)
        own = [info.name for info in fresh.registered_commands] + [info.name for info in fresh.registered_groups]
        assert own, f"{module.__name__}.register() adds no command"
        names += own
    assert sorted(names) == sorted([*HELP_ORDER, *HIDDEN])


def test_status_sections_are_a_fixed_list() -> None:
    """No module appends a section when it registers: the list in status.py is the whole of it."""
    assert isinstance(status.SECTIONS, tuple)
    before = status.SECTIONS
    for module in app.COMMANDS:
        module.register(typer.Typer())
    assert status.SECTIONS is before


def test_help_lists_the_commands_in_the_intended_order(cli) -> None:
    result = cli("--help")
    assert result.code == 0, result.err
    commands = result.out.split("Commands:", 1)[1]
    listed = re.findall(r"^  (\S+)", commands, flags=re.MULTILINE)
    assert listed == HELP_ORDER


def test_a_write_the_store_refuses_after_it_opened_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A full disk shows when the commit fails, long after the store opened: one line that
    names the disk, never sqlite3's traceback."""
    import sqlite3

    from agentctx_store import Store

    def full(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "add", full)
    code = app.run(["record", "-t", "decision", "--title", "A title", "-b", "A body", "-p", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("Error: ") and "the disk is full" in err and len(err.strip().splitlines()) == 1
