"""What `agentctx init` and `agentctx uninstall` change in Claude Code's files (ADR-016).

Pure planning functions (dict in, dict out) plus careful file writes: parse the JSON, add or
remove only our entries, keep every other key and every foreign hook exactly as it was,
write nothing when nothing changes, and copy the file aside before any write. A manifest in
the data dir (`install.json`) remembers which containers init created, so uninstall removes
exactly those and leaves a file that was `"hooks": {}` before as `"hooks": {}` after.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CLASSIC_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd")
# Events newer clients know. An older client silently rejects a whole settings file that
# names an event it does not know (seen on 2.0.77), so these are registered only when
# `claude --version` is at least this. CwdChanged shipped in 2.1.83; PostToolUseFailure was
# in the changelog by 2.1.33 (exactly when is not documented, so that bound is conservative).
EVENTS_SINCE: dict[str, tuple[int, int, int]] = {"PostToolUseFailure": (2, 1, 33), "CwdChanged": (2, 1, 83)}
CAPTURED_TOOLS = "Bash|Edit|Write|MultiEdit|NotebookEdit"  # PostToolUse runs only for tools it captures
MATCHERS = {"PostToolUse": CAPTURED_TOOLS, "PostToolUseFailure": CAPTURED_TOOLS}
TIMEOUTS = {"SessionEnd": 5}  # seconds; SessionEnd otherwise gets 1.5 s
DEFAULT_TIMEOUT = 10
MCP_NAME = "agentctx"
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


class SettingsError(Exception):
    """A settings file cannot be changed safely (not JSON, not an object, a foreign entry)."""


# -- which events -------------------------------------------------------------------------


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text or "")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def claude_executable() -> str | None:
    return shutil.which("claude")


def detect_claude_version() -> tuple[int, int, int] | None:
    """The installed Claude Code version from `claude --version`, or None when unknown."""
    claude = claude_executable()
    if claude is None:
        return None
    try:
        done = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def events_for(version: tuple[int, int, int] | None) -> list[str]:
    """The events to register: the classic ones, plus newer ones the client is known to have."""
    events = list(CLASSIC_EVENTS)
    if version is not None:
        events += [event for event, since in EVENTS_SINCE.items() if version >= since]
    return events


# -- the command Claude Code runs ---------------------------------------------------------


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


def hook_command(base: list[str], event: str) -> str:
    return " ".join(shlex.quote(part) for part in [*base, "hook", event])


def is_our_hook(command: object) -> bool:
    """`…/agentctx hook X` or `…python -m agentctx hook X`, whatever the path."""
    if not isinstance(command, str):
        return False
    try:
        tokens = shlex.split(command)
    except ValueError:
        return False
    if len(tokens) >= 2 and os.path.basename(tokens[0]) in ("agentctx", "agentctx.exe") and tokens[1] == "hook":
        return True
    return len(tokens) >= 4 and tokens[1:4] == ["-m", "agentctx", "hook"]


def desired_groups(base: list[str], events: list[str]) -> dict[str, dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for event in events:
        hook = {
            "type": "command",
            "command": hook_command(base, event),
            "timeout": TIMEOUTS.get(event, DEFAULT_TIMEOUT),
        }
        group: dict[str, Any] = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
        group["hooks"] = [hook]
        groups[event] = group
    return groups


# -- settings.json surgery ----------------------------------------------------------------


def _strip_ours(groups: list[Any]) -> tuple[list[Any], bool]:
    """The event's groups without our hook commands; a group left empty by that is dropped."""
    kept: list[Any] = []
    changed = False
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list) or not any(isinstance(h, dict) and is_our_hook(h.get("command")) for h in hooks):
            kept.append(group)
            continue
        changed = True
        remaining = [h for h in hooks if not (isinstance(h, dict) and is_our_hook(h.get("command")))]
        if remaining:
            kept.append({**group, "hooks": remaining})
    return kept, changed


def apply_hooks(settings: dict[str, Any], groups: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """Settings with exactly our `groups` registered. Returns (new settings, events whose key
    this call created). An identical registration is left where it is (idempotent)."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if hooks is None:
        hooks = result["hooks"] = {}
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" is not a JSON object; fix it by hand, then run `agentctx init` again.')
    created: list[str] = []
    for event in list(hooks):
        current = hooks[event]
        if not isinstance(current, list):
            if event in groups:
                raise SettingsError(f'"hooks.{event}" is not a list; fix it by hand, then run `agentctx init` again.')
            continue
        if event in groups and groups[event] in current:
            ours = [g for g in current if g != groups[event]]
            if not _strip_ours(ours)[1]:
                continue  # exactly our group, once, and no stale entries of ours: leave it
        kept, _ = _strip_ours(current)
        hooks[event] = kept
        if not kept and event not in groups:
            del hooks[event]  # only our stale entries were there
    for event, group in groups.items():
        if event not in hooks:
            hooks[event] = []
            created.append(event)
        if group not in hooks[event]:
            hooks[event].append(group)
    return result, created


def remove_hooks(
    settings: dict[str, Any], *, drop_events: set[str] | None, drop_hooks_key: bool | None
) -> dict[str, Any]:
    """Settings without any hook command of ours.

    An event list (and the `hooks` object) left empty by the removal is deleted when
    `drop_events` names it (`None`: always, for files init did not record) and kept otherwise.
    """
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    removed_any = False
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        kept, changed = _strip_ours(hooks[event])
        if not changed:
            continue
        removed_any = True
        hooks[event] = kept
        if not kept and (drop_events is None or event in drop_events):
            del hooks[event]
    if removed_any and not hooks and drop_hooks_key is not False:
        del result["hooks"]
    return result


# -- MCP registration ----------------------------------------------------------------------


def mcp_entry(base: list[str], *, always_load: bool) -> dict[str, Any]:
    # the env names the client, so records written through MCP say they came from Claude Code
    env = {"AGENTCTX_CLIENT": "claude"}
    entry: dict[str, Any] = {"type": "stdio", "command": base[0], "args": [*base[1:], "mcp"], "env": env}
    if always_load:
        entry["alwaysLoad"] = True
    return entry


def is_our_mcp(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    if os.path.basename(command) in ("agentctx", "agentctx.exe") and args[:1] == ["mcp"]:
        return True
    return args[:3] == ["-m", "agentctx", "mcp"]


def apply_mcp(config: dict[str, Any], entry: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """`~/.claude.json` with our server registered. Returns (config, whether it created
    `mcpServers`). Refuses to replace a server of the same name that is not ours."""
    result = copy.deepcopy(config)
    servers = result.get("mcpServers")
    created = servers is None
    if created:
        servers = result["mcpServers"] = {}
    if not isinstance(servers, dict):
        raise SettingsError('"mcpServers" in ~/.claude.json is not a JSON object; fix it by hand first.')
    existing = servers.get(MCP_NAME)
    if existing is not None and not is_our_mcp(existing):
        raise SettingsError(
            f"An MCP server named {MCP_NAME!r} that is not agentctx is registered in ~/.claude.json; "
            "rename or remove it, then run `agentctx init` again."
        )
    servers[MCP_NAME] = entry
    return result, created


def remove_mcp(config: dict[str, Any], *, drop_servers_key: bool) -> dict[str, Any]:
    result = copy.deepcopy(config)
    servers = result.get("mcpServers")
    if isinstance(servers, dict) and is_our_mcp(servers.get(MCP_NAME)):
        del servers[MCP_NAME]
        if not servers and drop_servers_key:
            del result["mcpServers"]
    return result


# -- files -----------------------------------------------------------------------------------


def read_json(path: Path) -> tuple[dict[str, Any], str | None]:
    """(parsed object, original text) — ({}, None) when the file does not exist.

    Raises:
        SettingsError: the file is not a JSON object.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise SettingsError(f"Cannot read {str(path)!r} ({exc.strerror}); check its permissions.") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{str(path)!r} is not valid JSON ({exc}); fix it by hand, then run again.") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{str(path)!r} does not hold a JSON object; fix it by hand, then run again.")
    return data, text


def dump_json(data: dict[str, Any], original: str | None) -> str:
    """JSON in the file's own indentation (2 spaces for a new file), so a diff shows only our change."""
    indent: str | int = 2
    if original:
        match = re.search(r"^\{\s*\n([ \t]+)\S", original)
        if match:
            indent = match.group(1)
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def diff(path: Path, before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile=str(path) if before is not None else "/dev/null",
        tofile=str(path) if after is not None else "/dev/null",
    )
    return "".join(lines)


def write_with_backup(path: Path, text: str, *, had_file: bool) -> Path | None:
    """Copy the current file aside (same mode), then replace it atomically. Returns the backup."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = None
    if had_file and path.exists():
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        backup = path.with_name(f"{path.name}.agentctx-backup-{stamp}")
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
    temp = path.with_name(f".{path.name}.agentctx-{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    if mode is not None:
        os.chmod(temp, mode)
    os.replace(temp, path)
    return backup


# -- the manifest of what init created ------------------------------------------------------


def manifest_path(data_home: Path) -> Path:
    return data_home / "install.json"


def load_manifest(data_home: Path) -> dict[str, Any]:
    try:
        data = json.loads(manifest_path(data_home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"settings": {}, "mcp": None}
    if not isinstance(data, dict):
        return {"settings": {}, "mcp": None}
    data.setdefault("settings", {})
    data.setdefault("mcp", None)
    return data


def save_manifest(data_home: Path, manifest: dict[str, Any]) -> None:
    data_home.mkdir(parents=True, exist_ok=True)
    if not manifest.get("settings") and not manifest.get("mcp") and not manifest.get("clients"):
        manifest_path(data_home).unlink(missing_ok=True)
        return
    manifest_path(data_home).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
