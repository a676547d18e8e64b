"""`agentctx profile`: the developer's global preferences (the `_global` records shared by every
project): show, correct, clear, export."""

from __future__ import annotations

from typing import Any

import typer
from agentctx_store import config, global_project
from agentctx_store.consolidate import profile as dev_profile
from agentctx_store.errors import AmbiguousIdError, RecordNotFound, ValidationError

from agentctx.cli._common import JsonOption, open_store, print_json

profile_app = typer.Typer(
    help="Your global developer preferences (shared by every project).", no_args_is_help=True, rich_markup_mode=None
)


def _threshold() -> int:
    return int(config.load().get("reinforce_threshold", 3))


def _global_record(store: Any, record_id: str) -> Any:
    """A record of the `_global` namespace; project records are not part of the profile."""
    try:
        return store.get(global_project(), store.resolve_id(global_project(), record_id))
    except AmbiguousIdError:
        raise
    except RecordNotFound:
        raise ValidationError(
            f"No record {record_id!r} in your profile (`agentctx profile show` lists it); "
            "project records are changed with `agentctx edit` or `agentctx delete`."
        ) from None


@profile_app.command("show")
def profile_show(json: bool = JsonOption) -> None:
    """List your global preferences with their confidence."""
    with open_store() as store:
        records = dev_profile.preferences(store)
    if json:
        print_json([record.to_dict() for record in records])
        return
    if not records:
        typer.echo("No global preferences yet: extraction adds them as it sees them across sessions.")
        return
    threshold = _threshold()
    for record in records:
        seen = f", seen {record.reinforce_count}/{threshold}" if record.confidence == "inferred" else ""
        typer.echo(f"{record.record_id}  [{record.type}, {record.confidence}{seen}] {record.title}")
        typer.echo(f"    {' '.join(record.body.split())}")


@profile_app.command("edit")
def profile_edit(
    record_id: str = typer.Argument(..., help="The preference's id (`agentctx profile show`)."),
    title: str | None = typer.Option(None, "--title", help="New title."),
    body: str | None = typer.Option(None, "--body", help="New body."),
    confirm: bool = typer.Option(False, "--confirm", help="Mark it as stated by you (explicit)."),
) -> None:
    """Correct a misattributed preference in place."""
    if title is None and body is None and not confirm:
        raise ValidationError("Nothing to change; pass --title, --body or --confirm.")
    with open_store() as store:
        record_id = _global_record(store, record_id).record_id
        record = store.edit(
            global_project(), record_id, title=title, body=body, confidence="explicit" if confirm else None
        )
        dev_profile.export(store, _threshold())
    typer.echo(f"Updated {record.record_id}: {record.title} ({record.confidence})")


@profile_app.command("clear")
def profile_clear(
    record_id: str = typer.Argument(..., help="The preference's id (`agentctx profile show`)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask."),
) -> None:
    """Remove a preference for good."""
    with open_store() as store:
        record = _global_record(store, record_id)
        if not yes and not typer.confirm(f"Delete {record.record_id} ({record.title})?", default=False):
            typer.echo("Nothing deleted.")
            raise typer.Exit(1)
        store.delete(global_project(), record.record_id)
        dev_profile.export(store, _threshold())
    typer.echo(f"Deleted {record.record_id}.")


@profile_app.command("export")
def profile_export() -> None:
    """Write your preferences to the profile folder (Markdown and JSON)."""
    with open_store() as store:
        written = dev_profile.export(store, _threshold())
    for path in written:
        typer.echo(f"Wrote {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")
