"""Codex CLI's config files: hooks in `$CODEX_HOME/hooks.json` (the same shape as Claude Code's
settings), the MCP server and the hooks' trust in `$CODEX_HOME/config.toml` (default `~/.codex`).

Codex skips hooks it has not been told to trust, silently; a user's approval in the TUI (`/hooks`)
records `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`, the
SHA-256 of the handler's canonical JSON identity. init writes exactly that for its own handlers
(and nothing for anyone else's), inside one marked block of config.toml. Codex has no project
scope here (`NO_PROJECT_SCOPE`). The names of `ClientSetup` (`agentctx.cli.clients`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from agentctx_store.jsontext import is_array, is_object

from agentctx.cli import _config_file as files
from agentctx.cli.clients import _settings as install
from agentctx.cli.clients import hook_groups, mcp_entry
from agentctx.cli.clients._changes import (
    Change,
    ConfigError,
    add_json_entries,
    check,
    our_events,
    read_config,
    remove_json_entries,
)

MCP_NAME = install.MCP_NAME
REGION_BEGIN = (
    "# >>> agentctx (written by `agentctx init --client codex`; `agentctx uninstall --client codex` removes it)"
)
REGION_END = "# <<< agentctx"
REGISTERED = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd")
MATCHERS = {"PostToolUse": "^(Bash|apply_patch)$"}
_TIMEOUTS = {"SessionEnd": 3}  # seconds; Codex clamps SessionEnd to 3 s anyway
NO_PROJECT_SCOPE = (
    "Codex CLI has no project scope in agentctx: Codex runs a repository's .codex/hooks.json only once you "
    "trust the whole project (its config and every hook committed there), a choice agentctx does not make "
    "for you; run `agentctx {command} --client codex` without --project (user scope serves every repository)."
)


def home() -> Path:
    override = os.environ.get("CODEX_HOME")
    return Path(override).expanduser() if override else Path.home() / ".codex"


def timeout(event: str) -> int:
    return _TIMEOUTS.get(event, 10)


def groups(base: list[str]) -> dict[str, dict[str, Any]]:
    return hook_groups(base, "codex", REGISTERED, matchers=MATCHERS, timeout=timeout)


# -- init and uninstall --------------------------------------------------------------------------


def plan(
    base: list[str], record: dict[str, Any], *, no_mcp: bool, project_root: Path | None = None
) -> tuple[list[Change], dict[str, Any]]:
    hooks_path, config_path = home() / "hooks.json", home() / "config.toml"
    read_toml(config_path)  # refuse a malformed config.toml before touching hooks.json
    hooks_change, hooks_record = add_json_entries(hooks_path, groups(base), None, record.get("hooks") or {})
    trust = trust_entries(hooks_path, hooks_change.after)
    mcp = None if no_mcp else mcp_entry(base, "codex")
    config = config_change(config_path, mcp, trust)
    check([hooks_change, config])
    created_config = record.get("created_config", config.before is None)
    restore = record.get("config_restore")
    if config.changed:
        restore = files.remember(restore, config.before, config.after, first=not record)
    return [hooks_change, config], {
        "hooks_path": str(hooks_path),
        "hooks": hooks_record,
        "config_path": str(config_path),
        "created_config": created_config,
        "config_restore": restore,
    }


def after_init() -> str:
    total, trusted = trust_state()
    return (
        f"Codex CLI: {trusted} of {total} agentctx hooks trusted in {home() / 'config.toml'} "
        "(what approving them in Codex's /hooks records)"
    )


def plan_removal(record: dict[str, Any], project_root: Path | None = None) -> list[Change]:
    hooks_path = Path(record.get("hooks_path") or home() / "hooks.json")
    config_path = Path(record.get("config_path") or home() / "config.toml")
    return [
        remove_json_entries(hooks_path, record.get("hooks")),
        config_removal(
            config_path, created_file=bool(record.get("created_config")), restore=record.get("config_restore")
        ),
    ]


def remaining(record: dict[str, Any], project_root: Path | None = None) -> dict[str, Any] | None:
    return None  # one set of files: uninstall removes them all


# -- status and doctor ---------------------------------------------------------------------------


def registration(project_root: Path | None = None) -> dict[str, Any]:
    events = our_events(home() / "hooks.json")
    total, trusted = trust_state()
    mcp = False
    try:
        data, _ = read_toml(home() / "config.toml")
        mcp = "agentctx" in (data.get("mcp_servers") or {})
    except ConfigError:
        pass
    return {
        "hooks": {str(home() / "hooks.json"): events} if events else {},
        "mcp": mcp,
        "active": bool(events) and total > 0 and trusted == total,
        "trusted": f"{trusted}/{total}",
    }


def note(info: dict[str, Any]) -> str:
    return f"trusted {info['trusted']}"


def inactive(info: dict[str, Any]) -> tuple[str, str]:
    return (
        f"only {info['trusted']} trusted: Codex skips untrusted hooks silently",
        "agentctx init --client codex (or approve them in Codex's /hooks)",
    )


# -- config.toml (MCP server, hook trust) -------------------------------------------------------


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
    for event, listed in hooks.items():
        for group_index, group in enumerate(listed if is_array(listed) else ()):
            for hook_index, hook in enumerate(group.get("hooks") or () if is_object(group) else ()):
                if is_object(hook) and install.is_our_hook(hook.get("command")):
                    key = f"{hooks_path}:{snake(event)}:{group_index}:{hook_index}"
                    entries[key] = trust_hash(event, hook, group.get("matcher"))
    return entries


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string


def region(mcp: dict[str, Any] | None, trust: dict[str, str]) -> str:
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
    text = read_config(path)
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


def config_change(path: Path, mcp: dict[str, Any] | None, trust: dict[str, str]) -> Change:
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
    ours = region(mcp, trust) if (mcp is not None or trust) else ""
    if not ours:
        after = base
    elif not base:
        after = ours
    else:
        after = base + ("" if base.endswith("\n") else "\n") + "\n" + ours
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


def config_removal(path: Path, *, created_file: bool, restore: Any = None) -> Change:
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


def trust_state(path: Path | None = None) -> tuple[int, int]:
    """(our handlers in hooks.json, how many of them config.toml trusts with the current hash)."""
    folder = home()
    hooks_path = folder / "hooks.json"
    try:
        hooks_text = hooks_path.read_text(encoding="utf-8")
        wanted = trust_entries(hooks_path, hooks_text)
        data, _ = read_toml(path or folder / "config.toml")
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
