"""OpenAI Codex CLI (tested with 0.171.0; payloads in tests-e2e/fixtures/codex-cli/).

Codex's hook contract is Claude-Code-shaped: the same event names for what we use, the same
`hookSpecificOutput.additionalContext` output, which reaches the model verbatim as its own
`developer` message (up to 2,500 tokens, ~10,000 characters; longer is cut and spilled to a
file, so our 6,000 / 8,000-character budgets keep it whole). Differences handled here:

- the shell tool is reported as `Bash` with `tool_input.command`, its `tool_response` a plain
  string (the output; no exit code), so failures cannot be told apart: Codex captures tests,
  git and edits, not error stubs;
- file edits go through `apply_patch` (the patch text names the files);
- UserPromptSubmit also fires for a subagent's first prompt (`agent_id` set), which the model
  wrote, not the developer: nothing is searched for it;
- `transcript_path` is a rollout JSONL (extraction reads it as `codex`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store.jsontext import JsonValue

_PATCH_FILE_MARKS = ("*** Update File: ", "*** Add File: ")


def normalise(event: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if event == "UserPromptSubmit" and data.get("agent_id"):
        data = {**data, "prompt": ""}  # a subagent's task, written by the model
    elif event == "PostToolUse" and data.get("tool_name") == "apply_patch":
        path = patched_file(data.get("tool_input"))
        data = {**data, "tool_name": "Edit", "tool_input": {"file_path": path}}
    return event, data


def patched_file(tool_input: JsonValue) -> str:
    """The first file an `apply_patch` call adds or updates ("" when none is named)."""
    texts = [tool_input] if isinstance(tool_input, str) else []
    if isinstance(tool_input, dict):
        texts = [value for value in tool_input.values() if isinstance(value, str)]
    for text in texts:
        for line in text.splitlines():
            for mark in _PATCH_FILE_MARKS:
                if line.startswith(mark) and line[len(mark) :].strip():
                    return line[len(mark) :].strip()
    return ""


def render(event: str, native_event: str, context: str) -> str:
    from agentctx_hooks.output import hook_json

    return hook_json(event, context, name=native_event)
