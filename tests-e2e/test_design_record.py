"""The design travels with the code: what the code and docs cite is in the repository.

- No file cites a design document that lives outside it (a SPEC section, an outside ADR number,
  ARCHITECTURE.md, PYTHON.md, a review): a clone could not follow it. The design record is
  `docs/contracts.md` and `docs/adr/`.
- Every `docs/….md` path (and `bench/README.md`) named in a docstring, comment or page exists; a
  `#anchor` after it is a heading of that page, and a quoted section after it
  (`docs/hooks.md, "Speed"`) begins a heading or a bold lead-in there.
- Every relative Markdown link resolves, anchors included.
- Every decision record is numbered in sequence, has a status, and is listed in the index.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", ".venv", "__pycache__", ".cache", ".ruff_cache", ".benchmarks", "node_modules", "dist", "fixtures"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".js", ".css", ".html", ".txt", ".sh", ""}
SKIP_FILES = {"uv.lock", "gitleaks.toml", "GITLEAKS-LICENSE", "LICENSE"}

# How the outside documents were cited. `ADR-\d{3}` is their numbering (the repository's own
# records are `docs/adr/NNNN-….md`, cited by path); an ADR a project writes in another form
# (`ADR019`, `ADR-0057`) is data `agentctx learn` reads and stays allowed.
OUTSIDE = re.compile(
    r"\bSPEC(?:\.md)?\s*(?:§|invariant)|\bSPEC\.md\b|\(SPEC\b|\bARCHITECTURE\b|\bPYTHON\.md\b"
    r"|\bADR-\d{3}\b|context-mode-review|\bVISION\.md\b|\bROADMAP\.md\b|shared/design"
)
# Files another change is rewriting at the same time: they still cite outside documents and are
# pointed at docs/ there. An entry must still hold such a reference (or a broken docs path), so
# the list can only shrink; empty it when those files are fixed.
NOT_YET_POINTED_AT_DOCS: set[str] = set()
# A docs page (or bench/README.md) named in text, optionally with an anchor or a quoted section.
DOCS_PATH = re.compile(r'(?<![\w./-])((?:docs/[\w./-]+?|bench/README)\.md)(?:#([\w-]+))?(?:,\s*"([^"]+)")?')
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
FENCE = re.compile(r"^\s*(```|~~~)")


def text_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in relative.parts) or not path.is_file():
            continue
        if path.name in SKIP_FILES or path.suffix not in TEXT_SUFFIXES:
            continue
        if path.suffix == "" and relative.parts[0] not in {"scripts", ".ci"} and path.name != "justfile":
            continue
        yield path


@cache
def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of what a file says to a reader: in Python its comments and docstrings
    (a path in a string literal is test data), in Markdown the text outside code (a path in code
    is an example), elsewhere every line."""
    text = read(path)
    if path.suffix == ".py":
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                value = body[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    for offset, line in enumerate(value.value.splitlines()):
                        yield body[0].lineno + offset, line
    elif path.suffix == ".md":
        in_code = False
        for number, line in enumerate(text.splitlines(), 1):
            if FENCE.match(line):
                in_code = not in_code
            elif not in_code:
                yield number, re.sub(r"`[^`]*`", " ", line)
    else:
        yield from enumerate(text.splitlines(), 1)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def slug(heading: str) -> str:
    """The anchor GitHub (and MkDocs' `toc` with its GitHub slugifier) gives a heading."""
    text = re.sub(r"`|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return "".join(char for char in text if char.isalnum() or char in " -_").replace(" ", "-")


@cache
def page(path: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """A Markdown page's anchors (duplicates numbered as GitHub does) and the names a quoted
    section may start: its headings and its bold lead-ins, lower-cased."""
    anchors: dict[str, int] = {}
    names: list[str] = []
    in_code = False
    for line in read(path).splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = anchors.get(base)
            anchors[base] = 0 if count is None else count + 1
            if count is not None:
                anchors[f"{base}-{count + 1}"] = 0
            names.append(heading.group(2).replace("`", "").lower())
        names.extend(bold.lower() for bold in BOLD.findall(line))
    return frozenset(anchors), tuple(names)


def problems_with(target: Path, anchor: str | None, section: str | None) -> str | None:
    if not target.exists():
        return "does not exist"
    if target.suffix != ".md" or not target.is_file():
        return None
    anchors, names = page(target)
    if anchor and anchor not in anchors:
        return f"has no heading with the anchor #{anchor}"
    if section and not any(name.startswith(section.lower()) for name in names):
        return f'has no heading or bold lead-in "{section}"'
    return None


def test_nothing_cites_a_design_document_outside_the_repository() -> None:
    found = []
    for path in text_files():
        if rel(path) in NOT_YET_POINTED_AT_DOCS or path == Path(__file__).resolve():  # this file names them
            continue
        for number, line in enumerate(read(path).splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{rel(path)}:{number}: {line.strip()[:100]}")
    assert found == [], "cite the design record in docs/ (contracts.md, adr/) instead:\n" + "\n".join(found)


def test_the_files_still_waiting_to_be_pointed_at_docs_still_need_it() -> None:
    """Once a listed file cites only docs/, it leaves the list (and the list, empty, can go)."""
    done = []
    for name in sorted(NOT_YET_POINTED_AT_DOCS):
        path = ROOT / name
        text = read(path) if path.exists() else ""
        broken = any(
            problems_with(ROOT / match.group(1), match.group(2), match.group(3)) for match in DOCS_PATH.finditer(text)
        )
        if not OUTSIDE.search(text) and not broken:
            done.append(name)
    assert done == [], f"remove from NOT_YET_POINTED_AT_DOCS: {done}"


def test_every_docs_path_named_in_code_and_docs_exists() -> None:
    broken = []
    for path in text_files():
        if rel(path) in NOT_YET_POINTED_AT_DOCS:
            continue
        for number, line in prose(path):
            for match in DOCS_PATH.finditer(line):
                why = problems_with(ROOT / match.group(1), match.group(2), match.group(3))
                if why:
                    broken.append(f"{rel(path)}:{number}: {match.group(0)} {why}")
    assert broken == [], "\n".join(broken)


def test_every_relative_markdown_link_resolves() -> None:
    broken = []
    for path in text_files():
        if path.suffix != ".md":
            continue
        in_code = False
        for number, line in enumerate(read(path).splitlines(), 1):
            if FENCE.match(line):
                in_code = not in_code
            if in_code:
                continue
            for target in MD_LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, …
                    continue
                link, _, anchor = target.partition("#")
                resolved = (path.parent / link).resolve() if link else path
                why = problems_with(resolved, anchor or None, None)
                if why:
                    broken.append(f"{rel(path)}:{number}: ({target}) {why}")
    assert broken == [], "\n".join(broken)


ADR_DIR = ROOT / "docs" / "adr"
ADR_NAME = re.compile(r"^(\d{4})-[a-z0-9-]+\.md$")


def test_decision_records_are_numbered_in_sequence_and_listed() -> None:
    records = sorted(path for path in ADR_DIR.glob("*.md") if path.name != "README.md")
    assert records, "docs/adr/ holds the decision records"
    numbers = []
    for path in records:
        match = ADR_NAME.match(path.name)
        assert match, f"{rel(path)}: name it NNNN-what-was-decided.md"
        numbers.append(int(match.group(1)))
        lines = read(path).splitlines()
        assert lines[0].startswith(f"# {match.group(1)}. "), f"{rel(path)}: the title is `# {match.group(1)}. …`"
        assert any(line.startswith("Status: ") for line in lines[:5]), (
            f"{rel(path)}: a `Status: …` line under the title"
        )
    assert numbers == list(range(1, len(numbers) + 1)), "records are numbered 0001, 0002, … without gaps"
    index = read(ADR_DIR / "README.md")
    missing = [path.name for path in records if f"]({path.name})" not in index]
    assert missing == [], f"list these in docs/adr/README.md: {missing}"


@pytest.mark.parametrize("page_name", ["contracts.md", "adr/README.md"])
def test_the_design_record_is_linked_from_the_docs_index(page_name: str) -> None:
    assert f"]({page_name})" in read(ROOT / "docs" / "index.md")
