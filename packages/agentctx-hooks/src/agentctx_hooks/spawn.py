"""Detached, time-bounded background work (no daemon: docs/adr/0007-no-daemon.md).

Stop and SessionEnd must return at once (SessionEnd gets 1.5 s), so they start the same
installed `agentctx` (`sys.executable -m agentctx …`) through `agentctx_hooks.ondemand.background`, a
small runner in its own session that enforces a time limit and releases the lock file taken
here. The lock makes "never two extractions of one session at once" hold across processes.
"""

from __future__ import annotations

import os
import sys

from agentctx_store import paths

from agentctx_hooks import log, state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NO_SPAWN_ENV = "AGENTCTX_HOOKS_NO_SPAWN"
REMOTE_SYNC_TIMEOUT_SECONDS = 600


def background_log() -> str:
    return os.path.join(paths.logs_dir(), "background.log")


def spawn_agentctx(args: list[str], *, lock_name: str, timeout_seconds: int, cwd: str = "") -> bool:
    """Start `agentctx ARGS` detached unless `lock_name` is held; True when started.

    Never waits for the child. Set `AGENTCTX_HOOKS_NO_SPAWN=1` to skip (tests, the demo).
    """
    if os.environ.get(NO_SPAWN_ENV) == "1":
        log.write("spawn", f"skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx {' '.join(args)}")
        return False
    lock = state.try_lock(lock_name, max_age_seconds=timeout_seconds + 60)
    if lock is None:
        return False
    import subprocess  # only the hooks that spawn pay for it

    command = [
        sys.executable,
        "-m",
        "agentctx_hooks.ondemand.background",
        "--lock",
        lock,
        "--timeout",
        str(timeout_seconds),
        "--",
        sys.executable,
        "-m",
        "agentctx",
        *args,
    ]
    try:
        os.makedirs(paths.logs_dir(), exist_ok=True)
        with open(background_log(), "ab") as output:
            options: dict[str, Any] = {}  # Popen keywords: their types differ by platform
            if os.name == "nt":
                options["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
            else:
                options["start_new_session"] = True
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                close_fds=True,
                cwd=cwd if cwd and os.path.isdir(cwd) else None,
                **options,
            )
    except BaseException:
        try:
            os.unlink(lock)
        except OSError:
            pass
        raise
    state.set_lock_owner(lock, child.pid)
    return True


def sync_remotes_when_due(cwd: str) -> bool:
    """Start `agentctx remote sync --background` detached when a remote is added and its
    schedule says a sync is due (at most every few minutes, later after failures: docs/remote.md).
    Reads one small file; nothing here touches the network. True when started."""
    try:
        with open(paths.remote_schedule_path(), encoding="utf-8") as handle:
            due = int(handle.read(32).strip() or "0")
    except (OSError, ValueError):
        return False  # no remote (or an unreadable schedule: the next manual sync rewrites it)
    import time

    if due > time.time():
        return False
    return spawn_agentctx(
        ["remote", "sync", "--background"],
        lock_name="remote-sync",
        timeout_seconds=REMOTE_SYNC_TIMEOUT_SECONDS,
        cwd=cwd,
    )
