"""`agentctx init` and `agentctx uninstall`: the only commands that touch Claude Code's files
(docs/adr/0015-explicit-reversible-install.md).

init registers the hooks in `~/.claude/settings.json` (or the repository's
`.claude/settings.json` with `--project`), registers the MCP server at user scope and detects
the project profile. Every edit is surgical and idempotent, with a backup beside the file, and
goes through `_config_file` (through a symlink, atomically, refusing what it cannot change safely);
`--dry-run` prints the exact diff instead. uninstall removes exactly what init added, byte for byte
when the file is unchanged since. The
planning lives in `_registration` and the JSON surgery in `agentctx.cli._hook_settings` (both unit-tested).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Annotated, Any

import typer
from agentctx_store import paths
from agentctx_store.errors import ValidationError

from agentctx.cli._common import StatusSection, open_store, project_for
from agentctx.cli.learn import offer_learn

DirOption = typer.Option(
    "--dir", "-C", help="The project directory (default: the current directory).", show_default=False
)


def claude_home() -> Path:
    """Claude Code's config folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() if override else Path.home() / ".claude"


def claude_json_path() -> Path:
    """Where user-scope MCP servers live: `~/.claude.json` (inside `$CLAUDE_CONFIG_DIR` when set)."""
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() / ".claude.json" if override else Path.home() / ".claude.json"


def settings_path(project_scope: bool, directory: Path | None) -> Path:
    if project_scope:
        return Path(project_for(directory).root) / ".claude" / "settings.json"
    return claude_home() / "settings.json"


def _fail(exc: Exception) -> ValidationError:
    return ValidationError(str(exc))


def _run_claude(claude: str, *args: str) -> None:
    done = subprocess.run([claude, *args], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise ValidationError(f"`claude {' '.join(args[:3])}` failed ({detail[0]}); run it by hand or use --no-mcp.")


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
            help="Which agent to set up: claude, codex, gemini, or all (every one on PATH); repeatable. "
            "Default: claude.",
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

    \b
    Example:
        agentctx init --dry-run
        agentctx init --project --mcp-always-load
        agentctx init --client codex --client gemini
    """
    from agentctx_hooks.ondemand import profile

    from agentctx.cli import _clients, _registration
    from agentctx.cli import _config_file as files
    from agentctx.cli import _hook_settings as install

    if directory is not None and not directory.is_dir():
        raise ValidationError(f"No such directory {str(directory)!r}; pass an existing project directory to --dir.")
    clients = _clients.without_codex_project(client, _clients.expand(client), project=project, command="init")
    for name in clients:
        if name != "claude":
            _clients.require_installed(name)
    if "claude" not in clients:
        _init_other_clients(clients, directory=directory, project=project, dry_run=dry_run, no_mcp=no_mcp, learn=learn)
        return
    version = _registration.parse_version(claude_version) if claude_version else _registration.detect_claude_version()
    if claude_version and version is None:
        raise ValidationError(f"{claude_version!r} is not a version like 2.1.83; pass what `claude --version` prints.")
    events = _registration.events_for(version)
    base = _registration.agentctx_command()
    target = settings_path(project, directory)
    repository = Path(project_for(directory).root) if project else None
    if repository is not None:
        files.in_repository(repository, target)  # a link committed there is never followed
    data_home = Path(paths.home())
    try:
        current, original = install.read_json(target)
        updated, created_events = install.apply_hooks(current, _registration.desired_groups(base, events))
    except install.SettingsError as exc:
        raise _fail(exc) from None
    new_text = install.dump_json(updated, original) if updated != current or original is None else original
    settings_changed = updated != current or original is None
    if settings_changed:
        files.check_writable(target)  # a read-only file or a dangling link's missing folder: refused, dry run too
    mcp_plan = None if no_mcp else _plan_mcp(base, always_load=mcp_always_load)
    detected = profile.detect(str(project_for(directory).root))

    shown_version = ".".join(map(str, version)) if version else "unknown (`claude` not on PATH)"
    typer.echo(f"Claude Code version: {shown_version}; events: {', '.join(events)}")
    others = [name for name in clients if name != "claude"]
    if dry_run:
        typer.echo(install.diff(target, original, new_text) if settings_changed else f"{target}: no change")
        if mcp_plan is not None:
            typer.echo(mcp_plan["preview"])
        for name in others:
            _clients.init_client(
                name,
                base=base,
                manifest=_registration.load_manifest(data_home),
                dry_run=True,
                no_mcp=no_mcp,
                project_root=Path(project_for(directory).root) if project else None,
            )
        for entry in detected:
            typer.echo(f"profile {entry.key}: {entry.body}")
        offer_learn(project_for(directory), learn, dry_run=True)
        typer.echo("Dry run: nothing was written.")
        return

    for name in others:  # a malformed Codex / Gemini config refuses before anything is written
        _clients.plan_only(
            name, base=base, no_mcp=no_mcp, project_root=Path(project_for(directory).root) if project else None
        )
    data_home.mkdir(parents=True, exist_ok=True)
    manifest = _registration.load_manifest(data_home)
    record = manifest["settings"].get(str(target), {})
    if settings_changed:
        backup = install.write_with_backup(target, new_text, had_file=original is not None)
        record = {
            "created_file": record.get("created_file", False) or original is None,
            "created_hooks_key": record.get("created_hooks_key", False) or "hooks" not in current,
            "created_events": sorted(set(record.get("created_events", [])) | set(created_events)),
            "restore": files.remember(record.get("restore"), original, new_text, first=not record),
        }
        if repository is not None:
            record["repository"] = str(repository)
        typer.echo(
            f"Hooks: registered {len(events)} events in {files.shown(target)}"
            + (f" (backup: {backup})" if backup else "")
        )
    else:
        typer.echo(f"Hooks: already registered in {target}")
    manifest["settings"][str(target)] = record
    if mcp_plan is not None:
        manifest["mcp"] = _apply_mcp_plan(mcp_plan, manifest.get("mcp"))
    _registration.save_manifest(data_home, manifest)
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
    """init for Codex CLI / Gemini CLI (`_clients`), then the shared profile and store."""
    from agentctx_hooks.ondemand import profile

    from agentctx.cli import _clients, _registration

    base = _registration.agentctx_command()
    data_home = Path(paths.home())
    manifest = _registration.load_manifest(data_home)
    project_root = Path(project_for(directory).root) if project else None
    for name in clients:  # a malformed config of any of them refuses before anything is written
        _clients.plan_only(name, base=base, no_mcp=no_mcp, project_root=project_root)
    for name in clients:
        _clients.init_client(
            name, base=base, manifest=manifest, dry_run=dry_run, no_mcp=no_mcp, project_root=project_root
        )
    detected = profile.detect(str(project_for(directory).root))
    if dry_run:
        for entry in detected:
            typer.echo(f"profile {entry.key}: {entry.body}")
        typer.echo("Dry run: nothing was written.")
        return
    data_home.mkdir(parents=True, exist_ok=True)
    _registration.save_manifest(data_home, manifest)
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


def _plan_mcp(base: list[str], *, always_load: bool) -> dict[str, Any]:
    """What registering the MCP server would do: through `claude mcp add` when `claude` is on
    PATH (Claude Code owns ~/.claude.json and may be writing it), else a direct edit."""
    from agentctx.cli import _hook_settings as install
    from agentctx.cli import _registration

    entry = _registration.mcp_entry(base, always_load=always_load)
    path = claude_json_path()
    try:
        config, original = install.read_json(path)
        updated, created_key = install.apply_mcp(config, entry)
    except install.SettingsError as exc:
        raise _fail(exc) from None
    existing = (
        config.get("mcpServers", {}).get(install.MCP_NAME) if isinstance(config.get("mcpServers"), dict) else None
    )
    claude = _registration.claude_executable()
    if existing != entry and (not claude or always_load):
        from agentctx.cli import _config_file as files

        files.check_writable(path)
    plan: dict[str, Any] = {
        "entry": entry,
        "path": path,
        "claude": claude,
        "unchanged": existing == entry,
        "existing": existing,
        "created_key": created_key,
        "created_file": original is None,
        "text": install.dump_json(updated, original),
        "original": original,
    }
    if plan["unchanged"]:
        plan["preview"] = f"MCP: {install.MCP_NAME!r} already registered in {path}"
    elif claude:
        command = ["claude", *_mcp_add_args(entry)]
        plan["preview"] = "would run: " + " ".join(command)
        if always_load:
            plan["preview"] += f'\nthen set "alwaysLoad": true on it in {path}'
    else:
        plan["preview"] = install.diff(path, original, plan["text"])
    return plan


def _mcp_add_args(entry: dict[str, Any]) -> list[str]:
    """`claude mcp add` for our entry; `-e` after the name (it takes several values, up to `--`)."""
    from agentctx.cli import _hook_settings as install

    env = [part for key, value in entry["env"].items() for part in ("-e", f"{key}={value}")]
    return ["mcp", "add", "--scope", "user", install.MCP_NAME, *env, "--", entry["command"], *entry["args"]]


def _apply_mcp_plan(plan: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    from agentctx.cli import _config_file as files
    from agentctx.cli import _hook_settings as install

    record = dict(previous or {})
    first = not record
    record.setdefault("created_key", plan["created_key"])
    record.setdefault("created_file", plan["created_file"])
    if plan["unchanged"]:
        typer.echo(plan["preview"])
        return record
    entry = plan["entry"]
    if plan["claude"]:
        if plan["existing"] is not None:
            _run_claude(plan["claude"], "mcp", "remove", "--scope", "user", install.MCP_NAME)
        _run_claude(plan["claude"], *_mcp_add_args(entry))
        if entry.get("alwaysLoad"):
            try:
                config, original = install.read_json(plan["path"])
                patched, _ = install.apply_mcp(config, entry)
            except install.SettingsError as exc:
                raise _fail(exc) from None
            install.write_with_backup(plan["path"], install.dump_json(patched, original), had_file=original is not None)
        record["via"] = "claude"
        record.pop("restore", None)  # Claude Code wrote the file: uninstall asks it to undo its change
    else:
        install.write_with_backup(plan["path"], plan["text"], had_file=plan["original"] is not None)
        record["via"] = "file"
        record["restore"] = files.remember(record.get("restore"), plan["original"], plan["text"], first=first)
    typer.echo(f"MCP: registered {install.MCP_NAME!r} ({entry['command']} {' '.join(entry['args'])})")
    return record


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
            help="Only this client: claude, codex, gemini, or all; repeatable. Default: every client init set up.",
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
    from agentctx.cli import _clients, _registration

    data_home = Path(paths.home())
    manifest = _registration.load_manifest(data_home)
    if client:
        chosen: list[str] = _clients.expand([name for name in client if name != "all"] or ["claude"])
        chosen = list(_clients.SUPPORTED) if "all" in client else chosen
        chosen = _clients.without_codex_project(client, chosen, project=project, command="uninstall")
    else:
        chosen = ["claude", *[name for name in ("codex", "gemini") if name in (manifest.get("clients") or {})]]
    if "claude" in chosen:
        targets = [settings_path(True, directory)] if project else [settings_path(False, None)]
        if not project:
            targets += [Path(name) for name in manifest["settings"] if Path(name) not in targets]
        for target in targets:
            repository = Path(project_for(directory).root) if project else None
            _unhook(target, manifest, dry_run=dry_run, repository=repository)
        if not project:
            _unregister_mcp(manifest, dry_run=dry_run)
    for name in chosen:
        if name != "claude" and not (project and name == "codex"):  # Codex has no project-scope registration
            _clients.uninstall_client(
                name, manifest, dry_run=dry_run, project_root=Path(project_for(directory).root) if project else None
            )
    if not dry_run and data_home.is_dir():
        _registration.save_manifest(data_home, manifest)
    if purge:
        _purge(data_home, yes=yes, dry_run=dry_run)
    if dry_run:
        typer.echo("Dry run: nothing was written.")


def _unhook(target: Path, manifest: dict[str, Any], *, dry_run: bool, repository: Path | None = None) -> None:
    """Our hooks out of one settings file: the exact text init found when the file is still what
    init wrote, else only our entries removed (the rest kept, in the file's own style). A file in
    a repository (`--project`, or recorded so by init) is never reached through a link."""
    from agentctx.cli import _config_file as files
    from agentctx.cli import _hook_settings as install

    record = manifest["settings"].get(str(target))
    repository = repository or (Path(record["repository"]) if record and record.get("repository") else None)
    if repository is not None:
        files.in_repository(repository, target)
    try:
        current, original = install.read_json(target)
    except install.SettingsError as exc:
        raise _fail(exc) from None
    if original is None:  # no file, or a dangling link: nothing of ours, and the link stays
        manifest["settings"].pop(str(target), None)
        return
    exact, before = files.restore_point(record.get("restore") if record else None, original)
    if exact:
        if dry_run:
            typer.echo(install.diff(target, original, before))
            return
        if before is None:
            files.delete(target)
            typer.echo(f"Hooks: removed {files.shown(target)} (init had created it, unchanged since)")
        else:
            backup = install.write_with_backup(target, before, had_file=True)
            typer.echo(f"Hooks: restored {files.shown(target)} byte for byte (unchanged since init; backup: {backup})")
        manifest["settings"].pop(str(target), None)
        return
    drop_events = set(record.get("created_events", [])) if record else None
    drop_hooks_key = bool(record.get("created_hooks_key")) if record else None
    updated = install.remove_hooks(current, drop_events=drop_events, drop_hooks_key=drop_hooks_key)
    remove_file = bool(record and record.get("created_file")) and updated == {}
    if updated == current:
        typer.echo(f"Hooks: none of ours in {target}")
    elif dry_run:
        typer.echo(install.diff(target, original, None if remove_file else install.dump_json(updated, original)))
    elif remove_file:
        files.delete(target)
        typer.echo(f"Hooks: removed {files.shown(target)} (init had created it; nothing else is in it)")
    else:
        backup = install.write_with_backup(target, install.dump_json(updated, original), had_file=True)
        edited = " (edited since init: only our entries removed)" if record and record.get("restore") else ""
        typer.echo(f"Hooks: removed ours from {files.shown(target)}{edited} (backup: {backup})")
    if not dry_run:
        manifest["settings"].pop(str(target), None)


def _unregister_mcp(manifest: dict[str, Any], *, dry_run: bool) -> None:
    from agentctx_store.jsontext import is_object

    from agentctx.cli import _config_file as files
    from agentctx.cli import _hook_settings as install
    from agentctx.cli import _registration

    path = claude_json_path()
    record: dict[str, Any] = manifest.get("mcp") or {}
    try:
        config, original = install.read_json(path)
    except install.SettingsError as exc:
        raise _fail(exc) from None
    exact, before = files.restore_point(record.get("restore"), original)
    if exact:  # still exactly what init wrote: put back what was there
        if dry_run:
            typer.echo(install.diff(path, original, before))
            return
        if before is None:
            files.delete(path)
        else:
            install.write_with_backup(path, before, had_file=True)
        typer.echo(
            f"MCP: removed {install.MCP_NAME!r}; {files.shown(path)} restored byte for byte (unchanged since init)"
        )
        manifest["mcp"] = None
        return
    servers = config.get("mcpServers")
    if not (is_object(servers) and install.is_our_mcp(servers.get(install.MCP_NAME))):
        typer.echo("MCP: no agentctx server registered")
        manifest["mcp"] = None
        return
    claude = _registration.claude_executable()
    if dry_run:
        if claude:
            typer.echo(f"would run: claude mcp remove --scope user {install.MCP_NAME}")
        else:
            updated = install.remove_mcp(config, drop_servers_key=bool(record.get("created_key")))
            typer.echo(install.diff(path, original, install.dump_json(updated, original)))
        return
    if claude:
        _run_claude(claude, "mcp", "remove", "--scope", "user", install.MCP_NAME)
    else:
        updated = install.remove_mcp(config, drop_servers_key=bool(record.get("created_key")))
        if updated == {} and record.get("created_file"):
            files.delete(path)
        else:
            install.write_with_backup(path, install.dump_json(updated, original), had_file=True)
    typer.echo(f"MCP: removed {install.MCP_NAME!r}")
    manifest["mcp"] = None


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
