"""`agentctx mcp`: the MCP stdio server Claude Code starts (registered by `agentctx init`).

The SDK is imported inside the command, so `agentctx --help` and every other command stay light.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_command() -> None:
        """Run the MCP server on stdio: the seven ctx_* tools for the current directory's project.

        Claude Code starts this itself once `agentctx init` registered it; run by hand, it waits
        for JSON-RPC on stdin. The project comes from $CLAUDE_PROJECT_DIR, else the working
        directory. Logs go to $AGENTCTX_HOME/logs/mcp.log, never to stdout.

        Example:

            claude mcp add --scope user agentctx -- agentctx mcp
        """
        from agentctx_hooks.plugin import mcp_refusal

        refusal = mcp_refusal()
        if refusal:  # started by the plugin while `agentctx init` registered the server too
            typer.echo(refusal, err=True)
            raise typer.Exit(1)
        from agentctx_mcp.server import serve

        raise typer.Exit(serve())
