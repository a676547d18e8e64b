"""`agentctx hook <Event>`: the process Claude Code runs for every registered hook event.

`agentctx/__main__.py` calls `main(argv)` before typer is imported, and this module imports
only the standard library; each handler imports the store (and only what it needs) itself.
Contract (SPEC §4): read the payload from stdin, print nothing or one hook JSON object, and
always exit 0. Any failure — bad JSON, a locked or corrupt store, a full disk — becomes one
line in `$AGENTCTX_HOME/logs/hooks.log`, never a blocked prompt.
"""

from __future__ import annotations

import sys

from agentctx_hooks import log

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "CwdChanged",
    "PreCompact",
    "Stop",
    "SessionEnd",
)
USAGE = f"usage: agentctx hook <{'|'.join(EVENTS)}> < payload.json"


def _handler(event: str):  # returns a handler: HookInput -> str
    if event == "SessionStart":
        from agentctx_hooks.session_start import handle
    elif event == "UserPromptSubmit":
        from agentctx_hooks.prompt import handle
    elif event in ("PostToolUse", "PostToolUseFailure"):
        from agentctx_hooks.capture import handle
    elif event == "CwdChanged":
        from agentctx_hooks.lifecycle import cwd_changed as handle
    elif event == "PreCompact":
        from agentctx_hooks.lifecycle import pre_compact as handle
    elif event == "Stop":
        from agentctx_hooks.lifecycle import stop as handle
    else:
        from agentctx_hooks.lifecycle import session_end as handle
    return handle


def run(event: str, raw: bytes) -> str:
    """The stdout text for one event and payload ("" for nothing). Never raises."""
    session = ""
    try:
        from agentctx_hooks.output import hook_json
        from agentctx_hooks.payload import parse

        hook = parse(event, raw)
        session = hook.session_id
        return hook_json(event, _handler(event)(hook))
    except Exception as exc:  # the process boundary: log, print nothing, exit 0
        log.error(event, exc, session=session)
        return ""


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n")
        return 0
    event = args[0]
    if event not in EVENTS:
        log.write(event, f"unknown hook event {event!r}; known: {', '.join(EVENTS)}")
        return 0
    try:
        from agentctx_hooks.payload import read_stdin

        raw = read_stdin()
    except Exception as exc:  # too large, unreadable
        log.error(event, exc)
        return 0
    owns_process = sys.argv[1:3] == ["hook", event]  # `agentctx hook X`, not a caller in-process
    if owns_process:
        from agentctx_hooks._process import ENDS_WITH_OS_EXIT

        ENDS_WITH_OS_EXIT["value"] = True
    text = run(event, raw)
    if text:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    if owns_process:
        _exit_now()
    return 0


def _exit_now() -> None:
    """End the process without interpreter teardown (and without the WAL checkpoint a closing
    connection does, see `storage`). Everything is committed and stdout is flushed."""
    import os

    try:  # noqa: SIM105 - contextlib is not imported on the hot path
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
