"""`agentctx models`: which embedding model is active, and `models download` for one that is not
bundled (the `[embeddings]` extra ships the default, all-MiniLM-L6-v2, in `agentctx-model-minilm`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store, config
from agentctx_store.errors import ValidationError

from agentctx.cli import _health
from agentctx.cli._common import StatusSection
from agentctx.cli._install import install_command

models_app = typer.Typer(help="The local embedding model.", rich_markup_mode=None)


def _require_extra() -> None:
    if not (_health.module_available("agentctx_embed") and _health.module_available("fastembed")):
        raise ValidationError(f"The [embeddings] extra is not installed; install it: {install_command('embeddings')}.")


def active_model() -> dict[str, Any]:
    """The model the settings choose: name, where it loads from, bundled, measured."""
    from agentctx_embed.models import choose_model

    choice = choose_model(config.load())
    return {
        "model": choice.name,
        "folder": str(choice.model_dir) if choice.model_dir else None,
        "cache_dir": str(choice.cache_dir),
        "bundled": choice.bundled,
        "measured": choice.measured,
    }


def describe(model: dict[str, Any]) -> str:
    """One line: the active model, where it loads from, and whether bench/ measured it."""
    where = "bundled, offline" if model["bundled"] else (model["folder"] or f"fastembed cache {model['cache_dir']}")
    measured = (
        "measured (docs/retrieval.md)"
        if model["measured"]
        else "not measured here (docs/retrieval.md has the measured one)"
    )
    return f"{model['model']} ({where}); {measured}"


@models_app.callback(invoke_without_command=True)
def models_show(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Show the active embedding model: where it loads from and whether it was measured."""
    if ctx.invoked_subcommand is not None:
        return
    _require_extra()
    model = active_model()
    if as_json:
        typer.echo(json.dumps(model, indent=2))
        return
    typer.echo(f"Embedding model: {describe(model)}")
    typer.echo("Choose another with AGENTCTX_EMBED_MODEL (and AGENTCTX_EMBED_MODEL_DIR for a local folder).")


@models_app.command("download")
def models_download() -> None:
    """Fetch the chosen embedding model now (the bundled default needs no download)."""
    _require_extra()
    from agentctx_embed.models import choose_model, load

    settings = config.load()
    choice = choose_model(settings)
    embedder = load(choice, allow_download=True, force_download=True, notice=lambda line: typer.echo(line, err=True))
    if choice.bundled:
        typer.echo(
            f"Embedding model ready: {embedder.name} ({embedder.dims} dimensions), bundled in {choice.model_dir}"
        )
    else:
        where = choice.model_dir or choice.cache_dir
        typer.echo(f"Embedding model ready: {embedder.name} ({embedder.dims} dimensions) in {where}")
    if not settings.get("embeddings", True):
        typer.echo("Embeddings are off in config; `agentctx config --embeddings` turns them on.", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")


def floor_section(store: Store, project: Project) -> StatusSection:
    """`agentctx status`: what decides "nothing here is relevant enough", so a surprising answer
    (or silence) can be explained: the keyword floor's inputs (the records its BM25 statistics
    and gate are figured over, and the keyword calibration the prompt hook reads: each reference
    text's level and the floor they set, `agentctx_store.calibration`, measured here when missing
    or stale) and the warm path's calibration for this project (the model, the records it was
    measured on, the reference texts' best z, cosines and keyword shares, the thresholds they set), as
    the search service last measured it."""
    from agentctx_store import paths
    from agentctx_store.calibration import refresh_prompt_floor
    from agentctx_store.retrieval import RELEVANCE_FLOOR, relevance_gate, visible_rows
    from agentctx_store.rows import visible_namespaces

    namespaces = visible_namespaces(project)
    visible = int(
        store.conn.execute(
            f"SELECT count(*) FROM records WHERE superseded_at IS NULL AND project_id IN ({','.join('?' * len(namespaces))})",
            namespaces,
        ).fetchone()[0]
    )
    indexed = visible_rows(store.conn, namespaces)  # superseded too: what BM25 weighs words over
    # the keyword floor the prompt hook reads, measured now if missing or stale (a few dozen searches)
    measured = refresh_prompt_floor(store, project)
    floor = float(measured["floor"])
    keyword = {
        "floor_rare_term_matches": floor,
        "constant_floor": RELEVANCE_FLOOR,
        "gate": round(relevance_gate(store.conn, floor, namespaces), 3),
        "visible_records": visible,
        "indexed_records": indexed,
        "calibration": measured,
    }
    try:
        calibration: dict[str, Any] | None = json.loads(
            Path(paths.calibration_path(project.project_id)).read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        calibration = None
    lines = [
        f"keyword: {floor} rare-term matches = BM25 {keyword['gate']} "
        f"({visible} records visible here, {indexed} indexed; calibrated on {measured.get('prompts')} reference "
        f"prompts; constant {RELEVANCE_FLOOR})"
    ]
    if calibration is None:
        lines.append("warm path: not calibrated yet (the search service measures a project at its first prompt)")
    else:
        thresholds = ", ".join(f"{name} {value}" for name, value in calibration.get("thresholds", {}).items())
        lines.append(
            f"warm path: calibrated {calibration.get('at')} with {calibration.get('model')} on "
            f"{calibration.get('records')} records, {calibration.get('prompts')} reference prompts: {thresholds}"
        )
    return StatusSection(
        key="relevance_floor", title="Relevance floor", lines=lines, data={"keyword": keyword, "warm": calibration}
    )
