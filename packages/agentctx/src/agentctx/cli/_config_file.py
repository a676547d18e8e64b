"""Reading and writing a client's config file as the user's file (Claude Code's `settings.json` and
`~/.claude.json`, Codex's `hooks.json` and `config.toml`, Gemini's `settings.json`). Used by
`agentctx init` and `uninstall` only; never imported by a hook.

Many people keep these files in a dotfiles repository and link them into place, so a write goes
through the link: the target (every link resolved) is replaced atomically by a temporary file in
the target's own folder, with the target's mode, and the link stays a link the repository sees
change. A link whose target does not exist yet gets its target created when the target's folder
exists; otherwise init refuses. A file that is not UTF-8, not a regular file, too big, read-only,
or in a folder that cannot be written is refused in one line that names it, before anything is
written.

uninstall puts a file back byte for byte: init remembers the text it found (none: no file) and a
fingerprint of what it wrote; when the file is still exactly that, the remembered text goes back
(or the file init created goes away). A file edited since falls back to removing only our entries.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import time
from pathlib import Path
from typing import Any

from agentctx_store import bounded
from agentctx_store.errors import ValidationError
from agentctx_store.jsontext import is_object

MAX_CONFIG = 64 << 20  # bytes: ~/.claude.json grows with every project Claude Code has seen
UNCHANGED = "Nothing was changed."


class ConfigFileError(ValidationError):
    """A client config file agentctx will not read or write; the message names it and the fix."""


def real(path: Path) -> Path:
    """Where a write to `path` lands: the path with every link resolved."""
    return Path(os.path.realpath(path))


def _anchor(path: Path) -> Path:
    """The nearest of `path` and its folders that is there (a dangling link counts)."""
    anchor = Path(os.path.abspath(path))
    while not os.path.lexists(anchor) and anchor.parent != anchor:
        anchor = anchor.parent
    return anchor


def shown(path: Path) -> str:
    """`path` for a message, with where it leads when it (or its folder) is a symbolic link."""
    return f"{path} (-> {real(path)})" if os.path.islink(path) or os.path.islink(path.parent) else str(path)


def in_repository(root: Path, path: Path) -> Path:
    """`path`, a config inside the repository at `root` (`--project`), when no part of it below the
    root is a symbolic link: anyone can commit one, and following it would edit (or copy into the
    repository) a file outside it, such as your own `~/.claude/settings.json`.

    Raises:
        ConfigFileError: a part of the path is a link.
    """
    try:
        bounded.refuse_links(root, os.path.relpath(path, root))
    except bounded.Refused as exc:
        raise ConfigFileError(
            f"{root}: {exc}; --project edits only a real file in the repository. {UNCHANGED}"
        ) from None
    return path


def read_text(path: Path) -> str | None:
    """The text of a client config file (through any link), or None when there is none yet (a
    dangling link counts as none).

    Raises:
        ConfigFileError: a folder or another non-file, over `MAX_CONFIG`, unreadable, not UTF-8.
    """
    target = real(path)
    try:
        data = bounded.read_file(target, limit=MAX_CONFIG)
    except bounded.Unreadable as exc:
        if exc.why == "missing":
            return None
        reason = {
            "folder": "is a folder, not a file; move it aside, then run again.",
            "special": "not a regular file; replace it with a file, then run again.",
            "too large": f"{exc.over(MAX_CONFIG)}.",
        }.get(exc.why, f"cannot be read ({exc.detail}); check its permissions (`chmod u+r {target}`).")
        raise ConfigFileError(f"{path}: {reason} {UNCHANGED}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(
            f"{path}: {bounded.not_utf8(data, exc)}; save it as UTF-8, then run again. {UNCHANGED}"
        ) from None


def check_writable(path: Path) -> None:
    """Refuse, before anything is written, a file agentctx could not replace or create.

    Raises:
        ConfigFileError: the file is read-only, its folder cannot be written, or it is reached
            through a link whose target's folder does not exist.
    """
    target = real(path)
    if target.exists():
        if not os.access(target, os.W_OK):
            raise ConfigFileError(
                f"{path}: read-only; make it writable (`chmod u+w {target}`) or add the entries by hand. {UNCHANGED}"
            )
        folder = target.parent
    elif os.path.islink(anchor := _anchor(path)) and not anchor.exists():  # dangling: write where it points
        if not target.parent.is_dir():
            raise ConfigFileError(
                f"{path}: links to {target}, whose folder does not exist; create {target.parent} "
                f"or remove the link, then run again. {UNCHANGED}"
            )
        folder = target.parent
    else:  # missing folders below one that is there are created, as init always did
        folder = real(_anchor(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigFileError(
            f"{path}: its folder {folder} cannot be written; fix its permissions, then run again. {UNCHANGED}"
        )


def write_text(path: Path, text: str, *, backup: bool) -> Path | None:
    """Replace the file `path` leads to with `text`, atomically and keeping its mode (a link
    stays a link); with `backup`, copy the current file beside `path` first. Returns the backup.

    Raises:
        ConfigFileError: as `check_writable`, or the write itself fails (the file is untouched).
    """
    check_writable(path)
    target = real(path)
    temp = target.with_name(f".{target.name}.agentctx-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    saved = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)  # check_writable: only below a real folder
        info = os.stat(target) if target.exists() else None
        if backup and info is not None:
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            saved = path.with_name(f"{path.name}.agentctx-backup-{stamp}")
            shutil.copy2(target, saved)
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
        try:
            left = memoryview(text.encode("utf-8"))
            while left:  # os.write may write less than it was given
                left = left[os.write(descriptor, left) :]
            if info is not None:
                os.fchmod(descriptor, stat.S_IMODE(info.st_mode))
                if hasattr(os, "geteuid") and os.geteuid() == 0:  # root editing a user's file: still theirs
                    os.fchown(descriptor, info.st_uid, info.st_gid)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise ConfigFileError(
            f"{path}: cannot be written ({exc.strerror}); check its permissions. {UNCHANGED}"
        ) from None
    return saved


def delete(path: Path) -> None:
    """Remove the file `path` leads to (a link to it stays, as it was before init created the file).

    Raises:
        ConfigFileError: its folder cannot be written.
    """
    check_writable(path)
    try:
        real(path).unlink(missing_ok=True)
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot be removed ({exc.strerror}); check its permissions.") from None


# -- putting a file back byte for byte -----------------------------------------------------------


def fingerprint(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def remember(previous: dict[str, Any] | None, before: str | None, after: str | None, *, first: bool) -> Any:
    """What uninstall needs to put a file back: the text before init's first write (`None`: no
    file) and the fingerprint of what init wrote now. An earlier restore point carries over when
    the file was still exactly what init wrote then; when it was edited since (or init wrote it
    before without one), there is none and uninstall removes only our entries."""
    if previous and fingerprint(before) == previous.get("sha256"):
        original = previous.get("before")
    elif first:
        original = before
    else:
        return None
    return {"before": original, "sha256": fingerprint(after)}


def restore_point(remembered: Any, current: str | None) -> tuple[bool, str | None]:
    """(True, the text to put back, `None` for "no file") when `current` is exactly what init
    wrote; (False, None) when it was edited since or nothing was remembered."""
    if not is_object(remembered) or current is None:
        return False, None
    if fingerprint(current) != remembered.get("sha256"):
        return False, None
    before = remembered.get("before")
    return True, before if isinstance(before, str) else None
