"""The SessionStart fast path: project id, digest files and the token estimate, with no store import.

SessionStart must return in little more than interpreter start-up (target ≤ 1.5× a bare
`python -c pass`), and importing `agentctx_store` (sqlite3, dataclasses, pathlib, configparser)
costs several times that. So this module repeats three small pieces of the store with the
standard library only, and without `re` or `json` (importing those costs about half of a bare
interpreter start). `tests/test_fast.py` checks each against the store's own function on many
inputs; change both together.
"""

from __future__ import annotations

import os
import time

from agentctx_hooks._json_lite import loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GLOBAL_PROJECT_ID = "_global"

# -- agentctx_store.projects.resolve_project(...).project_id --------------------------------

_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


def _sha256_hex(value: str) -> str:
    try:  # the builtin module avoids loading OpenSSL (~3 ms); hashlib where it is absent
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython ≤ 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # CPython ≥ 3.12
        except ImportError:
            from hashlib import sha256
    return sha256(value.encode("utf-8")).hexdigest()


def _scheme_rest(text: str) -> str | None:
    """`rest` of `^[a-z][a-z0-9+.-]*://(?P<rest>.*)$` (case-insensitive), or None."""
    cut = text.find("://")
    scheme = text[:cut].lower()
    if cut < 1 or not ("a" <= scheme[0] <= "z") or not set(scheme) <= _SCHEME_CHARS:
        return None
    rest = text[cut + 3 :]
    return None if "\n" in rest else rest


def _scp_parts(text: str) -> tuple[str, str] | None:
    """(host, path) of `^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$`, or None."""
    starts = []
    at = text.find("@")
    if at > 0 and "/" not in text[:at]:
        starts.append(at + 1)  # with the user part first, as the greedy optional group tries
    starts.append(0)
    for start in starts:
        index = start
        while index < len(text) and text[index] not in ":/":
            index += 1
        if index == start or index >= len(text) or text[index] != ":":
            continue
        path = text[index + 1 :]
        if path.startswith("//") or not path or "\n" in path:
            continue
        return text[start:index], path
    return None


def normalize_remote(url: str) -> str:
    """Same result as `agentctx_store.projects.normalize_remote`."""
    text = url.strip()
    lowered = text.lower()
    if lowered.startswith("file://"):
        return "file/" + _strip_git(text[7:].rstrip("/")).lower()
    rest = _scheme_rest(text)
    scp = _scp_parts(text) if rest is None else None
    if rest is not None:
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
        host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":", 1)[0]
    elif scp is not None and not text.startswith(("/", ".")):
        host, path = scp
    else:
        return "file/" + _strip_git(text.rstrip("/")).lower()
    while "//" in path:
        path = path.replace("//", "/")
    path = _strip_git(path.strip("/")).rstrip("/")
    return f"{host}/{path}".lower()


def _strip_git(path: str) -> str:
    return path[:-4] if path.lower().endswith(".git") else path


def _repo_root(start: str) -> str | None:
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _git_dir(root: str) -> str | None:
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    content = _read_text(dot_git)
    if content is None or not content.strip().startswith("gitdir:"):
        return None
    git_dir = content.strip().removeprefix("gitdir:").strip()
    git_dir = git_dir if os.path.isabs(git_dir) else os.path.realpath(os.path.join(root, git_dir))
    common = os.path.join(git_dir, "commondir")
    if os.path.isfile(common):
        common_dir = _read_text(common)
        if common_dir is None:
            return git_dir
        common_dir = common_dir.strip()
        return common_dir if os.path.isabs(common_dir) else os.path.realpath(os.path.join(git_dir, common_dir))
    return git_dir


def read_origin(root: str) -> str | None:
    """The `[remote "origin"] url` of the repository's git config (what configparser reads)."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    content = _read_text(os.path.join(git_dir, "config"))
    if content is None:
        return None
    # Mirrors configparser(strict=False) as the store uses it: an option line outside a
    # section, or a line with no `=`/`:` that is not a continuation, makes it give up.
    section: str | None = None
    option: str | None = None
    indent_level = 0
    url: str | None = None
    for line in content.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        indent = len(line) - len(line.lstrip())
        if section is not None and option and indent > indent_level:
            continue  # a continuation line of the previous value
        if stripped.startswith("[") and stripped.endswith("]"):
            section, option = stripped[1:-1], None
            continue
        positions = [index for index in (stripped.find("="), stripped.find(":")) if index >= 0]
        if section is None or not positions:
            return None
        cut = min(positions)
        option, indent_level = stripped[:cut].strip().lower(), indent
        if section == 'remote "origin"' and option == "url":
            url = stripped[cut + 1 :].strip()
    return url or None


def resolve(cwd: str) -> tuple[str, str, str | None]:
    """(project id, root, origin remote) as `agentctx_store.resolve_project(cwd)` finds them."""
    start = os.path.realpath(os.path.expanduser(cwd))
    root = _repo_root(start) or start
    remote = read_origin(root) if os.path.exists(os.path.join(root, ".git")) else None
    if remote:
        return _sha256_hex(normalize_remote(remote)), root, remote
    return _sha256_hex(root), root, None


def project_id(cwd: str) -> str:
    """Same id as `agentctx_store.resolve_project(cwd).project_id` (SPEC §3.4)."""
    return resolve(cwd)[0]


def time_now() -> str:
    """Aware UTC now in the store's format (`agentctx_store.records.utc_now`)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


# -- agentctx_store.paths ------------------------------------------------------------------


def data_home() -> str:
    override = os.environ.get("AGENTCTX_HOME")
    return os.path.expanduser(override) if override else os.path.join(os.path.expanduser("~"), ".agentctx")


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def safe_name(value: str, *, limit: int = 96) -> str:
    """Same as `agentctx_store.paths.safe_name`."""
    cleaned = "".join(char if char in _NAME_CHARS else "_" for char in value[:limit]).strip(".")
    return cleaned or "_"


def digest_files(project: str) -> tuple[str, str]:
    """(text file, metadata file) of a project's digest, as `agentctx_store.upkeep.digest` writes them."""
    base = os.path.join(data_home(), "digests", safe_name(project))
    return base + ".md", base + ".json"


def read_digest(project: str) -> tuple[str, dict[str, Any], float] | None:
    """(text, metadata, age in seconds of the text file), or None when either file is unusable."""
    text_path, meta_path = digest_files(project)
    text = _read_text(text_path)
    meta_text = _read_text(meta_path)
    if text is None or meta_text is None:
        return None
    try:
        meta = loads(meta_text.encode("utf-8"))
        age = time.time() - os.path.getmtime(text_path)
    except (ValueError, OSError):
        return None
    return (text, meta, age) if isinstance(meta, dict) else None


# -- agentctx_store.budget.estimate_tokens ----------------------------------------------------

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")


def estimate_tokens(text: str) -> int:
    """Same as `agentctx_store.budget.estimate_tokens`, which charges the pieces of
    `[A-Za-z]+|[0-9]+|\\s+|[\\x21-\\x7e]|[^\\x00-\\x7f]`; here the pieces are walked by hand."""
    if not text:
        return 0
    total = 0
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char in _LETTERS or char in _DIGITS:
            kind = _LETTERS if char in _LETTERS else _DIGITS
            end = index + 1
            while end < size and text[end] in kind:
                end += 1
            run = end - index
            total += -(-run // 4) if kind is _LETTERS else -(-run // 2)
            index = end
        elif char.isspace():
            end = index + 1
            while end < size and text[end].isspace():
                end += 1
            total += 1 if (end - index > 1 or "\n" in text[index:end]) else 0
            index = end
        else:
            code = ord(char)
            if 0x21 <= code <= 0x7E:
                total += 1
            elif code > 0x7F:  # one piece per character
                total += 1 if char.isdigit() else (2 if len(char.encode("utf-8", "surrogatepass")) > 3 else 1)
            index += 1  # other ASCII control characters are not a piece
    return int(-(-(total * 1.1) // 1)) + 1  # math.ceil(total * 1.1) + 1, float rounding included
