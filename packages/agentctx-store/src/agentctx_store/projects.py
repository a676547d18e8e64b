"""Project namespacing (docs/contracts.md#namespaces): which project a directory belongs to.

`project_id` is the SHA-256 of the normalised `origin` remote, so every clone of one
repository shares a namespace whatever URL form it was cloned with; without a remote it is
the SHA-256 of the project root: the repository's; outside git, the nearest folder at or above
holding a `.agentctx/` folder, else the directory itself (`project_root`). Reads and writes go
through a `Project`; `_global` is reserved for the developer's cross-project preferences.

Every hook resolves its project, so this is plain string work: the URL forms are parsed by
hand and the git config is read line by line (what `configparser(strict=False)` would accept).
"""

from __future__ import annotations

import os
import stat

from agentctx_store import paths

TYPE_CHECKING = False

GLOBAL_PROJECT_ID = "_global"


class Project:
    """A project namespace. `root` is the directory as text; the CLI and UI make it a `Path`.

    A frozen keyword-only record, as `@dataclass(frozen=True, kw_only=True)` would make it
    (tests/test_frozen.py holds it to that), written out because every hook builds one: the
    class costs nothing to define, where `@frozen` compiles an `__init__` in each process."""

    __match_args__ = ()
    project_id: str
    root: str
    name: str
    remote: str | None

    def __init__(self, *, project_id: str, root: str, name: str, remote: str | None = None) -> None:
        self.__dict__.update(project_id=project_id, root=root, name=name, remote=remote)

    def _fields(self) -> tuple[str, str, str, str | None]:
        return (self.project_id, self.root, self.name, self.remote)

    def __repr__(self) -> str:
        return (
            f"Project(project_id={self.project_id!r}, root={self.root!r}, name={self.name!r}, remote={self.remote!r})"
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Project) and other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __setattr__(self, name: str, value: object) -> None:
        from agentctx_store._frozen import frozen_error

        raise frozen_error(name)

    def __delattr__(self, name: str) -> None:
        from agentctx_store._frozen import frozen_error

        raise frozen_error(name)


def normalize_remote(url: str) -> str:
    """One spelling for every form of a git remote URL.

    `git@github.com:Owner/Repo.git`, `ssh://git@github.com:22/owner/repo`,
    `https://user:token@github.com/owner/repo.git/` all become `github.com/owner/repo`.
    Credentials, ports, the scheme and the `.git` suffix are dropped; case is folded.
    """
    text = url.strip()
    if text.lower().startswith("file://"):
        return "file/" + _strip_git(text[7:].rstrip("/")).lower()
    rest = _after_scheme(text)
    scp = _scp_parts(text) if rest is None else None
    if rest is not None:
        authority, _, path = rest.partition("/")
        host = authority.rsplit("@", 1)[-1]
        host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":", 1)[0]  # drop the port
    elif scp is not None and not text.startswith(("/", ".")):
        host, path = scp
    else:  # a local path used as a remote
        return "file/" + _strip_git(text.rstrip("/")).lower()
    while "//" in path:
        path = path.replace("//", "/")
    path = _strip_git(path.strip("/")).rstrip("/")
    return f"{host}/{path}".lower()


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


def _after_scheme(text: str) -> str | None:
    """What follows `scheme://` (a letter, then letters, digits, `+.-`), or None."""
    cut = text.find("://")
    scheme = text[:cut].lower()
    if cut < 1 or not ("a" <= scheme[0] <= "z") or not set(scheme) <= _SCHEME_CHARS:
        return None
    rest = text[cut + 3 :]
    return None if "\n" in rest else rest


def _scp_parts(text: str) -> tuple[str, str] | None:
    """(host, path) of the scp-like form `[user@]host:path`, or None."""
    starts: list[int] = []
    at = text.find("@")
    if at > 0 and "/" not in text[:at]:
        starts.append(at + 1)
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


def _strip_git(path: str) -> str:
    """Drop a `.git` suffix in any case (`REPO.GIT` is the same repository as `repo`)."""
    return path[:-4] if path.lower().endswith(".git") else path


def hash_id(value: str) -> str:
    """SHA-256 in hex, from the interpreter's built-in module where there is one (hashlib
    loads OpenSSL first)."""
    if TYPE_CHECKING:  # the same function; typeshed has no stub for the built-in modules
        from hashlib import sha256
    else:
        try:
            from _sha256 import sha256  # CPython <= 3.11
        except ImportError:
            try:
                from _sha2 import sha256  # CPython >= 3.12
            except ImportError:
                from hashlib import sha256
    return sha256(value.encode("utf-8")).hexdigest()


def find_repo_root(start: str) -> str | None:
    """The nearest directory at or above `start` that holds `.git`."""
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


# Outside git, the nearest folder at or above holding this folder (the one `team export` writes
# `context.md` into) is the project; without one, the folder itself (docs/store.md#projects).
MARKER = ".agentctx"


def _is_marker(directory: str) -> bool:
    """`directory/.agentctx` is a real folder of this user's and not the data dir (`~/.agentctx`):
    a folder another local user made (in /tmp, say) never joins your folders into one project."""
    marker = os.path.join(directory, MARKER)
    try:
        info = os.lstat(marker)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        return False
    data = os.path.realpath(paths.home())
    return os.path.realpath(marker) != data and directory != os.path.expanduser("~")


def find_marked_root(start: str) -> str | None:
    """The nearest directory at or above `start` holding a `.agentctx/` project folder."""
    directory = start
    while True:
        if _is_marker(directory):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def project_root(path: str) -> tuple[str, str]:
    """(the project root of `path`, the rule that chose it): "git" for the repository holding it,
    "marker" for the nearest folder above holding `.agentctx/` outside git, "folder" for the
    folder itself when neither is there."""
    start = os.path.realpath(os.path.expanduser(path))
    found = find_repo_root(start)
    if found is not None:
        return found, "git"
    found = find_marked_root(start)
    if found is not None:
        return found, "marker"
    return start, "folder"


def repo_root(path: str) -> str:
    """The project root holding `path` (`project_root`): where a project's committed files (the
    team file) live."""
    return project_root(path)[0]


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
    content = _read_text(dot_git)  # worktrees and submodules: `.git` is a file naming the git dir
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
    """The `[remote "origin"] url` of the repository's git config (no git subprocess).

    Read as `configparser(strict=False)` reads it: a later value wins, indented lines continue
    the previous value, and a line that is neither a section nor `key = value` (or an option
    before any section) makes the whole file unreadable, as for git itself."""
    git_dir = _git_dir(root)
    content = None if git_dir is None else _read_text(os.path.join(git_dir, "config"))
    if content is None:
        return None
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


def resolve_project(path: str | os.PathLike[str]) -> Project:
    """The project a directory belongs to. Never raises for a path that does not exist."""
    text = os.fspath(path)  # (its own line: pyright infers `str | Unknown` for the nested calls)
    root = project_root(text)[0]
    remote = read_origin(root) if os.path.exists(os.path.join(root, ".git")) else None
    name = os.path.basename(root) or root
    if remote:
        return Project(project_id=hash_id(normalize_remote(remote)), root=root, name=name, remote=remote)
    return Project(project_id=hash_id(root), root=root, name=name)


def global_project() -> Project:
    return Project(project_id=GLOBAL_PROJECT_ID, root=os.path.expanduser("~"), name="global")
