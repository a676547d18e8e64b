"""`agentctx models download`: fetch the local embedding model (the `[embeddings]` extra)."""

from __future__ import annotations

import typer
from agentctx_store import config
from agentctx_store.errors import ValidationError

from agentctx.cli import _health
from agentctx.cli._install import install_command

models_app = typer.Typer(help="The local embedding model.", no_args_is_help=True, rich_markup_mode=None)


@models_app.command("download")
def models_download() -> None:
    """Fetch the embedding model now (otherwise the first consolidation does it)."""
    if not (_health.module_available("agentctx_embed") and _health.module_available("fastembed")):
        raise ValidationError(f"The [embeddings] extra is not installed; install it: {install_command('embeddings')}.")
    from agentctx_embed.models import choose_model, load

    settings = config.load()
    choice = choose_model(settings)
    embedder = load(choice, allow_download=True, force_download=True, notice=lambda line: typer.echo(line, err=True))
    where = choice.model_dir or choice.cache_dir
    typer.echo(f"Embedding model ready: {embedder.name} ({embedder.dims} dimensions) in {where}")
    if not settings.get("embeddings", True):
        typer.echo("Embeddings are off in config; `agentctx config --embeddings` turns them on.", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
