"""`agentctx ui`: the local dashboard (package `agentctx-ui`, the `[ui]` extra).

FastAPI and uvicorn are imported only when the command runs, so the rest of the CLI stays light
and works without the extra.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentctx.cli._common import ProjectOption, project_for
from agentctx.cli._install import install_command

UI_MODULES = {"agentctx_ui", "fastapi", "uvicorn", "starlette", "pydantic"}


def register(app: typer.Typer) -> None:
    @app.command("ui")
    def ui(
        port: int = typer.Option(7327, "--port", min=0, max=65535, help="Port on 127.0.0.1 to serve on."),
        no_open: bool = typer.Option(False, "--no-open", help="Do not open a browser; just print the address."),
        project: Path | None = ProjectOption,
    ) -> None:
        """Open the local dashboard: browse, search and correct the context store in your browser.

        It listens on 127.0.0.1 only and runs until you press Ctrl-C.
        """
        try:
            from agentctx_ui.server import serve
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] not in UI_MODULES:
                raise
            typer.echo(f"The dashboard is not installed. Install it with:\n  {install_command('ui')}", err=True)
            raise typer.Exit(1) from None
        serve(project_for(project), port=port, open_browser=not no_open, echo=typer.echo)
