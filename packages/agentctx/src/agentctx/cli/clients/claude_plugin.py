"""The Claude Code plugin and its marketplace, generated from what `agentctx init --client claude`
writes (`claude.py`), so the two never differ (issue 34; docs/install.md).

The repository holds the output: `.claude-plugin/marketplace.json` at its root and the plugin in
`plugins/claude-code/` (`.claude-plugin/plugin.json`, `hooks/hooks.json`, `.mcp.json`, and
`bin/agentctx-run`, the launcher every hook and the MCP server run). The hook events, matchers,
timeouts and the MCP entry are `claude.desired_groups` and `claude.mcp_entry` with the launcher
as the command; `packages/agentctx/tests/test_claude_plugin.py` fails when the files in the
repository are not exactly these. Write them with `uv run python -m agentctx.cli.clients.claude_plugin`.

The launcher finds the CLI (Claude Code runs hooks with a PATH that may lack `~/.local/bin`,
where `uv tool` and `pipx` put it): `$AGENTCTX_BIN`, then the path recorded in the data dir
(`cli-path`: written by the launcher when it finds the CLI, and by `agentctx init` and `doctor`),
then PATH, then the usual tool folders. When it finds nothing, SessionStart prints one
`systemMessage` line saying how to install it and every hook exits 0; the MCP server says it on
stderr. State stays in the data dir, never in `${CLAUDE_PLUGIN_ROOT}` (a new folder on every
update).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agentctx.cli._install import INSTALL_SOURCE, NOT_PYPI
from agentctx.cli.clients import claude

# `claude plugin install agentctx@agentctx`: the plugin's name, then the marketplace's
# (`agentctx_hooks.plugin.PLUGIN_ID`, which the hooks say; test_claude_plugin.py holds them equal)
NAME = "agentctx"
MARKETPLACE = "agentctx"
PLUGIN_ID = f"{NAME}@{MARKETPLACE}"
FOLDER = "plugins/claude-code"  # the plugin, relative to the repository root
LAUNCHER = "${CLAUDE_PLUGIN_ROOT}/bin/agentctx-run"
RECORDED = "cli-path"  # in the data dir: the CLI's absolute path
# Every event `init` registers for the newest client: a plugin needs a recent Claude Code anyway.
EVENTS = [*claude.CLASSIC_EVENTS, *claude.EVENTS_SINCE]
DESCRIPTION = (
    "Project memory for Claude Code: the project's decisions, conventions and bugfixes at session "
    "start, the few relevant records per prompt, ctx_* search tools. Runs the agentctx CLI (install it first)."
)
# Set by the launcher for the CLI it starts: the hooks and `agentctx mcp` know they run from the
# plugin (`agentctx_hooks.plugin`, the same names).
VIA_ENV = "AGENTCTX_VIA"
VIA_PLUGIN = "claude-plugin"


def launched_by(groups: dict[str, Any], launcher: str) -> dict[str, list[Any]]:
    """init's hook groups by event, each command run through a package's `launcher`, double-quoted
    (the path may hold spaces, and the client's shell expands the variable in it) where init
    shell-quotes the CLI's path."""
    quoted, plain = shlex.quote(launcher), f'"{launcher}"'
    for group in groups.values():
        for hook in group["hooks"]:
            hook["command"] = hook["command"].replace(quoted, plain, 1)
    return {event: [group] for event, group in groups.items()}


def hooks() -> dict[str, Any]:
    """`hooks/hooks.json`: init's groups, with the launcher (double-quoted: the path may hold
    spaces, and the shell expands the variable as Claude Code does) instead of the CLI's path."""
    registered = launched_by(claude.desired_groups([LAUNCHER], EVENTS), LAUNCHER)
    return {"description": "agentctx: the hooks `agentctx init --client claude` registers", "hooks": registered}


def mcp() -> dict[str, Any]:
    """`.mcp.json`: init's MCP entry, with the launcher as its command."""
    return {"mcpServers": {NAME: claude.mcp_entry([LAUNCHER], always_load=False)}}


def version() -> str:
    """The CLI's version (the repository's VERSION file): the plugin is released with it."""
    import agentctx

    return agentctx.__version__


# Codex CLI (0.171.0) installs plugins from the same marketplace and reads `.codex-plugin/plugin.json`
# before `.claude-plugin/plugin.json`: its manifest names hooks with `--client codex` (`codex.groups`,
# init's) and an MCP entry that says Codex (`mcp_entry(…, "codex")`), so one folder serves both.
CODEX_LAUNCHER = "${PLUGIN_ROOT}/bin/agentctx-run"
CODEX_HOOKS = "hooks/codex-hooks.json"
CODEX_MCP = ".codex-mcp.json"


def codex_hooks() -> dict[str, Any]:
    from agentctx.cli.clients import codex

    return {"hooks": launched_by(codex.groups([CODEX_LAUNCHER]), CODEX_LAUNCHER)}


def codex_mcp() -> dict[str, Any]:
    """Codex 0.171.0 starts a plugin's MCP server by a bare command name on PATH (it expands no
    `${PLUGIN_ROOT}` there, and a `./` path is taken from the session's folder), so this one runs
    `agentctx` from PATH, not the launcher; `AGENTCTX_VIA` still tells it the plugin started it."""
    from agentctx.cli.clients import mcp_entry

    server = mcp_entry(["agentctx"], "codex")
    # the data dir is the user's environment's, not the generator's
    server["env"] = {"AGENTCTX_CLIENT": "codex", VIA_ENV: VIA_PLUGIN}
    return {"mcpServers": {NAME: server}}


def codex_plugin() -> dict[str, Any]:
    return {
        "name": NAME,
        "version": version(),
        "description": DESCRIPTION.replace("Claude Code", "Codex CLI"),
        "hooks": f"./{CODEX_HOOKS}",
        "mcpServers": f"./{CODEX_MCP}",
    }


def plugin() -> dict[str, Any]:
    return {
        "name": NAME,
        "version": version(),
        "description": DESCRIPTION,
        "author": {"name": "agentctx"},
        "license": "MIT",
        "keywords": ["memory", "context", "hooks", "mcp"],
    }


def marketplace() -> dict[str, Any]:
    return {
        "name": MARKETPLACE,
        "owner": {"name": "agentctx"},
        "description": "agentctx's Claude Code plugin, from this repository",
        "plugins": [
            {
                "name": NAME,
                "source": f"./{FOLDER}",
                "version": version(),
                "description": DESCRIPTION,
                "category": "productivity",
            }
        ],
    }


def launcher(via: str = VIA_PLUGIN, generator: str = "agentctx.cli.clients.claude_plugin") -> str:
    """`bin/agentctx-run`: POSIX sh, so it runs without any Python on PATH. `via`: what it sets
    in `AGENTCTX_VIA` for the CLI (which package started it)."""
    tool_folders = " ".join(
        [
            '"${UV_TOOL_BIN_DIR:-}"',
            '"${PIPX_BIN_DIR:-}"',
            '"${XDG_BIN_HOME:-}"',
            '"$HOME/.local/bin"',
            '"$HOME/.local/share/uv/tools/agentctx/bin"',
            '"$HOME/.local/pipx/venvs/agentctx/bin"',
            '"$HOME/bin"',
            "/opt/homebrew/bin",
            "/usr/local/bin",
        ]
    )
    # a first install, the same wherever the files were generated (`install_command` describes *this* one)
    fresh = (
        f"`uv tool install --compile-bytecode {INSTALL_SOURCE}` in an agentctx checkout "
        f"(or pipx from the wheels of scripts/build-dist; {NOT_PYPI})"
    )
    hint = f"agentctx: the agentctx CLI was not found; install it with {fresh}, then start a new session"
    message = json.dumps({"systemMessage": hint})
    return f"""#!/bin/sh
# Generated by {generator.replace(".", "/")}.py: do not edit; run
# `uv run python -m {generator}` instead.
#
# Runs the installed agentctx CLI with the arguments given (`hook <Event>`, `mcp`). Finds it at
# $AGENTCTX_BIN, the path recorded in the data dir ({RECORDED}), on PATH, then in the usual tool
# folders (a command found there must answer `hook --help` as agentctx does), and records it. Without it: one line, exit 0 for a hook (never a hook error).
data="${{AGENTCTX_HOME:-$HOME/.agentctx}}"
recorded="$data/{RECORDED}"
usable() {{ [ -n "$1" ] && [ -f "$1" ] && [ -x "$1" ]; }}
# a command found by searching must be ours: PyPI's `agentctx` is another project
ours() {{ usable "$1" && "$1" hook --help 2>/dev/null | grep -q "^usage: agentctx hook"; }}
found=""
if usable "${{AGENTCTX_BIN:-}}"; then
  found="$AGENTCTX_BIN"
elif [ -f "$recorded" ] && [ -O "$recorded" ] && read -r line < "$recorded" && usable "$line"; then
  found="$line"
else
  for candidate in "$(command -v agentctx 2>/dev/null)" \\
    $(for folder in {tool_folders}; do [ -n "$folder" ] && printf '%s\\n' "$folder/agentctx"; done); do
    if ours "$candidate"; then found="$candidate"; break; fi
  done
  if [ -n "$found" ] && mkdir -p "$data" 2>/dev/null; then
    (umask 077; printf '%s\\n' "$found" > "$recorded.$$" && mv -f "$recorded.$$" "$recorded") 2>/dev/null
  fi
fi
if [ -z "$found" ]; then
  if [ "${{1:-}}" = hook ]; then
    cat > /dev/null  # the payload, unread
    for event in "$@"; do :; done  # the last argument: `hook [--client C] <Event>`
    [ "$event" = SessionStart ] && printf '%s\\n' {shlex.quote(message)}
    exit 0
  fi
  printf '%s\\n' {shlex.quote(hint)} >&2
  exit 1
fi
{VIA_ENV}={via} exec "$found" "$@"
"""


def files() -> dict[str, str]:
    """Every generated file by its path relative to the repository root."""

    def as_json(value: dict[str, Any]) -> str:
        return json.dumps(value, indent=2) + "\n"

    return {
        ".claude-plugin/marketplace.json": as_json(marketplace()),
        f"{FOLDER}/.claude-plugin/plugin.json": as_json(plugin()),
        f"{FOLDER}/hooks/hooks.json": as_json(hooks()),
        f"{FOLDER}/.mcp.json": as_json(mcp()),
        f"{FOLDER}/bin/agentctx-run": launcher(),
        f"{FOLDER}/.codex-plugin/plugin.json": as_json(codex_plugin()),
        f"{FOLDER}/{CODEX_HOOKS}": as_json(codex_hooks()),
        f"{FOLDER}/{CODEX_MCP}": as_json(codex_mcp()),
    }


def write(root: Path, generated: dict[str, str] | None = None) -> list[Path]:
    """Write the files (these, or a package's `generated` files) under `root` (the repository);
    the launcher executable."""
    written: list[Path] = []
    for relative, text in (files() if generated is None else generated).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if relative.endswith("agentctx-run"):
            path.chmod(0o755)
        written.append(path)
    return written


# -- the plugin and `agentctx init` ------------------------------------------------------------


def enabled_in(files: list[Path]) -> list[tuple[Path, str]]:
    """(settings file, plugin id) for every agentctx plugin enabled in `files` (`enabledPlugins`:
    `"agentctx@<marketplace>": true`); a file that cannot be read counts as none."""
    from agentctx_store.jsontext import is_object

    found: list[tuple[Path, str]] = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        enabled = data.get("enabledPlugins") if is_object(data) else None
        for key, value in enabled.items() if is_object(enabled) else ():
            if key.partition("@")[0] == NAME and value is True:
                found.append((path, key))
    return found


def init_refusal(enabled: list[tuple[Path, str]]) -> str:
    path, plugin_id = enabled[0]
    return (
        f"Claude Code already runs agentctx through the plugin {plugin_id} (enabled in {path}); init would register "
        f"every hook and the MCP server twice. Keep the plugin (nothing to do), or remove it first: "
        f"`claude plugin uninstall {plugin_id}`, then run init again. Nothing was written."
    )


def enabled_in_codex() -> Path | None:
    """Codex's config.toml when it has the agentctx plugin installed and enabled
    (`[plugins."agentctx@…"] enabled = true`), else None."""
    import tomllib

    from agentctx.cli.clients import codex

    path = codex.home() / "config.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    from agentctx_store.jsontext import is_object

    plugins = config.get("plugins")
    for key, value in plugins.items() if is_object(plugins) else ():
        if key.partition("@")[0] == NAME and is_object(value) and value.get("enabled", True) is True:
            return path
    return None


def record_cli(data_home: Path, base: list[str]) -> None:
    """Remember where this CLI is (`cli-path` in the data dir) for the plugin's launcher; only an
    `agentctx` script (`python -m agentctx` cannot be run from a path alone)."""
    from agentctx_store.files import atomic_write

    if len(base) != 1:
        return
    data_home.mkdir(parents=True, exist_ok=True)
    atomic_write(data_home / RECORDED, base[0] + "\n")


if __name__ == "__main__":
    repository = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for path in write(repository):
        print(path)
