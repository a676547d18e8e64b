"""The typer application: registers every command module, in the order of `COMMANDS`, and maps
errors to one line."""

from __future__ import annotations

import sqlite3
import sys

import typer
from agentctx_store.errors import AgentctxError

from agentctx import __version__
from agentctx.cli import (
    _help,
    calibrate,
    config,
    consolidate,
    demo,
    doctor,
    extract,
    learn,
    mcp,
    models,
    profile,
    records,
    remote,
    review,
    serve,
    setup,
    stale,
    status,
    sync,
    team,
    transfer,
    ui,
)

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


# Every command module, in the order `--help` lists them: the everyday ones first. (Typer lists
# plain commands before sub-apps, so `profile`, `models`, `stale` and `team` come last.)
# A new command is a new module in this folder with a `register(app)`, and one line here.
COMMANDS = (
    records,  # record, search, show, edit, pin, unpin, supersede, delete, history
    transfer,  # export, import
    setup,  # init, uninstall
    demo,
    status,
    doctor,
    config,
    consolidate,
    sync,
    profile,
    models,
    extract,
    learn,
    mcp,
    review,
    serve,
    stale,
    team,
    remote,
    ui,
    calibrate,  # not listed in --help: the prompt hook starts it detached
)

for module in COMMANDS:
    module.register(app)


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
    except sqlite3.DatabaseError as exc:  # a write the store refused after it opened: full disk, read-only, …
        if debug:
            raise
        if "readonly" in str(exc):
            typer.echo(
                "Error: the store is read-only for you, and this command writes to it; "
                "fix the permissions of $AGENTCTX_HOME or set AGENTCTX_HOME to a folder you can write.",
                err=True,
            )
            return 1
        from agentctx_store import paths
        from agentctx_store.db import store_error

        typer.echo(f"Error: {store_error(exc, paths.db_path())}", err=True)
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
