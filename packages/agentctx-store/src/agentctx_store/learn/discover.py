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
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from agentctx_store._frozen import frozen
from agentctx_store.bounded import MAX_REPO_FILE, Refused, read_regular, read_repo_text, real_path
from agentctx_store.jsontext import is_object
from agentctx_store.learn.adr import is_adr_name, reads_as_adr

# Instruction files by name, at any depth; and the rule folders of each tool (any depth below them)
INSTRUCTION_NAMES = (
    "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md",
    ".cursorrules", ".windsurfrules", ".clinerules",
)  # fmt: skip
RULE_FOLDERS = (
    (".github", "instructions"), (".cursor", "rules"), (".windsurf", "rules"), (".clinerules",),
    (".continue", "rules"), (".claude", "rules"), (".amazonq", "rules"), (".kiro", "steering"),
)  # fmt: skip
_TOOLS = {
    "CLAUDE.md": "Claude Code", "CLAUDE.local.md": "Claude Code", "AGENTS.md": "Codex and other agents",
    "AGENTS.override.md": "Codex", "GEMINI.md": "Gemini CLI", ".cursorrules": "Cursor", ".windsurfrules": "Windsurf",
    ".clinerules": "Cline", "copilot-instructions.md": "GitHub Copilot",
}  # fmt: skip
_PRUNE = {
    ".git", "node_modules", ".venv", "venv", "env", "dist", "build", "target", "__pycache__", ".agentctx",
    ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "vendor", ".next", "coverage", "site-packages",
    "bower_components", "third_party", ".idea", ".vscode-test", ".cache",
}  # fmt: skip
MAX_DEPTH = 12
MAX_FILES = 300_000  # paths looked at in one discovery (a bounded walk of a huge tree)
HEAD_BYTES = 8192  # how much of a Markdown file is read to tell whether it is a decision record
MEMORY_PREFIX = "claude-memory:"  # the anchor path of an auto-memory file (it lives outside the project)
_MARKDOWN = (".md", ".markdown")
_ADR_HINT = ("adr", "decision", "architecture", "rfc", "record")


@frozen
class Source:
    """One file to learn from: `kind` is `adr`, `rules` or `memory`; `rel` is its anchor path;
    `path` is its real path (every link resolved), inside `base` (the repository, or the
    auto-memory folder), the tree it is read from; `why` says why it was taken."""

    path: Path
    rel: str
    kind: str
    base: Path
    why: str = ""


@frozen
class Found:
    """What discovery found: the sources, one per real file, one line for each candidate it
    passed over (a link out of the tree), and one line for each file it looked at and why it
    was taken or not (`learn --dry-run` prints them)."""

    sources: list[Source]
    skipped: list[str]
    reasons: list[str]


class _Finder:
    """Candidates in, sources out: each resolved (`bounded.real_path`), those that leave the
    tree refused with one line, each real file kept once (a link that stays inside the
    repository, such as `CLAUDE.md → AGENTS.md`, gives the source of its target)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.found: dict[Path, Source] = {}
        self.skipped: list[str] = []
        self.reasons: list[str] = []
        self.reals: dict[Path, Path | None] = {}

    def real(self, path: Path) -> Path | None:
        if path in self.reals:
            return self.reals[path]
        real: Path | None = None
        try:
            real = Path(real_path(self.root, path))
        except Refused as exc:
            if str(exc) not in self.skipped:
                self.skipped.append(str(exc))
        self.reals[path] = real
        return real

    def add(self, path: Path, kind: str, why: str = "") -> None:
        real = self.real(path)
        if real is None:
            return
        rel = _rel(self.root, real)
        if real in self.found:
            if real != path:
                self.reasons.append(f"{_rel(self.root, path)}: read once, as {rel} (it links there)")
            return
        self.found[real] = Source(path=real, rel=rel, kind=kind, base=self.root, why=why)
        shown = _rel(self.root, path)
        link = f" (a link to {rel})" if shown != rel else ""
        self.reasons.append(f"{shown}: taken, {why}{link}")

    def result(self) -> Found:
        return Found(
            sources=sorted(self.found.values(), key=lambda source: (source.kind, source.rel)),
            skipped=self.skipped,
            reasons=sorted(set(self.reasons)),
        )


def discover(root: Path, paths: Sequence[Path] = (), *, home: Path | None = None) -> list[Source]:
    """The files `learn` reads in `root`, in a stable order (`find` without what it passed over)."""
    return find(root, paths, home=home).sources


def find(root: Path, paths: Sequence[Path] = (), *, home: Path | None = None) -> Found:
    """The files `learn` reads in `root`, in a stable order, and the candidates it passed over.
    With `paths`, only those (a folder is searched like a project; a file is an ADR when it
    reads as a decision record in a folder of them). Nothing outside `root`'s real tree is
    taken (a given path or a link that leads out is passed over with one line), nor read here
    beyond the first `HEAD_BYTES` of a Markdown file that may be a decision record: the sources
    are read later with `bounded.read_repo_text`, which refuses what is not a regular file or
    too big.

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
                why = _adr_why(finder, target)
                if why is not None and _adr_folder(finder, target.parent):
                    finder.add(target, "adr", f"a decision record: {why}")
                else:
                    finder.add(target, "rules", "given as a file of rules")
        return finder.result()
    _search(finder, root)
    _memory(finder, root, home=home)
    return finder.result()


def files_of(top: Path) -> list[Path]:
    """The files of the tree at `top`: the repository's own list where `top` is in a git work
    tree (`git ls-files`: tracked and untracked files, not ignored ones, so vendored and build
    output is left out), else a bounded walk that follows no link to a folder. Either way,
    folders such as `node_modules` and virtualenvs are left out, at most `MAX_FILES` paths
    and `MAX_DEPTH` folders deep."""
    listed = _git_files(top)
    if listed is None:
        listed = _walk(top)
    out: list[Path] = []
    for rel in listed:
        parts = rel.split("/")
        if len(parts) > MAX_DEPTH + 1 or any(part in _PRUNE for part in parts[:-1]):
            continue
        out.append(top / rel)
    return out


def _git_files(top: Path) -> list[str] | None:
    if shutil.which("git") is None:
        return None
    try:
        done = subprocess.run(
            # a cloned repository's config may name a program for git to run (core.fsmonitor): never
            [
                "git",
                "-c",
                "core.fsmonitor=false",
                "-C",
                str(top),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                ".",
            ],  # fmt: skip
            capture_output=True,
            timeout=30,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = sorted({name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name})
    return names[:MAX_FILES]


def _walk(top: Path) -> list[str]:
    out: list[str] = []
    for directory, subdirs, files in os.walk(top):
        here = Path(directory)
        depth = len(here.relative_to(top).parts)
        subdirs[:] = sorted(d for d in subdirs if d not in _PRUNE) if depth < MAX_DEPTH else []
        prefix = here.relative_to(top).as_posix()
        links = [d for d in subdirs if os.path.islink(here / d)]  # listed, never entered (os.walk follows none)
        for name in sorted(files + links):
            out.append(name if prefix == "." else f"{prefix}/{name}")
            if len(out) >= MAX_FILES:
                return out
    return out


def instruction_why(parts: Sequence[str]) -> str | None:
    """Why a file (its path's parts, relative to the project) is an instruction file, or None."""
    name = parts[-1]
    if name in INSTRUCTION_NAMES:
        return f"instruction file of {_TOOLS.get(name, 'an agent')}"
    if len(parts) >= 2 and parts[-2] == ".github" and name == "copilot-instructions.md":
        return "instruction file of GitHub Copilot"
    folders = parts[:-1]
    for rule in RULE_FOLDERS:
        for index in range(len(folders) - len(rule) + 1):
            inside = tuple(folders[index : index + len(rule)]) == rule
            if inside and name.lower().endswith((".md", ".mdc")) and name.lower() != "readme.md":
                if rule[-1] == "instructions" and not name.endswith(".instructions.md"):
                    return None
                return f"rules of {'/'.join(rule)}"
    return None


def instruction_files(root: Path) -> dict[Path, str]:
    """The project's instruction files (as `learn` finds them) with their text, each read
    bounded and only inside the repository's real tree; a link read once, by its first name."""
    root = Path(os.path.realpath(root))
    out: dict[Path, str] = {}
    seen: set[str] = set()
    for path in files_of(root):
        if instruction_why(path.relative_to(root).parts) is None:
            continue
        try:
            real = real_path(root, path)
            if real in seen:
                continue
            out[path] = read_repo_text(root, path)
            seen.add(real)
        except (OSError, UnicodeDecodeError):  # missing, refused (bounded.Refused), not UTF-8
            continue
    return out


def _search(finder: _Finder, top: Path) -> None:
    """`top` (a real folder inside the repository): its ADR folders, found by content wherever
    they sit, and its instruction files at any depth, dot-folders included."""
    folders: dict[Path, list[Path]] = {}
    for path in files_of(top):
        if path.is_symlink() and path.is_dir():
            if finder.real(path) is not None:  # a link out of the tree gets its line; none is entered
                finder.reasons.append(f"{_rel(finder.root, path)}: not entered, a link to a folder")
            continue
        rel_parts = path.relative_to(top).parts
        why = instruction_why(rel_parts)
        if why is not None:
            finder.add(path, "rules", why)
            continue
        if path.suffix.lower() in _MARKDOWN:
            folders.setdefault(path.parent, []).append(path)
    for folder, files in sorted(folders.items()):
        named = sum(1 for path in files if is_adr_name(path))
        hinted = any(word in part.lower() for part in folder.relative_to(top).parts[-2:] for word in _ADR_HINT)
        if named >= 2 or (hinted and len(files) >= 2):
            _adr_sources(finder, folder, _markdown_entries(folder, files))


def _markdown_entries(folder: Path, listed: list[Path]) -> list[Path]:
    """A candidate ADR folder's Markdown entries as the folder holds them (git lists no FIFO or
    device, and such an entry deserves its line saying it was passed over), with the listed ones."""
    try:
        names = {entry.name for entry in os.scandir(folder) if entry.name.lower().endswith(_MARKDOWN)}
    except OSError:
        names: set[str] = set()
    return sorted({folder / name for name in names} | set(listed))


def _adr_why(finder: _Finder, path: Path, *, of_records: bool = False) -> str | None:
    """Why `path` reads as a decision record; `of_records`: its folder is known to hold them
    (a numbered file with a heading is then one too, as in a folder named for decisions)."""
    real = finder.real(path)
    if real is None:
        return None
    head = read_regular(str(real), limit=HEAD_BYTES)
    try:
        too_big = real.stat().st_size > MAX_REPO_FILE
    except OSError:
        too_big = False
    if head is None or too_big:  # taken by its name, so that reading it says why it is skipped
        return "a numbered or dated name" if is_adr_name(path) else None
    folder_says = of_records or decisions_folder(path.parent)
    return reads_as_adr(path, head.decode("utf-8", "replace"), decisions_folder=folder_says)


def decisions_folder(folder: Path) -> bool:
    """A folder named for decision records (`adr`, `adrs`, `decisions`, `architecture-decisions`…)."""
    name = folder.name.lower()
    return bool(re.search(r"(^|[-_ ])(adrs?|decisions?|decision[-_ ]records?)$", name)) or name.startswith("adr")


def _adr_folder(finder: _Finder, folder: Path) -> bool:
    """A folder holding at least two Markdown files that read as decision records."""
    try:
        files = sorted(path for path in folder.iterdir() if path.suffix.lower() in _MARKDOWN)
    except OSError:
        return False
    return sum(1 for path in files if _adr_why(finder, path) is not None) >= 2


def _adr_sources(finder: _Finder, folder: Path, files: list[Path]) -> None:
    """The decision records of a candidate folder, when it holds at least two."""
    taken: list[tuple[Path, str]] = []
    passed: list[str] = []
    named: list[Path] = []  # numbered or dated, yet not read as a record on its own
    for path in sorted(files):
        if finder.real(path) is None:
            continue  # a link out of the tree: its line is already there
        why = _adr_why(finder, path)
        if why is not None:
            taken.append((path, why))
        elif is_adr_name(path):
            named.append(path)
        else:
            passed.append(f"{_rel(finder.root, path)}: not taken, it does not read as a decision record")
    if len(taken) >= 2 and len(taken) >= len(named):  # mostly records: a numbered file with a heading is one
        taken += [(path, why) for path in named if (why := _adr_why(finder, path, of_records=True)) is not None]
        taken.sort()
        named = [path for path in named if path not in {path for path, _ in taken}]
    malformed = [
        f"{_rel(finder.root, path)}: skipped, an ADR with no decision record in it (empty or malformed)"
        for path in named
    ]
    finder.reasons += passed
    if len(taken) < 2:
        finder.reasons += [
            line.split(": skipped, ", 1)[0] + ": not taken, it does not read as a decision record" for line in malformed
        ]
        finder.reasons += [
            f"{_rel(finder.root, path)}: not taken, the only decision-record-like file in its folder"
            for path, _ in taken
        ]
        return
    finder.skipped += malformed
    for path, why in taken:
        finder.add(path, "adr", f"a decision record: {why}")


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
