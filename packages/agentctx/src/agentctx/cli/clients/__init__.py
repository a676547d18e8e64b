"""Setting agentctx up in each client: what `init --client`, `uninstall --client`, `status` and
`doctor` do with any client, and one module per client (`claude`, `codex`, `gemini`) for its
own config files. Never imported by a hook.

Which clients there are comes from the registry (`agentctx_store.clients`); a client's module
here is named after it. Claude Code, the default client, is set up by `setup.py` itself (its
hooks first, `claude mcp add`, the events its version knows) with the pieces in `claude.py`.
Every other client's module has the names of `ClientSetup`, and the functions below drive them
all the same way: every change planned first as a `Change` (`_changes`), `--dry-run` printing
the exact diff, what init found and created remembered in the manifest (`_manifest`), so
uninstall puts every file back as it was.
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import typer
from agentctx_store import clients as registry
from agentctx_store.errors import ValidationError

if TYPE_CHECKING:
    from agentctx.cli.clients._changes import Change


class ClientSetup(Protocol):
    """The module `agentctx/cli/clients/<name>.py` of every client but the default one."""

    # None, or why `--project` is refused for this client (`{command}`: init or uninstall)
    NO_PROJECT_SCOPE: str | None

    def plan(
        self, base: list[str], record: dict[str, Any], *, no_mcp: bool, project_root: Path | None
    ) -> tuple[list[Change], dict[str, Any]]:
        """init's changes to the client's files, and what the manifest remembers of them.

        Raises:
            ConfigError: a file cannot be changed safely (nothing is written).
        """
        ...

    def after_init(self) -> str:
        """The line init prints once the files are written (what else must happen for the hooks to run)."""
        ...

    def plan_removal(self, record: dict[str, Any], project_root: Path | None) -> list[Change]:
        """uninstall's changes: each file as init found it, or without our entries.

        Raises:
            ConfigError: a file cannot be changed safely (nothing is written).
        """
        ...

    def remaining(self, record: dict[str, Any], project_root: Path | None) -> dict[str, Any] | None:
        """What the manifest keeps of the client after that uninstall (None: nothing)."""
        ...

    def registration(self, project_root: Path | None) -> dict[str, Any]:
        """For status and doctor: `hooks` (file -> our events), `mcp`, `active` (the hooks will
        run), and anything of its own that `note` and `inactive` use."""
        ...

    def note(self, info: dict[str, Any]) -> str:
        """What status and doctor add to an active registration ("" for nothing)."""
        ...

    def inactive(self, info: dict[str, Any]) -> tuple[str, str]:
        """Why registered hooks will not run, and the fix (doctor)."""
        ...


def setup_for(name: str) -> ClientSetup:
    """The module `agentctx/cli/clients/<name>.py`.

    Raises:
        UnknownClient: `name` is not in the registry.
    """
    registry.get(name)
    return cast(ClientSetup, importlib.import_module(f"{__name__}.{name}"))


def label(name: str) -> str:
    return registry.get(name).label


def executable(name: str) -> str | None:
    return shutil.which(registry.get(name).binary)


# -- the command a client runs ----------------------------------------------------------


def agentctx_command() -> list[str]:
    """How to start this installation of agentctx without PATH lookups, shims or `uv run`:
    the `agentctx` script beside this interpreter (a tool venv keeps its path across upgrades),
    else `python -m agentctx` with this interpreter."""
    scripts = Path(sys.executable).parent  # not resolved: a venv's python is a symlink out of it
    for name in ("agentctx", "agentctx.exe"):
        script = scripts / name
        if script.is_file():
            return [str(script)]
    return [sys.executable, "-m", "agentctx"]


def hook_command(base: list[str], event: str, client: str = registry.DEFAULT) -> str:
    """The command line of one hook; it names its client (`--client`) unless that is the default."""
    named = ["--client", client] if client != registry.DEFAULT else []
    return " ".join(shlex.quote(part) for part in [*base, "hook", *named, event])


def hook_groups(
    base: list[str],
    client: str,
    events: list[str] | tuple[str, ...],
    *,
    matchers: dict[str, str],
    timeout: Callable[[str], int],
    named: bool = False,
) -> dict[str, dict[str, Any]]:
    """Our hook group for each event, as the client's settings hold them: `{matcher?, hooks:
    [{type, name?, command, timeout}]}` (`named`: each hook named `agentctx-<Event>`)."""
    groups: dict[str, dict[str, Any]] = {}
    for event in events:
        hook: dict[str, Any] = {"type": "command"}
        if named:
            hook["name"] = f"agentctx-{event}"
        hook["command"] = hook_command(base, event, client)
        hook["timeout"] = timeout(event)
        group: dict[str, Any] = {"matcher": matchers[event]} if event in matchers else {}
        group["hooks"] = [hook]
        groups[event] = group
    return groups


def mcp_env(client: str) -> dict[str, str]:
    """What the MCP server needs from the environment: the client that starts it (the provenance of
    the records it writes), and `AGENTCTX_HOME` when set, since Codex gives it only HOME and PATH."""
    env = {"AGENTCTX_CLIENT": client}
    if os.environ.get("AGENTCTX_HOME"):
        env["AGENTCTX_HOME"] = os.environ["AGENTCTX_HOME"]
    return env


def mcp_entry(base: list[str], client: str) -> dict[str, Any]:
    return {"command": base[0], "args": [*base[1:], "mcp"], "env": mcp_env(client)}


# -- which clients -----------------------------------------------------------------------------


def expand(chosen: list[str] | None) -> list[str]:
    """The `--client` values as client names, in order, `all` = every client on PATH.

    Raises ValidationError for a name agentctx does not support."""
    if not chosen:
        return [registry.DEFAULT]
    supported = ", ".join(registry.names())
    names: list[str] = []
    for value in chosen:
        for name in (part.strip().lower() for part in value.split(",")):
            if name == "all":
                found = [client for client in registry.names() if executable(client)]
                if not found:
                    raise ValidationError(
                        f"--client all: none of {supported} is on PATH; name the one to register with --client "
                        "(init registers a client before it is installed)."
                    )
                names += [client for client in found if client not in names]
            elif name in registry.CLIENTS:
                if name not in names:
                    names.append(name)
            else:
                raise ValidationError(f"Unknown client {name!r}; supported: {supported} (or all).")
    return names


def in_scope(raw: list[str] | None, chosen: list[str], *, project: bool, command: str) -> list[str]:
    """`--project` and a client without a project scope: named by hand, it is refused in one line
    that says what to do (nothing written); found by `--client all`, it is left out with a note."""
    if not project:
        return chosen
    kept: list[str] = []
    for name in chosen:
        refusal = setup_for(name).NO_PROJECT_SCOPE
        if refusal is None:
            kept.append(name)
        elif any(part.strip().lower() == name for value in raw or [] for part in value.split(",")):
            raise ValidationError(refusal.format(command=command))
        else:
            typer.echo(
                f"{label(name)}: skipped (no project scope); `agentctx {command} --client {name}` covers every repository."
            )
    return kept


def not_installed_note(client: str) -> str | None:
    """The one line init prints for a client whose CLI is not on PATH (the same rule for every
    client: it is registered all the same, and takes effect once installed), or None."""
    if executable(client) is not None:
        return None
    return (
        f"{label(client)}: not installed (`{registry.get(client).binary}` is not on PATH); registered anyway, "
        f"in effect once you install it (`{registry.get(client).install}`)."
    )


def refused(exc: Exception) -> ValidationError:
    """A config file that cannot be changed safely, as the one line the CLI prints."""
    return ValidationError(str(exc))


# -- init ----------------------------------------------------------------------------------------


def init_client(
    client: str, *, base: list[str], manifest: dict[str, Any], dry_run: bool, no_mcp: bool, project_root: Path | None
) -> None:
    """Plan and (unless dry_run) write one client's registration; updates `manifest`."""
    from agentctx.cli import _config_file as files
    from agentctx.cli.clients import _changes as changes_

    note = not_installed_note(client)
    if note:
        typer.echo(note)
    setup = setup_for(client)
    known = manifest.setdefault("clients", {})
    record = dict(known.get(client) or {})
    try:
        changes, record = setup.plan(base, record, no_mcp=no_mcp, project_root=project_root)
    except changes_.ConfigError as exc:
        raise refused(exc) from None
    if dry_run:
        for change in changes:
            typer.echo(change.diff())
        return
    for change in changes:
        backup = changes_.apply(change)
        if change.changed:
            typer.echo(
                f"{label(client)}: wrote {files.shown(change.path)}" + (f" (backup: {backup})" if backup else "")
            )
        else:
            typer.echo(f"{label(client)}: {change.path} already up to date")
    known[client] = record
    typer.echo(setup.after_init())


def plan_only(client: str, *, base: list[str], no_mcp: bool, project_root: Path | None) -> None:
    """Raise what init would refuse (a malformed config), writing nothing."""
    from agentctx.cli.clients import _changes as changes_

    try:
        setup_for(client).plan(base, {}, no_mcp=no_mcp, project_root=project_root)
    except changes_.ConfigError as exc:
        raise refused(exc) from None


# -- uninstall -------------------------------------------------------------------------------------


def uninstall_client(client: str, manifest: dict[str, Any], *, dry_run: bool, project_root: Path | None) -> None:
    from agentctx.cli.clients import _changes as changes_

    setup = setup_for(client)
    known = manifest.setdefault("clients", {})
    record: dict[str, Any] = known.get(client) or {}
    try:
        changes = setup.plan_removal(record, project_root)
        changes_.check(changes)  # a read-only file refuses before anything is written
    except changes_.ConfigError as exc:
        raise refused(exc) from None
    for change in changes:
        if dry_run:
            typer.echo(change.diff())
            continue
        if not change.changed:
            typer.echo(f"{label(client)}: nothing of ours in {change.path}")
            continue
        backup = changes_.apply(change)
        typer.echo(f"{label(client)}: {_removal(change)}" + (f" (backup: {backup})" if backup else ""))
    if dry_run:
        return
    kept = setup.remaining(record, project_root)
    if kept:
        known[client] = kept
    else:
        known.pop(client, None)


def _removal(change: Change) -> str:
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
    """Per client but the default: where agentctx is registered, whether its binary is installed,
    and whether the hooks will actually run (Codex: trusted; Gemini: hooks enabled)."""
    return {
        client.name: {
            "installed": executable(client.name) is not None,
            **setup_for(client.name).registration(project_root),
        }
        for client in registry.others()
    }


def client_checks(project: Any) -> list[Any]:
    """`doctor` lines for every client but the default (Claude Code has its own checks)."""
    from agentctx.cli._health import Check

    checks: list[Any] = []
    for client, info in registrations(Path(project.root)).items():
        name = f"{label(client).lower()} hooks"
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
        setup = setup_for(client)
        detail = "; ".join(f"{where}: {', '.join(events)}" for where, events in info["hooks"].items())
        if not info["active"]:
            why, fix = setup.inactive(info)
            checks.append(Check(name=name, state="fail", detail=f"{detail}; {why}", fix=fix))
        else:
            note = setup.note(info)
            checks.append(Check(name=name, state="ok", detail=detail + (f"; {note}" if note else "")))
        checks.append(
            Check(
                name=f"{label(client).lower()} mcp",
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
            lines.append(f"{label(client)}: not registered" + ("" if info["installed"] else " (not installed)"))
            continue
        events = sorted({event for listed in info["hooks"].values() for event in listed})
        state = "active" if info["active"] else "INACTIVE"
        note = setup_for(client).note(info)
        lines.append(
            f"{label(client)}: {state}; hooks {', '.join(events) or 'none'}; MCP {'yes' if info['mcp'] else 'no'}"
            + (f", {note}" if note else "")
        )
    return StatusSection(key="clients", title="Other clients", lines=lines, data=json.loads(json.dumps(data)))
