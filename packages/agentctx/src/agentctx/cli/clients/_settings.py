"""How `agentctx init` and `agentctx uninstall` change a client's JSON config
(docs/adr/0015-explicit-reversible-install.md): the `hooks` and `mcpServers` surgery every client's
setup shares (Claude Code's settings.json and ~/.claude.json, Codex CLI's hooks.json, Gemini CLI's
settings.json). Never imported by a hook.

Pure planning functions (dict in, dict out) plus careful file writes: add or remove only our
entries, keep every other key and every foreign hook exactly as it was, write nothing when
nothing changes, and copy the file aside before any write. What to register (which events, the
command, the MCP entry) is each client's module beside this one; the manifest of what init
created is `_manifest`.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_array, is_object

MCP_NAME = "agentctx"


class SettingsError(Exception):
    """A settings file cannot be changed safely (not JSON, not an object, a foreign entry)."""


# -- our hook commands -----------------------------------------------------------------


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


# -- settings.json surgery ----------------------------------------------------------------


def _strip_ours(groups: list[Any]) -> tuple[list[Any], bool]:
    """The event's groups without our hook commands; a group left empty by that is dropped."""
    kept: list[Any] = []
    changed = False
    for group in groups:
        hooks = group.get("hooks") if is_object(group) else None
        if not is_array(hooks) or not any(is_object(h) and is_our_hook(h.get("command")) for h in hooks):
            kept.append(group)
            continue
        changed = True
        remaining = [h for h in hooks if not (is_object(h) and is_our_hook(h.get("command")))]
        if remaining:
            kept.append({**group, "hooks": remaining})
    return kept, changed


def apply_hooks(settings: dict[str, Any], groups: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """Settings with exactly our `groups` registered. Returns (new settings, events whose key
    this call created). An identical registration is left where it is (idempotent)."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if hooks is None:
        hooks = result["hooks"] = dict[str, Any]()
    if not is_object(hooks):
        raise SettingsError('"hooks" is not a JSON object; fix it by hand, then run `agentctx init` again.')
    created: list[str] = []
    for event in list(hooks):
        current = hooks[event]
        if not is_array(current):
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
    if not is_object(hooks):
        return result
    removed_any = False
    for event in list(hooks):
        if not is_array(hooks[event]):
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


def is_our_mcp(entry: object) -> bool:
    if not is_object(entry):
        return False
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not is_array(args):
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
        servers = result["mcpServers"] = dict[str, Any]()
    if not is_object(servers):
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
    if is_object(servers) and is_our_mcp(servers.get(MCP_NAME)):
        del servers[MCP_NAME]
        if not servers and drop_servers_key:
            del result["mcpServers"]
    return result


# -- files -----------------------------------------------------------------------------------


def dump_json(data: dict[str, Any], original: str | None) -> str:
    """JSON in the file's own style, so a diff shows only our change: its indentation (2 spaces
    for a new file), one line when it was one line, its line ends, its final newline or none, and
    `\\u` escapes when it used them instead of the characters themselves."""
    if not original or original.strip() in ("", "{}"):
        return json.dumps(data, indent=2, ensure_ascii=False) + (
            "\n" if not original or original.endswith("\n") else ""
        )
    escaped = original.isascii() and "\\u" in original
    if "\n" not in original.strip():
        text = json.dumps(data, ensure_ascii=escaped)
    else:
        match = re.search(r"^([ \t]+)\S", original, re.MULTILINE)
        text = json.dumps(data, indent=match.group(1) if match else 2, ensure_ascii=escaped)
    if original.endswith("\n"):
        text += "\n"
    return text.replace("\n", "\r\n") if "\r\n" in original else text


def diff(path: Path, before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile=str(path) if before is not None else "/dev/null",
        tofile=str(path) if after is not None else "/dev/null",
    )
    return "".join(lines)


def write_with_backup(path: Path, text: str, *, had_file: bool) -> Path | None:
    """`_config_file.write_text`: through any link, atomically, keeping the mode, with a backup
    beside the file when there was one. Returns the backup.

    Raises:
        ConfigFileError: the file cannot be written (read-only, its folder, a dangling link).
    """
    from agentctx.cli import _config_file as files

    return files.write_text(path, text, backup=had_file)


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


def parse_json(path: Path, text: str) -> dict[str, Any]:
    """The JSON object in `text` (the file `path`'s), refusing duplicate keys: a JSON reader keeps
    only one of them, so rewriting the file would silently drop the other.

    Raises:
        SettingsError: not valid JSON, not an object, or a key twice in one object.
    """
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except _Duplicate as exc:
        raise SettingsError(
            f"{path}: the key {exc.key!r} appears twice in one object (only one of them counts); "
            "remove one by hand, then run again. Nothing was changed."
        ) from None
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path}, line {exc.lineno}: not valid JSON ({exc.msg}); fix it by hand, then run again. Nothing was changed."
        ) from None
    if not is_object(data):
        raise SettingsError(f"{path}, line 1: not a JSON object; fix it by hand, then run again. Nothing was changed.")
    return data


def read_json(path: Path) -> tuple[dict[str, Any], str | None]:
    """(parsed object, original text) of a client's JSON settings (through any link); ({}, None)
    when the file does not exist yet.

    Raises:
        SettingsError: it cannot be read, is not UTF-8, or is not a JSON object with each key
            once (the message names the file, and the line when there is one).
    """
    from agentctx.cli import _config_file as files

    try:
        text = files.read_text(path)
    except files.ConfigFileError as exc:
        raise SettingsError(str(exc)) from None
    if text is None:
        return {}, None
    if not text.strip():
        return {}, text
    return parse_json(path, text), text
