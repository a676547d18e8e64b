"""What a hook may print: only the JSON Claude Code accepts, or nothing.

Claude Code reads `{"hookSpecificOutput": {"hookEventName": E, "additionalContext": T}}` from
stdout of a hook that exits 0. Any other stdout text next to it turns the whole output into
plain text, so handlers return a string and only `__main__` writes, once.
"""

from __future__ import annotations

from agentctx_store.jsontext import dumps

# Events whose hookSpecificOutput carries additionalContext to the model.
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "SubagentStart"})


def system_message(text: str) -> str:
    """A line shown to the user, not the model (`systemMessage`, accepted on every event)."""
    return dumps({"systemMessage": text})


def hook_json(event: str, context: str, *, name: str = "") -> str:
    """The stdout line for `context`, or "" when there is nothing to say. `name` is the
    client's own name for the event (Gemini's `BeforeAgent` for our `UserPromptSubmit`)."""
    if not context.strip() or event not in CONTEXT_EVENTS:
        return ""
    # ASCII-escaped (json's default), so any stdout encoding carries it
    return dumps({"hookSpecificOutput": {"hookEventName": name or event, "additionalContext": context}})
