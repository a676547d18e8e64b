"""Where a project already wrote its knowledge down: ADR folders, agent instruction files, and
Claude Code's auto-memory for this project (read only, never written).

Claude Code keeps auto-memory in `~/.claude/projects/<sanitized-root>/memory/` (the root with
every character outside `[A-Za-z0-9]` made `-`; `CLAUDE_CONFIG_DIR` moves `~/.claude`, and the
user setting `autoMemoryDirectory` in `~/.claude/settings.json` moves the folder itself; the
CLI ignores that setting in a repository's checked-in settings, and so does this).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from agentctx_store._frozen import frozen
from agentctx_store.upkeep.learn.adr import ADR_FOLDERS, is_adr_file

INSTRUCTION_NAMES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".cursorrules")
_PRUNE = {
    ".git", "node_modules", ".venv", "venv", "env", "dist", "build", "target", "__pycache__", ".agentctx",
    ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "vendor", ".next", "coverage",
}  # fmt: skip
MAX_DEPTH = 6
MEMORY_PREFIX = "claude-memory:"  # the anchor path of an auto-memory file (it lives outside the project)


@frozen
class Source:
    """One file to learn from: `kind` is `adr`, `rules` or `memory`; `rel` is its anchor path."""

    path: Path
    rel: str
    kind: str


def discover(root: Path, paths: Sequence[Path] = (), *, home: Path | None = None) -> list[Source]:
    """The files `learn` reads in `root`, in a stable order. With `paths`, only those (a folder
    is searched like a project; a numbered file in a folder of such files is an ADR).

    Raises:
        FileNotFoundError: a given path does not exist.
    """
    root = root.resolve()
    found: dict[Path, Source] = {}
    if paths:
        for given in paths:
            target = (root / given).resolve() if not given.is_absolute() else given.resolve()
            if not target.exists():
                raise FileNotFoundError(str(given))
            if target.is_dir():
                for source in _search(root, target):
                    found.setdefault(source.path, source)
            else:
                kind = "adr" if is_adr_file(target) and _adr_folder(target.parent) else "rules"
                found.setdefault(target, Source(path=target, rel=_rel(root, target), kind=kind))
        return sorted(found.values(), key=lambda source: (source.kind, source.rel))
    for source in _search(root, root):
        found.setdefault(source.path, source)
    for path in memory_files(root, home=home):
        found.setdefault(path, Source(path=path, rel=MEMORY_PREFIX + path.name, kind="memory"))
    return sorted(found.values(), key=lambda source: (source.kind, source.rel))


def _search(root: Path, top: Path) -> list[Source]:
    sources: list[Source] = []
    if _adr_folder(top):
        sources += _adr_sources(root, top)
    for folder in ADR_FOLDERS:
        candidate = top / folder
        if candidate.is_dir() and candidate.name in os.listdir(candidate.parent):  # exact case
            sources += _adr_sources(root, candidate)
    for directory, subdirs, files in os.walk(top):
        depth = Path(directory).relative_to(top).parts
        subdirs[:] = sorted(
            d for d in subdirs if d not in _PRUNE and (not d.startswith(".") or d in (".github", ".cursor"))
        )
        if len(depth) >= MAX_DEPTH:
            subdirs[:] = []
        here = Path(directory)
        for name in sorted(files):
            path = here / name
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
                sources.append(Source(path=path, rel=_rel(root, path), kind="rules"))
    return sources


def _adr_folder(folder: Path) -> bool:
    """A folder holding at least two numbered Markdown files."""
    try:
        return sum(1 for path in folder.iterdir() if is_adr_file(path)) >= 2
    except OSError:
        return False


def _adr_sources(root: Path, folder: Path) -> list[Source]:
    if not _adr_folder(folder):
        return []
    return [
        Source(path=path, rel=_rel(root, path), kind="adr") for path in sorted(folder.iterdir()) if is_adr_file(path)
    ]


def _rel(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.name


# -- Claude Code auto-memory -------------------------------------------------------------


def sanitize(path: str) -> str:
    """Claude Code's project folder name for a path (every non-alphanumeric becomes `-`)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def memory_dir(root: Path, *, home: Path | None = None) -> Path | None:
    """This project's auto-memory folder, when it exists."""
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or (home or Path.home()) / ".claude")
    try:
        settings = json.loads((base / "settings.json").read_text(encoding="utf-8"))
        custom = settings.get("autoMemoryDirectory") if isinstance(settings, dict) else None
    except (OSError, ValueError):
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
    return sorted(path for path in folder.glob("*.md") if path.name != "MEMORY.md" and path.is_file())
