"""Registering agentctx in Codex CLI and Gemini CLI config files (used by `agentctx init`,
`uninstall`, `status` and `doctor`; never imported by a hook).

Every change is planned first as a `Change` (path, text before, text after) so `--dry-run` can
print the exact diff, then written with a backup beside the file, through any symlink
(`_config_file`). A malformed file (JSON or TOML, not UTF-8, a key twice) or one that cannot be
written is refused with its path, and nothing is written. What init found and created is
remembered in the install manifest, so uninstall puts every file back as it was (byte for byte
when it is unchanged since).

- Codex: hooks in `$CODEX_HOME/hooks.json` (the same shape as Claude Code's settings), the MCP
  server and the hooks' trust in `$CODEX_HOME/config.toml`. Codex skips hooks it has not been
  told to trust, silently; a user's approval in the TUI (`/hooks`) records
  `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`, the
  SHA-256 of the handler's canonical JSON identity. init writes exactly that for its own
  handlers (and nothing for anyone else's), inside one marked block of config.toml.
- Gemini: hooks and `mcpServers` in `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/`), or
  the repository's `.gemini/settings.json` with `--project`; timeouts in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_array, is_object

from agentctx.cli import _config_file as files
from agentctx.cli import _hook_settings as install

MCP_NAME = install.MCP_NAME
REGION_BEGIN = (
    "# >>> agentctx (written by `agentctx init --client codex`; `agentctx uninstall --client codex` removes it)"
)
REGION_END = "# <<< agentctx"


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


# -- where each client keeps its config --------------------------------------------------------


def codex_home() -> Path:
    override = os.environ.get("CODEX_HOME")
    return Path(override).expanduser() if override else Path.home() / ".codex"


def gemini_home() -> Path:
    """Gemini CLI's `~/.gemini` (`$GEMINI_CLI_HOME/.gemini` when that is set)."""
    override = os.environ.get("GEMINI_CLI_HOME")
    return (Path(override).expanduser() if override else Path.home()) / ".gemini"


def gemini_settings(project_root: Path | None = None) -> Path:
    return (project_root / ".gemini" if project_root else gemini_home()) / "settings.json"


def executable(client: str) -> str | None:
    from agentctx_hooks.clients import codex, gemini

    return shutil.which({"codex": codex.BINARY, "gemini": gemini.BINARY, "claude": "claude"}[client])


# -- hook entries ------------------------------------------------------------------------------


def hook_command(base: list[str], client: str, event: str) -> str:
    return " ".join(shlex.quote(part) for part in [*base, "hook", "--client", client, event])


def codex_groups(base: list[str]) -> dict[str, dict[str, Any]]:
    from agentctx_hooks.clients import codex

    groups: dict[str, dict[str, Any]] = {}
    for event in codex.REGISTERED:
        hook = {"type": "command", "command": hook_command(base, "codex", event), "timeout": codex.timeout(event)}
        group: dict[str, Any] = {"matcher": codex.MATCHERS[event]} if event in codex.MATCHERS else {}
        group["hooks"] = [hook]
        groups[event] = group
    return groups


def gemini_groups(base: list[str]) -> dict[str, dict[str, Any]]:
    from agentctx_hooks.clients import gemini

    groups: dict[str, dict[str, Any]] = {}
    for event in gemini.REGISTERED:
        hook = {
            "type": "command",
            "name": f"agentctx-{event}",
            "command": hook_command(base, "gemini", event),
            "timeout": gemini.timeout(event),
        }
        group: dict[str, Any] = {"matcher": gemini.MATCHERS[event]} if event in gemini.MATCHERS else {}
        group["hooks"] = [hook]
        groups[event] = group
    return groups


def mcp_env(client: str) -> dict[str, str]:
    """What the MCP server needs from the environment: the client that starts it (the provenance of
    the records it writes), and `AGENTCTX_HOME` when set, since Codex gives it only HOME and PATH."""
    env = {"AGENTCTX_CLIENT": client}
    if os.environ.get("AGENTCTX_HOME"):
        env["AGENTCTX_HOME"] = os.environ["AGENTCTX_HOME"]
    return env


# -- JSON files (Codex hooks.json, Gemini settings.json) ---------------------------------------


def _read_config(path: Path) -> str | None:
    """A client config file's text (through any link), or None when there is none yet.

    Raises:
        ConfigError: the file exists but cannot be read, or is not UTF-8 text.
    """
    try:
        return files.read_text(path)
    except files.ConfigFileError as exc:
        raise ConfigError(str(exc)) from None


def read_json(path: Path) -> tuple[dict[str, Any], str | None]:
    """`_hook_settings.read_json`, failing as this module does (`ConfigError`)."""
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


# -- Codex: config.toml (MCP server, hook trust) ------------------------------------------------


def snake(event: str) -> str:
    return "".join("_" + char.lower() if char.isupper() and index else char.lower() for index, char in enumerate(event))


def trust_hash(event: str, hook: dict[str, Any], matcher: str | None) -> str:
    """The hash Codex records when a user trusts a hook: SHA-256 over the compact, key-sorted
    JSON of `{event_name, matcher?, hooks: [handler]}`, the handler with Codex's defaults
    (`async: false`, `timeout: 600`) filled in."""
    handler = {
        "type": "command",
        "command": hook["command"],
        "timeout": hook.get("timeout", 600),
        "async": hook.get("async", False),
    }
    if hook.get("statusMessage"):
        handler["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": snake(event), "hooks": [handler]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def trust_entries(hooks_path: Path, hooks_text: str | None) -> dict[str, str]:
    """`hooks.state` key -> trusted_hash for every agentctx handler in Codex's hooks.json."""
    if not hooks_text:
        return {}
    data = json.loads(hooks_text)
    entries: dict[str, str] = {}
    hooks: dict[str, Any] = data.get("hooks") or {}
    for event, groups in hooks.items():
        for group_index, group in enumerate(groups if is_array(groups) else ()):
            for hook_index, hook in enumerate(group.get("hooks") or () if is_object(group) else ()):
                if is_object(hook) and install.is_our_hook(hook.get("command")):
                    key = f"{hooks_path}:{snake(event)}:{group_index}:{hook_index}"
                    entries[key] = trust_hash(event, hook, group.get("matcher"))
    return entries


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string


def codex_region(mcp: dict[str, Any] | None, trust: dict[str, str]) -> str:
    lines = [REGION_BEGIN]
    if mcp is not None:
        lines += [f"[mcp_servers.{MCP_NAME}]", f"command = {_toml_string(mcp['command'])}"]
        lines.append("args = [" + ", ".join(_toml_string(arg) for arg in mcp["args"]) + "]")
        if mcp.get("env"):
            pairs = ", ".join(f"{key} = {_toml_string(value)}" for key, value in mcp["env"].items())
            lines.append(f"env = {{ {pairs} }}")
        lines.append("")
    for key, value in trust.items():
        lines += [f"[hooks.state.{_toml_string(key)}]", f"trusted_hash = {_toml_string(value)}", ""]
    if lines[-1] == "":
        lines.pop()
    lines.append(REGION_END)
    return "\n".join(lines) + "\n"


def read_toml(path: Path) -> tuple[dict[str, Any], str | None]:
    text = _read_config(path)
    if text is None:
        return {}, None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML ({exc}); fix it by hand, then run again. Nothing was changed."
        ) from None


def without_region(text: str) -> str:
    """The config text without our marked block (and the blank line init put before it)."""
    begin = text.find(REGION_BEGIN)
    if begin < 0:
        return text
    end = text.find(REGION_END, begin)
    end = len(text) if end < 0 else end + len(REGION_END)
    if text[end : end + 1] == "\n":
        end += 1
    head = text[:begin]
    if head.endswith("\n\n"):
        head = head[:-1]
    return head + text[end:]


def codex_config_change(path: Path, mcp: dict[str, Any] | None, trust: dict[str, str]) -> Change:
    """config.toml with our block (MCP server, trust) replacing any earlier one of ours."""
    data, original = read_toml(path)
    base = without_region(original or "")
    servers = data.get("mcp_servers")
    servers = servers if is_object(servers) else {}
    existing = servers.get(MCP_NAME)
    if mcp is not None and existing is not None and REGION_BEGIN not in (original or ""):
        if not install.is_our_mcp(existing):
            raise ConfigError(
                f"{path}: an MCP server named {MCP_NAME!r} that is not agentctx is registered; "
                "rename or remove it, then run `agentctx init --client codex` again."
            )
        raise ConfigError(
            f"{path}: [mcp_servers.{MCP_NAME}] is already there outside agentctx's block; "
            "delete that table, then run `agentctx init --client codex` again."
        )
    region = codex_region(mcp, trust) if (mcp is not None or trust) else ""
    if not region:
        after = base
    elif not base:
        after = region
    else:
        after = base + ("" if base.endswith("\n") else "\n") + "\n" + region
    if after == base == "" and original is None:
        return Change(path=path, before=None, after=None)
    try:
        tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:  # e.g. `mcp_servers = {…}` inline: our tables would clash
        raise ConfigError(
            f"{path}: adding agentctx's tables would make it invalid ({exc}); "
            "write `[mcp_servers.*]` and `[hooks.state.*]` as tables, then run again. Nothing was changed."
        ) from None
    return Change(path=path, before=original, after=after)


def codex_config_removal(path: Path, *, created_file: bool, restore: Any = None) -> Change:
    """config.toml as init found it when it is still exactly what init wrote; else without our block."""
    _, original = read_toml(path)
    if original is None:
        return Change(path=path, before=None, after=None)
    exact, before = files.restore_point(restore, original)
    if exact:
        return Change(path=path, before=original, after=before, restored=True)
    after = without_region(original)
    if created_file and not after.strip():
        return Change(path=path, before=original, after=None)
    return Change(path=path, before=original, after=after)


def codex_trust_state(path: Path | None = None) -> tuple[int, int]:
    """(our handlers in hooks.json, how many of them config.toml trusts with the current hash)."""
    home = codex_home()
    hooks_path = home / "hooks.json"
    try:
        hooks_text = hooks_path.read_text(encoding="utf-8")
        wanted = trust_entries(hooks_path, hooks_text)
        data, _ = read_toml(path or home / "config.toml")
    except (OSError, ValueError, ConfigError):
        return 0, 0
    table: dict[str, Any] = data.get("hooks") or {}
    state: dict[str, Any] = table.get("state") or {}
    trusted = sum(
        1
        for key, value in wanted.items()
        if isinstance(state.get(key), dict) and state[key].get("trusted_hash") == value
    )
    return len(wanted), trusted


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
