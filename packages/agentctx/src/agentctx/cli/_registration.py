"""What `agentctx init` registers for Claude Code and remembers
(docs/adr/0015-explicit-reversible-install.md): the events its version knows, the command a client
runs, the hook groups and the MCP entry, reading its JSON files, and the manifest of what init
created.

The manifest in the data dir (`install.json`) remembers which containers init created, so
uninstall removes exactly those and leaves a file that was `"hooks": {}` before as `"hooks": {}`
after. The JSON surgery itself (add or remove only our entries) is `agentctx.cli._hook_settings`,
which Codex CLI and Gemini CLI setup share.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_object

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
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


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
    events: list[str] = list(CLASSIC_EVENTS)
    if version is not None:
        events += [event for event, since in EVENTS_SINCE.items() if version >= since]
    return events


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


def hook_command(base: list[str], event: str) -> str:
    return " ".join(shlex.quote(part) for part in [*base, "hook", event])


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


# -- Claude Code's MCP entry and files ---------------------------------------------------


def mcp_entry(base: list[str], *, always_load: bool) -> dict[str, Any]:
    # the env names the client, so records written through MCP say they came from Claude Code
    env = {"AGENTCTX_CLIENT": "claude"}
    entry: dict[str, Any] = {"type": "stdio", "command": base[0], "args": [*base[1:], "mcp"], "env": env}
    if always_load:
        entry["alwaysLoad"] = True
    return entry


# -- the manifest of what init created ------------------------------------------------------


def manifest_path(data_home: Path) -> Path:
    return data_home / "install.json"


def load_manifest(data_home: Path) -> dict[str, Any]:
    try:
        data = json.loads(manifest_path(data_home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"settings": {}, "mcp": None}
    if not is_object(data):
        return {"settings": {}, "mcp": None}
    data.setdefault("settings", {})
    data.setdefault("mcp", None)
    return data


def save_manifest(data_home: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest, readable by the user alone; remove it when it records nothing."""
    data_home.mkdir(parents=True, exist_ok=True)
    if not manifest.get("settings") and not manifest.get("mcp") and not manifest.get("clients"):
        manifest_path(data_home).unlink(missing_ok=True)
        return
    manifest_path(data_home).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    manifest_path(data_home).chmod(0o600)  # it holds the config text init found, ~/.claude.json's too
