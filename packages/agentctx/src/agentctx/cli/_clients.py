"""`agentctx init --client codex|gemini`, `uninstall --client …`, and what `status` and `doctor`
show for each client. The file planning lives in `agentctx.cli._client_setup` (unit-tested);
Claude Code keeps its own path in `setup` (with `claude mcp add` and version detection).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from agentctx_store.errors import ValidationError
from agentctx_store.jsontext import is_object

SUPPORTED = ("claude", "codex", "gemini")
INSTALL_HINTS = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "gemini": "npm install -g @google/gemini-cli",
}
LABELS = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}


def expand(clients: list[str] | None) -> list[str]:
    """The `--client` values as client names, in order, `all` = every client on PATH.

    Raises ValidationError for a name agentctx does not support."""
    from agentctx.cli import _client_setup as setup

    if not clients:
        return ["claude"]
    chosen: list[str] = []
    for value in clients:
        for name in (part.strip().lower() for part in value.split(",")):
            if name == "all":
                found = [client for client in SUPPORTED if setup.executable(client)]
                if not found:
                    raise ValidationError(
                        "--client all: none of claude, codex, gemini is on PATH; install one, or name it with --client."
                    )
                chosen += [client for client in found if client not in chosen]
            elif name in SUPPORTED:
                if name not in chosen:
                    chosen.append(name)
            else:
                raise ValidationError(f"Unknown client {name!r}; supported: claude, codex, gemini (or all).")
    return chosen


NO_CODEX_PROJECT = (
    "Codex CLI has no project scope in agentctx: Codex runs a repository's .codex/hooks.json only once you "
    "trust the whole project (its config and every hook committed there), a choice agentctx does not make "
    "for you; run `agentctx {command} --client codex` without --project (user scope serves every repository)."
)


def without_codex_project(raw: list[str] | None, clients: list[str], *, project: bool, command: str) -> list[str]:
    """`--project` and Codex: a `--client codex` named by hand is refused in one line that says what
    to do (nothing written); Codex found by `--client all` is left out with a note."""
    if not project or "codex" not in clients:
        return clients
    if any(part.strip().lower() == "codex" for value in raw or [] for part in value.split(",")):
        raise ValidationError(NO_CODEX_PROJECT.format(command=command))
    typer.echo(f"Codex CLI: skipped (no project scope); `agentctx {command} --client codex` covers every repository.")
    return [name for name in clients if name != "codex"]


def require_installed(client: str) -> None:
    from agentctx.cli import _client_setup as setup

    if setup.executable(client) is None:
        raise ValidationError(
            f"{LABELS[client]} is not installed (`{client}` is not on PATH); install it "
            f"(`{INSTALL_HINTS[client]}`), then run `agentctx init --client {client}` again."
        )


def _fail(exc: Exception) -> ValidationError:
    return ValidationError(str(exc))


def _mcp_entry(base: list[str], client: str) -> dict[str, Any]:
    from agentctx.cli import _client_setup as setup

    return {"command": base[0], "args": [*base[1:], "mcp"], "env": setup.mcp_env(client)}


# -- init ----------------------------------------------------------------------------------------


def init_client(
    client: str, *, base: list[str], manifest: dict[str, Any], dry_run: bool, no_mcp: bool, project_root: Path | None
) -> None:
    """Plan and (unless dry_run) write one client's registration; updates `manifest`."""
    from agentctx.cli import _client_setup as setup
    from agentctx.cli import _config_file as files

    require_installed(client)
    clients = manifest.setdefault("clients", {})
    record = dict(clients.get(client) or {})
    try:
        if client == "codex":
            changes, record = _plan_codex(base, record, no_mcp=no_mcp)
        else:
            changes, record = _plan_gemini(base, record, no_mcp=no_mcp, project_root=project_root)
    except setup.ConfigError as exc:
        raise _fail(exc) from None
    if dry_run:
        for change in changes:
            typer.echo(change.diff())
        return
    for change in changes:
        backup = setup.apply(change)
        if change.changed:
            typer.echo(
                f"{LABELS[client]}: wrote {files.shown(change.path)}" + (f" (backup: {backup})" if backup else "")
            )
        else:
            typer.echo(f"{LABELS[client]}: {change.path} already up to date")
    clients[client] = record
    if client == "codex":
        total, trusted = setup.codex_trust_state()
        typer.echo(
            f"Codex CLI: {trusted} of {total} agentctx hooks trusted in {setup.codex_home() / 'config.toml'} "
            "(what approving them in Codex's /hooks records)"
        )
    else:
        typer.echo(
            "Gemini CLI: hooks run only in folders you trust; trust the project when Gemini asks "
            "(or `/permissions` inside Gemini)."
        )


def _plan_codex(base: list[str], record: dict[str, Any], *, no_mcp: bool) -> tuple[list[Any], dict[str, Any]]:
    from agentctx.cli import _client_setup as setup
    from agentctx.cli import _config_file as files

    home = setup.codex_home()
    hooks_path, config_path = home / "hooks.json", home / "config.toml"
    setup.read_toml(config_path)  # refuse a malformed config.toml before touching hooks.json
    hooks_change, hooks_record = setup.add_json_entries(
        hooks_path, setup.codex_groups(base), None, record.get("hooks") or {}
    )
    trust = setup.trust_entries(hooks_path, hooks_change.after)
    mcp = None if no_mcp else _mcp_entry(base, "codex")
    config_change = setup.codex_config_change(config_path, mcp, trust)
    setup.check([hooks_change, config_change])
    created_config = record.get("created_config", config_change.before is None)
    restore = record.get("config_restore")
    if config_change.changed:
        restore = files.remember(restore, config_change.before, config_change.after, first=not record)
    return [hooks_change, config_change], {
        "hooks_path": str(hooks_path),
        "hooks": hooks_record,
        "config_path": str(config_path),
        "created_config": created_config,
        "config_restore": restore,
    }


def _plan_gemini(
    base: list[str], record: dict[str, Any], *, no_mcp: bool, project_root: Path | None
) -> tuple[list[Any], dict[str, Any]]:
    from agentctx.cli import _client_setup as setup
    from agentctx.cli import _config_file as config_file

    path = setup.gemini_settings(project_root)
    if project_root is not None:
        config_file.in_repository(project_root, path)  # a link committed there is never followed
    mcp = None
    if not no_mcp and project_root is None:
        mcp = {**_mcp_entry(base, "gemini"), "timeout": 30_000}
    files = dict(record.get("files") or {})
    change, remembered = setup.add_json_entries(path, setup.gemini_groups(base), mcp, files.get(str(path)) or {})
    setup.check([change])
    if project_root is not None:
        remembered["repository"] = str(project_root)
    files[str(path)] = remembered
    return [change], {"files": files}


def plan_only(client: str, *, base: list[str], no_mcp: bool, project_root: Path | None) -> None:
    """Raise what init would refuse (a malformed config), writing nothing."""
    from agentctx.cli import _client_setup as setup

    try:
        if client == "codex":
            _plan_codex(base, {}, no_mcp=no_mcp)
        else:
            _plan_gemini(base, {}, no_mcp=no_mcp, project_root=project_root)
    except setup.ConfigError as exc:
        raise _fail(exc) from None


# -- uninstall -------------------------------------------------------------------------------------


def uninstall_client(client: str, manifest: dict[str, Any], *, dry_run: bool, project_root: Path | None) -> None:
    from agentctx.cli import _client_setup as setup
    from agentctx.cli import _config_file as config_file

    clients = manifest.setdefault("clients", {})
    record: dict[str, Any] = clients.get(client) or {}
    try:
        if client == "codex":
            home = setup.codex_home()
            hooks_path = Path(record.get("hooks_path") or home / "hooks.json")
            config_path = Path(record.get("config_path") or home / "config.toml")
            changes = [
                setup.remove_json_entries(hooks_path, record.get("hooks")),
                setup.codex_config_removal(
                    config_path, created_file=bool(record.get("created_config")), restore=record.get("config_restore")
                ),
            ]
        else:
            stored: dict[str, Any] = record.get("files") or {}
            files = dict(stored)
            targets = [setup.gemini_settings(project_root)] if project_root else [setup.gemini_settings()]
            if project_root is None:
                targets += [Path(name) for name in files if Path(name) not in targets]
            for target in targets:
                entry: dict[str, Any] = files.get(str(target)) or {}
                repository = project_root or entry.get("repository")
                if target == setup.gemini_settings(project_root) and project_root is None:
                    repository = None  # the user's own ~/.gemini/settings.json: links are followed
                if repository:
                    config_file.in_repository(Path(repository), target)
            changes = [setup.remove_json_entries(target, files.get(str(target))) for target in targets]
        setup.check(changes)  # a read-only file refuses before anything is written
    except setup.ConfigError as exc:
        raise _fail(exc) from None
    for change in changes:
        if dry_run:
            typer.echo(change.diff())
            continue
        if not change.changed:
            typer.echo(f"{LABELS[client]}: nothing of ours in {change.path}")
            continue
        backup = setup.apply(change)
        typer.echo(f"{LABELS[client]}: {_removal(change)}" + (f" (backup: {backup})" if backup else ""))
    if dry_run:
        return
    if client == "gemini" and project_root is not None:
        kept: dict[str, Any] = record.get("files") or {}
        files = dict(kept)
        files.pop(str(setup.gemini_settings(project_root)), None)
        if files:
            clients[client] = {"files": files}
            return
    clients.pop(client, None)


def _removal(change: Any) -> str:
    """What uninstall did to one file, in words."""
    from agentctx.cli import _config_file as files

    where = files.shown(change.path)
    if change.restored and change.after is None:
        return f"removed {where} (init had created it, unchanged since)"
    if change.restored:
        return f"restored {where} byte for byte (unchanged since init)"
    if change.after is None:
        return f"removed {where} (init had created it; nothing else is in it)"
    return f"removed ours from {where} (changed since init, or not recorded: only our entries removed)"


# -- status and doctor -----------------------------------------------------------------------------


def registrations(project_root: Path | None = None) -> dict[str, dict[str, Any]]:
    """Per client: where agentctx is registered, whether its binary is installed, and whether the
    hooks will actually run (Codex: trusted; Gemini: hooks enabled)."""
    from agentctx.cli import _client_setup as setup

    found: dict[str, dict[str, Any]] = {}
    home = setup.codex_home()
    events = setup.our_events(home / "hooks.json")
    total, trusted = setup.codex_trust_state()
    mcp = False
    try:
        data, _ = setup.read_toml(home / "config.toml")
        mcp = "agentctx" in (data.get("mcp_servers") or {})
    except setup.ConfigError:
        pass
    found["codex"] = {
        "installed": setup.executable("codex") is not None,
        "hooks": {str(home / "hooks.json"): events} if events else {},
        "mcp": mcp,
        "active": bool(events) and total > 0 and trusted == total,
        "trusted": f"{trusted}/{total}",
    }
    files = [setup.gemini_settings()] + ([setup.gemini_settings(project_root)] if project_root else [])
    hooks: dict[str, list[str]] = {}
    gemini_mcp = False
    enabled = True
    for path in files:
        listed = setup.our_events(path)
        if listed:
            hooks[str(path)] = listed
        try:
            data, _ = setup.read_json(path)
        except setup.ConfigError:
            continue
        servers = data.get("mcpServers")
        gemini_mcp = gemini_mcp or (isinstance(servers, dict) and "agentctx" in servers)
        config = data.get("hooksConfig")
        if is_object(config) and config.get("enabled") is False:
            enabled = False
    found["gemini"] = {
        "installed": setup.executable("gemini") is not None,
        "hooks": hooks,
        "mcp": gemini_mcp,
        "active": bool(hooks) and enabled,
        "hooks_enabled": enabled,
    }
    return found


def client_checks(project: Any) -> list[Any]:
    """`doctor` lines for Codex CLI and Gemini CLI (Claude Code has its own checks)."""
    from agentctx.cli._health import Check

    checks: list[Check] = []
    for client, info in registrations(Path(project.root)).items():
        name = f"{LABELS[client].lower()} hooks"
        if not info["hooks"]:
            state = "warn" if info["installed"] else "ok"
            detail = "not registered" if info["installed"] else f"`{client}` not installed; nothing to do"
            checks.append(
                Check(
                    name=name,
                    state=state,
                    detail=detail,
                    fix=f"agentctx init --client {client}" if info["installed"] else "",
                )
            )
            continue
        detail = "; ".join(f"{where}: {', '.join(events)}" for where, events in info["hooks"].items())
        if client == "codex" and not info["active"]:
            checks.append(
                Check(
                    name=name,
                    state="fail",
                    detail=f"{detail}; only {info['trusted']} trusted: Codex skips untrusted hooks silently",
                    fix="agentctx init --client codex (or approve them in Codex's /hooks)",
                )
            )
        elif client == "gemini" and not info["active"]:
            checks.append(
                Check(
                    name=name,
                    state="fail",
                    detail=f"{detail}; hooksConfig.enabled is false",
                    fix='set "hooksConfig": {"enabled": true}',
                )
            )
        else:
            checks.append(
                Check(
                    name=name, state="ok", detail=detail + ("; trusted " + info["trusted"] if client == "codex" else "")
                )
            )
        checks.append(
            Check(
                name=f"{LABELS[client].lower()} mcp",
                state="ok" if info["mcp"] else "warn",
                detail="`agentctx` MCP server registered" if info["mcp"] else "no `agentctx` MCP server",
                fix="" if info["mcp"] else f"agentctx init --client {client}",
            )
        )
    return checks


def clients_status(store: Any, project: Any) -> Any:
    """A `status` section: each client's registration and whether its hooks are active."""
    from agentctx.cli._common import StatusSection

    data = registrations(Path(project.root))
    lines: list[str] = []
    for client, info in data.items():
        if not info["hooks"] and not info["mcp"]:
            lines.append(f"{LABELS[client]}: not registered" + ("" if info["installed"] else " (not installed)"))
            continue
        events = sorted({event for listed in info["hooks"].values() for event in listed})
        state = "active" if info["active"] else "INACTIVE"
        extra = f", trusted {info['trusted']}" if client == "codex" else ""
        lines.append(
            f"{LABELS[client]}: {state}; hooks {', '.join(events) or 'none'}; MCP {'yes' if info['mcp'] else 'no'}{extra}"
        )
    return StatusSection(key="clients", title="Other clients", lines=lines, data=json.loads(json.dumps(data)))
