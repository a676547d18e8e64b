"""Project namespacing (SPEC §3.4): which project a directory belongs to.

`project_id` is the SHA-256 of the normalised `origin` remote, so every clone of one
repository shares a namespace whatever URL form it was cloned with; without a remote it is
the SHA-256 of the repository root (or the directory itself outside git). Reads and writes go
through a `Project`; `_global` is reserved for the developer's cross-project preferences.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentctx_store._frozen import frozen

GLOBAL_PROJECT_ID = "_global"

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")


@frozen
class Project:
    project_id: str
    root: Path
    name: str
    remote: str | None = None


def normalize_remote(url: str) -> str:
    """One spelling for every form of a git remote URL.

    `git@github.com:Owner/Repo.git`, `ssh://git@github.com:22/owner/repo`,
    `https://user:token@github.com/owner/repo.git/` all become `github.com/owner/repo`.
    Credentials, ports, the scheme and the `.git` suffix are dropped; case is folded.
    """
    text = url.strip()
    lowered = text.lower()
    if lowered.startswith("file://"):
        return "file/" + _strip_git(text[7:].rstrip("/")).lower()
    match = re.match(r"^[a-z][a-z0-9+.-]*://(?P<rest>.*)$", text, re.IGNORECASE)
    if match:
        rest = match.group("rest")
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
        host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":", 1)[0]  # drop the port
    elif (scp := _SCP_LIKE.match(text)) and not text.startswith(("/", ".")):
        host, path = scp.group("host"), scp.group("path")
    else:  # a local path used as a remote
        return "file/" + _strip_git(text.rstrip("/")).lower()
    path = re.sub(r"/+", "/", path).strip("/")
    path = _strip_git(path).rstrip("/")
    return f"{host}/{path}".lower()


def _strip_git(path: str) -> str:
    """Drop a `.git` suffix in any case (`REPO.GIT` is the same repository as `repo`)."""
    return path[:-4] if path.lower().endswith(".git") else path


def hash_id(value: str) -> str:
    import hashlib  # imported where used: hooks resolve project ids without it (agentctx_hooks._fast)

    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def find_repo_root(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:  # worktrees and submodules: `.git` is a file pointing at the real git dir
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text.removeprefix("gitdir:").strip())
    git_dir = git_dir if git_dir.is_absolute() else (root / git_dir).resolve()
    common = git_dir / "commondir"
    if common.is_file():
        try:
            common_dir = Path(common.read_text(encoding="utf-8").strip())
        except OSError:
            return git_dir
        return common_dir if common_dir.is_absolute() else (git_dir / common_dir).resolve()
    return git_dir


def read_origin(root: Path) -> str | None:
    """The `origin` URL from the repository's git config (read directly: no git subprocess)."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    import configparser  # imported where used, to keep `import agentctx_store` light for hooks

    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(git_dir / "config", encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    section = 'remote "origin"'
    if parser.has_section(section) and parser.has_option(section, "url"):
        return parser.get(section, "url").strip() or None
    return None


def resolve_project(path: str | Path) -> Project:
    """The project a directory belongs to. Never raises for a path that does not exist."""
    start = Path(path).expanduser()
    try:
        start = start.resolve()
    except OSError:
        start = start.absolute()
    root = find_repo_root(start) or start
    remote = read_origin(root) if (root / ".git").exists() else None
    if remote:
        return Project(project_id=hash_id(normalize_remote(remote)), root=root, name=root.name, remote=remote)
    return Project(project_id=hash_id(str(root)), root=root, name=root.name or str(root))


def global_project() -> Project:
    return Project(project_id=GLOBAL_PROJECT_ID, root=Path.home(), name="global")
