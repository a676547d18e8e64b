"""`agentctx consolidate`: the offline run (embeddings, near-duplicates, scores, CLAUDE.md drift,
the next SessionStart digest), and its section of `agentctx status`.

Heavy modules (agentctx_embed: numpy, apsw, fastembed/onnxruntime) are imported inside the
command functions, and only when a run has vector work to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store, config, consolidate, digest
from agentctx_store.consolidate.merges import MergeJudge

from agentctx.cli import _health
from agentctx.cli._common import JsonOption, ProjectOption, StatusSection, open_store, print_json, project_for


def vector_phase_for(settings: dict[str, Any]) -> tuple[consolidate.VectorPhase | None, list[str]]:
    """The vector phase when embeddings are on and installed, else None and why (rungs 1–2)."""
    if not settings.get("embeddings", True):
        return None, ["embeddings off (`agentctx config --embeddings` turns them on): keyword-only digest"]
    if not (_health.module_available("agentctx_embed") and _health.module_available("fastembed")):
        return None, ["no-embeddings: the [embeddings] extra is not installed: keyword-only digest"]

    def phase(request: consolidate.VectorRequest) -> consolidate.VectorOutcome:
        from agentctx_embed import EmbedPhase

        try:
            return EmbedPhase()(request)
        except Exception as exc:  # boundary: model runtime or download; the digest must still be written
            reason = str(exc) if getattr(exc, "__module__", "").startswith("agentctx") else type(exc).__name__
            return consolidate.VectorOutcome(backend="", model="", degraded=[f"no-embeddings: {reason}"])

    return phase, []


def judge_for(settings: dict[str, Any]) -> MergeJudge | None:
    if not (settings.get("llm", True) and _health.module_available("agentctx_embed")):
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
    if judge is None and phase is not None:  # near-duplicates are found by vectors, merged by a model
        notes.append("no-llm: near-duplicates are not merged without ANTHROPIC_API_KEY; you merge them by hand")
    try:
        result = consolidate.run(
            targets, settings, vector_phase=phase, judge=judge, time_limit=time_limit, force=force, degraded=notes
        )
    except consolidate.ConsolidationRunning as exc:
        typer.echo(str(exc))
        return
    if settings.get("team_autoexport"):
        from agentctx.cli.team import autoexport

        autoexport(targets)
    from agentctx.cli.stale import reverify_projects  # anchored records whose code changed

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
    waiting = open_near_duplicates(targets)
    if waiting:
        typer.echo(f"  {waiting} near-duplicate pair(s) to merge by hand: `agentctx status` lists them.")


def open_near_duplicates(targets: list[Project]) -> int:
    """How many near-duplicate pairs `agentctx status` lists for these projects."""
    with open_store(read=True) as store:
        pairs = {
            (item["keep"], item["drop"])
            for target in targets
            for section in consolidate.status_sections(store, target)
            if section["key"] == "merge_candidates"
            for item in section["data"]
        }
    return len(pairs)


def consolidation_section(store: Store, project: Project) -> StatusSection:
    """The `Consolidation` block of `agentctx status`: the last run and what it left to decide."""
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
