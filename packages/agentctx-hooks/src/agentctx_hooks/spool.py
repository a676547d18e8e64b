"""Captures waiting to be written: one small JSON file per observation in `$AGENTCTX_HOME/spool/`.

PostToolUse runs after every captured tool call, so it must cost little more than starting
Python (target ≤ 2× a bare interpreter), and opening the store costs more. The hook therefore
only writes what it saw here, and the next hook that opens the store anyway (the next
prompt, PreCompact, SessionEnd, CwdChanged, a first SessionStart) applies every waiting capture
of every session in one transaction. So a capture reaches the store at most one turn later, and
one from a session that crashed is applied by the next session's first hook.

Each file is claimed by renaming it (`….claim`, with the claimer's pid) before it is read, so
two flushing hooks never apply the same capture; a claim whose process is gone is taken over.
Applying a capture twice is harmless anyway: nodes, edges and stubs are keyed.
"""

from __future__ import annotations

import errno
import os
import time

from agentctx_store import paths
from agentctx_store.jsontext import dumps, is_object, loads

from agentctx_hooks import log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store import Store

MAX_FLUSH = 500  # captures applied per hook; more wait for the next one
CLAIM_TIMEOUT_SECONDS = 600  # a flush takes milliseconds; a claim this old was abandoned
DROP_AFTER_SECONDS = 7 * 24 * 3600  # a capture that keeps failing is dropped (with a log line)
_counter = [0]


def spool_dir() -> str:
    return os.path.join(paths.home(), "spool")


RESERVE_NAME = ".reserve"  # room kept for captures made while the disk is full
RESERVE_BYTES = 256 * 1024  # a capture is well under 4 KB: about a hundred of them
RESERVE_STEP = 16 * 1024  # what one capture on a full disk gives back of it
_NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def add(entry: dict[str, Any]) -> None:
    """Write one capture atomically (temp file, then rename into place). When the disk is full,
    a slice of the spool's reserve (`RESERVE_NAME`, refilled by the next flush that finds room)
    is given back and the write tried once more, so a capture made on a full disk still waits
    here for the store to take it."""
    directory = spool_dir()
    os.makedirs(directory, 0o700, exist_ok=True)
    _counter[0] += 1
    name = f"{time.time_ns():020d}-{os.getpid()}-{_counter[0]}"
    text = dumps(entry)
    try:
        _write(directory, name, text)
    except OSError as exc:
        if exc.errno not in _NO_SPACE or not _give_back(directory):
            raise
        log.write("spool", "the disk is full: this capture used the spool's reserve")
        _write(directory, name, text)


def _write(directory: str, name: str, text: str) -> None:
    temp = os.path.join(directory, f".{name}.tmp")
    try:
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, os.path.join(directory, name + ".json"))
    except BaseException:
        try:  # a full disk: no half-written file is left behind
            os.unlink(temp)
        except OSError:
            pass
        raise


def _give_back(directory: str) -> bool:
    """Shrink the reserve by one step; False when there is none left to give."""
    reserve = os.path.join(directory, RESERVE_NAME)
    try:
        size = os.stat(reserve).st_size
        if size <= 0:
            return False
        os.truncate(reserve, max(0, size - RESERVE_STEP))
    except OSError:
        return False
    return True


def refill_reserve() -> None:
    """Bring the reserve back to `RESERVE_BYTES` (really allocated, not a sparse file) when there
    is room again: after a flush, which has just written to the store. Costs a `stat` when full."""
    reserve = os.path.join(spool_dir(), RESERVE_NAME)
    try:
        if os.stat(reserve).st_size >= RESERVE_BYTES:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        descriptor = os.open(reserve, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(descriptor, 0, RESERVE_BYTES)
        else:  # pragma: no cover - macOS, Windows: zeros written
            os.pwrite(descriptor, b"\0" * RESERVE_BYTES, 0)
    except OSError:  # still no room: the next flush tries again
        pass
    finally:
        os.close(descriptor)


def pending() -> list[str]:
    """Names of captures not yet applied (for tests and `status`-like reports)."""
    try:
        return sorted(name for name in os.listdir(spool_dir()) if name.endswith((".json", ".claim")))
    except FileNotFoundError:
        return []


def flush(store: Store) -> int:
    """Apply every waiting capture in one transaction; returns how many were handled.

    Each capture runs under its own savepoint: one that cannot be read or applied is dropped
    with a log line and never holds the others back. A capture leaves the spool only after the
    COMMIT succeeded: when the transaction as a whole fails (the store is locked, the disk is
    full), the claims stay, and a later hook takes them over once this process is gone.
    """
    if store.conn.in_transaction:
        # Its captures would leave the spool before the caller's COMMIT is known to succeed
        # (a full disk fails exactly there): they wait for a hook that flushes on its own.
        log.write("spool", "not flushed inside another transaction; the captures wait")
        return 0
    claimed = _claim_all()
    if not claimed:
        return 0
    import _sqlite3 as sqlite3  # not the `sqlite3` package (agentctx_store/db.py)

    from agentctx_store.errors import AgentctxError, StoreError

    from agentctx_hooks.apply_capture import apply

    with store.transaction() as conn:
        for _path, entry in claimed:
            if entry is None:
                continue
            conn.execute("SAVEPOINT agentctx_capture")
            try:
                apply(store, entry)
            except StoreError:
                raise  # the store, not this capture (full, locked, read-only): every capture waits
            except (ValueError, TypeError, LookupError, AgentctxError, sqlite3.IntegrityError) as exc:  # this capture
                conn.execute("ROLLBACK TO agentctx_capture")
                log.error("spool", exc)
            conn.execute("RELEASE agentctx_capture")
    for path, _entry in claimed:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    refill_reserve()  # the store took a write: there is room again
    return len(claimed)


def flush_quietly(store: Store, event: str) -> int:
    """`flush`, but a failure is logged and the hook goes on (the captures wait for the next)."""
    import _sqlite3 as sqlite3  # not the `sqlite3` package (agentctx_store/db.py)

    from agentctx_store.errors import StoreError

    try:
        return flush(store)
    except (sqlite3.Error, StoreError, OSError) as exc:
        log.error(event, exc)
        return 0


def _claim_all() -> list[tuple[str, dict[str, Any] | None]]:
    directory = spool_dir()
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    claimed: list[tuple[str, dict[str, Any] | None]] = []
    mine = f".{os.getpid()}.claim"
    for name in names:
        if len(claimed) >= MAX_FLUSH:
            break
        takeover = name.endswith(".claim") and not name.endswith(mine) and _abandoned(os.path.join(directory, name))
        if not (name.endswith(".json") or takeover):
            continue
        target = os.path.join(directory, name.split(".json", 1)[0] + ".json" + mine)
        try:
            os.rename(os.path.join(directory, name), target)
        except FileNotFoundError:
            continue  # another hook claimed it first
        entry = _read(target)
        try:
            os.utime(target)  # the claim's age is now the time it was taken
        except OSError:
            pass
        claimed.append((target, entry))
    return claimed


def _abandoned(path: str) -> bool:
    """A claim whose process is gone, or older than any flush takes (where pids cannot be probed)."""
    try:
        owner = int(path.rsplit(".", 2)[-2])
        age = time.time() - os.path.getmtime(path)
    except (ValueError, IndexError, OSError):
        return True
    from agentctx_store.processes import is_alive

    return age > CLAIM_TIMEOUT_SECONDS or not is_alive(owner)


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            entry = loads(handle.read())
        written = int(os.path.basename(path)[:20]) / 1e9  # the name starts with time_ns() of the capture
        age = time.time() - written
    except (OSError, ValueError, RecursionError) as exc:
        log.error("spool", exc)
        return None
    if not is_object(entry) or age > DROP_AFTER_SECONDS:
        log.write("spool", f"dropped an unusable capture {os.path.basename(path)}")
        return None
    return entry
