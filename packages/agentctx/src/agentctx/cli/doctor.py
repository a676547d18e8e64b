"""`agentctx doctor`: what works here, what is missing, and the command that adds it."""

from __future__ import annotations

from pathlib import Path

import typer
from agentctx_store import paths

from agentctx.cli._common import JsonOption, ProjectOption, print_json, project_for
from agentctx.cli._health import run_checks


def doctor_cmd(
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
    fix_modes: bool = typer.Option(
        False, "--fix-modes", help="Make the data dir private first (folders 0700, files 0600)."
    ),
) -> None:
    """Check that agentctx works here: FTS5, WAL, a writable store, private files, optional parts, Claude Code hooks.

    Exits 1 when a check fails (warnings are degraded but working service).
    """
    if fix_modes:
        from agentctx.cli._private import fix_modes as make_private

        changed = make_private(Path(paths.home()))
        if not json:
            typer.echo(f"Made {changed} path(s) private in {paths.home()}")
    target = project_for(project)
    checks = run_checks(target)
    if json:
        print_json([vars(check) for check in checks])
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for check in checks:
            typer.echo(f"[{marks[check.state]}] {check.name}: {check.detail}")
            if check.fix:
                typer.echo(f"       fix: {check.fix}")
    if any(check.state == "fail" for check in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_cmd)
