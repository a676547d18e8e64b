"""PostToolUse / PostToolUseFailure: deterministic observation capture
(docs/adr/0011-capture-then-consolidate.md).

No model, no LLM: regular expressions over the payload shapes Claude Code sends.
- Edit / Write / MultiEdit / NotebookEdit → a `file` node linked to the session and to the
  current records that name the file; the file joins the session's `files` list; records
  anchored to the file get their anchor state re-checked (`freshness.note_edit`).
- Bash output with an error signature → one inferred `bugfix` stub, title only, keyed by the
  normalised signature so the same error never makes a second stub.
- Test commands (pytest, npm test, go test, cargo test, …) → a pass/fail entry in the session's
  `tests` list and an edge from each test file's node to the session.
- `git commit`, branch switches, `gh pr create` → session metadata (`commits`, `branch`, `prs`).
The hook itself only records what it saw in the spool (`spool.py`): the store is written by
`apply_capture`, which the next hook that opens the store runs for every waiting capture. Tools
it does not capture (Read, Grep, MCP tools, Agent…) return at once.
"""

from __future__ import annotations

from agentctx_hooks.payload import HookInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store.jsontext import JsonValue

WRITE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}


def handle(hook: HookInput) -> str:
    tool = hook.get_text("tool_name")
    failed = hook.event == "PostToolUseFailure"
    if not hook.cwd or not hook.session_id:
        return ""
    entry: dict[str, Any] = {"session_id": hook.session_id, "cwd": hook.cwd}
    if tool in WRITE_TOOLS:
        path = "" if failed else _written_path(hook, WRITE_TOOLS[tool])  # a failed edit did not happen
        if not path:
            return ""
        entry.update(kind="file", path=path)
    elif tool == "Bash":
        command = hook.get_dict("tool_input").get("command")
        if not isinstance(command, str) or not command.strip():
            return ""
        from agentctx_hooks.ondemand.signals import observe_bash

        output = hook.get_text("error") if failed else _bash_output(hook.data.get("tool_response"))
        observation = observe_bash(command, output, failed=failed)
        if observation.is_empty():
            return ""
        from agentctx_store.redact import redact_value  # the spool file holds no secret either

        entry.update(
            kind="bash",
            **redact_value(
                {
                    "command": command[:2000],
                    "error": list(observation.error) if observation.error else None,
                    "test": [observation.test[0], observation.test[1]] if observation.test else None,
                    "branch": observation.branch,
                    "commit": observation.commit,
                    "pull_request": observation.pull_request,
                }
            ),
        )
    else:
        return ""
    from agentctx_store.clock import utc_now

    from agentctx_hooks import spool

    entry["at"] = utc_now()
    if hook.get_text("agentctx_client"):
        entry["client"] = hook.get_text("agentctx_client")
        entry["hook"] = hook.get_text("agentctx_hook")
    spool.add(entry)
    return ""


def _written_path(hook: HookInput, field: str) -> str:
    value = hook.get_dict("tool_input").get(field)
    if not isinstance(value, str) or not value:
        value = hook.get_dict("tool_response").get("filePath")
    return value if isinstance(value, str) and "\x00" not in value else ""


def _bash_output(response: JsonValue) -> str:
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        parts = [response.get("stdout"), response.get("stderr")]
        return "\n".join(part for part in parts if isinstance(part, str))
    return ""
