"""Claude Code: the reference client. Our event names, payloads and output are its own."""

from __future__ import annotations

from agentctx_hooks.clients import HOOK_EVENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "claude"
LABEL = "Claude Code"
BINARY = "claude"
TRANSCRIPT = "claude"
EVENTS = {event: event for event in HOOK_EVENTS}
TOOLS: dict[str, str] = {}  # Claude's own tool names: nothing to map


def normalise(native_event: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return native_event, data


def render(event: str, native_event: str, context: str) -> str:
    from agentctx_hooks.output import hook_json

    return hook_json(event, context)
