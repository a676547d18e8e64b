"""Looking after the installation: `status` (what is stored, what it costs), `doctor` (what works,
what is missing and the command that adds it) and `config` (settings in config.json).

`status` is a list of sections (`STATUS_SECTIONS`): a later part adds its own by appending a
function from its `cmd_*.register()`, e.g. consolidation's near-duplicate and pruning candidates.
"""

from __future__ import annotations

import importlib.util
import json as jsonlib
import os
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store, config, paths
from agentctx_store.db import fts5_available, schema_version
from agentctx_store.errors import StoreError, ValidationError

from agentctx.cli._common import JsonOption, ProjectOption, print_json, project_for

# -- status -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StatusSection:
    """One block of `agentctx status`: lines for people, `data` for `--json`."""

    key: str
    title: str
    lines: list[str]
    data: Any = None


StatusProvider = Callable[[Store, Project], StatusSection | None]


def module_available(name: str) -> bool:
    """Whether a module could be imported, without importing it (the heavy ones cost seconds)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def sqlite_vec_loadable() -> bool:
    """sqlite-vec is installed and something can load it: the stdlib driver when built with
    extension loading (many Pythons are not), else apsw, which the [embeddings] extra brings."""
    loader = hasattr(sqlite3.Connection, "enable_load_extension") or module_available("apsw")
    return module_available("sqlite_vec") and loader


@dataclass(frozen=True, kw_only=True)
class Rung:
    rung: int
    name: str
    why: str
    fix: str


def active_rungs(store: Store | None, settings: dict[str, Any]) -> list[Rung]:
    """The degradation rungs (SPEC §8) in force right now, checked cheaply."""
    rungs: list[Rung] = []
    probe = sqlite3.connect(":memory:")
    try:
        fts5 = fts5_available(probe) and (store is None or store.has_fts)
    finally:
        probe.close()
    if not fts5:
        rungs.append(
            Rung(
                rung=4,
                name="like-search",
                why="this SQLite has no FTS5: search falls back to LIKE",
                fix="use a Python whose sqlite3 has FTS5 (python.org and uv builds do)",
            )
        )
    if not settings.get("llm", True):
        rungs.append(Rung(rung=3, name="no-llm", why="LLM extraction is off", fix="agentctx config --llm"))
    elif not os.environ.get("ANTHROPIC_API_KEY"):
        rungs.append(
            Rung(
                rung=3,
                name="no-llm",
                why="ANTHROPIC_API_KEY is not set: deterministic capture only",
                fix="export ANTHROPIC_API_KEY=...",
            )
        )
    elif not module_available("anthropic"):
        rungs.append(Rung(rung=3, name="no-llm", why="the anthropic package is missing", fix=install_command()))
    if not sqlite_vec_loadable():
        rungs.append(
            Rung(
                rung=2,
                name="no-vectors",
                why="sqlite-vec is not loadable: no offline vector work",
                fix=install_command("embeddings"),
            )
        )
    if not settings.get("embeddings", True):
        rungs.append(Rung(rung=2, name="no-embeddings", why="embeddings are off", fix="agentctx config --embeddings"))
    elif not (module_available("agentctx_embed") and module_available("fastembed")):
        rungs.append(
            Rung(
                rung=2,
                name="no-embeddings",
                why="the [embeddings] extra is not installed",
                fix=install_command("embeddings"),
            )
        )
    return rungs


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


def month_start(now: datetime | None = None) -> str:
    moment = now or datetime.now(UTC)
    return moment.strftime("%Y-%m-01T00:00:00.000Z")


def sessions_section(store: Store, project: Project) -> StatusSection:
    recent = store.list_sessions(project, limit=5)
    tokens_project = store.total_tokens_injected(project)
    tokens_all = store.total_tokens_injected()
    count, month_cost = store.conn.execute(
        "SELECT count(*), coalesce(sum(extraction_cost_usd), 0) FROM sessions WHERE started_at >= ?",
        (month_start(),),
    ).fetchone()
    cap = config.load().get("monthly_cap_usd")
    lines = [
        f"{session['started_at'][:16].replace('T', ' ')}  {session['session_id'][:12]:<12}  "
        f"{session['tokens_injected']:>6} tokens in {session['injections']} injections, "
        f"extraction ${session['extraction_cost_usd']:.4f}"
        for session in recent
    ] or ["(no sessions yet: hooks record them once `agentctx init` has run)"]
    lines.append(f"tokens injected: {tokens_project} in this project, {tokens_all} in all projects")
    lines.append(f"this month: {count} sessions, extraction ${month_cost:.2f} (cap ${cap})")
    data = {
        "recent": [
            {
                key: session.get(key)
                for key in (
                    "session_id",
                    "started_at",
                    "ended_at",
                    "tokens_injected",
                    "injections",
                    "extraction_cost_usd",
                )
            }
            for session in recent
        ],
        "tokens_injected_project": tokens_project,
        "tokens_injected_total": tokens_all,
        "month_sessions": count,
        "month_extraction_cost_usd": round(float(month_cost), 6),
        "monthly_cap_usd": cap,
    }
    return StatusSection(key="sessions", title="Sessions", lines=lines, data=data)


# Later parts append their own providers here (see the module docstring).
STATUS_SECTIONS: list[StatusProvider] = [records_section, store_section, degradation_section, sessions_section]


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
    with Store.open(path, create=False) as store:
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


@dataclass(frozen=True, kw_only=True)
class Check:
    name: str
    state: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str = ""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


# Where `uv tool install` takes agentctx from. A checkout path, never the bare name: on PyPI
# `agentctx` is an unrelated package.
INSTALL_SOURCE = "./packages/agentctx"


def install_command(extra: str | None = None) -> str:
    source = f"{INSTALL_SOURCE}[{extra}]" if extra else INSTALL_SOURCE
    return f"uv tool install --reinstall '{source}'  (in an agentctx checkout)"


OPTIONAL_PARTS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("embeddings", ("agentctx_embed", "fastembed"), "offline embeddings", install_command("embeddings")),
    ("sqlite-vec", ("sqlite_vec", "apsw"), "vector table for embeddings", install_command("embeddings")),
    ("dashboard", ("agentctx_ui", "fastapi", "uvicorn"), "local web dashboard", install_command("ui")),
    ("mcp", ("agentctx_mcp", "mcp"), "MCP server for Claude Code", install_command()),
    ("anthropic", ("agentctx_extract", "anthropic"), "session-end extraction", install_command()),
)


def _dir_writable(directory: Path) -> tuple[bool, str]:
    """Whether files can be created in `directory` (or, if absent, in its nearest existing parent)."""
    probe_dir = directory
    while not probe_dir.exists() and probe_dir != probe_dir.parent:
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        return False, f"{probe_dir} is not a directory"
    try:
        with tempfile.NamedTemporaryFile(dir=probe_dir, prefix=".agentctx-probe-"):
            pass
    except OSError as exc:
        return False, f"cannot create files in {probe_dir} ({exc.strerror})"
    return True, "writable" if probe_dir == directory else f"will be created (in {probe_dir})"


def check_store(path: Path) -> list[Check]:
    if not path.exists():
        return [Check(name="store", state="ok", detail=f"no store yet at {path}; the first record creates it")]
    try:
        store = Store.open(path, create=False)
    except StoreError as exc:
        return [Check(name="store", state="fail", detail=str(exc))]
    try:
        checks = [Check(name="store", state="ok", detail=f"{path}, schema {schema_version()}")]
        mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
        checks.append(
            Check(
                name="wal",
                state="ok" if mode.lower() == "wal" else "fail",
                detail=f"journal_mode={mode}",
                fix="" if mode.lower() == "wal" else "remove stale -journal files next to the store, then rerun",
            )
        )
        try:
            store.conn.execute("BEGIN IMMEDIATE")
            store.conn.execute("ROLLBACK")
            checks.append(Check(name="store writable", state="ok", detail="a write transaction can start"))
        except sqlite3.Error as exc:
            checks.append(
                Check(name="store writable", state="fail", detail=str(exc), fix="fix the permissions of the data dir")
            )
        checks.append(
            Check(
                name="full-text index",
                state="ok" if store.has_fts else "warn",
                detail="records_fts present" if store.has_fts else "no FTS5 index: search runs on LIKE (rung 4)",
            )
        )
    finally:
        store.close()
    return checks


def check_config(path: Path) -> Check:
    if not path.exists():
        return Check(name="config", state="ok", detail="defaults (no config.json yet)")
    try:
        text = path.read_text(encoding="utf-8")
        data = jsonlib.loads(text)
    except (OSError, UnicodeDecodeError, jsonlib.JSONDecodeError):
        data = None
    if not isinstance(data, dict) or data.get(config.MARKER) != config.MARKER_VALUE:
        return Check(
            name="config",
            state="fail",
            detail=f"{path} was not written by agentctx; it is left alone and defaults apply",
            fix="move it aside, or set AGENTCTX_HOME to another directory",
        )
    return Check(name="config", state="ok", detail=str(path))


def claude_settings_files(project: Project) -> list[Path]:
    return [
        Path.home() / ".claude" / "settings.json",
        project.root / ".claude" / "settings.json",
        project.root / ".claude" / "settings.local.json",
    ]


def hook_events(settings_path: Path) -> list[str] | None:
    """Claude Code hook events whose command runs `agentctx hook`; None if the file is unreadable."""
    try:
        data = jsonlib.loads(settings_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, jsonlib.JSONDecodeError):
        return None
    hooks = data.get("hooks") if isinstance(data, dict) else None
    events: list[str] = []
    for event, groups in (hooks or {}).items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks", []) if isinstance(group, dict) else []
            for entry in entries if isinstance(entries, list) else ():
                command = entry.get("command", "") if isinstance(entry, dict) else ""
                if isinstance(command, str) and "agentctx" in command and " hook" in command and event not in events:
                    events.append(event)
    return events


def check_hooks(project: Project) -> Check:
    found: dict[str, list[str]] = {}
    unreadable: list[str] = []
    for settings_path in claude_settings_files(project):
        events = hook_events(settings_path)
        if events is None:
            unreadable.append(str(settings_path))
        elif events:
            found[str(settings_path)] = events
    if found:
        detail = "; ".join(f"{where}: {', '.join(events)}" for where, events in found.items())
        return Check(name="claude code hooks", state="ok", detail=detail, extra={"registered": found})
    detail = "not registered in Claude Code settings"
    if unreadable:
        detail += f" (could not parse {', '.join(unreadable)})"
    return Check(name="claude code hooks", state="warn", detail=detail, fix="agentctx init", extra={"registered": {}})


def run_checks(project: Project) -> list[Check]:
    probe = sqlite3.connect(":memory:")
    try:
        fts5 = fts5_available(probe)
    finally:
        probe.close()
    checks = [
        Check(
            name="fts5",
            state="ok" if fts5 else "warn",
            detail=f"sqlite {sqlite3.sqlite_version}, FTS5 {'available' if fts5 else 'missing: search degrades to LIKE'}",
        )
    ]
    home = paths.home()
    writable, detail = _dir_writable(home)
    checks.append(
        Check(
            name="data dir",
            state="ok" if writable else "fail",
            detail=f"{home}: {detail}",
            fix="" if writable else "set AGENTCTX_HOME to a writable directory",
        )
    )
    checks.append(check_config(paths.config_path()))
    checks.extend(check_store(paths.db_path()))
    for name, modules, what, fix in OPTIONAL_PARTS:
        missing = [module for module in modules if not module_available(module)]
        checks.append(
            Check(
                name=name,
                state="ok" if not missing else "warn",
                detail=f"{what}: installed" if not missing else f"{what}: not installed ({', '.join(missing)})",
                fix=fix if missing else "",
            )
        )
    key = bool(os.environ.get("ANTHROPIC_API_KEY"))
    checks.append(
        Check(
            name="api key",
            state="ok" if key else "warn",
            detail="ANTHROPIC_API_KEY is set" if key else "ANTHROPIC_API_KEY is not set: no LLM extraction (rung 3)",
            fix="" if key else "export ANTHROPIC_API_KEY=... (or `agentctx config --no-llm` to silence this)",
        )
    )
    checks.append(check_hooks(project))
    return checks


def doctor_cmd(project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """Check that agentctx works here: FTS5, WAL, a writable store, optional parts, Claude Code hooks.

    Exits 1 when a check fails (warnings are degraded but working service).
    """
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
