"""`agentctx team export|import|status|resolve`: the team's records in `.agentctx/context.md`,
committed with the code (docs/team.md). The logic lives in `agentctx_store.sharing.team`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from agentctx_store import AgentctxError, Project, Store
from agentctx_store.calibration import refresh_prompt_floor
from agentctx_store.projects import repo_root
from agentctx_store.sharing import team, team_state

from agentctx.cli._common import JsonOption, ProjectOption, StatusSection, open_store, print_json, project_for

team_app = typer.Typer(
    help="Share decisions, conventions and discoveries with your team through git (.agentctx/context.md).",
    no_args_is_help=True,
)


def is_secret(text: str) -> bool:
    """The extraction's secret detector: a record it would redact never goes into the file."""
    from agentctx_store.redact import redact

    return redact(text).count > 0


def _root(target: Project) -> Path:
    return Path(repo_root(target.root))


def personal_preferences(target: Project) -> list[str]:
    """The ids of this project's current preferences: the team file leaves them out (docs/team.md,
    What goes in), so `team export` names them rather than dropping them silently."""
    with open_store(read=True) as store:
        found = store.list_records(target, types=["preference"], scope="project")
    return [record.record_id for record in found]


def export_for(target: Project) -> team.TeamReport:
    """Write the team file of `target` (shared by `team export` and consolidation's autoexport)."""
    with open_store() as store:
        return team.export_team(store, target, _root(target), is_secret=is_secret)


def autoexport(targets: list[Project]) -> None:
    """`team_autoexport`: rewrite the team file of each project that already has one (or a
    repository to hold it) after consolidation; a failure is logged, never raised."""
    for target in targets:
        root = _root(target)
        if not (root / ".git").exists():
            continue
        try:
            export_for(target)
        except (OSError, AgentctxError) as exc:
            typer.echo(f"  team export of {target.name} failed: {exc}", err=True)


@team_app.command("export")
def export_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """Write .agentctx/context.md: current, explicit decisions, conventions and discoveries."""
    from agentctx_store.projects import MARKER, project_root

    target = project_for(project)
    root = _root(target)
    in_git = project_root(str(root))[1] == "git"
    new_marker = not (root / MARKER).exists()
    report = export_for(target)
    path = root / team.TEAM_FILE
    preferences = personal_preferences(target)
    if json:
        print_json(
            {
                "path": str(path),
                "records": len(report.unchanged),
                "withheld_secrets": report.withheld,
                "in_git": in_git,
                "personal_preferences": preferences,
            }
        )
        return
    typer.echo(f"Wrote {len(report.unchanged)} record{'s' * (len(report.unchanged) != 1)} to {path}.")
    if report.withheld:
        typer.echo(f"Left out {report.withheld} record(s) that look like they hold a secret.")
    if preferences:
        typer.echo(
            f"Left out {len(preferences)} preference{'s' * (len(preferences) != 1)} of this project "
            f"({', '.join(preferences[:3])}{', …' if len(preferences) > 3 else ''}): preferences are yours, "
            "decisions, conventions and discoveries are the team's. A team rule recorded as a preference "
            "goes in once retyped: `agentctx edit ID --type convention`, then export again."
        )
    if in_git:
        typer.echo("Commit it with your code; teammates run `agentctx team import` after pulling.")
        return
    typer.echo(
        f"{root} is not in a git repository: nothing commits this file for you. Hand it to your teammates "
        f"yourself; each puts it at {MARKER}/context.md in their copy and runs `agentctx team import` there."
    )
    if new_marker:
        typer.echo(
            f"{root / MARKER}/ is new: from now on this folder is the project for its subfolders too "
            "(`agentctx status` says which folder is the project)."
        )


def _out_of_space(exc: BaseException) -> bool:
    """Whether a write failed for want of room: a full disk, a quota, a file-size limit."""
    import errno
    import sqlite3

    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    text = str(exc).lower()
    return isinstance(exc, sqlite3.Error) and ("full" in text or "disk i/o" in text)


@team_app.command("import")
def import_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """Take the file's edits: new blocks become records, changed ones supersede, deleted ones retire.
    A block may change only records that came from the team file or that you exported to it;
    one that would change any other record waits in `agentctx review` instead."""
    import sqlite3

    target = project_for(project)
    root = _root(target)
    try:
        with open_store() as store:
            report = team.import_team(store, target, root, is_secret=is_secret)  # rewrites the file with the new ids
            refresh_prompt_floor(store, target)
    except (OSError, sqlite3.Error) as exc:
        if not _out_of_space(exc):
            raise
        raise AgentctxError(
            f"team import stopped: no disk space left for the store or {team.TEAM_FILE} ({exc}); "
            "nothing was imported. Free some space and run it again."
        ) from None
    summary = {
        "created": len(report.created),
        "superseded": len(report.superseded),
        "retired": len(report.retired),
        "unchanged": len(report.unchanged),
        "conflicts": [{"record": old, "second_head": new} for old, new in report.conflicts],
        "review": [{"record": old, "kept_as": new} for old, new in report.review],
        "kept": report.kept,
    }
    if json:
        print_json(summary)
        return
    typer.echo(
        f"Imported {root / team.TEAM_FILE}: {summary['created']} new, {summary['superseded']} superseded, "
        f"{summary['retired']} retired, {summary['unchanged']} unchanged."
    )
    for old, new in report.conflicts:
        typer.echo(f"Two heads: {old} was superseded twice (now also by {new}); see `agentctx team status`.")
    for old, new in report.review:
        typer.echo(
            f"Not changed: a block would change your record {old}, which is not the team file's; "
            f"kept as {new} for `agentctx review`."
        )
    for old in report.kept:
        typer.echo(f"Not retired: {old} left the file but is not the team file's to retire.")


@team_app.command("status")
def status_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """Whether the team file changed since the last import/export, and any two-heads conflicts."""
    target = project_for(project)
    root = _root(target)
    with open_store(read=True) as store:
        section = team_lines(store, target, root)
    if json:
        print_json(section["data"])
        return
    for line in section["lines"]:
        typer.echo(line)


@team_app.command("resolve")
def resolve_cmd(
    keep: str = typer.Argument(
        ..., help="The id of the head to keep (from `agentctx team status`).", show_default=False
    ),
    project: Path | None = ProjectOption,
) -> None:
    """Settle a two-heads conflict: keep one head, the others are superseded by it."""
    target = project_for(project)
    with open_store() as store:
        retired = team.resolve_heads(store, target, keep)
    typer.echo(f"Kept {keep.upper()}; superseded {', '.join(retired)}. Run `agentctx team export` to update the file.")


def team_lines(store: Any, target: Project, root: Path) -> dict[str, Any]:
    from agentctx_store.bounded import Refused, refuse_links

    path = root / team.TEAM_FILE
    exists = path.exists()
    changed = exists and team_state.changed(str(root), target.project_id)
    conflicts = team.heads_conflicts(store, target)
    try:
        refuse_links(root, team.TEAM_FILE)
        linked = ""
    except Refused as exc:  # never read through: say why, not "in step"
        linked = str(exc)
    lines = [
        linked
        or f"{path}: "
        + (
            "absent (`agentctx team export` writes it)"
            if not exists
            else "changed since the last import"
            if changed
            else "in step"
        )
    ]
    for old, heads in conflicts:
        lines.append(f"two heads for {old.record_id} ({old.title}):")
        lines += [f"  {head.record_id}  {head.title}" for head in heads]
        lines.append(f"  keep one: agentctx team resolve {heads[0].record_id}")
    data = {
        "path": str(path),
        "exists": exists,
        "changed": changed,
        "conflicts": [
            {"record": old.record_id, "heads": [head.record_id for head in heads]} for old, heads in conflicts
        ],
    }
    return {"lines": lines, "data": data, "show": exists or bool(conflicts)}


def team_section(store: Store, project: Project) -> StatusSection | None:
    """The `Team context` block of `agentctx status`, once the project shares a team folder."""
    section = team_lines(store, project, _root(project))
    if not section["show"]:
        return None
    return StatusSection(key="team", title="Team context", lines=section["lines"], data=section["data"])


def register(app: typer.Typer) -> None:
    app.add_typer(team_app, name="team")
