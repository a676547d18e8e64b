"""The SessionStart fast path: project id, digest files and the token estimate, with no store import.

SessionStart must return in little more than interpreter start-up (target ≤ 1.5× a bare
`python -c pass`), and importing `agentctx_store` (sqlite3, dataclasses, pathlib, configparser)
costs several times that. So this module repeats three small pieces of the store with the
standard library only. `tests/test_fast.py` checks each against the store's own function on
many inputs; change both together.
"""

from __future__ import annotations

import json
import math
import os
import re
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GLOBAL_PROJECT_ID = "_global"

# -- agentctx_store.projects.resolve_project(...).project_id --------------------------------

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://(?P<rest>.*)$", re.IGNORECASE)


def _sha256_hex(value: str) -> str:
    try:  # the builtin module avoids loading OpenSSL (~3 ms); hashlib where it is absent
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython ≤ 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # CPython ≥ 3.12
        except ImportError:
            from hashlib import sha256
    return sha256(value.encode("utf-8")).hexdigest()


def normalize_remote(url: str) -> str:
    """Same result as `agentctx_store.projects.normalize_remote`."""
    text = url.strip()
    lowered = text.lower()
    if lowered.startswith("file://"):
        return "file/" + _strip_git(text[7:].rstrip("/")).lower()
    match = _SCHEME.match(text)
    if match:
        rest = match.group("rest")
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
        host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":", 1)[0]
    elif (scp := _SCP_LIKE.match(text)) and not text.startswith(("/", ".")):
        host, path = scp.group("host"), scp.group("path")
    else:
        return "file/" + _strip_git(text.rstrip("/")).lower()
    path = re.sub(r"/+", "/", path).strip("/")
    path = _strip_git(path).rstrip("/")
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


# -- agentctx_store.paths ------------------------------------------------------------------


def data_home() -> str:
    override = os.environ.get("AGENTCTX_HOME")
    return os.path.expanduser(override) if override else os.path.join(os.path.expanduser("~"), ".agentctx")


def safe_name(value: str, *, limit: int = 96) -> str:
    """Same as `agentctx_store.paths.safe_name`."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", value)[:limit].strip(".")
    return cleaned or "_"


def digest_files(project: str) -> tuple[str, str]:
    """(text file, metadata file) of a project's digest, as `agentctx_store.digest` writes them."""
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
        meta = json.loads(meta_text)
        age = time.time() - os.path.getmtime(text_path)
    except (ValueError, OSError):
        return None
    return (text, meta, age) if isinstance(meta, dict) else None


# -- agentctx_store.budget.estimate_tokens ----------------------------------------------------

_PIECE = re.compile(r"[A-Za-z]+|[0-9]+|\s+|[\x21-\x7e]|[^\x00-\x7f]")


def estimate_tokens(text: str) -> int:
    """Same as `agentctx_store.budget.estimate_tokens`."""
    if not text:
        return 0
    total = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isascii() and first.isalpha():
            total += max(1, math.ceil(len(piece) / 4))
        elif first.isdigit():
            total += math.ceil(len(piece) / 2)
        elif first.isspace():
            total += 1 if ("\n" in piece or len(piece) > 1) else 0
        elif first.isascii():
            total += 1
        else:
            total += 2 if len(piece.encode("utf-8")) > 3 else 1
    return math.ceil(total * 1.1) + 1
