"""`agentctx init` and `agentctx uninstall`: the only commands that touch a client's files
(docs/adr/0015-explicit-reversible-install.md).

init registers the hooks in `~/.claude/settings.json` (or the repository's
`.claude/settings.json` with `--project`), registers the MCP server at user scope and detects
the project profile; with `--client` it does the same for the other clients. Every edit is
surgical and idempotent, with a backup beside the file, and goes through `_config_file`
(through a symlink, atomically, refusing what it cannot change safely); `--dry-run` prints the
exact diff instead. uninstall removes exactly what init added, byte for byte when the file is
unchanged since. What each client's files hold is its module in `agentctx.cli.clients`
(unit-tested); this module runs the steps in order.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from agentctx_store import clients as registry
from agentctx_store import paths
from agentctx_store.errors import ValidationError

from agentctx.cli._common import StatusSection, open_store, project_for
from agentctx.cli.learn import offer_learn

DirOption = typer.Option(
    "--dir", "-C", help="The project directory (default: the current directory).", show_default=False
)


# -- init ----------------------------------------------------------------------------------


def init(
    project: Annotated[
        bool,
        typer.Option(
            "--project",
            help="Register the hooks in this repository's .claude/settings.json (Gemini: .gemini/settings.json; "
            "Codex has no project scope).",
        ),
    ] = False,
    directory: Annotated[Path | None, DirOption] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the exact changes and write nothing.")] = False,
    mcp_always_load: Annotated[
        bool,
        typer.Option("--mcp-always-load", help='Add "alwaysLoad": true so the ctx_* tools are never deferred.'),
    ] = False,
    no_mcp: Annotated[bool, typer.Option("--no-mcp", help="Do not register the MCP server.")] = False,
    claude_version: Annotated[
        str | None,
        typer.Option(
            "--claude-version",
            help="The Claude Code version to register events for (default: `claude --version`).",
            show_default=False,
        ),
    ] = None,
    client: Annotated[
        list[str] | None,
        typer.Option(
            "--client",
            help=f"Which agent to set up: {', '.join(registry.names())}, or all (every one on PATH); repeatable. "
            f"Default: {registry.DEFAULT}.",
            show_default=False,
        ),
    ] = None,
    learn: Annotated[
        bool | None,
        typer.Option(
            "--learn/--no-learn",
            help="Learn records from the project's ADRs and instruction files now (default: ask when interactive).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Set agentctx up for Claude Code (or Codex CLI, Gemini CLI): data dir, hooks, MCP server, profile.

    Only the hook events the installed Claude Code knows are registered (older clients reject a
    whole settings file that names an unknown one); without `claude` on PATH that is the classic
    six. The hook command is the absolute path of this installation's `agentctx` script, so it
    needs no PATH lookup and keeps working across upgrades. Running it again changes nothing.

    All clients share one store: a decision recorded in one is injected in the others.

    The same rule for every client: each one named (default: Claude Code) is registered whether or
    not its CLI is installed yet, and init says so when it is not on PATH (the registration takes
    effect once it is). `--client all` is every client on PATH, and with none there registers nothing.

    \b
    Example:
        agentctx init --dry-run
        agentctx init --project --mcp-always-load
        agentctx init --client codex --client gemini
    """
    from agentctx_hooks.ondemand import profile

    from agentctx.cli import _config_file as files
    from agentctx.cli import clients as setups
    from agentctx.cli.clients import _manifest, claude

    if directory is not None and not directory.is_dir():
        raise ValidationError(f"No such directory {str(directory)!r}; pass an existing project directory to --dir.")
    clients = setups.in_scope(client, setups.expand(client), project=project, command="init")
    if registry.DEFAULT not in clients:
        _init_other_clients(clients, directory=directory, project=project, dry_run=dry_run, no_mcp=no_mcp, learn=learn)
        return
    version = claude.parse_version(claude_version) if claude_version else claude.detect_version()
    if claude_version and version is None:
        raise ValidationError(f"{claude_version!r} is not a version like 2.1.83; pass what `claude --version` prints.")
    events = claude.events_for(version)
    base = setups.agentctx_command()
    target = claude.settings_path(project, directory)
    repository = Path(project_for(directory).root) if project else None
    if repository is not None:
        files.in_repository(repository, target)  # a link committed there is never followed
    data_home = Path(paths.home())
    hooks_plan = claude.plan_hooks(target, base, events)
    mcp_plan = None if no_mcp else claude.plan_mcp(base, always_load=mcp_always_load)
    detected = profile.detect(str(project_for(directory).root))

    shown_version = ".".join(map(str, version)) if version else "unknown (`claude` not on PATH)"
    typer.echo(f"Claude Code version: {shown_version}; events: {', '.join(events)}")
    note = None if claude_version else setups.not_installed_note(registry.DEFAULT)
    if note:
        typer.echo(note)
    others = [name for name in clients if name != registry.DEFAULT]
    if dry_run:
        typer.echo(claude.show_hooks(hooks_plan))
        if mcp_plan is not None:
            typer.echo(mcp_plan["preview"])
        for name in others:
            setups.init_client(
                name,
                base=base,
                manifest=_manifest.load_manifest(data_home),
                dry_run=True,
                no_mcp=no_mcp,
                project_root=Path(project_for(directory).root) if project else None,
            )
        for entry in detected:
            typer.echo(f"profile {entry.key}: {entry.body}")
        offer_learn(project_for(directory), learn, dry_run=True)
        typer.echo("Dry run: nothing was written.")
        return

    for name in others:  # a malformed config of another client refuses before anything is written
        setups.plan_only(
            name, base=base, no_mcp=no_mcp, project_root=Path(project_for(directory).root) if project else None
        )
    data_home.mkdir(parents=True, exist_ok=True)
    manifest = _manifest.load_manifest(data_home)
    claude.write_hooks(hooks_plan, manifest, events=events, repository=repository)
    if mcp_plan is not None:
        manifest["mcp"] = claude.apply_mcp_plan(mcp_plan, manifest.get("mcp"))
    _manifest.save_manifest(data_home, manifest)
    if others:
        _init_other_clients(
            others, directory=directory, project=project, dry_run=False, no_mcp=no_mcp, profile_too=False
        )
    _profile_and_store(directory, detected, learn=learn)


def _init_other_clients(
    clients: list[str],
    *,
    directory: Path | None,
    project: bool,
    dry_run: bool,
    no_mcp: bool,
    profile_too: bool = True,
    learn: bool | None = None,
) -> None:
    """init for the clients but the default one (`agentctx.cli.clients`), then the shared profile and store."""
    from agentctx_hooks.ondemand import profile

    from agentctx.cli import clients as setups
    from agentctx.cli.clients import _manifest

    base = setups.agentctx_command()
    data_home = Path(paths.home())
    manifest = _manifest.load_manifest(data_home)
    project_root = Path(project_for(directory).root) if project else None
    for name in clients:  # a malformed config of any of them refuses before anything is written
        setups.plan_only(name, base=base, no_mcp=no_mcp, project_root=project_root)
    for name in clients:
        setups.init_client(
            name, base=base, manifest=manifest, dry_run=dry_run, no_mcp=no_mcp, project_root=project_root
        )
    detected = profile.detect(str(project_for(directory).root))
    if dry_run:
        for entry in detected:
            typer.echo(f"profile {entry.key}: {entry.body}")
        typer.echo("Dry run: nothing was written.")
        return
    data_home.mkdir(parents=True, exist_ok=True)
    _manifest.save_manifest(data_home, manifest)
    if profile_too:
        _profile_and_store(directory, detected, learn=learn)


def _profile_and_store(directory: Path | None, detected: list[Any], *, learn: bool | None = None) -> None:
    from agentctx_hooks.ondemand import profile

    data_home = Path(paths.home())
    root_project = project_for(directory)
    with open_store() as store:  # creates the store, so the first hook finds it
        if detected or (Path(root_project.root) / ".git").exists():  # not for a home dir or a scratch folder
            store.remember_project(root_project)
            written = profile.refresh(store, root_project, source="cli")
            shown = ", ".join(written) if written else ("unchanged" if detected else "nothing recognised")
            typer.echo(f"Profile of {root_project.name}: {shown}")
        else:
            typer.echo(f"Profile: {root_project.root} is not a project (no repository, no manifest); skipped")
    offer_learn(root_project, learn)
    typer.echo(f"Data: {data_home}")


# -- uninstall -------------------------------------------------------------------------------


def uninstall(
    project: Annotated[
        bool, typer.Option("--project", help="Only remove the hooks from this repository's .claude/settings.json.")
    ] = False,
    directory: Annotated[Path | None, DirOption] = None,
    purge: Annotated[bool, typer.Option("--purge", help="Also delete the data agentctx created (asks first).")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before --purge deletes data.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the exact changes and write nothing.")] = False,
    client: Annotated[
        list[str] | None,
        typer.Option(
            "--client",
            help=f"Only this client: {', '.join(registry.names())}, or all; repeatable. "
            "Default: every client init set up.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Remove what `agentctx init` added: our hook entries, the MCP server, and with --purge the data.

    A file still exactly as init left it gets back the bytes init found (a file init created is
    removed); in a file edited since, only our entries come out and other tools' hooks and every
    other setting stay as they are. A symlinked config is edited through the link, and a link is
    never removed. --purge deletes only files agentctx created.

    \b
    Example:
        agentctx uninstall --dry-run
        agentctx uninstall --purge --yes
    """
    from agentctx.cli import clients as setups
    from agentctx.cli.clients import _manifest, claude

    data_home = Path(paths.home())
    manifest = _manifest.load_manifest(data_home)
    if client:
        chosen: list[str] = setups.expand([name for name in client if name != "all"] or [registry.DEFAULT])
        chosen = list(registry.names()) if "all" in client else chosen
        chosen = setups.in_scope(client, chosen, project=project, command="uninstall")
    else:
        recorded: dict[str, Any] = manifest.get("clients") or {}
        chosen = [registry.DEFAULT, *[other.name for other in registry.others() if other.name in recorded]]
    if registry.DEFAULT in chosen:
        claude.remove(manifest, project=project, directory=directory, dry_run=dry_run)
    for name in chosen:
        # a client without a project scope has no project-scope registration to remove
        if name != registry.DEFAULT and not (project and setups.setup_for(name).NO_PROJECT_SCOPE):
            setups.uninstall_client(
                name, manifest, dry_run=dry_run, project_root=Path(project_for(directory).root) if project else None
            )
    if not dry_run and data_home.is_dir():
        _manifest.save_manifest(data_home, manifest)
    if purge:
        _purge(data_home, yes=yes, dry_run=dry_run)
    if dry_run:
        typer.echo("Dry run: nothing was written.")


def _purge(data_home: Path, *, yes: bool, dry_run: bool) -> None:
    """Delete the files agentctx created, by name (`_purge.py`); a folder only once it is empty."""
    import tempfile

    from agentctx_store import config

    from agentctx.cli import _purge as purge

    config_file = Path(paths.config_path())
    try:
        marked = json.loads(config_file.read_text(encoding="utf-8")).get(config.MARKER) == config.MARKER_VALUE
    except (OSError, ValueError, AttributeError):
        marked = False  # absent, unreadable, or another program's config.json: not ours to delete
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    legacy = Path(tempfile.gettempdir()) / f"agentctx-{uid}"  # where versions before 0.2 kept session state
    doomed = purge.our_paths(data_home, config_is_ours=marked, legacy_state=legacy)
    if not doomed:
        typer.echo(f"Purge: nothing of agentctx's in {data_home}")
        if not dry_run and data_home not in purge.delete([], purge.our_folders(data_home, legacy_state=legacy)):
            typer.echo(f"Purge: removed {data_home} (empty)")
        return
    typer.echo("Purge would delete:" if dry_run else "Purge deletes:")
    for path in doomed:
        typer.echo(f"  {path}{'/' if path.is_dir() else ''}")
    if dry_run:
        return
    from agentctx_store.db import in_use_elsewhere

    if in_use_elsewhere(paths.db_path()):  # deleting a live store's WAL would lose its last writes
        raise ValidationError(
            "Purge: the store is open in another process (the warm service, an MCP server, the dashboard or a "
            "hook); end your agent sessions and `agentctx ui`, then run this again. Nothing was deleted."
        )
    if not yes and not typer.confirm("Delete these files for good?", default=False):
        raise typer.Abort()
    kept = purge.delete(doomed, purge.our_folders(data_home, legacy_state=legacy))
    if data_home in kept:
        left = ", ".join(sorted(child.name for child in data_home.iterdir()))
        typer.echo(f"Purge: kept {data_home} (not ours: {left})")
    else:
        typer.echo(f"Purge: removed {data_home}")


# -- `agentctx status`: what the hooks have been doing ----------------------------------------

ERROR_WINDOW_SECONDS = 24 * 3600


def hooks_status(store: Any, project: Any) -> StatusSection:
    """A `status` section: captures waiting in the spool, and hook failures of the last day
    (hooks fail silently by design, so this is where a broken setup shows)."""
    import time

    from agentctx_hooks import log, spool

    waiting = len(spool.pending())
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - ERROR_WINDOW_SECONDS))
    errors: list[str] = []
    try:
        with open(log.log_path(), encoding="utf-8", errors="replace") as handle:
            errors = [line.rstrip() for line in handle if " error " in line and line[:20] >= cutoff]
    except OSError:
        pass
    lines = [f"{waiting} tool capture(s) waiting for the next hook", f"{len(errors)} hook error(s) in the last 24 h"]
    if errors:
        lines.append(f"last: {errors[-1][:200]} (all in {log.log_path()})")
    data = {"spool_waiting": waiting, "errors_24h": len(errors), "last_error": errors[-1] if errors else None}
    return StatusSection(key="hooks", title="Hooks", lines=lines, data=data)


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("uninstall")(uninstall)
