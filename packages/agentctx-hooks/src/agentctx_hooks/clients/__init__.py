"""The client contract: what differs between Claude Code, Codex CLI and Gemini CLI.

One module per client (`claude`, `codex`, `gemini`), each with the same names:

- `NAME`, `LABEL`, `BINARY`: how it is called on the command line, for people, on PATH.
- `EVENTS`: its hook event names -> ours (the events `agentctx hook` implements). An event the
  client has but agentctx does not use maps to "" (ignored quietly); a name not in the map is
  unknown (one log line).
- `REGISTERED`: the events `agentctx init` registers, `MATCHERS` and `timeout(event)` for them.
- `normalise(native_event, data)`: the payload in the shape the shared handlers read (Claude
  Code's): `prompt` as the developer typed it, `tool_name` / `tool_input` / `tool_response`
  with Claude's tool names, `source`, `session_id`, `cwd`, `transcript_path`.
- `render(native_event, context)`: the text the model should get, as the client wants it
  printed (`output.hook_json` with the client's own event name).
- `TRANSCRIPT`: the transcript format extraction reads (`agentctx extract --client`).
- config location and registration: `agentctx_hooks.clients.install_<name>` (not imported by hooks).

Everything else — store, search, budgets, dedup, digest, extraction — is shared and knows
nothing of clients. These modules import only the standard library (the hook path), and
`re` / `json` only inside the functions that need them.
"""

from __future__ import annotations

NAMES = ("claude", "codex", "gemini")
# The events `agentctx hook` implements, by Claude Code's names (each client maps its own to these).
HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "CwdChanged",
    "PreCompact",
    "Stop",
    "SessionEnd",
)
DEFAULT = "claude"


class UnknownClient(ValueError):
    """A client name agentctx does not support."""


def get(name: str):  # returns the client's module
    if name == "claude":
        from agentctx_hooks.clients import claude as module
    elif name == "codex":
        from agentctx_hooks.clients import codex as module
    elif name == "gemini":
        from agentctx_hooks.clients import gemini as module
    else:
        raise UnknownClient(f"unknown client {name!r}; supported: {', '.join(NAMES)}")
    return module
