"""A client's package of agentctx (the Claude Code plugin, the Gemini CLI extension) and
`agentctx init` must not both run agentctx's hooks (issue 34).

The package's launcher (`bin/agentctx-run`) sets `AGENTCTX_VIA` (`claude-plugin`,
`gemini-extension`) for the CLI it starts. When `agentctx init` has registered that client's hooks
too (its manifest, `install.json` in the data dir, names a settings file that applies here: the
user's, or the project's that holds the session's directory), the package's hooks stay idle so
nothing runs twice, and its SessionStart says so in one `systemMessage` line; its MCP server does
not start (`mcp_refusal`). `agentctx init` refuses in turn while the package is installed
(`agentctx.cli.clients.claude_plugin`, `gemini_extension`).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VIA_ENV = "AGENTCTX_VIA"
VIA_PLUGIN = "claude-plugin"
VIA_EXTENSION = "gemini-extension"
# which clients each package serves: Codex installs the Claude Code plugin from the same marketplace
PACKAGES = {VIA_PLUGIN: ("claude", "codex"), VIA_EXTENSION: ("gemini",)}
PLUGIN_ID = "agentctx@agentctx"
MANIFEST_BYTES = 4 << 20


def from_package(client: str) -> bool:
    """Whether this process was started by `client`'s package of agentctx."""
    return client in PACKAGES.get(os.environ.get(VIA_ENV, ""), ())


def from_plugin() -> bool:
    return from_package("claude")


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


def _registered_files(manifest: dict[str, Any], client: str) -> list[str]:
    """The settings files where init registered `client`'s hooks."""
    from agentctx_store.jsontext import is_object

    if client == "claude":
        settings = manifest.get("settings")
        return list(settings) if is_object(settings) else []
    clients = manifest.get("clients")
    record = clients.get(client) if is_object(clients) else None
    if not is_object(record):
        return []
    hooks_path = record.get("hooks_path")  # Codex: one user-scope hooks.json
    if isinstance(hooks_path, str):
        return [hooks_path]
    settings = record.get("files")  # Gemini: settings files by path
    return list(settings) if is_object(settings) else []


def init_registration(cwd: str, client: str = "claude") -> str:
    """The settings file where `agentctx init` registered `client`'s hooks and which applies to a
    session in `cwd` ("" when none): the user's settings, or a project's that holds `cwd`."""
    here = os.path.realpath(cwd) if cwd else ""
    user_home = os.path.realpath(os.path.expanduser("~"))
    for name in _registered_files(_manifest(), client):
        folder = os.path.dirname(name)  # …/.claude, …/.gemini
        if os.path.basename(folder) != f".{client}":  # the user's ($CLAUDE_CONFIG_DIR/settings.json)
            return name
        project = os.path.realpath(os.path.dirname(folder))
        if project == user_home:
            return name  # ~/.claude/settings.json, ~/.gemini/settings.json
        if here and (here == project or here.startswith(project + os.sep)):
            return name
    return ""


def _remove_hint(client: str) -> str:
    if client == "gemini":
        return "gemini extensions uninstall agentctx"
    return f"{client} plugin {'uninstall' if client == 'claude' else 'remove'} {PLUGIN_ID}"


def idle_notice(where: str, client: str = "claude") -> str:
    package = "the agentctx extension" if client == "gemini" else f"the {PLUGIN_ID} plugin"
    uninstall = "agentctx uninstall" if client == "claude" else f"agentctx uninstall --client {client}"
    return (
        f"agentctx: `agentctx init` already registered its hooks in {where}, so {package} stays idle "
        f"(nothing runs twice). Keep one: `{uninstall}` (the package takes over) or `{_remove_hint(client)}`."
    )


def mcp_refusal() -> str:
    """The line `agentctx mcp` prints instead of serving when a package started it while
    `agentctx init` registered the server too ("" to serve)."""
    served = PACKAGES.get(os.environ.get(VIA_ENV, ""), ())
    if not served:
        return ""
    named = os.environ.get("AGENTCTX_CLIENT", "")  # the package's MCP entry names its client
    client = named if named in served else served[0]
    manifest = _manifest()
    if client == "claude" and not manifest.get("mcp"):
        return ""
    if client != "claude" and not _registered_files(manifest, client):
        return ""
    package = "the agentctx extension's" if client == "gemini" else f"the {PLUGIN_ID} plugin's"
    return (
        f"agentctx: `agentctx init` already registered the MCP server, so {package} stays off. "
        f"Keep one: `agentctx uninstall --client {client}` (the package takes over) or `{_remove_hint(client)}`."
    )
