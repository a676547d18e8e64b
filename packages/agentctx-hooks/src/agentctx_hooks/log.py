"""One line per hook failure in `$AGENTCTX_HOME/logs/hooks.log`.

A hook must never fail the developer's prompt, so every error ends here instead of on stdout
or in the exit code. The file is capped: past `MAX_BYTES` it is rotated to `hooks.log.1`.
"""

from __future__ import annotations

import os
import sys
import time

from agentctx_store import paths

MAX_BYTES = 1_000_000
MAX_MESSAGE_CHARS = 400


def log_path() -> str:
    return os.path.join(paths.logs_dir(), "hooks.log")


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= MAX_MESSAGE_CHARS else flat[: MAX_MESSAGE_CHARS - 1] + "…"


def write(event: str, message: str, *, session: str = "") -> None:
    """Append one line; never raises (a full disk must not turn into a failed hook)."""
    try:
        directory = paths.logs_dir()
        os.makedirs(directory, 0o700, exist_ok=True)
        target = os.path.join(directory, "hooks.log")
        try:
            if os.path.getsize(target) > MAX_BYTES:
                os.replace(target, target + ".1")
        except OSError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        safe_event = _one_line(event)[:40] or "-"
        line = f"{stamp} {safe_event} session={_one_line(session)[:64] or '-'} {_one_line(message)}\n"
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(descriptor, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(line)
    except Exception:  # the log is the last resort; nothing may escape it
        pass


def error(event: str, exc: BaseException, *, session: str = "") -> None:
    """Log an exception as one line: its type, message and the innermost frame."""
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
    try:  # an exception's text may quote the data that caused it: redacted (not `write`'s own lines)
        from agentctx_store.redact import redact_text

        text = redact_text(str(exc))
    except Exception:
        text = "(message withheld: it could not be redacted)"
    write(event, f"error {type(exc).__name__}: {text}{where}", session=session)
    try:
        sys.stderr.write(f"agentctx: {type(exc).__name__} in the {event} hook; see {log_path()}\n")
    except Exception:
        pass
