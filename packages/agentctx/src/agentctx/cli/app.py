"""The typer application: collects every `cmd_*` module and maps errors to one line."""

from __future__ import annotations

import importlib
import pkgutil
import sqlite3
import sys

import typer
from agentctx_store.errors import AgentctxError

from agentctx import __version__
from agentctx.cli import _help

_help.install()

app = typer.Typer(
    name="agentctx",
    help="A context layer for coding agents: typed, current records handed to Claude Code within strict budgets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentctx {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show the full traceback of an unexpected error."),
) -> None:
    """A context layer for coding agents: typed, current records handed to Claude Code within strict budgets."""


# `--help` lists command groups in this order (the everyday ones first); any other `cmd_*` after.
HELP_ORDER = ("cmd_records", "cmd_io", "cmd_setup", "cmd_demo", "cmd_admin")


def _register_commands() -> None:
    import agentctx.cli as package

    names = [info.name for info in pkgutil.iter_modules(package.__path__) if info.name.startswith("cmd_")]
    rank = {name: index for index, name in enumerate(HELP_ORDER)}
    for name in sorted(names, key=lambda name: (rank.get(name, len(rank)), name)):
        importlib.import_module(f"agentctx.cli.{name}").register(app)


_register_commands()


def run(args: list[str]) -> int:
    """Run the CLI: a user-facing error is one line on stderr and exit 1, never a traceback."""
    debug = "--debug" in args
    try:
        # without standalone mode click returns (not raises) the code of `typer.Exit(n)`
        code = app(args=args, prog_name="agentctx", standalone_mode=False)
    except AgentctxError as exc:
        if debug:
            raise
        typer.echo(f"Error: {exc}", err=True)
        return 1
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except sqlite3.OperationalError as exc:
        if debug or "readonly" not in str(exc):
            raise
        typer.echo(
            "Error: the store is read-only for you, and this command writes to it; "
            "fix the permissions of $AGENTCTX_HOME or set AGENTCTX_HOME to a folder you can write.",
            err=True,
        )
        return 1
    except Exception as exc:  # click usage errors print their own message
        # typer vendors click (`typer._click`), so its usage errors are not `click.ClickException`
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(exit_code, int):
            show()
            return exit_code
        if debug:
            raise
        typer.echo(f"Error: {type(exc).__name__}: {exc} (re-run with --debug for the traceback)", err=True)
        return 1
    return code if isinstance(code, int) else 0


def main() -> None:
    sys.exit(run(sys.argv[1:]))
