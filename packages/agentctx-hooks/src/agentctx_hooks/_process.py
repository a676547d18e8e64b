"""Whether this hook owns its process (run as `agentctx hook …`) and will end it with `os._exit`.

A module of its own so `__main__` can set it without importing `storage` (and sqlite3) on the
SessionStart fast path, which never opens the store.
"""

from __future__ import annotations

ENDS_WITH_OS_EXIT = {"value": False}


def is_alive(pid: int) -> bool:
    """Whether process `pid` exists. On Windows `os.kill(pid, 0)` would terminate it, so there
    the answer is always yes and callers fall back on the age of what they guard."""
    import os

    if os.name == "nt" or pid <= 0:
        return os.name == "nt"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
