"""Entry point of the `agentctx` command.

`agentctx hook <Event>` runs on every Claude Code prompt, so it is dispatched here, before
typer (or anything but the standard library and the store) is imported.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        from agentctx_hooks.__main__ import main as hook_main

        return hook_main(args[1:])
    from agentctx.cli.app import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
