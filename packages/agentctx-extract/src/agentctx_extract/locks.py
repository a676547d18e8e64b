"""One extraction per session at a time: an `O_EXCL` lock file under `$AGENTCTX_HOME/locks/`.

Stop fires after every turn, so two extractions of one session can overlap. The lock file holds
the owner's pid and start time; a lock whose pid is gone, or that is older than any extraction
can take, is stale and is broken. Breaking renames the file aside first and checks that what it
renamed is the stale lock it judged, so two processes breaking the same stale lock cannot both
end up holding it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Generator
from pathlib import Path

from agentctx_store import paths
from agentctx_store.jsontext import is_object
from agentctx_store.processes import is_alive

STALE_AFTER_S = 15 * 60  # far beyond the longest extraction (retries and map-reduce included)


def locks_dir() -> Path:
    return Path(paths.home()) / "locks"


def lock_path(session_id: str) -> Path:
    return locks_dir() / f"extract-{paths.safe_name(session_id)}.lock"


def _read(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if is_object(data) else None


def is_stale(info: dict[str, object] | None, *, now: float | None = None) -> bool:
    """Unreadable, its owner's process is gone, or it is older than `STALE_AFTER_S`."""
    if info is None:
        return True
    pid, started = info.get("pid"), info.get("started")
    if not isinstance(pid, int) or not isinstance(started, int | float):
        return True
    return not is_alive(pid) or (now or time.time()) - float(started) > STALE_AFTER_S


def _create(path: Path, token: str) -> bool:
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump({"pid": os.getpid(), "started": time.time(), "token": token}, file)
    return True


def _break_stale(path: Path) -> None:
    info = _read(path)
    if not is_stale(info):
        return
    aside = path.with_name(f"{path.name}.stale-{uuid.uuid4().hex}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    if _read(aside) != info:  # we took a fresh lock someone made meanwhile: put it back
        with contextlib.suppress(OSError):
            os.link(aside, path)
    aside.unlink(missing_ok=True)


@contextlib.contextmanager
def session_lock(session_id: str) -> Generator[bool]:
    """Yields True when this process holds the session's lock, False when another live one does."""
    path = lock_path(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    acquired = _create(path, token)
    if not acquired:
        _break_stale(path)
        acquired = _create(path, token)
    try:
        yield acquired
    finally:
        if acquired and (_read(path) or {}).get("token") == token:
            path.unlink(missing_ok=True)
