"""`agentctx status`: what is stored for this project, what is degraded, and what sessions
injected and cost.

The output is a list of sections (`SECTIONS`), each a function of the store and the project.
The sections about one part live beside its command (`setup.hooks_status`,
`consolidate.consolidation_section`, ...) and are listed here by name, in the order shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store, config, digest, paths, spend

from agentctx.cli._common import (
    JsonOption,
    ProjectOption,
    StatusProvider,
    StatusSection,
    cannot_write,
    print_json,
    project_for,
)
from agentctx.cli._health import active_rungs
from agentctx.cli.clients import clients_status
from agentctx.cli.consolidate import consolidation_section
from agentctx.cli.models import floor_section
from agentctx.cli.remote import remote_section
from agentctx.cli.serve import service_section
from agentctx.cli.setup import hooks_status
from agentctx.cli.stale import stale_status
from agentctx.cli.team import team_section


def records_section(store: Store, project: Project) -> StatusSection:
    current = store.counts_by_type(project)
    everything = store.counts_by_type(project, include_superseded=True)
    superseded = sum(everything.values()) - sum(current.values())
    pinned = len(store.list_records(project, pinned=True))
    lines = [f"{record_type:<12}{count:>6}" for record_type, count in current.items()] or ["(no records yet)"]
    lines.append(f"{'total':<12}{sum(current.values()):>6}   ({superseded} superseded, {pinned} pinned)")
    data = {"by_type": current, "current": sum(current.values()), "superseded": superseded, "pinned": pinned}
    return StatusSection(key="records", title="Records (this project and global)", lines=lines, data=data)


def store_size(path: Path) -> int:
    return sum(
        candidate.stat().st_size for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if candidate.exists()
    )


def store_section(store: Store, project: Project) -> StatusSection:
    size = store_size(Path(store.path))
    version = store.conn.execute("PRAGMA user_version").fetchone()[0]
    lines = [
        f"{store.path}  {size / 1024:.0f} KiB, schema {version}, full-text index: {'yes' if store.has_fts else 'no'}"
    ]
    data = {"path": str(store.path), "bytes": size, "schema_version": version, "fts5": store.has_fts}
    return StatusSection(key="store", title="Store", lines=lines, data=data)


# What each rung of the ladder (docs/contracts.md#degradation) takes away, in a user's words.
RUNG_LOSES = {
    "no-embeddings": "keyword search only: no hybrid ranking of prompts, no near-duplicates found by meaning",
    "no-vectors": "vectors are compared in Python instead of sqlite-vec: the same results, slower on a big store",
    "no-llm": "finished sessions are not turned into records; near-duplicates wait in `status`, unjudged",
    "like-search": "search matches words with LIKE instead of the full-text index: weaker ranking",
}


def degradation_section(store: Store, project: Project) -> StatusSection:
    rungs = active_rungs(store, config.load())
    lines: list[str] = []
    for rung in rungs:
        lines += [f"rung {rung.rung} {rung.name}: {rung.why}"]
        if rung.name in RUNG_LOSES:
            lines += [f"  what you lose: {RUNG_LOSES[rung.name]}"]
        lines += [f"  to move up: {rung.fix}"]
    lines = lines or ["none: full service"]
    data = [
        {"rung": rung.rung, "name": rung.name, "why": rung.why, "loses": RUNG_LOSES.get(rung.name, ""), "fix": rung.fix}
        for rung in rungs
    ]
    title = "Degradation (rung 1 is full service, each higher rung works with less: docs/contracts.md#degradation)"
    return StatusSection(key="degradation", title=title, lines=lines, data=data)


def sessions_section(store: Store, project: Project) -> StatusSection:
    recent = store.list_sessions(project, limit=5)
    tokens_project = store.total_tokens_injected(project)
    tokens_all = store.total_tokens_injected()
    prompts = store.prompt_injection_totals(project)
    count, month_cost = store.conn.execute(
        "SELECT count(*), coalesce(sum(extraction_cost_usd), 0) FROM sessions WHERE started_at >= ?",
        (spend.month_start(),),
    ).fetchone()
    cap = config.load().get("monthly_cap_usd")
    lines = [
        f"{session['started_at'][:16].replace('T', ' ')}  {session['session_id'][:12]:<12}  "
        f"{session['tokens_injected']:>6} tokens in {session['injections']} injections, "
        f"extraction {_usage_text(spend.session_usage(session))}"
        for session in recent
    ] or ["(no sessions yet: hooks record them once `agentctx init` has run)"]
    lines.append(f"tokens injected: {tokens_project} in this project, {tokens_all} in all projects")
    lines.append(prompt_injection_line(prompts))
    lines.append(
        f"this month: {count} sessions, extraction spend ${month_cost:.4f} of the ${float(cap or 0):.2f} cap"
        " (`agentctx config monthly_cap_usd` changes it)"
    )
    from agentctx_extract import backends

    settings = config.load()
    month_tokens = spend.month_client_tokens(store)
    lines.append(
        f"this month through a coding agent: {month_tokens:,} tokens of the {int(settings['llm_monthly_tokens']):,} "
        "cap (`agentctx config llm_monthly_tokens` changes it)"
    )
    lines.append(backends.describe(settings))
    data = {
        "recent": [
            {
                **{
                    key: session.get(key)
                    for key in (
                        "session_id",
                        "started_at",
                        "ended_at",
                        "tokens_injected",
                        "injections",
                        "extraction_cost_usd",
                    )
                },
                "extraction": spend.session_usage(session),
            }
            for session in recent
        ],
        "tokens_injected_project": tokens_project,
        "tokens_injected_total": tokens_all,
        "prompt_injections": prompts
        | {"tokens_per_prompt": round(prompts["tokens"] / prompts["prompts"], 1) if prompts["prompts"] else None},
        "month_sessions": count,
        "month_extraction_cost_usd": round(float(month_cost), 6),
        "monthly_cap_usd": cap,
        "month_client_tokens": month_tokens,
        "llm_monthly_tokens": settings["llm_monthly_tokens"],
        "extraction_backend": vars(backends.choose(settings)),
    }
    return StatusSection(key="sessions", title="Sessions", lines=lines, data=data)


def _usage_text(usage: dict[str, Any]) -> str:
    """`$0.0123 (1 run: 12,345 in, 0 cached, 456 out)`, or `none` before any run."""
    if not usage["runs"] and not usage["cost_usd"]:
        return "none"
    runs = f"{usage['runs']} run{'s' if usage['runs'] != 1 else ''}"
    tokens = f"{usage['input_tokens']:,} in, {usage['cached_tokens']:,} cached, {usage['output_tokens']:,} out"
    if usage.get("backend") not in (None, "api"):  # a coding agent's headless mode: tokens, no price
        return f"{usage.get('client_tokens', 0):,} tokens through {usage['backend']} ({runs}: {tokens})"
    return f"${usage['cost_usd']:.4f} ({runs}: {tokens})"


def prompt_injection_line(prompts: dict[str, int]) -> str:
    """Prompts that injected records in this project: tokens per injected prompt, full vs title-only."""
    if not prompts["prompts"]:
        return "prompt injections: none yet in this project"
    return (
        f"prompt injections: {prompts['prompts']}, {prompts['tokens'] / prompts['prompts']:.0f} tokens per injected "
        f"prompt; records shown in full {prompts['full']}, by title only {prompts['title']}"
    )


def digest_section(store: Store, project: Project) -> StatusSection:
    """What the next session start injects: the precomputed digest file, its kind and size."""
    found = digest.read(project.project_id)
    if found is None:
        lines = ["none yet: the next write or `agentctx consolidate` writes it"]
        return StatusSection(key="digest", title="Session-start digest", lines=lines, data=None)
    text, info = found
    state = ", stale (a consolidation refreshes it)" if info.stale else ""
    lines = [f"{info.kind} digest, {info.tokens} tokens of 1500, written {info.written_at}{state}"]
    data = {"kind": info.kind, "tokens": info.tokens, "written_at": info.written_at, "stale": info.stale}
    return StatusSection(key="digest", title="Session-start digest", lines=lines, data=data | {"chars": len(text)})


# `agentctx status` prints these sections in this order; a section that has nothing to say
# returns None. A new section is a function `(store, project) -> StatusSection | None` listed here.
SECTIONS: tuple[StatusProvider, ...] = (
    records_section,
    store_section,
    digest_section,
    degradation_section,
    sessions_section,
    hooks_status,
    clients_status,
    consolidation_section,
    service_section,
    floor_section,
    stale_status,
    team_section,
    remote_section,
)


def project_rule_line(root: str) -> tuple[str, str]:
    """(the rule that made `root` the project, one line saying it, with what to do where it surprises)."""
    from agentctx_store.projects import MARKER, project_root

    rule = project_root(root)[1]
    if rule == "git":
        return rule, "the git repository holding this folder is the project"
    if rule == "marker":
        return rule, (
            f"not in a git repository: the project is the nearest folder at or above this one holding {MARKER}/, "
            "with all its subfolders"
        )
    return rule, (
        f"not in a git repository, and no folder above holds {MARKER}/: this folder alone is the project, "
        f"each subfolder another one (`mkdir {MARKER}` here makes its subfolders share it)"
    )


def status_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """What is stored for this project, what is degraded, and what sessions injected and cost.

    The project is the git repository holding the folder; outside git, the nearest folder at or
    above holding `.agentctx/`, else the folder itself (the first lines say which)."""
    target = project_for(project)
    path = Path(paths.db_path())
    rule, rule_line = project_rule_line(str(target.root))
    header = {"project": target.name, "project_id": target.project_id, "root": str(target.root), "project_rule": rule}
    if not path.exists():
        if json:
            print_json(
                header | {"store": None, "degradation": [vars(rung) for rung in active_rungs(None, config.load())]}
            )
            return
        typer.echo(f"Project {target.name} ({target.project_id[:12]}), {target.root}")
        typer.echo(f"  {rule_line}")
        typer.echo(f"No store yet at {path}: `agentctx record` or `agentctx init` creates it.")
        from agentctx_extract.backends import describe

        typer.echo(describe(config.load()))
        return
    with Store.open(path, create=False, readonly=cannot_write(path)) as store:
        sections = [section for provider in SECTIONS if (section := provider(store, target)) is not None]
    if json:
        print_json(header | {section.key: section.data for section in sections})
        return
    typer.echo(f"Project {target.name} ({target.project_id[:12]}), {target.root}")
    typer.echo(f"  {rule_line}")
    for section in sections:
        typer.echo(f"\n{section.title}")
        for line in section.lines:
            typer.echo(f"  {line}")


def register(app: typer.Typer) -> None:
    app.command("status")(status_cmd)
