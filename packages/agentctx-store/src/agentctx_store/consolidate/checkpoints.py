"""Named points where tests kill a consolidation run (kill -9 crash-safety tests)."""

from __future__ import annotations

import os
import time

from agentctx_store import paths


def checkpoint(name: str) -> None:
    """Tests kill a run at a named point: with `AGENTCTX_TEST_HANG_AT=<name>` the process
    announces it reached the point (a file in the data dir) and waits there to be killed."""
    if os.environ.get("AGENTCTX_TEST_HANG_AT") != name:
        return
    with open(os.path.join(paths.home(), f"hang-{name}"), "w", encoding="utf-8") as marker:
        marker.write(str(os.getpid()))
    while True:  # pragma: no cover - ends with SIGKILL
        time.sleep(0.05)
