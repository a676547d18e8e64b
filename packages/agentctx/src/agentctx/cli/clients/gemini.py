"""Gemini CLI's config files: hooks and `mcpServers` in `~/.gemini/settings.json`
(`$GEMINI_CLI_HOME/.gemini/`), or the repository's `.gemini/settings.json` with `--project`
(hooks only); timeouts in milliseconds. Gemini runs hooks only in folders the user trusts, and
`hooksConfig.enabled: false` switches them all off. The names of `ClientSetup`
(`agentctx.cli.clients`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_object

from agentctx.cli import _config_file as config_file
from agentctx.cli.clients import hook_groups, mcp_entry
from agentctx.cli.clients._changes import (
    Change,
    ConfigError,
    add_json_entries,
    check,
    our_events,
    read_json,
    remove_json_entries,
)

REGISTERED = ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd")
MATCHERS = {"AfterTool": "^(run_shell_command|write_file|replace)$"}
_TIMEOUTS_MS = {"SessionEnd": 5000}
MCP_TIMEOUT_MS = 30_000
NO_PROJECT_SCOPE = None


def home() -> Path:
    """Gemini CLI's `~/.gemini` (`$GEMINI_CLI_HOME/.gemini` when that is set)."""
    override = os.environ.get("GEMINI_CLI_HOME")
    return (Path(override).expanduser() if override else Path.home()) / ".gemini"


def settings(project_root: Path | None = None) -> Path:
    return (project_root / ".gemini" if project_root else home()) / "settings.json"


def timeout(event: str) -> int:
    return _TIMEOUTS_MS.get(event, 10_000)


def mcp_server(base: list[str]) -> dict[str, Any]:
    """Our entry in `mcpServers` (init's, and the extension's in `gemini_extension.py`)."""
    return {**mcp_entry(base, "gemini"), "timeout": MCP_TIMEOUT_MS}


def groups(base: list[str]) -> dict[str, dict[str, Any]]:
    return hook_groups(base, "gemini", REGISTERED, matchers=MATCHERS, timeout=timeout, named=True)


# -- init and uninstall --------------------------------------------------------------------------


def plan(
    base: list[str], record: dict[str, Any], *, no_mcp: bool, project_root: Path | None
) -> tuple[list[Change], dict[str, Any]]:
    path = settings(project_root)
    if project_root is not None:
        config_file.in_repository(project_root, path)  # a link committed there is never followed
    mcp = None
    if not no_mcp and project_root is None:
        mcp = mcp_server(base)
    files = dict(record.get("files") or {})
    change, remembered = add_json_entries(path, groups(base), mcp, files.get(str(path)) or {})
    check([change])
    if project_root is not None:
        remembered["repository"] = str(project_root)
    files[str(path)] = remembered
    return [change], {"files": files}


def after_init() -> str:
    return (
        "Gemini CLI: hooks run only in folders you trust; trust the project when Gemini asks "
        "(or `/permissions` inside Gemini)."
    )


def plan_removal(record: dict[str, Any], project_root: Path | None) -> list[Change]:
    files = dict(record.get("files") or {})
    targets = [settings(project_root)] if project_root else [settings()]
    if project_root is None:
        targets += [Path(name) for name in files if Path(name) not in targets]
    for target in targets:
        entry: dict[str, Any] = files.get(str(target)) or {}
        repository = project_root or entry.get("repository")
        if target == settings(project_root) and project_root is None:
            repository = None  # the user's own ~/.gemini/settings.json: links are followed
        if repository:
            config_file.in_repository(Path(repository), target)
    return [remove_json_entries(target, files.get(str(target))) for target in targets]


def remaining(record: dict[str, Any], project_root: Path | None) -> dict[str, Any] | None:
    """`--project` removes one repository's file: the others stay remembered."""
    if project_root is None:
        return None
    files = dict(record.get("files") or {})
    files.pop(str(settings(project_root)), None)
    return {"files": files} if files else None


# -- status and doctor ---------------------------------------------------------------------------


def registration(project_root: Path | None = None) -> dict[str, Any]:
    paths = [settings()] + ([settings(project_root)] if project_root else [])
    hooks: dict[str, list[str]] = {}
    mcp = False
    enabled = True
    for path in paths:
        listed = our_events(path)
        if listed:
            hooks[str(path)] = listed
        try:
            data, _ = read_json(path)
        except ConfigError:
            continue
        servers = data.get("mcpServers")
        mcp = mcp or (isinstance(servers, dict) and "agentctx" in servers)
        config = data.get("hooksConfig")
        if is_object(config) and config.get("enabled") is False:
            enabled = False
    return {"hooks": hooks, "mcp": mcp, "active": bool(hooks) and enabled, "hooks_enabled": enabled}


def note(info: dict[str, Any]) -> str:
    return ""


def inactive(info: dict[str, Any]) -> tuple[str, str]:
    return "hooksConfig.enabled is false", 'set "hooksConfig": {"enabled": true}'
