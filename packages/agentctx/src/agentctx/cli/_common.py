"""What every command shares: the `--project` and `--json` options, opening the store, output,
and the shape of one `agentctx status` section."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store, resolve_project
from agentctx_store.errors import ValidationError
from agentctx_store.records import SCOPES, check_choice, check_type

PROJECT_HELP = "The project's directory (default: the current directory's project)."

ProjectOption = typer.Option(None, "--project", "-p", help=PROJECT_HELP, show_default=False)
JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON.")


def project_for(path: Path | None) -> Project:
    """The project of `--project PATH` (or of the current directory)."""
    target = path if path is not None else Path(os.getcwd())
    if path is not None and not target.exists():
        raise ValidationError(f"No such directory {str(target)!r}; pass an existing project directory to --project.")
    return resolve_project(target)


def cannot_write(path: Path | str) -> bool:
    """The store exists but this user may only read it (the file or its folder is read-only)."""
    return os.path.exists(path) and not (os.access(path, os.W_OK) and os.access(os.path.dirname(path) or ".", os.W_OK))


@contextmanager
def open_store(*, read: bool = False) -> Generator[Store]:
    """The store; for a read command (`read=True`), opened read-only when this user cannot
    write it, so reading works and only an attempted write fails. What a command changed
    reaches the session-start digest on the way out."""
    from agentctx_store import digest, paths

    path = paths.db_path()
    with digest.refreshing(Store.open(path, readonly=read and cannot_write(path))) as store:
        yield store


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def check_filters(types: list[str] | None, scope: str | None) -> None:
    """Validate `--type` and `--scope` filters before anything is read."""
    for record_type in types or ():
        check_type(record_type)
    if scope is not None:
        check_choice("scope", scope, SCOPES)


@dataclass(frozen=True, kw_only=True)
class StatusSection:
    """One block of `agentctx status`: lines for people, `data` for `--json`."""

    key: str
    title: str
    lines: list[str]
    data: Any = None


# A section of `agentctx status` (listed in `status.SECTIONS`); None when it has nothing to say.
StatusProvider = Callable[[Store, Project], StatusSection | None]


def ask_choice(read_line: Callable[[str], str | None], labels: str, letters: str) -> str | None:
    """The letter of `letters` the person typed (the first character of the line counts), asked
    again on anything else; None at end of input. `labels` is the menu (`[a]ccept  [s]kip`)."""
    while True:
        line = read_line(f"  {labels}? ")
        if line is None:
            return None
        choice = line.strip().lower()[:1]
        if choice and choice in letters:
            return choice
        typer.echo(f"  Type one of {', '.join(letters[:-1])} or {letters[-1]} ({labels}).")
