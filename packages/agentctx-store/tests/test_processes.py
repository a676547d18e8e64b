"""`processes.is_alive`: what every lock and claim asks about its owner."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agentctx_store.processes import is_alive


@pytest.mark.skipif(os.name == "nt", reason="Windows answers yes for every pid")
def test_a_running_process_is_alive_and_a_finished_one_is_not() -> None:
    assert is_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: its pid no longer names a process
    assert not is_alive(child.pid)
    assert not is_alive(0) and not is_alive(-1)
