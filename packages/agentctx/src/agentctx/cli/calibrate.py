"""`agentctx calibrate`: measure the project's keyword relevance floor now, when it is missing
or stale (`agentctx_store.calibration.refresh_prompt_floor`). Not listed in `--help`: the prompt
hook starts it detached the first time a project answers on the keyword path with no floor of
its own (a store filled without `learn`, an import or a consolidation), and `learn`, the
imports, consolidation, `status` and the warm service measure it themselves
(docs/retrieval.md, "Calibrated per project")."""

from __future__ import annotations

from pathlib import Path

import typer

from agentctx.cli._common import JsonOption, ProjectOption, open_store, print_json, project_for


def calibrate_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """Measure this project's keyword relevance floor now, if it is missing or stale."""
    from agentctx_store.calibration import refresh_prompt_floor

    target = project_for(project)
    with open_store() as store:
        measured = refresh_prompt_floor(store, target)
    if json:
        print_json(measured)
        return
    typer.echo(
        f"Keyword floor of {target.name}: {measured['floor']} rare-term matches, "
        f"measured on {measured['records']} records."
    )


def register(app: typer.Typer) -> None:
    app.command("calibrate", hidden=True)(calibrate_cmd)
