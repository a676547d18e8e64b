"""Nothing we write is readable by other users: the data dir is 0700, every file in it 0600.

Two layers. Every agentctx process (the `agentctx` command, hooks included, and the MCP
server) starts with `restrict_umask()`, so whatever it creates is private whatever the user's
umask. And the store's own writers (the database, whose WAL and SHM files SQLite creates with
the database's mode, the spool, session state, logs) create their files with explicit modes,
so a library caller with a loose umask gets the same. `loose_paths` and `tighten` serve
`agentctx doctor`, which finds and fixes looser modes left by older versions.

Standard library only, no `re`: the hooks import it.
"""

from __future__ import annotations

import os
import stat

DIR_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077


def restrict_umask() -> None:
    """Files and folders this process creates from now on are private (0600 / 0700)."""
    os.umask(UMASK)


def make_dir(path: str) -> str:
    """Create `path` (and missing parents) private; an existing folder is left as it is."""
    os.makedirs(path, DIR_MODE, exist_ok=True)
    return path


def open_new(path: str, flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    """`os.open` of a file created 0600 (a descriptor to wrap with `os.fdopen`)."""
    return os.open(path, flags, FILE_MODE)


def create_file(path: str) -> None:
    """Create an empty 0600 file unless one exists (so SQLite's later files inherit 0600)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        pass


def loose_paths(home: str) -> list[tuple[str, int]]:
    """(path, mode) of the data dir and everything in it that group or others may use.
    Symbolic links are neither followed nor reported."""
    found: list[tuple[str, int]] = []
    if not os.path.isdir(home) or os.path.islink(home):
        return found
    names = [home]
    for directory, folders, files in os.walk(home):  # does not descend into linked folders
        names.extend(os.path.join(directory, entry) for entry in folders + files)
    for name in names:
        try:
            info = os.lstat(name)
        except OSError:
            continue
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
            found.append((name, stat.S_IMODE(info.st_mode)))
    return found


def tighten(paths: list[tuple[str, int]]) -> int:
    """Make each path private (folders 0700, files 0600); returns how many were changed."""
    changed = 0
    for path, _mode in paths:
        try:
            os.chmod(path, DIR_MODE if os.path.isdir(path) else FILE_MODE, follow_symlinks=False)
            changed += 1
        except (OSError, NotImplementedError):
            continue
    return changed
