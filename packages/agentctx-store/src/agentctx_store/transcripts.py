"""What the hooks and session-end extraction agree on about a client's transcript.

- `META_PREFIXES`: text a client submits or records on the developer's behalf (command
  echoes, task notifications, reminders, hook output) — never searched for, never extracted
  as the developer's words.
- `LIMITS`: how much of each kind of message the extraction keeps (characters). The `Stop`
  hook counts a session's growth with the same caps, to decide when a checkpoint is due.
"""

from __future__ import annotations

META_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "<system-reminder>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<user-memory-input>",
)

# The developer's words are kept whole up to a generous cap; tool output is context and is cut
# hardest (a command that succeeded: a glimpse of its head and its last line).
LIMITS: dict[str, int] = {
    "developer": 8000,
    "assistant": 1500,
    "tool_call": 300,
    "tool_output": 200,
    "meta": 1200,
    "subagent": 400,
}
# A failed command's output is where gotchas come from, and its error is at the end: kept longer.
TOOL_ERROR_CHARS = 1000


def is_meta(text: str) -> bool:
    """Whether a user-role text was written by the client, not typed by the developer."""
    return text.lstrip().startswith(META_PREFIXES)
