"""`agentctx remote add|share|sync|status|remove|init`: one memory across machines and a team,
synced through PostgreSQL (package `agentctx-remote`, the `[remote]` extra; docs/remote.md).

Not `agentctx sync`, which compares CLAUDE.md with the store. psycopg is imported only when a
command talks to a server; `remote status` and the `agentctx status` section read the store.
"""

from __future__ import annotations

import json as jsonlib
import os
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import typer
from agentctx_store import Project, Store
from agentctx_store.errors import AgentctxError
from agentctx_store.sharing import team

from agentctx.cli._common import JsonOption, StatusSection, open_store, print_json, project_for
from agentctx.cli._install import install_command

remote_app = typer.Typer(
    help="Sync the store with a PostgreSQL remote: one memory across your machines and your team.",
    no_args_is_help=True,
)

TypeOption = typer.Option(
    None, "--type", "-t", help="A record type to share (repeat; default: decision, convention, discovery)."
)
ConfidenceOption = typer.Option(
    None, "--confidence", help="A confidence to share (repeat; default: explicit; inferred only when named)."
)
ProjectsOption = typer.Option(
    None, "--project", "-p", help="A project directory to share (repeat; default: the current directory's project)."
)
GlobalOption = typer.Option(False, "--global", help="Also sync global records (a personal remote across machines).")


def _package() -> ModuleType:
    """`agentctx_remote`, or one line on how to install it."""
    try:
        import agentctx_remote
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("agentctx_remote", "psycopg"):
            raise
        raise AgentctxError(
            f"Remote sync needs agentctx-remote. Install it with: {install_command('remote')}"
        ) from None
    return agentctx_remote


def _sync(store: Store, name: str) -> dict[str, Any]:
    _package()
    from agentctx_remote import sync

    # bounds for tests and slow links (docs/remote.md#faults): rows per batch, seconds a push waits
    # for another's lock, seconds one step with the server may take before the sync gives up
    batch = max(1, int(_env_number("AGENTCTX_REMOTE_BATCH", 5000)))
    lock_timeout = _env_number("AGENTCTX_REMOTE_LOCK_TIMEOUT", 60)
    timeout = _env_number("AGENTCTX_REMOTE_TIMEOUT", 120)
    return dict(vars(sync(store, name, batch=batch, lock_timeout=lock_timeout, timeout=timeout)))


def _env_number(variable: str, default: float) -> float:
    """A positive number from the environment, or `default` when unset or not one."""
    try:
        value = float(os.environ.get(variable) or default)
    except ValueError:
        return default
    return value if 0 < value < 1e6 else default


def _rule(
    projects: list[Path] | None, types: list[str] | None, confidences: list[str] | None, global_records: bool
) -> Any:
    from agentctx_remote.rule import DEFAULT_CONFIDENCES, DEFAULT_TYPES, ShareRule, check_rule

    chosen: list[Project] = [project_for(path) for path in projects] if projects else [project_for(None)]
    check_rule(types or [], confidences or [])
    return ShareRule(
        projects=tuple(dict.fromkeys(p.project_id for p in chosen)),
        types=tuple(types) if types else DEFAULT_TYPES,
        confidences=tuple(confidences) if confidences else DEFAULT_CONFIDENCES,
        global_records=global_records,
        names={p.project_id: p.name for p in chosen},
    )


@remote_app.command("add")
def add_cmd(
    name: str = typer.Argument(..., help="A short name for the remote, such as `team`."),
    url: str = typer.Argument(..., help="postgresql://USER@HOST[:PORT]/DB[?sslmode=verify-full] (no password)."),
    project: list[Path] | None = ProjectsOption,
    record_type: list[str] | None = TypeOption,
    confidence: list[str] | None = ConfidenceOption,
    global_records: bool = GlobalOption,
) -> None:
    """Add a remote and what it shares. The password comes from ~/.pgpass (PGPASSFILE) or PGPASSWORD.

    Example:
        agentctx remote add team postgresql://alice@db.example.com/agentctx?sslmode=verify-full
    """
    package = _package()
    rule = _rule(project, record_type, confidence, global_records)
    with open_store() as store:
        package.add(store, name, url, rule)
    typer.echo(
        f"Added remote {name!r}. `agentctx remote sync {name}` syncs it now; sessions sync it in the background."
    )
    for line in _rule_lines(rule.to_json()):
        typer.echo(f"  {line}")


@remote_app.command("share")
def share_cmd(
    name: str = typer.Argument(..., help="The remote."),
    project: list[Path] | None = ProjectsOption,
    record_type: list[str] | None = TypeOption,
    confidence: list[str] | None = ConfidenceOption,
    global_records: bool = GlobalOption,
) -> None:
    """Change what a remote shares; the next sync sends and fetches only what the new rule newly covers.

    Example:
        agentctx remote share team -p . -p ../api --type decision --type convention --type bugfix
    """
    package = _package()
    rule = _rule(project, record_type, confidence, global_records)
    with open_store() as store:
        package.get(store, name)
        package.set_rule(store, name, rule)
    for line in _rule_lines(rule.to_json()):
        typer.echo(f"  {line}")


@remote_app.command("sync")
def sync_cmd(
    name: str | None = typer.Argument(None, help="The remote (default: every remote)."),
    background: bool = typer.Option(
        False, "--background", hidden=True, help="Run as the hooks' detached sync: only due remotes, no output."
    ),
    json: bool = JsonOption,
) -> None:
    """Push this store's changes to a remote and pull the others' (push, then pull; safe to interrupt).

    Example:
        agentctx remote sync team
    """
    try:
        package = _package()
    except AgentctxError:
        if background:  # a remote was added, then agentctx-remote went: ask the hooks again in a day
            _postpone_background_sync(24 * 3600)
        raise
    from agentctx_store.clock import utc_now

    failed = False
    reports: list[dict[str, Any]] = []
    with open_store() as store:
        names = [name] if name else [remote.name for remote in package.all_remotes(store)]
        if name:
            package.get(store, name)
        for each in names:
            remote = package.get(store, each)
            if background and remote.next_attempt and remote.next_attempt > utc_now():
                continue  # backing off after a failure
            try:
                report = _sync(store, each)
            except AgentctxError as exc:
                failed = True
                if not background:
                    typer.echo(f"Error: {exc}", err=True)
                reports.append({"name": each, "error": str(exc)})
                continue
            reports.append(report)
            if not json and not background:
                typer.echo(_report_line(report))
    if json:
        print_json(reports)
    if failed and not background:
        raise typer.Exit(1)


def _postpone_background_sync(seconds: int) -> None:
    import contextlib
    import time

    from agentctx_store import paths
    from agentctx_store.files import atomic_write

    with contextlib.suppress(OSError):
        atomic_write(Path(paths.remote_schedule_path()), f"{int(time.time()) + seconds}\n")


def _report_line(report: dict[str, Any]) -> str:
    line = f"{report['name']}: pushed {report['pushed']}, pulled {report['pulled']} ({report['applied']} applied"
    if report["conflicts"]:
        line += f", {report['conflicts']} concurrent edits kept as two heads: `agentctx review`"
    if report["refused"]:
        line += f", {report['refused']} refused"
    line += ")"
    if report.get("retired"):
        line += f"; {report['retired']} retired there (they left what it shares)"
    if report["not_granted"]:
        line += f"; no grant for {', '.join(report['not_granted'])}"
    return line


@remote_app.command("status")
def status_cmd(json: bool = JsonOption) -> None:
    """List the remotes: what each shares, the last sync, failures since when, what waits to be pushed.

    Example:
        agentctx remote status
    """
    with open_store(read=True) as store:
        rows = _remote_rows(store)
    if json:
        print_json(rows)
        return
    if not rows:
        typer.echo("No remote. `agentctx remote add NAME postgresql://USER@HOST/DB` adds one (docs/remote.md).")
        return
    for row in rows:
        for line in _remote_lines(row):
            typer.echo(line)


@remote_app.command("remove")
def remove_cmd(name: str = typer.Argument(..., help="The remote.")) -> None:
    """Forget a remote here (the server keeps its log; records pulled from it stay).

    Example:
        agentctx remote remove team
    """
    package = _package()
    with open_store() as store:
        package.get(store, name)
        package.remove(store, name)
    typer.echo(f"Removed remote {name!r}.")


@remote_app.command("init")
def init_cmd(name: str = typer.Argument(..., help="The remote, as added with `agentctx remote add`.")) -> None:
    """Create or migrate the agentctx schema on a remote (run once by its admin; docs/remote.md#access-grants).

    Example:
        agentctx remote init team
    """
    package = _package()
    with open_store() as store:
        remote = package.get(store, name)
    conn = package.connect(remote.url, name=name)
    try:
        before, after = package.init_schema(conn, name)
    finally:
        conn.close()
    if before == after:
        typer.echo(f"Remote {name!r} already has agentctx schema {after}.")
    else:
        typer.echo(
            f"Remote {name!r}: agentctx schema {before} -> {after}. Grant members as docs/remote.md#access-grants shows."
        )


# -- what status shows (the store only: no psycopg) -----------------------------------------


def _remote_rows(store: Store) -> list[dict[str, Any]]:
    try:
        remotes = store.conn.execute("SELECT * FROM remotes ORDER BY name").fetchall()
    except sqlite3.OperationalError:
        return []
    out: list[dict[str, Any]] = []
    for row in remotes:
        waiting = store.conn.execute(
            "SELECT count(*) FROM record_ops WHERE origin IS NULL AND seq > ?", (row["pushed_seq"],)
        ).fetchone()[0]
        rule: dict[str, Any] = jsonlib.loads(row["rule"] or "{}")
        shared: list[str] = rule.get("projects") or []
        conflicts = sum(
            len(team.heads_conflicts(store, Project(project_id=project_id, root="", name=project_id)))
            for project_id in shared
        )
        out.append(
            {
                "name": row["name"],
                "url": row["url"],
                "rule": rule,
                "last_ok": row["last_ok"],
                "failing_since": row["failing_since"],
                "last_error": row["last_error"],
                "next_attempt": row["next_attempt"],
                "waiting_operations": waiting,
                "conflicts": conflicts,
            }
        )
    return out


def _rule_lines(rule_json: str) -> list[str]:
    rule: dict[str, Any] = jsonlib.loads(rule_json or "{}")
    names: dict[str, str] = rule.get("names") or {}
    ids: list[str] = rule.get("projects") or []
    projects = ", ".join(f"{names.get(p, p)} ({p})" for p in ids) or "none"
    lines = [
        f"projects: {projects}",
        f"types: {', '.join(rule.get('types') or ['decision', 'convention', 'discovery'])}",
        f"confidences: {', '.join(rule.get('confidences') or ['explicit'])}",
        f"global records: {'yes' if rule.get('global') else 'no'}; redacted records: never",
    ]
    return lines


def _remote_lines(row: dict[str, Any]) -> list[str]:
    lines = [f"{row['name']}  {row['url']}"]
    lines += [f"  {line}" for line in _rule_lines(jsonlib.dumps(row["rule"]))]
    if row["failing_since"]:
        lines.append(f"  failing since {row['failing_since']}: {row['last_error']}")
        lines.append(f"  next attempt {row['next_attempt']} (`agentctx remote sync {row['name']}` tries now)")
    lines.append(f"  last sync: {row['last_ok'] or 'never'}; {row['waiting_operations']} local operations not yet sent")
    if row["conflicts"]:
        lines.append(f"  {row['conflicts']} concurrent edits kept as two heads: `agentctx review` resolves them")
    return lines


def remote_section(store: Store, project: Project) -> StatusSection | None:
    """The `Remotes` block of `agentctx status`, once a remote is added."""
    rows = _remote_rows(store)
    if not rows:
        return None
    lines: list[str] = []
    for row in rows:
        state = (
            f"failing since {row['failing_since']}"
            if row["failing_since"]
            else f"last sync {row['last_ok'] or 'never'}"
        )
        line = f"{row['name']}: {state}, {row['waiting_operations']} operations to send"
        if row["conflicts"]:
            line += f", {row['conflicts']} two-heads conflicts (`agentctx review`)"
        lines.append(line)
    return StatusSection(key="remotes", title="Remotes", lines=lines, data=rows)


def register(app: typer.Typer) -> None:
    app.add_typer(remote_app, name="remote")
