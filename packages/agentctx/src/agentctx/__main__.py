"""Entry point of the `agentctx` command.

`agentctx hook <Event>` runs on every Claude Code prompt, so it is dispatched here, before
typer (or anything but the standard library and the store) is imported. Plain `agentctx mcp`
(what Claude Code starts at every session) skips typer too: the SDK import is slow enough.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the console script owns this process (in-process callers keep their umask)
        import os

        os.umask(0o077)  # agentctx_store.private.UMASK: what this process writes is the user's alone
    if args[:1] == ["hook"]:
        from agentctx_hooks.__main__ import main as hook_main

        return hook_main(args[1:], owns_process=argv is None)
    if args == ["mcp"]:  # `agentctx mcp --help` still goes through typer (cli/mcp.py)
        from agentctx_hooks.plugin import mcp_refusal

        refusal = mcp_refusal()
        if refusal:  # started by the Claude Code plugin while `agentctx init` registered the server too
            sys.stderr.write(refusal + "\n")
            return 1
        from agentctx_mcp.server import serve

        return serve()
    from agentctx.cli.app import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
