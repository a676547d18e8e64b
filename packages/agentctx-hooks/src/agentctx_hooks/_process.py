"""Whether this hook owns its process (run as `agentctx hook …`) and will end it with `os._exit`.

A module of its own so `__main__` can set it without importing `storage` (and sqlite3) on the
SessionStart fast path, which never opens the store.
"""

from __future__ import annotations

ENDS_WITH_OS_EXIT = {"value": False}
