"""Disposable per-session state in `$AGENTCTX_HOME/state/` (docs/hooks.md): injected record ids,
token accounting not yet written to the store (`prompt_answer.Pending`), and spawn locks.

It lives in the data dir, not the temp dir: a session resumed under another `TMPDIR` keeps
its dedup list, and two data dirs (`AGENTCTX_HOME`) never share state. Files untouched for
`KEEP_DAYS` are removed by `prune` (SessionEnd). The session id comes from stdin, so it only
ever reaches a path through `file_name`, which never maps two ids to one file. The folder is
private (0700, files 0600) and refused when it is a symlink or owned by someone else. Losing
any of this costs at most a re-injection: every reader treats a missing, unreadable or
malformed file as empty state. A prompt is kept here only when it plainly holds no secret
(`is_plain`).
"""

from __future__ import annotations

import os
import time

from agentctx_store import paths
from agentctx_store.digest_file import Pending
from agentctx_store.jsontext import dumps, is_object, loads, strings
from agentctx_store.projects import hash_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_IDS = 500
MAX_PROMPTS = 5
PROMPT_CHARS = 400
KEEP_DAYS = 30  # a session resumed within a month still knows what it was shown
# Every key a hook keeps in a session's state (here, `unextracted.scan`, `warm`): what
# `agentctx uninstall --purge` recognises as one of our state files.
KEYS = frozenset({"injected", "pending", "prompts", "scan", "served", "subagents", "warm_fallback_logged"})


def state_dir() -> str:
    """`$AGENTCTX_HOME/state`, created private (the data dir too when it is missing)."""
    directory = paths.session_state_dir()
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:  # no data dir yet: it is private too (makedirs' mode is the leaf's only)
        os.makedirs(paths.home(), 0o700, exist_ok=True)
        os.makedirs(directory, 0o700, exist_ok=True)
    info = os.lstat(directory)
    if os.path.islink(directory) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise PermissionError(f"{directory} is not a private folder of this user; not using it")
    return directory


def file_name(value: str) -> str:
    """A file name for an id from stdin: the id itself when it is already a safe name, else
    its safe form plus `~` and a hash of the id (`~` never occurs in a safe name, so `..` and
    `.`, or `a/b` and `a_b`, never share a file)."""
    cleaned = paths.safe_name(value)
    return cleaned if cleaned == value else f"{cleaned[:64]}~{hash_id(value)[:16]}"


def state_path(session_id: str) -> str:
    return os.path.join(state_dir(), file_name(session_id) + ".json")


def lock_path(name: str) -> str:
    return os.path.join(state_dir(), file_name(name) + ".lock")


def prune(*, keep_days: float = KEEP_DAYS) -> int:
    """Remove state files untouched for `keep_days` and temp files left by a crash; returns
    how many went. Only our own names (`*.json`, `*.tmp`) are touched."""
    removed = 0
    cutoff = time.time() - keep_days * 86400
    try:
        directory = state_dir()
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        path = os.path.join(directory, name)
        try:
            old = os.lstat(path).st_mtime < (cutoff if name.endswith(".json") else time.time() - 86400)
            if name.endswith((".json", ".tmp")) and old:
                os.unlink(path)
                removed += 1
        except OSError:
            continue
    return removed


def load(session_id: str) -> dict[str, Any]:
    """The session's state, or {} when there is none (or it cannot be read)."""
    if not session_id:
        return {}
    try:
        with open(state_path(session_id), "rb") as handle:
            data = loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return {}
    return data if is_object(data) else {}


def save(session_id: str, data: dict[str, Any]) -> None:
    """Write atomically (temp file + rename) so a concurrent reader never sees half a file."""
    if not session_id:
        return
    target = state_path(session_id)
    temp = f"{target}.{os.getpid()}.tmp"
    with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
        handle.write(dumps(data))
    os.replace(temp, target)


def load_logged(session_id: str, event: str) -> dict[str, Any]:
    """`load`, with a file error logged as one line and read as no state yet."""
    try:
        return load(session_id)
    except OSError as exc:
        from agentctx_hooks import log

        log.error(event, exc, session=session_id)
        return {}


def save_logged(session_id: str, event: str, data: dict[str, Any]) -> None:
    """`save`, with a file error logged as one line: losing the state costs at most one
    injection made again later."""
    try:
        save(session_id, data)
    except OSError as exc:
        from agentctx_hooks import log

        log.error(event, exc, session=session_id)


def injected_ids(data: dict[str, Any]) -> list[str]:
    return strings(data.get("injected"))


def add_injected(data: dict[str, Any], ids: list[str]) -> None:
    merged = injected_ids(data)
    merged.extend(value for value in ids if value not in merged)
    data["injected"] = merged[-MAX_IDS:]


# A prompt is kept (for the compaction snapshot, when the transcript cannot be read) only when
# it plainly holds no secret, decided without `re` (the prompt hook never imports it): every word
# is letters (with punctuation around it) of at most 24, or a short number, and no word that
# announces a secret appears. Anything else is simply not kept; the transcript still has it.
_EDGE = ".,;:!?'\"()[]{}<>*`"
_ANNOUNCING = ("key", "token", "secret", "pass", "pwd", "auth", "credential", "bearer", "basic", "private", "cookie")


def is_plain(prompt: str) -> bool:
    """Whether `prompt` certainly holds no secret (see above); False when in doubt."""
    lowered = prompt.lower()
    if any(word in lowered for word in _ANNOUNCING) or any(mark in prompt for mark in ("=", "@", "://", "--")):
        return False
    for word in prompt.split():
        core = word.strip(_EDGE)
        if not core:
            continue
        if not (core.isascii() and (core.isalpha() and len(core) <= 24 or core.isdigit() and len(core) <= 6)):
            return False
    return True


def add_prompt(data: dict[str, Any], prompt: str) -> None:
    """Keep the prompt among the last few, when it is plain (`is_plain`)."""
    if not is_plain(prompt):
        return
    prompts = data.get("prompts")
    recent = strings(prompts)
    recent.append(" ".join(prompt.split())[:PROMPT_CHARS])
    data["prompts"] = recent[-MAX_PROMPTS:]


def add_pending(data: dict[str, Any], *, tokens: int, ids: list[str]) -> None:
    """Accounting the fast SessionStart path could not write: the next hook that opens the
    store (or the warm service) records it (`take_pending`)."""
    pending = Pending.from_json(data.get("pending"))
    data["pending"] = Pending(
        tokens=pending.tokens + tokens, ids=(pending.ids + ids)[-MAX_IDS:], count=pending.count + 1
    ).to_json()


def take_pending(data: dict[str, Any]) -> Pending:
    """The SessionStart accounting waiting to be recorded; cleared from `data`."""
    return Pending.from_json(data.pop("pending", None))


def put_back_pending(data: dict[str, Any], pending: Pending) -> None:
    """Return what `take_pending` took when it could not be recorded after all."""
    if pending.count:
        data["pending"] = pending.to_json()


# -- locks --------------------------------------------------------------------------------


def try_lock(name: str, *, max_age_seconds: float) -> str | None:
    """Take the lock file `name` (O_EXCL) and return its path, or None when it is held.

    A lock older than `max_age_seconds`, or whose owner process is gone, is broken: the
    background work it guarded is time-bounded, so an old lock can only be a leftover.
    """
    path = lock_path(name)
    for _attempt in range(2):
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if not _is_stale(path, max_age_seconds):
                return None
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(handle, "w", encoding="utf-8") as lock:
            lock.write(str(os.getpid()))
        return path
    return None


def set_lock_owner(path: str, pid: int) -> None:
    with open(path, "w", encoding="utf-8") as lock:
        lock.write(str(pid))


def _is_stale(path: str, max_age_seconds: float) -> bool:
    try:
        age = time.time() - os.path.getmtime(path)
        with open(path, encoding="utf-8") as lock:
            owner = int(lock.read().strip() or "0")
    except (OSError, ValueError):
        return True
    if age > max_age_seconds:
        return True
    from agentctx_store.processes import is_alive

    return owner > 0 and not is_alive(owner)
