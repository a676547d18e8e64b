"""Reading a file named by a hook payload without hanging on it.

A payload's `transcript_path` is just a string: it may name a FIFO (open blocks until a
writer comes), `/dev/zero` or `/dev/urandom` (reads never end), or a file of gigabytes. So
the file is opened non-blocking, used only when it is a regular file, and read only up to a
bound, from its start or its end.
"""

from __future__ import annotations

import os
import stat


def read_regular(path: str, *, limit: int, from_end: bool = False) -> bytes | None:
    """At most `limit` bytes of the regular file `path` (its first, or with `from_end` its
    last ones), or None when it is missing, unreadable or not a regular file."""
    if not path:
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return None
        if from_end and info.st_size > limit:
            os.lseek(descriptor, info.st_size - limit, os.SEEK_SET)
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)
