"""`agentctx doctor`: the data dir must be readable by you alone (0700, files 0600).

Versions before 0.2 created it 0755 with a 0644 store under the usual umask 022; doctor warns
about every such path and `agentctx doctor --fix-modes` makes them private.
"""

from __future__ import annotations

from pathlib import Path

from agentctx_store.private import loose_paths, tighten

from agentctx.cli._health import Check

SHOWN = 3


def check_modes(home: Path) -> Check:
    loose = loose_paths(str(home))
    if not loose:
        return Check(name="private files", state="ok", detail=f"{home} and everything in it: yours alone")
    shown = ", ".join(f"{path} ({mode:o})" for path, mode in loose[:SHOWN])
    more = f" and {len(loose) - SHOWN} more" if len(loose) > SHOWN else ""
    return Check(
        name="private files",
        state="warn",
        detail=f"other users can read or enter {len(loose)} path(s) of the data dir: {shown}{more}",
        fix="agentctx doctor --fix-modes (folders 0700, files 0600)",
        extra={"loose": [path for path, _ in loose]},
    )


def fix_modes(home: Path) -> int:
    """Make the data dir and everything in it private; returns how many paths changed."""
    return tighten(loose_paths(str(home)))
