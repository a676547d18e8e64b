"""The Gemini CLI extension, generated from what `agentctx init --client gemini` writes
(`gemini.py`), so the two never differ (issue 34; docs/clients.md).

The repository holds the output in `plugins/gemini-cli/`: `gemini-extension.json` (its MCP server)
and `hooks/hooks.json` (Gemini 0.61.0 loads an extension's hooks from there, substituting
`${extensionPath}`), both running `bin/agentctx-run`, the same launcher as the Claude Code plugin's
(`claude_plugin.launcher`). `packages/agentctx/tests/test_claude_plugin.py` fails when the files
in the repository are not exactly these. Write them with
`uv run python -m agentctx.cli.clients.gemini_extension`.

Install: `gemini extensions install plugins/gemini-cli` (a copy) or `gemini extensions link
plugins/gemini-cli`. Gemini still runs hooks only in folders the user trusts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agentctx.cli.clients import claude_plugin, gemini

NAME = "agentctx"
FOLDER = "plugins/gemini-cli"
LAUNCHER = "${extensionPath}/bin/agentctx-run"
VIA_EXTENSION = "gemini-extension"  # `agentctx_hooks.plugin.VIA_EXTENSION`


def hooks() -> dict[str, Any]:
    """`hooks/hooks.json`: init's groups (named, timeouts in ms), the launcher as the command."""
    return {"hooks": claude_plugin.launched_by(gemini.groups([LAUNCHER]), LAUNCHER)}


def manifest() -> dict[str, Any]:
    """`gemini-extension.json`: init's MCP entry (`gemini.mcp_server`), the launcher as its command
    (the data dir is the user's environment's, not the one this was generated in)."""
    server = gemini.mcp_server([LAUNCHER])
    server["env"] = {
        key: value for key, value in server["env"].items() if key != "AGENTCTX_HOME"
    }  # the user's, not ours
    return {
        "name": NAME,
        "version": claude_plugin.version(),
        "description": claude_plugin.DESCRIPTION.replace("Claude Code", "Gemini CLI"),
        "mcpServers": {NAME: server},
    }


def files() -> dict[str, str]:
    """Every generated file by its path relative to the repository root."""
    return {
        f"{FOLDER}/gemini-extension.json": json.dumps(manifest(), indent=2) + "\n",
        f"{FOLDER}/hooks/hooks.json": json.dumps(hooks(), indent=2) + "\n",
        f"{FOLDER}/bin/agentctx-run": claude_plugin.launcher(
            VIA_EXTENSION, generator="agentctx.cli.clients.gemini_extension"
        ),
    }


def write(root: Path) -> list[Path]:
    return claude_plugin.write(root, files())


def installed() -> Path | None:
    """The installed (or linked) agentctx extension's folder, when Gemini has one."""
    folder = gemini.home() / "extensions" / NAME
    return (
        folder
        if (folder / "gemini-extension.json").is_file() or (folder / ".gemini-extension-install.json").is_file()
        else None
    )


def init_refusal(folder: Path) -> str:
    return (
        f"Gemini CLI already runs agentctx through its extension ({folder}); init would register every hook and "
        "the MCP server twice. Keep the extension (nothing to do), or remove it first: "
        "`gemini extensions uninstall agentctx`, then run init again. Nothing was written."
    )


if __name__ == "__main__":
    repository = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for path in write(repository):
        print(path)
