"""The per-session extraction lock: exclusive while its owner lives, broken when stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from agentctx_extract.locks import STALE_AFTER_S, lock_path, session_lock


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no process has this pid now (pids are not reused this fast)


def test_the_lock_is_exclusive_and_released() -> None:
    with session_lock("s1") as first:
        assert first and lock_path("s1").exists()
        with session_lock("s1") as second:
            assert not second
        assert lock_path("s1").exists()  # the loser did not remove the owner's lock
        with session_lock("s2") as other_session:
            assert other_session
    assert not lock_path("s1").exists()


def test_a_lock_whose_process_is_gone_is_broken() -> None:
    path = lock_path("s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": dead_pid(), "started": time.time(), "token": "old"}), encoding="utf-8")
    with session_lock("s1") as held:
        assert held
        assert json.loads(path.read_text(encoding="utf-8"))["pid"] == os.getpid()


def test_an_old_lock_of_a_live_process_is_broken() -> None:
    path = lock_path("s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    old = time.time() - STALE_AFTER_S - 5
    path.write_text(json.dumps({"pid": os.getppid(), "started": old, "token": "old"}), encoding="utf-8")
    with session_lock("s1") as held:
        assert held


def test_a_recent_lock_of_a_live_process_is_respected() -> None:
    path = lock_path("s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getppid(), "started": time.time(), "token": "theirs"}), encoding="utf-8")
    with session_lock("s1") as held:
        assert not held
    assert json.loads(path.read_text(encoding="utf-8"))["token"] == "theirs"


def test_an_unreadable_lock_is_broken() -> None:
    path = lock_path("s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{torn", encoding="utf-8")
    with session_lock("s1") as held:
        assert held


def test_a_hostile_session_id_stays_inside_the_locks_dir() -> None:
    path = lock_path("../../etc/passwd")
    assert path.parent.name == "locks" and "/" not in path.name
