"""Where a project already wrote its knowledge down: ADR folders, agent instruction files, and
Claude Code's auto-memory for this project (read only, never written).

Claude Code keeps auto-memory in `~/.claude/projects/<sanitized-root>/memory/` (the root with
every character outside `[A-Za-z0-9]` made `-`; `CLAUDE_CONFIG_DIR` moves `~/.claude`, and the
user setting `autoMemoryDirectory` in `~/.claude/settings.json` moves the folder itself; the
CLI ignores that setting in a repository's checked-in settings, and so does this).

A repository is anyone's, so discovery takes nothing from outside its real tree: every
candidate is resolved (`bounded.real_path`), a link that leads out (a `CLAUDE.md` to
`~/.ssh/id_rsa`, an ADR folder to `/etc`) is passed over with one line, a link that stays inside
gives the source of its target (`CLAUDE.md → AGENTS.md` is read once, as `AGENTS.md`), and the
walk never enters a linked folder. The memory folder is held to itself the same way. Reading
(`apply.read_items`) goes through `bounded.read_repo_text`: regular files only (a FIFO or a
device is never opened for reading), at most `bounded.MAX_REPO_FILE` bytes, UTF-8.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from agentctx_store._frozen import frozen
from agentctx_store.bounded import MAX_REPO_FILE, Refused, read_regular, real_path
from agentctx_store.jsontext import is_object
from agentctx_store.learn.adr import ADR_FOLDERS, is_adr_file

INSTRUCTION_NAMES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".cursorrules")
_PRUNE = {
    ".git", "node_modules", ".venv", "venv", "env", "dist", "build", "target", "__pycache__", ".agentctx",
    ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "vendor", ".next", "coverage",
}  # fmt: skip
MAX_DEPTH = 6
MEMORY_PREFIX = "claude-memory:"  # the anchor path of an auto-memory file (it lives outside the project)


@frozen
class Source:
    """One file to learn from: `kind` is `adr`, `rules` or `memory`; `rel` is its anchor path;
    `path` is its real path (every link resolved), inside `base` (the repository, or the
    auto-memory folder), the tree it is read from."""

    path: Path
    rel: str
    kind: str
    base: Path


@frozen
class Found:
    """What discovery found: the sources, one per real file, and one line for each candidate it
    passed over (a link out of the tree)."""

    sources: list[Source]
    skipped: list[str]


class _Finder:
    """Candidates in, sources out: each resolved (`bounded.real_path`), those that leave the
    tree refused with one line, each real file kept once (a link that stays inside the
    repository, such as `CLAUDE.md → AGENTS.md`, gives the source of its target)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.found: dict[Path, Source] = {}
        self.skipped: list[str] = []

    def real(self, path: Path) -> Path | None:
        try:
            return Path(real_path(self.root, path))
        except Refused as exc:
            if str(exc) not in self.skipped:
                self.skipped.append(str(exc))
            return None

    def add(self, path: Path, kind: str) -> None:
        real = self.real(path)
        if real is not None:
            self.found.setdefault(real, Source(path=real, rel=_rel(self.root, real), kind=kind, base=self.root))

    def result(self) -> Found:
        return Found(
            sources=sorted(self.found.values(), key=lambda source: (source.kind, source.rel)), skipped=self.skipped
        )


def discover(root: Path, paths: Sequence[Path] = (), *, home: Path | None = None) -> list[Source]:
    """The files `learn` reads in `root`, in a stable order (`find` without what it passed over)."""
    return find(root, paths, home=home).sources


def find(root: Path, paths: Sequence[Path] = (), *, home: Path | None = None) -> Found:
    """The files `learn` reads in `root`, in a stable order, and the candidates it passed over.
    With `paths`, only those (a folder is searched like a project; a numbered file in a folder
    of such files is an ADR). Nothing outside `root`'s real tree is taken (a given path or a
    link that leads out is passed over with one line), nor read here: the sources are read
    later with `bounded.read_repo_text`, which refuses what is not a regular file or too big.

    Raises:
        FileNotFoundError: a given path does not exist.
    """
    root = Path(os.path.realpath(root))
    finder = _Finder(root)
    if paths:
        for given in paths:
            try:
                target = Path(real_path(root, given))
            except Refused:
                finder.skipped.append(f"{given}: skipped, it is outside the repository (learn reads only its files)")
                continue
            if not target.exists():
                raise FileNotFoundError(str(given))
            if target.is_dir():
                _search(finder, target)
            else:
                finder.add(target, "adr" if is_adr_file(target) and _adr_folder(target.parent) else "rules")
        return finder.result()
    _search(finder, root)
    _memory(finder, root, home=home)
    return finder.result()


def _search(finder: _Finder, top: Path) -> None:
    """`top` (a real folder inside the repository): its ADR folders and instruction files. The
    walk follows no link to a folder; the ADR folders are probed by name, so a probe that is a
    link is resolved first and refused when it leads out."""
    if _adr_folder(top):
        _adr_sources(finder, top)
    for folder in ADR_FOLDERS:
        candidate = top / folder
        if not candidate.is_dir():
            continue
        real = finder.real(candidate)
        if real is not None and real.name in os.listdir(real.parent):  # exact case
            _adr_sources(finder, real)
    for directory, subdirs, files in os.walk(top):
        depth = Path(directory).relative_to(top).parts
        subdirs[:] = sorted(
            d for d in subdirs if d not in _PRUNE and (not d.startswith(".") or d in (".github", ".cursor"))
        )
        if len(depth) >= MAX_DEPTH:
            subdirs[:] = []
        here = Path(directory)
        for name in sorted(files):
            if (
                name in INSTRUCTION_NAMES
                or here.name == ".github"
                and name == "copilot-instructions.md"
                or here.parent.name == ".github"
                and here.name == "instructions"
                and name.endswith(".instructions.md")
                or here.name == "rules"
                and here.parent.name == ".cursor"
                and name.endswith((".mdc", ".md"))
            ):
                finder.add(here / name, "rules")


def _adr_folder(folder: Path) -> bool:
    """A folder holding at least two numbered Markdown files."""
    try:
        return sum(1 for path in folder.iterdir() if is_adr_file(path)) >= 2
    except OSError:
        return False


def _adr_sources(finder: _Finder, folder: Path) -> None:
    if not _adr_folder(folder):
        return
    for path in sorted(folder.iterdir()):
        if is_adr_file(path):
            finder.add(path, "adr")


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


# -- Claude Code auto-memory -------------------------------------------------------------


def sanitize(path: str) -> str:
    """Claude Code's project folder name for a path (every non-alphanumeric becomes `-`)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def memory_dir(root: Path, *, home: Path | None = None) -> Path | None:
    """This project's auto-memory folder, when it exists."""
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or (home or Path.home()) / ".claude")
    data = read_regular(str(base / "settings.json"), limit=MAX_REPO_FILE)
    try:
        settings = json.loads(data) if data is not None else None
        custom = settings.get("autoMemoryDirectory") if is_object(settings) else None
    except ValueError:  # not JSON, or not UTF-8
        custom = None
    if isinstance(custom, str) and custom.strip():
        folder = Path(os.path.expanduser(custom.strip()))
        return folder if folder.is_dir() else None
    name = sanitize(str(root))
    folder = base / "projects" / name / "memory"
    if folder.is_dir():
        return folder
    if len(name) > 200:  # long paths are cut at 200 and given a hash suffix
        for candidate in sorted((base / "projects").glob(name[:200] + "-*")):
            if (candidate / "memory").is_dir():
                return candidate / "memory"
    return None


def memory_files(root: Path, *, home: Path | None = None) -> list[Path]:
    """The memory files of this project (the `MEMORY.md` index is only links: skipped)."""
    folder = memory_dir(root, home=home)
    if folder is None:
        return []
    return sorted(path for path in folder.glob("*.md") if path.name != "MEMORY.md" and not path.is_dir())


def _memory(finder: _Finder, root: Path, *, home: Path | None) -> None:
    """The auto-memory files, held to that folder as the repository's files are to the
    repository: a link out of the memory folder is passed over with one line, and the files
    are read with the same bounds (`Source.base` is the folder)."""
    folder = memory_dir(root, home=home)
    if folder is None:
        return
    base = Path(os.path.realpath(folder))
    for path in memory_files(root, home=home):
        try:
            real = Path(real_path(base, path.name))
        except Refused:
            finder.skipped.append(f"{MEMORY_PREFIX}{path.name}: skipped, it links outside the memory folder")
            continue
        if real.name != "MEMORY.md":
            rel = MEMORY_PREFIX + real.relative_to(base).as_posix()
            finder.found.setdefault(real, Source(path=real, rel=rel, kind="memory", base=base))
