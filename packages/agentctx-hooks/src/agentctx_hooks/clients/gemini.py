"""Google Gemini CLI (tested with 0.61.0; payloads in tests-e2e/fixtures/gemini-cli/).

What differs from Claude Code, and what this module does about it:

- Event names (mapped in `agentctx_store.clients`): `BeforeAgent` is our UserPromptSubmit,
  `AfterTool` our PostToolUse, `AfterAgent` our Stop. `PreCompress` fires before *every* model
  call (also when nothing is compressed) and Gemini has no SessionStart after compression to
  re-inject a snapshot, so it is not used.
- BeforeAgent's `prompt` already carries the SessionStart context in front of what the developer
  typed (`<hook_context>…</hook_context>\\n\\n<typed text>`): only the typed text is searched,
  or every prompt would match the whole digest.
- Tools: `run_shell_command` (output in `tool_response.llmContent`, an `Exit Code: N` line when
  it failed), `write_file` and `replace` (`tool_input.file_path`); a failed tool has
  `tool_response.error` and no separate event.
- Output: the same `hookSpecificOutput.additionalContext`, delivered inside the user turn as
  `<hook_context>…</hook_context>` with every `<` and `>` of our text HTML-escaped. An
  `<agentctx-record …>` fence would reach the model as `&lt;agentctx-record …&gt;`, so for
  Gemini the fences are written with square brackets: `[agentctx-record id="…" …]` …
  `[/agentctx-record]` (record text cannot forge them either).
- `transcript_path` is a chat recording (extraction reads it as `gemini`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store.jsontext import JsonValue

TOOLS = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}
_EXIT_MARK = "Exit Code: "


def typed_prompt(prompt: str) -> str:
    """What the developer typed: BeforeAgent's `prompt` without the hook contexts Gemini put in
    front of it (`agentctx_store.client_text`, shared with extraction)."""
    from agentctx_store.client_text import strip_hook_context

    return strip_hook_context(prompt)


def normalise(event: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if event == "UserPromptSubmit":
        prompt = data.get("prompt")
        if isinstance(prompt, str):
            data = {**data, "prompt": typed_prompt(prompt)}
    elif event == "PostToolUse":
        event, data = _tool(data)
    return event, data


def _tool(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    tool = data.get("tool_name")
    ours = TOOLS.get(tool) if isinstance(tool, str) else None
    if ours is None:
        return "PostToolUse", data
    response: JsonValue = data.get("tool_response")
    response = response if isinstance(response, dict) else {}
    output = llm_text(response.get("llmContent"))
    error: JsonValue = response.get("error")
    error_text = (
        error if isinstance(error, str) else (llm_text(error.get("message")) if isinstance(error, dict) else "")
    )
    failed = bool(error) or (ours == "Bash" and _exit_code(output) not in (None, 0))
    tool_input: JsonValue = data.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    normal: dict[str, Any]
    if ours == "Bash":
        normal = {**data, "tool_name": "Bash", "tool_input": {"command": tool_input.get("command")}}
        normal["tool_response"] = output
    else:
        normal = {**data, "tool_name": ours, "tool_input": {"file_path": tool_input.get("file_path")}}
        normal["tool_response"] = {}
    if failed:
        normal["error"] = "\n".join(part for part in (error_text, output) if part)
        return "PostToolUseFailure", normal
    return "PostToolUse", normal


def llm_text(content: JsonValue) -> str:
    """`llmContent`: a string, or a list of `{text}` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[JsonValue] = content
        return "\n".join(part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _exit_code(output: str) -> int | None:
    at = output.rfind(_EXIT_MARK)
    if at < 0 or (at > 0 and output[at - 1] != "\n"):
        return None
    digits = output[at + len(_EXIT_MARK) :].split("\n", 1)[0].strip()
    return int(digits) if digits.lstrip("-").isdigit() else None


def render(event: str, native_event: str, context: str) -> str:
    from agentctx_hooks.output import hook_json

    return hook_json(event, bracket_fences(context), name=native_event)


def bracket_fences(text: str) -> str:
    """Our fences as brackets: `<agentctx-record …>` / `</agentctx-record>` as
    `[agentctx-record …]` / `[/agentctx-record]`, and the digest's `<agentctx-records …>` alike.

    Record text already has every `<` that could open a tag escaped (`fence.unfence`); the
    bracket form is defused here first (`[agentctx-record` becomes `[agentctx-record_`, in any
    case), so only our fences read as fences. Scanned by hand: the prompt path loads no `re`
    (tests/test_prompt_without_re.py holds both steps to their regular expressions)."""
    if _FENCE not in text.lower():
        return text
    return _tags_as_brackets(_defuse_brackets(text))


_FENCE = "agentctx-record"


def _name_end(text: str, at: int, *, any_case: bool) -> int:
    """Where `agentctx-record` or `agentctx-records` (after an optional `/`) starting at `at` ends, or -1."""
    if text.startswith("/", at):
        at += 1
    word = text[at : at + len(_FENCE)]
    if (word.lower().replace("\u017f", "s") if any_case else word) != _FENCE:  # ſ is an s to `re.IGNORECASE`
        return -1
    end = at + len(_FENCE)
    return end + 1 if text[end : end + 1] in (("s", "S", "\u017f") if any_case else ("s",)) else end


def _defuse_brackets(text: str) -> str:
    """`re.sub(r"\\[(/?)(agentctx-records?)", r"[\\1\\2_", text, flags=re.IGNORECASE)`."""
    parts: list[str] = []
    done = 0
    at = text.find("[")
    while at >= 0:
        end = _name_end(text, at + 1, any_case=True)
        if end >= 0:
            parts += (text[done:end], "_")
            done = end
        at = text.find("[", max(at + 1, done))
    return "".join(parts) + text[done:]


def _tags_as_brackets(text: str) -> str:
    """`re.sub(r"<(/?)(agentctx-records?)((?: [^<>\\n]*)?)>", r"[\\1\\2\\3]", text)`."""
    parts: list[str] = []
    done = 0
    at = text.find("<")
    while at >= 0:
        close = _name_end(text, at + 1, any_case=False)
        if close >= 0 and text.startswith(" ", close):
            close += 1
            while close < len(text) and text[close] not in "<>\n":
                close += 1
        if close >= 0 and text.startswith(">", close):
            parts += (text[done:at], "[", text[at + 1 : close], "]")
            done = close + 1
        at = text.find("<", max(at + 1, done))
    return "".join(parts) + text[done:]
