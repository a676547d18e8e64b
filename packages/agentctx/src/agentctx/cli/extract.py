"""`agentctx extract`: session-end extraction with Claude Haiku (run detached by the Stop hook)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer
from agentctx_store import clients as registry
from agentctx_store.errors import ValidationError

from agentctx.cli._common import JsonOption, print_json


def extract(
    session_id: Annotated[str, typer.Option("--session-id", help="The Claude Code session id.")],
    transcript: Annotated[
        Path, typer.Option("--transcript", help="The session's transcript (JSONL).", show_default=False)
    ],
    project: Annotated[
        Path | None,
        typer.Option(
            "--project", "-p", help="The project's directory (default: the transcript's cwd).", show_default=False
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Extract again even if this transcript was already extracted.")
    ] = False,
    trigger: Annotated[
        str,
        typer.Option(
            "--trigger",
            help="Who asked: manual, or the hook (end, stop, precompact, sweep); shown on the session's runs.",
        ),
    ] = "manual",
    client: Annotated[
        str,
        typer.Option(
            "--client",
            help="Whose transcript: "
            + ", ".join(f"{client.name} ({client.transcript_name})" for client in registry.CLIENTS.values())
            + ".",
        ),
    ] = registry.DEFAULT,
    as_json: bool = JsonOption,
) -> None:
    """Turn a session transcript into decisions, preferences, conventions, gotchas and a handover.

    Secrets are redacted before anything is sent. With ANTHROPIC_API_KEY it asks Claude
    Haiku through the API; without one, the client that ran the session (`claude -p`,
    `codex exec`, `gemini -p`) headless, with its own sign-in (`agentctx config llm`).
    With no backend, or with `llm` off, it logs one line to ~/.agentctx/logs/extract.log
    and exits 0 without any network call. Failures are logged and skipped; nothing is
    half-written.

    \b
    Example:
        agentctx extract --session-id 3f2a9c1e --transcript ~/.claude/projects/-src-app/3f2a9c1e.jsonl
    """
    from agentctx_extract import extract_session  # brings in the extraction stack only for this command

    if not transcript.is_file():
        raise ValidationError(f"No transcript at {str(transcript)!r}; pass the session's .jsonl file to --transcript.")
    if project is not None and not project.exists():
        raise ValidationError(f"No such directory {str(project)!r}; pass an existing project directory to --project.")
    from agentctx_extract.pipeline import TRIGGERS, Trigger

    if trigger not in TRIGGERS:
        raise ValidationError(f"Unknown --trigger {trigger!r}; use one of: {', '.join(TRIGGERS)}.")
    if client not in registry.CLIENTS:
        raise ValidationError(f"Unknown client {client!r}; supported: {', '.join(registry.names())}.")
    outcome = extract_session(
        session_id, transcript, project_path=project, force=force, trigger=cast(Trigger, trigger), client=client
    )
    if trigger in ("end", "sweep") and outcome.status not in ("failed", "locked"):
        from agentctx_hooks.extraction import forget

        forget(session_id)  # the session is over and done: the next SessionStart need not sweep it
    if as_json:
        report = outcome.report
        print_json(
            {
                "status": outcome.status,
                "message": outcome.message,
                "session_id": outcome.session_id,
                "project_id": outcome.project_id,
                "mode": outcome.mode,
                "tokens_estimated": outcome.tokens_estimated,
                "secrets_redacted": outcome.secrets_redacted,
                "calls": outcome.usage.calls,
                "input_tokens": outcome.usage.input_tokens,
                "output_tokens": outcome.usage.output_tokens,
                "cache_write_tokens": outcome.usage.cache_write_tokens,
                "cache_read_tokens": outcome.usage.cache_read_tokens,
                "cost_usd": round(outcome.cost_usd, 6),
                "created": report.created if report else [],
                "reinforced": report.reinforced if report else [],
                "superseded": report.superseded if report else [],
            }
        )
    else:
        typer.echo(f"{outcome.status}: {outcome.message}")


def register(app: typer.Typer) -> None:
    app.command("extract")(extract)
