"""Project namespacing (SPEC §3.4): which project a directory belongs to.

`project_id` is the SHA-256 of the normalised `origin` remote, so every clone of one
repository shares a namespace whatever URL form it was cloned with; without a remote it is
the SHA-256 of the repository root (or the directory itself outside git). Reads and writes go
through a `Project`; `_global` is reserved for the developer's cross-project preferences.
"""

from __future__ import annotations

import os

from agentctx_store._frozen import frozen_error as _frozen_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

GLOBAL_PROJECT_ID = "_global"

_SCP_LIKE = r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$"


_PROJECT_FIELDS = ("project_id", "root", "_root", "name", "remote")


class Project:
    """A project namespace: frozen and keyword-only, as a `@dataclass(frozen=True, kw_only=True)`
    with the fields `project_id`, `root`, `name`, `remote` would be (tests/test_frozen.py).

    One difference: `root` may be given as a string, and becomes a `Path` when first read. The
    prompt hook knows its root as text and never reads it; `pathlib` costs it ~3 ms to import.
    """

    __slots__ = ("project_id", "_root", "name", "remote")
    __match_args__ = ()

    def __init__(self, *, project_id: str, root: Path | str, name: str, remote: str | None = None) -> None:
        _set = object.__setattr__
        _set(self, "project_id", project_id)
        _set(self, "_root", root)
        _set(self, "name", name)
        _set(self, "remote", remote)

    @property
    def root(self) -> Path:
        root = self._root
        if isinstance(root, str):
            from pathlib import Path

            root = Path(root)
            object.__setattr__(self, "_root", root)
        return root

    def _fields(self) -> tuple[str, Path, str, str | None]:
        return (self.project_id, self.root, self.name, self.remote)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(project_id={self.project_id!r}, root={self.root!r}, "
            f"name={self.name!r}, remote={self.remote!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Project)
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __setattr__(self, name: str, value: object) -> None:
        if type(self) is Project or name in _PROJECT_FIELDS:
            raise _frozen_error(name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if type(self) is Project or name in _PROJECT_FIELDS:
            raise _frozen_error(name)
        super().__delattr__(name)

    def __getstate__(self) -> tuple[str, Path | str, str, str | None]:
        return (self.project_id, self._root, self.name, self.remote)

    def __setstate__(self, state: tuple[str, Path | str, str, str | None]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)


def normalize_remote(url: str) -> str:
    """One spelling for every form of a git remote URL.

    `git@github.com:Owner/Repo.git`, `ssh://git@github.com:22/owner/repo`,
    `https://user:token@github.com/owner/repo.git/` all become `github.com/owner/repo`.
    Credentials, ports, the scheme and the `.git` suffix are dropped; case is folded.
    """
    import re  # here, not at the top: the prompt hook imports this module, never this function

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
    elif (scp := re.match(_SCP_LIKE, text)) and not text.startswith(("/", ".")):
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
    from pathlib import Path  # here, not at the top: see `Project`

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
    from pathlib import Path  # here, not at the top: see `Project`

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
    return Project(project_id=GLOBAL_PROJECT_ID, root=os.path.expanduser("~"), name="global")
