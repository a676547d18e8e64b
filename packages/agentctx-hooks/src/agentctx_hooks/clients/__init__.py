"""How a client's hook payloads become ours, for the clients whose payloads are not Claude Code's.

Which clients there are, and how their event names map to ours, is the registry
(`agentctx_store.clients`). A client whose payloads or output differ from Claude Code's beyond the
event names has a module here named after it (`codex`, `gemini`), with:

- `normalise(event, data)`: the payload of our `event` in the shape the shared handlers read
  (Claude Code's): `prompt` as the developer typed it, `tool_name` / `tool_input` /
  `tool_response` with Claude's tool names, `source`, `session_id`, `cwd`, `transcript_path`.
  Returns the event and the payload (a failed tool call becomes PostToolUseFailure).
- `render(event, native_event, context)`: the text the model should get, as the client wants it
  printed (`output.hook_json` with the client's own event name).

A client without a module gets the defaults below: its payloads as they are, our answer under
its own event name. Everything else — store, search, budgets, dedup, digest, extraction — is
shared and knows nothing of clients. These modules import only the standard library (the hook
path), and `re` / `json` only inside the functions that need them.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def payloads(name: str) -> ModuleType:
    """The module that reshapes client `name`'s payloads: its own here, else this one (the defaults)."""
    module = f"{__name__}.{name}"
    try:
        __import__(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise  # the client's module is there but imports something that is not
        return sys.modules[__name__]
    return sys.modules[module]


def normalise(event: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A Claude-Code-shaped payload needs nothing done."""
    return event, data


def render(event: str, native_event: str, context: str) -> str:
    from agentctx_hooks.output import hook_json

    return hook_json(event, context, name=native_event)
