"""`agentctx hook <Event>`: the process Claude Code runs for every registered hook event.

`agentctx/__main__.py` calls `main(argv)` before typer is imported, and this module imports only the
standard library and the client registry (`agentctx_store.clients`); each handler imports the store
(and only what it needs) itself. Contract (docs/contracts.md#hook-events): read the payload from
stdin, print nothing or one hook JSON object, and always exit 0. Any failure — bad JSON, a locked or
corrupt store, a full disk — becomes one line in `$AGENTCTX_HOME/logs/hooks.log`, never a blocked
prompt.
"""

from __future__ import annotations

import sys

from agentctx_store import clients
from agentctx_store.clients import HOOK_EVENTS as EVENTS

from agentctx_hooks import log, plugin

USAGE = (
    f"usage: agentctx hook [--client {'|'.join(clients.names())}] <{'|'.join(EVENTS)}|the client's event name>"
    " < payload.json"
)


def _handler(event: str):  # returns a handler: HookInput -> str
    if event == "SessionStart":
        from agentctx_hooks.session_start import handle
    elif event == "UserPromptSubmit":
        from agentctx_hooks.prompt import handle
    elif event in ("PostToolUse", "PostToolUseFailure"):
        from agentctx_hooks.capture import handle
    elif event == "CwdChanged":
        from agentctx_hooks.lifecycle import cwd_changed as handle
    elif event == "SubagentStart":
        from agentctx_hooks.subagent import handle
    elif event == "PreCompact":
        from agentctx_hooks.lifecycle import pre_compact as handle
    elif event == "Stop":
        from agentctx_hooks.lifecycle import stop as handle
    else:
        from agentctx_hooks.lifecycle import session_end as handle
    return handle


def _idle(event: str, client: str, cwd: str) -> str | None:
    """What a hook of the client's package (plugin, extension) prints when `agentctx init`
    registered the same hooks: one line at SessionStart, else nothing; None: run as usual."""
    where = plugin.init_registration(cwd, client)
    if not where:
        return None
    from agentctx_hooks.output import system_message

    return system_message(plugin.idle_notice(where, client)) if event == "SessionStart" else ""


def run(event: str, raw: bytes, client: str = clients.DEFAULT, *, ends_process: bool = False) -> str:
    """The stdout text for one event and payload ("" for nothing). Never raises.

    `event` is the client's own event name; `client` names the client that runs the hook (from
    `--client`, written by `agentctx init`; never guessed from the payload). `ends_process`:
    the caller ends the process with `os._exit` right after (see `storage`)."""
    session = ""
    try:
        from agentctx_hooks.payload import parse

        if client == clients.DEFAULT:  # the reference client: its events and payloads are ours
            from agentctx_hooks.output import hook_json

            hook = parse(event, raw, ends_process=ends_process)
            session = hook.session_id
            if plugin.from_package(client):
                idle = _idle(event, client, hook.cwd)
                if idle is not None:
                    return idle
            return hook_json(event, _handler(event)(hook))
        from agentctx_hooks.clients import payloads
        from agentctx_hooks.payload import HookInput

        ours = clients.get(client).events[event]
        module = payloads(client)
        hook = parse(ours, raw, ends_process=ends_process)
        session = hook.session_id
        if plugin.from_package(client):
            idle = _idle(ours, client, hook.cwd)
            if idle is not None:
                return idle
        ours, data = module.normalise(ours, hook.data)
        data["agentctx_client"] = client
        data["agentctx_hook"] = event
        hook = HookInput(event=ours, data=data, ends_process=ends_process)
        return module.render(ours, event, _handler(ours)(hook))
    except Exception as exc:  # the process boundary: log, print nothing, exit 0
        log.error(event, exc, session=session)
        return ""


def main(argv: list[str] | None = None, *, owns_process: bool = False) -> int:
    """Run one hook. `owns_process`: this process exists only for the hook (`agentctx hook …`
    from the console script), so it ends with `os._exit` once the answer is written."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n")
        return 0
    client = clients.DEFAULT
    if args[0] == "--client" or args[0].startswith("--client="):
        client = args[0].partition("=")[2] if "=" in args[0] else (args[1] if len(args) > 1 else "")
        args = args[1:] if "=" in args[0] else args[2:]
        if client not in clients.CLIENTS:
            log.write("hook", f"unknown client {client!r}; supported: {', '.join(clients.names())}")
            return 0
    if not args:
        log.write("hook", f"no hook event given ({USAGE})")
        return 0
    event = args[0]
    if client == clients.DEFAULT:
        if event not in EVENTS:
            log.write(event, f"unknown hook event {event!r}; known: {', '.join(EVENTS)}")
            return 0
    else:
        known = clients.get(client).events
        if not known.get(event):  # unknown to us, or an event of this client agentctx does not use
            if event not in known:
                log.write(
                    event,
                    f"unknown {client} hook event {event!r}; known: {', '.join(k for k, v in known.items() if v)}",
                )
            return 0
    try:
        from agentctx_hooks.payload import read_stdin

        raw = read_stdin()
    except Exception as exc:  # too large, unreadable
        log.error(event, exc)
        return 0
    text = run(event, raw, client, ends_process=owns_process)
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

    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
