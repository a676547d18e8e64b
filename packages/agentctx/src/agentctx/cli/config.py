"""`agentctx config`: list, print or set (validated) the settings in config.json."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Any

import typer
from agentctx_store import config, paths
from agentctx_store.errors import ValidationError

from agentctx.cli._common import JsonOption, print_json
from agentctx.cli._health import check_config


def config_cmd(
    key: str | None = typer.Argument(None, help="A setting's name (omit to list them all).", show_default=False),
    value: str | None = typer.Argument(None, help="New value (omit to print the current one).", show_default=False),
    llm: bool | None = typer.Option(None, "--llm/--no-llm", help="Turn session-end LLM extraction on or off."),
    embeddings: bool | None = typer.Option(
        None, "--embeddings/--no-embeddings", help="Turn offline embeddings on or off."
    ),
    json: bool = JsonOption,
) -> None:
    """List settings, print one, or set one (validated) in config.json."""
    updates: dict[str, Any] = {}
    if llm is not None:
        updates["llm"] = llm
    if embeddings is not None:
        updates["embeddings"] = embeddings
    if key is not None and value is not None:
        updates[key] = value
    if key is not None and value is None and not updates:
        if key not in config.SETTINGS:
            raise ValidationError(f"Unknown setting {key!r}; known settings: {', '.join(config.SETTINGS)}.")
        current = config.load()
        if json:
            print_json(current[key])
        else:
            typer.echo(_show_value(current[key]))
        return
    if updates:
        for name, text in updates.items():
            config.parse_value(name, text if isinstance(text, str) else jsonlib.dumps(text))
        current = config.save(updates)
        if not json:
            for name in updates:
                typer.echo(f"{name} = {_show_value(current[name])}")
            return
    else:
        current = config.load()
    if json:
        print_json(current)
        return
    foreign = check_config(Path(paths.config_path()))
    if foreign.state == "fail":
        typer.echo(f"Note: {foreign.detail}.", err=True)
    for name, setting in config.SETTINGS.items():
        marker = "" if current[name] == setting.default else "  (changed)"
        typer.echo(f"{name} = {_show_value(current[name])}{marker}")
        typer.echo(f"    {setting.help}")


def _show_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else '""'


def register(app: typer.Typer) -> None:
    app.command("config")(config_cmd)
