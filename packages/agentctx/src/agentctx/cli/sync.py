"""`agentctx sync`: compare the store's current decisions and conventions with CLAUDE.md, and
write the proposed diff only with `--apply`."""

from __future__ import annotations

from pathlib import Path

import typer
from agentctx_store import digest, drift
from agentctx_store.errors import ValidationError

from agentctx.cli._common import JsonOption, ProjectOption, open_store, print_json, project_for


def sync_cmd(
    project: Path | None = ProjectOption,
    apply: bool = typer.Option(False, "--apply", help="Write the proposed changes to CLAUDE.md (asks first)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --apply: do not ask (for scripts)."),
    file: str | None = typer.Option(
        None, "--file", help="The file additions go to, relative to the project (default CLAUDE.md; never a link)."
    ),
    json: bool = JsonOption,
) -> None:
    """Compare the store's current decisions and conventions with CLAUDE.md and print the
    proposed diff. CLAUDE.md is written only with --apply, after you confirm."""
    if yes and not apply:
        raise ValidationError("--yes only makes sense with --apply; add --apply to write CLAUDE.md.")
    target = project_for(project)
    with open_store() as store:
        report = drift.analyse(store, target, target=file)
        drift.write_scores(store, target, report)
    if json and not apply:
        print_json(report.to_dict())
        return
    if report.target_note:
        typer.echo(report.target_note)
    if not report.candidates:
        typer.echo("CLAUDE.md agrees with the store: nothing missing, nothing superseded.")
        return
    typer.echo(
        f"{len(report.missing)} missing from CLAUDE.md, {len(report.contradicted)} superseded but still written."
    )
    for entry in report.contradicted:
        typer.echo(f"  superseded: {entry.file}:{entry.line} ({entry.record_id} → {entry.superseded_by}) {entry.text}")
    for entry in report.missing:
        typer.echo(f"  missing: {entry.record_id} [{entry.type}] {entry.title}")
    typer.echo("")
    typer.echo(report.proposed_diff, nl=False)
    if not apply:
        typer.echo("\nNothing written. `agentctx sync --apply` writes this after asking.")
        return
    if not yes and not typer.confirm(f"Write these changes to {', '.join(map(str, report.proposed))}?", default=False):
        typer.echo("Nothing written.")
        raise typer.Exit(1)
    written = drift.apply(report)
    with open_store() as store:
        drift.write_scores(store, target, drift.analyse(store, target, target=file))
    digest.mark_stale(target.project_id)  # its drift hint is out of date: the next session re-consolidates
    for path in written:
        typer.echo(f"Wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("sync")(sync_cmd)
