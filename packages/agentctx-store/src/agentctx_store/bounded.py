"""Reading files agentctx did not write without hanging on them, and never from outside the
tree they belong to.

Two kinds of outside file reach agentctx. A hook payload's `transcript_path` is just a
string: it may name a FIFO (open blocks until a writer comes), `/dev/zero` or `/dev/urandom`
(reads never end), or a file of gigabytes. A repository is anyone's: its `CLAUDE.md` may be a
symbolic link to `~/.ssh/id_rsa`, its ADR a FIFO, its team file 50 MB. So every such file is
opened non-blocking, used only when it is a regular file, and read only up to a bound; a
repository's file only when its real path (every link resolved) stays inside the repository.
A link that stays inside is read by its target, so callers that key on `real_path` read it
once. `Refused` carries the one line that says why a file was passed over.

Standard library only, no `re`: the hooks import it (docs/threat-model.md).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Generator
    from os import PathLike

    StrPath = str | PathLike[str]

MAX_REPO_FILE = 1_000_000  # bytes: one ADR, one instruction file (docs/threat-model.md)
MAX_SOURCE_FILE = 8_000_000  # bytes: a source file an anchor points into (a range of a large file)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_BOM = b"\xef\xbb\xbf"


class Refused(OSError):
    """A file agentctx will not read or write; `str()` is the one line to show the user. An
    `OSError`, so a reader that already passes over a file it cannot read passes over this one."""


class Unreadable(Refused):
    """The refusal of `read_file` and `regular_lines`: `why` is `missing`, `folder`, `special` (a FIFO, socket or
    device), `too large` (`size` then says how large, when known) or `unreadable` (`detail`
    then says why); each caller words the line for its own file."""

    def __init__(self, path: str, why: str, *, size: int = 0, detail: str = "", line: str = "") -> None:
        super().__init__(line or f"{path}: {why}{f' ({detail})' if detail else ''}")
        self.why, self.size, self.detail = why, size, detail

    def __str__(self) -> str:
        return str(self.args[0])

    def over(self, limit: int) -> str:
        """How a `too large` file stands against `limit`, for the caller's line."""
        return (
            f"{self.size:,} bytes is over the {limit:,}-byte limit" if self.size else f"over the {limit:,}-byte limit"
        )


def _open(path: StrPath, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file `path` and its `fstat`, opened without blocking (a FIFO
    would wait for a writer) and checked before a byte is read. `follow=False` refuses a link in
    the last part of the path. The caller closes the descriptor.

    Raises:
        Unreadable: missing, a folder, not a regular file, or unreadable (or not a path).
    """
    text = os.fspath(path)
    try:
        descriptor = os.open(text, _FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0)))
    except FileNotFoundError:
        raise Unreadable(text, "missing") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL or a lone surrogate in the path
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Unreadable(text, "unreadable", detail=detail) from None
    try:
        info = os.fstat(descriptor)
    except OSError as exc:
        os.close(descriptor)
        raise Unreadable(text, "unreadable", detail=exc.strerror or str(exc)) from None
    if stat.S_ISREG(info.st_mode):
        return descriptor, info
    os.close(descriptor)
    raise Unreadable(text, "folder" if stat.S_ISDIR(info.st_mode) else "special")


def read_regular(path: str, *, limit: int, from_end: bool = False, offset: int = 0) -> bytes | None:
    """At most `limit` bytes of the regular file `path` (its first, from `offset` on, or with
    `from_end` its last ones), or None when it is missing, unreadable or not a regular file."""
    try:
        descriptor, info = _open(path)
    except Unreadable:
        return None
    try:
        if from_end:
            if info.st_size > limit:
                os.lseek(descriptor, info.st_size - limit, os.SEEK_SET)
        elif offset > 0:
            os.lseek(descriptor, offset, os.SEEK_SET)
        return _read(descriptor, limit)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def regular_lines(path: str, *, limit: int, line_limit: int) -> Generator[bytes, None, None]:
    """The lines of the regular file `path` (each with its newline, the last maybe without),
    reading at most `limit` bytes in all. A line longer than `line_limit` is skipped to its end
    and yields its first `line_limit` bytes without a newline (it cannot be a whole record).

    Raises:
        Unreadable: missing, unreadable or not a regular file (raised on the first `next()`).
    """
    try:
        descriptor, _info = _open(path)
    except Unreadable as exc:
        line = f"{path!r}: skipped, missing, unreadable or not a regular file"
        raise Unreadable(path, exc.why, detail=exc.detail, line=line) from None
    with os.fdopen(descriptor, "rb") as handle:
        left = limit
        while left > 0:
            line = handle.readline(min(line_limit, left))
            if not line:
                return
            left -= len(line)
            if len(line) == line_limit and not line.endswith(b"\n"):
                while left > 0:  # the rest of an over-long line: read past it, keep nothing
                    rest = handle.readline(min(1 << 20, left))
                    left -= len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
            yield line


def _read(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(descriptor, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def real_path(root: StrPath, path: StrPath) -> str:
    """`path` (relative to `root`, or absolute) with every link resolved, when it stays inside
    `root`'s real tree.

    Raises:
        Refused: it resolves to a place outside the tree.
    """
    top = os.path.realpath(root)
    full = os.path.realpath(os.path.join(top, path))
    if full != top and not full.startswith(top.rstrip(os.sep) + os.sep):
        raise Refused(f"{_shown(root, path)}: skipped, it links outside the repository")
    return full


def read_file(path: StrPath, *, limit: int, follow: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them: opened without blocking
    (a FIFO would wait for a writer), checked with `fstat` before a byte is read, a larger file
    refused unread. `follow=False` refuses a link in the last part of the path.

    Raises:
        Unreadable: missing, a folder, not a regular file, over `limit`, or unreadable.
    """
    text = os.fspath(path)
    descriptor, info = _open(text, follow=follow)
    try:
        if info.st_size > limit:
            raise Unreadable(text, "too large", size=info.st_size)
        data = _read(descriptor, limit + 1)
    except OSError as exc:
        if isinstance(exc, Unreadable):
            raise
        raise Unreadable(text, "unreadable", detail=exc.strerror or str(exc)) from None
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew while we read it
        raise Unreadable(text, "too large")
    return data


def read_repo_bytes(root: StrPath, path: StrPath, *, limit: int = MAX_REPO_FILE) -> bytes:
    """The bytes of a file of the repository at `root`: a regular file of at most `limit` bytes
    whose real path is inside the repository.

    Raises:
        Refused: outside the tree; `Unreadable` (with its `why`) when not a regular file, over
            `limit`, or unreadable.
    """
    shown = _shown(root, path)
    try:
        return read_file(real_path(root, path), limit=limit, follow=False)
    except Unreadable as exc:
        reason = {
            "missing": "it does not exist",
            "folder": "not a regular file",
            "special": "not a regular file",
            "too large": exc.over(limit),
        }.get(exc.why, f"cannot be read ({exc.detail})")
        raise Unreadable(shown, exc.why, size=exc.size, detail=exc.detail, line=f"{shown}: skipped, {reason}") from None


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """`not UTF-8 text (byte 3 is 0xE9: Windows-1252 or Latin-1, it seems)`: where decoding
    stopped, the byte found there, and the encoding the bytes most likely are in."""
    found = data[exc.start] if exc.start < len(data) else None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        guess = "UTF-16, by its byte-order mark"
    elif b"\x00" in data[:4096]:
        guess = "UTF-16 or another two-byte encoding, it seems (it holds NUL bytes)"
    else:
        try:
            data.decode("cp1252")
            guess = "Windows-1252 or Latin-1, it seems"
        except UnicodeDecodeError:
            guess = "an encoding other than UTF-8"
    shown = f"0x{found:02X}" if found is not None else "cut short"
    return f"not UTF-8 text (byte {exc.start:,} is {shown}: {guess})"


def read_repo_text(root: StrPath, path: StrPath, *, limit: int = MAX_REPO_FILE, errors: str = "strict") -> str:
    """`read_repo_bytes` decoded as UTF-8 (a leading byte-order mark is dropped); `errors` as
    for `bytes.decode` (`replace` for source files whose text is only hashed or shown).

    Raises:
        Refused: as `read_repo_bytes`, or the bytes are not UTF-8.
    """
    data = read_repo_bytes(root, path, limit=limit)
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise Refused(f"{_shown(root, path)}: skipped, {not_utf8(data, exc)}; save it as UTF-8 to use it") from None


def refuse_links(root: StrPath, path: StrPath) -> str:
    """`root / path`, after making sure that no part of it below `root` that exists is a
    symbolic link (for writing into a repository, or reading a file agentctx itself wrote
    there: a link could send either anywhere).

    Raises:
        Refused: a part of the path is a link, or not a folder where one is needed.
    """
    base = os.fspath(root)
    full = os.path.join(base, path)
    relative = os.path.relpath(full, base)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise Refused(f"{_shown(root, path)}: refused, it is outside the repository")
    current = base
    for part in relative.split(os.sep):
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            break
        except OSError as exc:
            raise Refused(f"{_shown(root, current)}: refused, cannot be checked ({exc.strerror or exc})") from None
        if stat.S_ISLNK(info.st_mode):
            raise Refused(f"{_shown(root, current)}: refused, it is a symbolic link (agentctx never follows one here)")
    return full


def _shown(root: StrPath, path: StrPath) -> str:
    """`path` as the user knows it: relative to `root` where it is under it."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    relative = os.path.relpath(text, os.fspath(root))
    return text if relative.startswith(os.pardir) else relative
