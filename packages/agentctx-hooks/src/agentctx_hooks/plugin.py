"""The Claude Code plugin and `agentctx init` must not both run agentctx's hooks (issue 34).

The plugin's launcher (`plugins/claude-code/bin/agentctx-run`) sets `AGENTCTX_VIA=claude-plugin`
for the CLI it starts. When `agentctx init` has registered Claude Code's hooks too (its manifest,
`install.json` in the data dir, names a settings file that applies here: the user's, or this
project's), the plugin's hooks stay idle so nothing runs twice, and its SessionStart says so in
one `systemMessage` line. `agentctx init` refuses in turn while the plugin is enabled
(`agentctx.cli.clients.claude_plugin`).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VIA_ENV = "AGENTCTX_VIA"
VIA_PLUGIN = "claude-plugin"
MANIFEST_BYTES = 4 << 20
PLUGIN_ID = "agentctx@agentctx"


def from_plugin() -> bool:
    return os.environ.get(VIA_ENV) == VIA_PLUGIN


def _manifest() -> dict[str, Any]:
    """`agentctx init`'s manifest (`agentctx.cli.clients._manifest`), {} when none or unreadable."""
    from agentctx_store import paths
    from agentctx_store.bounded import read_regular
    from agentctx_store.jsontext import is_object, loads

    raw = read_regular(os.path.join(paths.home(), "install.json"), limit=MANIFEST_BYTES)
    try:
        manifest = loads(raw) if raw else None
    except (ValueError, RecursionError):
        return {}
    return manifest if is_object(manifest) else {}


def init_registration(cwd: str) -> str:
    """The settings file where `agentctx init` registered Claude Code's hooks and which applies
    to a session in `cwd` ("" when none): the user's settings, or a project's that holds `cwd`."""
    from agentctx_store.jsontext import is_object

    settings = _manifest().get("settings")
    if not is_object(settings):
        return ""
    here = os.path.realpath(cwd) if cwd else ""
    for name in settings:
        folder = os.path.dirname(name)  # …/.claude
        if os.path.basename(folder) != ".claude":  # the user's settings ($CLAUDE_CONFIG_DIR/settings.json)
            return name
        project = os.path.realpath(os.path.dirname(folder))
        if project == os.path.realpath(os.path.join(os.path.expanduser("~"))):
            return name  # ~/.claude/settings.json
        if here and (here == project or here.startswith(project + os.sep)):
            return name
    return ""


def idle_notice(where: str) -> str:
    return (
        f"agentctx: `agentctx init` already registered its hooks in {where}, so the {PLUGIN_ID} plugin stays idle "
        f"(nothing runs twice). Keep one: `agentctx uninstall` (the plugin takes over) or "
        f"`claude plugin uninstall {PLUGIN_ID}`."
    )


def mcp_refusal() -> str:
    """The line `agentctx mcp` prints instead of serving when the plugin started it while
    `agentctx init` registered the server too ("" to serve)."""
    if not from_plugin() or not _manifest().get("mcp"):
        return ""
    return (
        f"agentctx: `agentctx init` already registered the MCP server, so the {PLUGIN_ID} plugin's stays off. "
        f"Keep one: `agentctx uninstall` (the plugin takes over) or `claude plugin uninstall {PLUGIN_ID}`."
    )
