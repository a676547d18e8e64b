"""Nothing leaves the machine, nothing is written outside the data dir.

onnxruntime (1.2x on Linux) starts Microsoft's 1DS telemetry when it loads: it writes
`~/.cache/Microsoft/DeveloperTools/.onnxruntime/{deviceid,onnxruntime.db}` (under
`XDG_CACHE_HOME` when set) and `$TMPDIR/.ses`, and may send events. `ORT_DISABLE_TELEMETRY=1`,
read by the library when it starts, turns all of that off; the Hugging Face hub client that
fastembed uses for the one-time model download has its own switch. Both are set here, before
either library is imported, and whatever the environment said: agentctx promises no telemetry.
`tests/test_writes_nothing_outside.py` runs a full consolidation in a fresh HOME and checks.
"""

from __future__ import annotations

import os

SWITCHES = {"ORT_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"}


def disable_telemetry() -> None:
    os.environ.update(SWITCHES)


disable_telemetry()
