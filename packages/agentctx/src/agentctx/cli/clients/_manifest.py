"""The manifest of what `agentctx init` created (`install.json` in the data dir), so `uninstall`
removes exactly that (docs/adr/0015-explicit-reversible-install.md).

It remembers which containers init created, so uninstall leaves a file that was `"hooks": {}`
before as `"hooks": {}` after, and the text each config file had, so a file unchanged since
init gets back its bytes. Claude Code's files are under `settings` and `mcp`, every other
client's under `clients.<name>` (what its module's `plan` returns).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_object


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
