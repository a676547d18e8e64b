"""`agentctx serve`: the warm search service in the foreground
(docs/adr/0008-warm-search-service.md).

`agentctx mcp` hosts the same service in the background, so Claude Code users never start it;
this command is for setups without the MCP server, and for tests and benchmarks.
"""

from __future__ import annotations

import typer
from agentctx_store import Project, Store

from agentctx.cli._common import StatusSection


def service_section(_store: Store, _project: Project) -> StatusSection:
    """`agentctx status`: whether the warm search service is up, and which model it holds."""
    from agentctx_store.service_link import service_info

    info = service_info()
    if info is None:
        return StatusSection(
            key="search_service",
            title="Search service",
            lines=["not running: prompts use keyword search"],
            data={"up": False},
        )
    if "error" in info:
        return StatusSection(
            key="search_service", title="Search service", lines=[str(info["error"])], data={"up": False, **info}
        )
    lines = [
        f"up, pid {info.get('pid')}, model {info.get('model')} ({info.get('dims')} dims)",
        f"{info.get('vectors')} vectors ({int(info.get('vector_bytes') or 0) // 1_000_000} MB), "
        f"RSS {int(info.get('rss_bytes') or 0) // 1_000_000} MB (peak {int(info.get('rss_peak_bytes') or 0) // 1_000_000} MB), "
        f"{info.get('requests')} requests",
        f"socket {info.get('socket')}",
    ]
    return StatusSection(key="search_service", title="Search service", lines=lines, data={"up": True, **info})


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        idle_exit: float | None = typer.Option(
            None, "--idle-exit", min=1, metavar="SECONDS", help="Stop after this many seconds without a request."
        ),
    ) -> None:
        """Run the warm search service of this data dir in the foreground, until Ctrl-C or SIGTERM.

        It holds the embedding model and the vectors and answers the prompt hook, `agentctx search`
        and `ctx_search` over a private socket in $AGENTCTX_HOME (hybrid keyword + vector ranking).
        One per data dir: when one already runs (an `agentctx mcp` hosts it), this says so and exits.
        Prints one ready line. Needs the embed extra and a downloaded model (`agentctx models download`).

        Example:

            agentctx serve --idle-exit 600
        """
        import os

        from agentctx_store.service_link import SERVICE_ENV

        for name, value in SERVICE_ENV.items():  # before numpy loads
            os.environ.setdefault(name, value)
        try:
            from agentctx_embed.service import serve_foreground
        except ImportError:
            typer.echo(
                "agentctx serve needs the embed extra: install agentctx with [embed] (fastembed, sqlite-vec).", err=True
            )
            raise typer.Exit(1) from None
        raise typer.Exit(serve_foreground(idle_exit=idle_exit, say=lambda line: typer.echo(line)))
