"""Runner for detached background work: `python -m agentctx_hooks.ondemand.background --lock L --timeout S -- CMD…`.

It runs CMD in a new session, kills it (and its process group) after S seconds, appends one
line per run to `background.log`, and removes the lock file the spawning hook took. The
runner itself is started detached by `spawn.spawn_agentctx`, so nothing waits for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

from agentctx_hooks import log


def _parse(argv: list[str]) -> tuple[str, float, list[str]]:
    lock, timeout = "", 600.0
    index = 0
    while index < len(argv) and argv[index] != "--":
        if argv[index] == "--lock":
            lock = argv[index + 1]
            index += 2
        elif argv[index] == "--timeout":
            timeout = float(argv[index + 1])
            index += 2
        else:
            raise SystemExit(f"unknown option {argv[index]!r}")
    return lock, timeout, argv[index + 1 :]


def _release(lock: str) -> None:
    """Remove the lock only while it still names this runner (a stale-lock breaker may have
    handed it to a newer run)."""
    if not lock:
        return
    try:
        with open(lock, encoding="utf-8") as handle:
            owner = handle.read().strip()
        if owner in ("", str(os.getpid())):
            os.unlink(lock)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    lock, timeout, command = _parse(argv)
    if lock:
        try:
            with open(lock, "w", encoding="utf-8") as handle:
                handle.write(str(os.getpid()))
        except OSError:
            pass
    started = time.monotonic()
    outcome = "not started"
    try:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=os.name != "nt")
        try:
            code = child.wait(timeout=timeout)
            outcome = f"exit {code}"
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(child.pid, signal.SIGKILL) if os.name != "nt" else child.kill()
            child.wait()
            outcome = f"killed after {timeout:.0f} s"
    except OSError as exc:
        outcome = f"failed to start: {exc}"
    finally:
        _release(lock)
    shown = " ".join(command[2:] if command[1:2] == ["-m"] else command)
    log.write("background", f"{shown}: {outcome} in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
