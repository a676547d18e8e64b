"""`db.in_use_elsewhere`: whether another process has the store open (before purging it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentctx_store import Store, paths
from agentctx_store.db import in_use_elsewhere

HOLD = "import sys; from agentctx_store import Store; s = Store.open(); print('open', flush=True); sys.stdin.read()"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks")


def test_no_store_and_a_closed_store_are_not_in_use() -> None:
    assert not in_use_elsewhere(paths.db_path())
    Store.open().close()
    assert not in_use_elsewhere(paths.db_path())


def test_a_connection_in_another_process_is_seen_until_it_closes() -> None:
    Store.open().close()
    child = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open"
        assert in_use_elsewhere(paths.db_path())
        assert in_use_elsewhere(paths.db_path())  # the probe took and gave back its lock
    finally:
        child.communicate("", timeout=30)
    assert not in_use_elsewhere(paths.db_path())
