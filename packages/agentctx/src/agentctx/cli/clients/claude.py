"""Claude Code, the default client: where its config lives, what `agentctx init` registers
there, how `uninstall` takes it out, and what `doctor` reads back
(docs/adr/0015-explicit-reversible-install.md).

- Hooks in `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`), or the repository's
  `.claude/settings.json` with `--project`: only the events the installed version knows.
- The MCP server at user scope in `~/.claude.json`: through `claude mcp add` when `claude` is on
  PATH (Claude Code owns that file and may be writing it), else a direct edit.

`setup.py` runs these steps in its own order (Claude Code's hooks first, then the other
clients'); what init created is remembered under `settings` and `mcp` in the manifest.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from agentctx_store.errors import ValidationError
from agentctx_store.jsontext import is_array, is_object

from agentctx.cli import _config_file as files
from agentctx.cli._common import project_for
from agentctx.cli.clients import _settings as install
from agentctx.cli.clients import executable, hook_groups, refused

if TYPE_CHECKING:
    from agentctx_store import Project

    from agentctx.cli._health import Check

NO_PROJECT_SCOPE = None
CLASSIC_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd")
# Events newer clients know. An older client silently rejects a whole settings file that
# names an event it does not know (seen on 2.0.77), so these are registered only when
# `claude --version` is at least this. CwdChanged shipped in 2.1.83; PostToolUseFailure was
# in the changelog by 2.1.33 (exactly when is not documented, so that bound is conservative).
# SubagentStart: the changelog has it from 2.0.43, but only 2.1.332 was seen to run it (and no
# 2.0 client is here to try), so 2.1.0 is the conservative bound.
EVENTS_SINCE: dict[str, tuple[int, int, int]] = {
    "PostToolUseFailure": (2, 1, 33),
    "CwdChanged": (2, 1, 83),
    "SubagentStart": (2, 1, 0),
}
CAPTURED_TOOLS = "Bash|Edit|Write|MultiEdit|NotebookEdit"  # PostToolUse runs only for tools it captures
MATCHERS = {"PostToolUse": CAPTURED_TOOLS, "PostToolUseFailure": CAPTURED_TOOLS}
TIMEOUTS = {"SessionEnd": 5}  # seconds; SessionEnd otherwise gets 1.5 s
DEFAULT_TIMEOUT = 10
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def home() -> Path:
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
    return home() / "settings.json"


def run_claude(claude: str, *args: str) -> None:
    done = subprocess.run([claude, *args], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise ValidationError(f"`claude {' '.join(args[:3])}` failed ({detail[0]}); run it by hand or use --no-mcp.")


# -- which events ---------------------------------------------------------------------------


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text or "")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def detect_version() -> tuple[int, int, int] | None:
    """The installed Claude Code version from `claude --version`, or None when unknown."""
    claude = executable("claude")
    if claude is None:
        return None
    try:
        done = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def events_for(version: tuple[int, int, int] | None) -> list[str]:
    """The events to register: the classic ones, plus newer ones the client is known to have."""
    events: list[str] = list(CLASSIC_EVENTS)
    if version is not None:
        events += [event for event, since in EVENTS_SINCE.items() if version >= since]
    return events


def desired_groups(base: list[str], events: list[str]) -> dict[str, dict[str, Any]]:
    return hook_groups(
        base, "claude", events, matchers=MATCHERS, timeout=lambda event: TIMEOUTS.get(event, DEFAULT_TIMEOUT)
    )


# -- init: the hooks --------------------------------------------------------------------------


def plan_hooks(target: Path, base: list[str], events: list[str]) -> dict[str, Any]:
    """What init does to the settings file `target`: its text now (`original`), after
    (`text`), whether that is a change, and the event keys it creates.

    Raises:
        ValidationError: the file cannot be changed safely (nothing is written).
        ConfigFileError: it cannot be written (refused in a dry run too).
    """
    try:
        current, original = install.read_json(target)
        updated, created_events = install.apply_hooks(current, desired_groups(base, events))
    except install.SettingsError as exc:
        raise refused(exc) from None
    changed = updated != current or original is None
    if changed:
        files.check_writable(target)  # a read-only file or a dangling link's missing folder: refused, dry run too
    return {
        "target": target,
        "current": current,
        "original": original,
        "text": install.dump_json(updated, original) if changed else original,
        "changed": changed,
        "created_events": created_events,
    }


def show_hooks(plan: dict[str, Any]) -> str:
    target = plan["target"]
    return install.diff(target, plan["original"], plan["text"]) if plan["changed"] else f"{target}: no change"


def write_hooks(plan: dict[str, Any], manifest: dict[str, Any], *, events: list[str], repository: Path | None) -> None:
    """Write the planned settings file and remember in `manifest` what init created there."""
    target, original, current = plan["target"], plan["original"], plan["current"]
    record = manifest["settings"].get(str(target), {})
    if plan["changed"]:
        backup = install.write_with_backup(target, plan["text"], had_file=original is not None)
        record = {
            "created_file": record.get("created_file", False) or original is None,
            "created_hooks_key": record.get("created_hooks_key", False) or "hooks" not in current,
            "created_events": sorted(set(record.get("created_events", [])) | set(plan["created_events"])),
            "restore": files.remember(record.get("restore"), original, plan["text"], first=not record),
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


# -- init: the MCP server -----------------------------------------------------------------------


def mcp_entry(base: list[str], *, always_load: bool) -> dict[str, Any]:
    # the env names the client, so records written through MCP say they came from Claude Code
    env = {"AGENTCTX_CLIENT": "claude"}
    entry: dict[str, Any] = {"type": "stdio", "command": base[0], "args": [*base[1:], "mcp"], "env": env}
    if always_load:
        entry["alwaysLoad"] = True
    return entry


def plan_mcp(base: list[str], *, always_load: bool) -> dict[str, Any]:
    """What registering the MCP server would do: through `claude mcp add` when `claude` is on
    PATH (Claude Code owns ~/.claude.json and may be writing it), else a direct edit."""
    entry = mcp_entry(base, always_load=always_load)
    path = claude_json_path()
    try:
        config, original = install.read_json(path)
        updated, created_key = install.apply_mcp(config, entry)
    except install.SettingsError as exc:
        raise refused(exc) from None
    existing = (
        config.get("mcpServers", {}).get(install.MCP_NAME) if isinstance(config.get("mcpServers"), dict) else None
    )
    claude = executable("claude")
    if existing != entry and (not claude or always_load):
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
        command = ["claude", *mcp_add_args(entry)]
        plan["preview"] = "would run: " + " ".join(command)
        if always_load:
            plan["preview"] += f'\nthen set "alwaysLoad": true on it in {path}'
    else:
        plan["preview"] = install.diff(path, original, plan["text"])
    return plan


def mcp_add_args(entry: dict[str, Any]) -> list[str]:
    """`claude mcp add` for our entry; `-e` after the name (it takes several values, up to `--`)."""
    env = [part for key, value in entry["env"].items() for part in ("-e", f"{key}={value}")]
    return ["mcp", "add", "--scope", "user", install.MCP_NAME, *env, "--", entry["command"], *entry["args"]]


def apply_mcp_plan(plan: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
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
            run_claude(plan["claude"], "mcp", "remove", "--scope", "user", install.MCP_NAME)
        run_claude(plan["claude"], *mcp_add_args(entry))
        if entry.get("alwaysLoad"):
            try:
                config, original = install.read_json(plan["path"])
                patched, _ = install.apply_mcp(config, entry)
            except install.SettingsError as exc:
                raise refused(exc) from None
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


def remove(manifest: dict[str, Any], *, project: bool, directory: Path | None, dry_run: bool) -> None:
    """uninstall for Claude Code: our hooks out of every settings file init recorded (with
    `--project`, only this repository's), and the MCP server (not with `--project`)."""
    targets = [settings_path(True, directory)] if project else [settings_path(False, None)]
    if not project:
        targets += [Path(name) for name in manifest["settings"] if Path(name) not in targets]
    for target in targets:
        repository = Path(project_for(directory).root) if project else None
        unhook(target, manifest, dry_run=dry_run, repository=repository)
    if not project:
        unregister_mcp(manifest, dry_run=dry_run)


def unhook(target: Path, manifest: dict[str, Any], *, dry_run: bool, repository: Path | None = None) -> None:
    """Our hooks out of one settings file: the exact text init found when the file is still what
    init wrote, else only our entries removed (the rest kept, in the file's own style). A file in
    a repository (`--project`, or recorded so by init) is never reached through a link."""
    record = manifest["settings"].get(str(target))
    repository = repository or (Path(record["repository"]) if record and record.get("repository") else None)
    if repository is not None:
        files.in_repository(repository, target)
    try:
        current, original = install.read_json(target)
    except install.SettingsError as exc:
        raise refused(exc) from None
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


def unregister_mcp(manifest: dict[str, Any], *, dry_run: bool) -> None:
    path = claude_json_path()
    record: dict[str, Any] = manifest.get("mcp") or {}
    try:
        config, original = install.read_json(path)
    except install.SettingsError as exc:
        raise refused(exc) from None
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
    claude = executable("claude")
    if dry_run:
        if claude:
            typer.echo(f"would run: claude mcp remove --scope user {install.MCP_NAME}")
        else:
            updated = install.remove_mcp(config, drop_servers_key=bool(record.get("created_key")))
            typer.echo(install.diff(path, original, install.dump_json(updated, original)))
        return
    if claude:
        run_claude(claude, "mcp", "remove", "--scope", "user", install.MCP_NAME)
    else:
        updated = install.remove_mcp(config, drop_servers_key=bool(record.get("created_key")))
        if updated == {} and record.get("created_file"):
            files.delete(path)
        else:
            install.write_with_backup(path, install.dump_json(updated, original), had_file=True)
    typer.echo(f"MCP: removed {install.MCP_NAME!r}")
    manifest["mcp"] = None


# -- doctor ------------------------------------------------------------------------------------


def mcp_files(project: Project) -> list[Path]:
    """Where Claude Code keeps MCP servers: user scope in `~/.claude.json` (inside
    `$CLAUDE_CONFIG_DIR` when set), project scope in the repository's `.mcp.json`."""
    return [claude_json_path(), Path(project.root) / ".mcp.json"]


def settings_files(project: Project) -> list[Path]:
    return [
        home() / "settings.json",
        Path(project.root) / ".claude" / "settings.json",
        Path(project.root) / ".claude" / "settings.local.json",
    ]


def hook_events(path: Path) -> list[str] | None:
    """Claude Code hook events whose command runs `agentctx hook`; None if the file is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    hooks = data.get("hooks") if is_object(data) else None
    events: list[str] = []
    for event, groups in hooks.items() if is_object(hooks) else ():
        for group in groups if is_array(groups) else ():
            entries = group.get("hooks", ()) if is_object(group) else ()
            for entry in entries if is_array(entries) else ():
                command = entry.get("command", "") if is_object(entry) else ""
                if isinstance(command, str) and "agentctx" in command and " hook" in command and event not in events:
                    events.append(event)
    return events


def check_hooks(project: Project) -> Check:
    from agentctx.cli._health import Check

    found: dict[str, list[str]] = {}
    unreadable: list[str] = []
    for path in settings_files(project):
        events = hook_events(path)
        if events is None:
            unreadable.append(str(path))
        elif events:
            found[str(path)] = events
    if found:
        detail = "; ".join(f"{where}: {', '.join(events)}" for where, events in found.items())
        return Check(name="claude code hooks", state="ok", detail=detail, extra={"registered": found})
    plugin = _plugin(project)
    if plugin:
        return Check(name="claude code hooks", state="ok", detail=plugin, extra={"registered": {}, "plugin": True})
    detail = "not registered in Claude Code settings"
    if unreadable:
        detail += f" (could not parse {', '.join(unreadable)})"
    return Check(name="claude code hooks", state="warn", detail=detail, fix="agentctx init", extra={"registered": {}})


def check_mcp_registration(project: Project) -> Check:
    """Whether Claude Code knows an `agentctx` MCP server (read only; never fails on a bad file)."""
    from agentctx.cli._health import Check

    registered: list[str] = []
    for path in mcp_files(project):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        servers = data.get("mcpServers") if is_object(data) else None
        if is_object(servers) and is_object(servers.get("agentctx")):
            registered.append(str(path))
    if registered:
        return Check(name="mcp server registered", state="ok", detail=", ".join(registered))
    plugin = _plugin(project)
    if plugin:
        return Check(name="mcp server registered", state="ok", detail=plugin)
    return Check(
        name="mcp server registered",
        state="warn",
        detail="Claude Code has no `agentctx` MCP server",
        fix="agentctx init",
    )


def _plugin(project: Project) -> str:
    """ "through the plugin …" when the agentctx plugin is enabled for this project, else ""."""
    from agentctx.cli.clients import claude_plugin

    enabled = claude_plugin.enabled_in(settings_files(project))
    return f"through the plugin {enabled[0][1]} (enabled in {enabled[0][0]})" if enabled else ""
