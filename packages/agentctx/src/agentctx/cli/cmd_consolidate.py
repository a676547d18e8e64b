"""Offline work and what it feeds: `consolidate`, `sync` (CLAUDE.md drift), `profile` (the
developer's global preferences) and `models download` (the embedding model).

Heavy modules (agentctx_embed: numpy, apsw, fastembed/onnxruntime) are imported inside the
command functions, and only when a run has vector work to do.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, global_project
from agentctx_store.errors import RecordNotFound, ValidationError
from agentctx_store.upkeep import config, consolidate, digest, drift
from agentctx_store.upkeep import profile as dev_profile

from agentctx.cli._common import JsonOption, ProjectOption, open_store, print_json, project_for
from agentctx.cli._install import install_command

# -- consolidate ------------------------------------------------------------------------


def _available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def vector_phase_for(settings: dict[str, Any]) -> tuple[consolidate.VectorPhase | None, list[str]]:
    """The vector phase when embeddings are on and installed, else None and why (rungs 1–2)."""
    if not settings.get("embeddings", True):
        return None, ["embeddings off (`agentctx config --embeddings` turns them on): keyword-only digest"]
    if not (_available("agentctx_embed") and _available("fastembed")):
        return None, ["no-embeddings: the [embeddings] extra is not installed: keyword-only digest"]

    def phase(request: consolidate.VectorRequest) -> consolidate.VectorOutcome:
        from agentctx_embed import EmbedPhase

        try:
            return EmbedPhase()(request)
        except Exception as exc:  # boundary: model runtime or download; the digest must still be written
            reason = str(exc) if getattr(exc, "__module__", "").startswith("agentctx") else type(exc).__name__
            typer.echo(f"Embeddings skipped this run: {reason}", err=True)
            return consolidate.VectorOutcome(backend="", model="", degraded=[f"no-embeddings: {reason}"])

    return phase, []


def judge_for(settings: dict[str, Any]) -> consolidate.MergeJudge | None:
    if not (settings.get("llm", True) and _available("agentctx_embed")):
        return None
    from agentctx_embed.judge import make_judge

    return make_judge(settings)


def known_projects() -> list[Project]:
    with open_store() as store:
        return [digest.project_for(store, row["project_id"]) for row in store.list_projects()]


def consolidate_cmd(
    project: Path | None = ProjectOption,
    all_projects: bool = typer.Option(False, "--all", help="Every project in the store, not just this one."),
    time_limit: float = typer.Option(
        consolidate.DEFAULT_TIME_LIMIT_S, "--time-limit", min=1.0, help="Seconds before the run stops embedding."
    ),
    force: bool = typer.Option(False, "--force", help="Run even when nothing changed since the last run."),
    json: bool = JsonOption,
) -> None:
    """Embed new records, find near-duplicates, update scores, scan CLAUDE.md drift, and write the
    next SessionStart digest. SessionEnd starts this in the background; one run at a time."""
    settings = config.load()
    targets = known_projects() if all_projects else [project_for(project)]
    if not targets:
        typer.echo("No projects in the store yet.")
        return
    phase, notes = vector_phase_for(settings)
    judge = judge_for(settings)
    if judge is None:
        notes.append("no-llm: near-duplicates are listed in `agentctx status`, not merged")
    try:
        result = consolidate.run(
            targets,
            settings=settings,
            vector_phase=phase,
            judge=judge,
            time_limit=time_limit,
            force=force,
            degraded=notes,
        )
    except consolidate.ConsolidationRunning as exc:
        typer.echo(str(exc))
        return
    if settings.get("team_autoexport"):
        from agentctx.cli.cmd_team import autoexport

        autoexport(targets)
    from agentctx.cli.cmd_stale import reverify_projects  # anchored records whose code changed

    checked = reverify_projects(targets, settings)
    if json:
        print_json(result.to_dict() | {"reverify": checked})
        return
    for report in checked.values():
        if report["stale"]:
            applied = f", {report['applied']} applied" if report["applied"] else ""
            typer.echo(
                f"Freshness: {report['stale']} stale record(s), {report['proposed']} re-verification "
                f"proposal(s) for `agentctx review`{applied}."
            )
            for note in report["notes"]:
                typer.echo(f"  {note}")
    if result.skipped:
        typer.echo("Nothing changed since the last run; the digest is current.")
        return
    typer.echo(
        f"Consolidated {len(result.projects)} project(s) in {result.seconds:.1f}s: {result.embedded} embedded"
        f"{f' ({result.pending} left for the next run)' if result.pending else ''}, "
        f"{result.merge_candidates} new near-duplicate candidates, {result.merged} merged, "
        f"{result.archived} archived, vectors: {result.backend or 'none (keyword-only)'}."
    )
    for note in result.degraded:
        typer.echo(f"  degraded: {note}")


# -- sync -------------------------------------------------------------------------------


def sync_cmd(
    project: Path | None = ProjectOption,
    apply: bool = typer.Option(False, "--apply", help="Write the proposed changes to CLAUDE.md (asks first)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --apply: do not ask (for scripts)."),
    json: bool = JsonOption,
) -> None:
    """Compare the store's current decisions and conventions with CLAUDE.md and print the
    proposed diff. CLAUDE.md is written only with --apply, after you confirm."""
    if yes and not apply:
        raise ValidationError("--yes only makes sense with --apply; add --apply to write CLAUDE.md.")
    target = project_for(project)
    with open_store() as store:
        report = drift.analyse(store, target)
        drift.write_scores(store, target, report)
    if json and not apply:
        print_json(report.to_dict())
        return
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
        drift.write_scores(store, target, drift.analyse(store, target))
    digest.mark_stale(target.project_id)  # its drift hint is out of date: the next session re-consolidates
    for path in written:
        typer.echo(f"Wrote {path}")


# -- profile ----------------------------------------------------------------------------

profile_app = typer.Typer(
    help="Your global developer preferences (shared by every project).", no_args_is_help=True, rich_markup_mode=None
)


def _threshold() -> int:
    return int(config.load().get("reinforce_threshold", 3))


def _global_record(store: Any, record_id: str) -> Any:
    """A record of the `_global` namespace; project records are not part of the profile."""
    try:
        return store.get(global_project(), record_id)
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
        _global_record(store, record_id)
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
        store.delete(global_project(), record_id)
        dev_profile.export(store, _threshold())
    typer.echo(f"Deleted {record.record_id}.")


@profile_app.command("export")
def profile_export() -> None:
    """Write your preferences to the profile folder (Markdown and JSON)."""
    with open_store() as store:
        written = dev_profile.export(store, _threshold())
    for path in written:
        typer.echo(f"Wrote {path}")


# -- models -----------------------------------------------------------------------------

models_app = typer.Typer(help="The local embedding model.", no_args_is_help=True, rich_markup_mode=None)


@models_app.command("download")
def models_download() -> None:
    """Fetch the embedding model now (otherwise the first consolidation does it)."""
    if not (_available("agentctx_embed") and _available("fastembed")):
        raise ValidationError(f"The [embeddings] extra is not installed; install it: {install_command('embeddings')}.")
    from agentctx_embed.models import choose_model, load

    settings = config.load()
    choice = choose_model(settings)
    embedder = load(choice, allow_download=True, force_download=True, notice=lambda line: typer.echo(line, err=True))
    where = choice.model_dir or choice.cache_dir
    typer.echo(f"Embedding model ready: {embedder.name} ({embedder.dims} dimensions) in {where}")
    if not settings.get("embeddings", True):
        typer.echo("Embeddings are off in config; `agentctx config --embeddings` turns them on.", err=True)


# -- status section -----------------------------------------------------------------------


def _status_provider(store: Any, project: Project) -> Any:
    from agentctx.cli.cmd_admin import StatusSection

    sections = consolidate.status_sections(store, project)
    lines: list[str] = []
    for section in sections:
        if section["key"] != "consolidation":
            lines.append(f"{section['title']}:")
            lines.extend(f"  {line}" for line in section["lines"])
        else:
            lines.extend(section["lines"])
    data = {section["key"]: section["data"] for section in sections}
    return StatusSection(key="consolidation", title="Consolidation", lines=lines, data=data)


def register(app: typer.Typer) -> None:
    app.command("consolidate")(consolidate_cmd)
    app.command("sync")(sync_cmd)
    app.add_typer(profile_app, name="profile")
    app.add_typer(models_app, name="models")
    try:
        from agentctx.cli import cmd_admin
    except ImportError:  # pragma: no cover - status lives in cmd_admin
        return
    if _status_provider not in cmd_admin.STATUS_SECTIONS:
        cmd_admin.STATUS_SECTIONS.append(_status_provider)
