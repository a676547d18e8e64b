"""Whether a process still runs: the test behind every lock and claim a dead owner may leave
(the hooks' spawn locks and spool claims, extraction's session locks)."""

from __future__ import annotations

import os


def is_alive(pid: int) -> bool:
    """Whether process `pid` exists. On Windows `os.kill(pid, 0)` would terminate it, so there
    the answer is always yes and callers fall back on the age of what they guard."""
    if os.name == "nt" or pid <= 0:
        return os.name == "nt"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True
