"""A planned change to a client's config file, and the JSON config changes every client's setup
makes (used by `agentctx init`, `uninstall`, `status` and `doctor`; never imported by a hook).

Every change is planned first as a `Change` (path, text before, text after) so `--dry-run` can
print the exact diff, then written with a backup beside the file, through any symlink
(`_config_file`). A malformed file (JSON or TOML, not UTF-8, a key twice) or one that cannot be
written is refused with its path, and nothing is written. What init found and created is
remembered in the install manifest, so uninstall puts every file back as it was (byte for byte
when it is unchanged since).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_object

from agentctx.cli import _config_file as files
from agentctx.cli.clients import _settings as install


class ConfigError(Exception):
    """A client config file cannot be changed safely; the message names the file and the fix."""


@dataclass(frozen=True, kw_only=True)
class Change:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: delete the file
    restored: bool = False  # uninstall: the text init found, put back byte for byte

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return install.diff(self.path, self.before, self.after) if self.changed else f"{self.path}: no change"


# -- JSON files (Codex hooks.json, Gemini settings.json, …) ---------------------------------------


def read_config(path: Path) -> str | None:
    """A client config file's text (through any link), or None when there is none yet.

    Raises:
        ConfigError: the file exists but cannot be read, or is not UTF-8 text.
    """
    try:
        return files.read_text(path)
    except files.ConfigFileError as exc:
        raise ConfigError(str(exc)) from None


def read_json(path: Path) -> tuple[dict[str, Any], str | None]:
    """`_settings.read_json`, failing as this module does (`ConfigError`)."""
    try:
        return install.read_json(path)
    except install.SettingsError as exc:
        raise ConfigError(str(exc)) from None


def add_json_entries(
    path: Path, groups: dict[str, dict[str, Any]], mcp: dict[str, Any] | None, record: dict[str, Any]
) -> tuple[Change, dict[str, Any]]:
    """Our hook groups (and MCP server) in a JSON config; returns the change and what to remember."""
    current, original = read_json(path)
    try:
        updated, created_events = install.apply_hooks(current, groups)
        created_servers = False
        if mcp is not None:
            updated, created_servers = install.apply_mcp(updated, mcp)
    except install.SettingsError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    after = original if updated == current and original is not None else install.dump_json(updated, original)
    remembered = {
        "created_file": record.get("created_file", False) or original is None,
        "created_hooks_key": record.get("created_hooks_key", False) or "hooks" not in current,
        "created_events": sorted(set(record.get("created_events", [])) | set(created_events)),
        "created_servers_key": record.get("created_servers_key", False) or created_servers,
        "restore": record.get("restore"),
    }
    if after != original:
        remembered["restore"] = files.remember(record.get("restore"), original, after, first=not record)
    return Change(path=path, before=original, after=after), remembered


def remove_json_entries(path: Path, record: dict[str, Any] | None) -> Change:
    """The file as init found it when it is still exactly what init wrote; else without our
    entries (the rest in the file's own style), removed when init created it and nothing else is left."""
    current, original = read_json(path)
    if original is None:
        return Change(path=path, before=None, after=None)
    exact, before = files.restore_point((record or {}).get("restore"), original)
    if exact:
        return Change(path=path, before=original, after=before, restored=True)
    drop_events = set(record.get("created_events", [])) if record else None
    drop_hooks_key = bool(record.get("created_hooks_key")) if record else None
    updated = install.remove_hooks(current, drop_events=drop_events, drop_hooks_key=drop_hooks_key)
    updated = install.remove_mcp(updated, drop_servers_key=bool(record and record.get("created_servers_key")))
    if updated == current:
        return Change(path=path, before=original, after=original)
    if updated == {} and record and record.get("created_file"):
        return Change(path=path, before=original, after=None)
    return Change(path=path, before=original, after=install.dump_json(updated, original))


def our_events(path: Path) -> list[str]:
    """The events a JSON config runs an agentctx hook for (for status / doctor)."""
    try:
        data, _ = read_json(path)
    except ConfigError:
        return []
    hooks = data.get("hooks")
    hooks = hooks if is_object(hooks) else {}
    found: list[str] = []
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and install.is_our_hook(hook.get("command")):
                    found.append(event)
    return found


# -- writing -----------------------------------------------------------------------------------


def check(changes: list[Change]) -> None:
    """Refuse, before anything is written, a change to a file that cannot be written.

    Raises:
        ConfigError: read-only, its folder cannot be written, or a link whose target's folder is missing.
    """
    for change in changes:
        if change.changed:
            try:
                files.check_writable(change.path)
            except files.ConfigFileError as exc:
                raise ConfigError(str(exc)) from None


def apply(change: Change) -> Path | None:
    """Write one planned change through any link (backup beside the file first). Returns the backup.

    Raises:
        ConfigFileError: the file cannot be written; it is left as it was.
    """
    if not change.changed:
        return None
    if change.after is None:
        files.delete(change.path)
        return None
    return install.write_with_backup(change.path, change.after, had_file=change.before is not None)
