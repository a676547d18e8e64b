"""Looking after the installation: `status` (what is stored, what it costs), `doctor` (what works,
what is missing and the command that adds it) and `config` (settings in config.json).

`status` is a list of sections (`STATUS_SECTIONS`): a later part adds its own by appending a
function from its `cmd_*.register()`, e.g. consolidation's near-duplicate and pruning candidates.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store, paths
from agentctx_store.errors import ValidationError
from agentctx_store.upkeep import config, digest, spend

from agentctx.cli._common import JsonOption, ProjectOption, cannot_write, print_json, project_for
from agentctx.cli._health import Check, active_rungs, check_config, run_checks

__all__ = ["STATUS_SECTIONS", "Check", "StatusProvider", "StatusSection", "register"]

# -- status -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StatusSection:
    """One block of `agentctx status`: lines for people, `data` for `--json`."""

    key: str
    title: str
    lines: list[str]
    data: Any = None


StatusProvider = Callable[[Store, Project], StatusSection | None]


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
    size = store_size(store.path)
    version = store.conn.execute("PRAGMA user_version").fetchone()[0]
    lines = [
        f"{store.path}  {size / 1024:.0f} KiB, schema {version}, full-text index: {'yes' if store.has_fts else 'no'}"
    ]
    data = {"path": str(store.path), "bytes": size, "schema_version": version, "fts5": store.has_fts}
    return StatusSection(key="store", title="Store", lines=lines, data=data)


def degradation_section(store: Store, project: Project) -> StatusSection:
    rungs = active_rungs(store, config.load())
    lines = [f"rung {rung.rung} {rung.name}: {rung.why} (fix: {rung.fix})" for rung in rungs] or ["none: full service"]
    data = [{"rung": rung.rung, "name": rung.name, "why": rung.why, "fix": rung.fix} for rung in rungs]
    return StatusSection(key="degradation", title="Degradation", lines=lines, data=data)


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
    }
    return StatusSection(key="sessions", title="Sessions", lines=lines, data=data)


def _usage_text(usage: dict[str, Any]) -> str:
    """`$0.0123 (1 run: 12,345 in, 0 cached, 456 out)`, or `none` before any run."""
    if not usage["runs"] and not usage["cost_usd"]:
        return "none"
    runs = f"{usage['runs']} run{'s' if usage['runs'] != 1 else ''}"
    tokens = f"{usage['input_tokens']:,} in, {usage['cached_tokens']:,} cached, {usage['output_tokens']:,} out"
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


# Later parts append their own providers here (see the module docstring).
STATUS_SECTIONS: list[StatusProvider] = [
    records_section,
    store_section,
    digest_section,
    degradation_section,
    sessions_section,
]


def status_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """What is stored for this project, what is degraded, and what sessions injected and cost."""
    target = project_for(project)
    path = paths.db_path()
    header = {"project": target.name, "project_id": target.project_id, "root": str(target.root)}
    if not path.exists():
        if json:
            print_json(
                header | {"store": None, "degradation": [vars(rung) for rung in active_rungs(None, config.load())]}
            )
            return
        typer.echo(f"Project {target.name} ({target.project_id[:12]}), {target.root}")
        typer.echo(f"No store yet at {path}: `agentctx record` or `agentctx init` creates it.")
        return
    with Store.open(path, create=False, readonly=cannot_write(path)) as store:
        sections = [section for provider in STATUS_SECTIONS if (section := provider(store, target)) is not None]
    if json:
        print_json(header | {section.key: section.data for section in sections})
        return
    typer.echo(f"Project {target.name} ({target.project_id[:12]}), {target.root}")
    for section in sections:
        typer.echo(f"\n{section.title}")
        for line in section.lines:
            typer.echo(f"  {line}")


# -- doctor -----------------------------------------------------------------------------


def doctor_cmd(
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
    fix_modes: bool = typer.Option(
        False, "--fix-modes", help="Make the data dir private first (folders 0700, files 0600)."
    ),
) -> None:
    """Check that agentctx works here: FTS5, WAL, a writable store, private files, optional parts, Claude Code hooks.

    Exits 1 when a check fails (warnings are degraded but working service).
    """
    if fix_modes:
        from agentctx.cli._private import fix_modes as make_private

        changed = make_private(paths.home())
        if not json:
            typer.echo(f"Made {changed} path(s) private in {paths.home()}")
    target = project_for(project)
    checks = run_checks(target)
    if json:
        print_json([vars(check) for check in checks])
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for check in checks:
            typer.echo(f"[{marks[check.state]}] {check.name}: {check.detail}")
            if check.fix:
                typer.echo(f"       fix: {check.fix}")
    if any(check.state == "fail" for check in checks):
        raise typer.Exit(1)


# -- config -----------------------------------------------------------------------------


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
    foreign = check_config(paths.config_path())
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
    app.command("status")(status_cmd)
    app.command("doctor")(doctor_cmd)
    app.command("config")(config_cmd)
