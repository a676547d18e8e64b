"""CLAUDE.md drift (docs/adr/0012-claude-md-drift-is-reported.md): what the store knows that the
project's CLAUDE.md does not say, and what CLAUDE.md still says that the store has superseded.

Compared: the current high-confidence (explicit or reinforced) decisions and conventions of the
project against the statements of `CLAUDE.md` and `.claude/CLAUDE.md` at the project root, and of
every other instruction file of the project (`AGENTS.md` at any depth, Copilot, Cursor rules…:
`learn.discover.instruction_files`).

* missing: a current record no statement of an instruction file covers; a record `learn` took
  from an instruction file that is still there is in it, by definition, and never missing;
* contradicted: a superseded record whose statement is still written in CLAUDE.md (and not
  struck out).

Additions go into the file the user names (`CLAUDE.md` by default), never through a link: when
that file is a link (`CLAUDE.md → AGENTS.md`), nothing is proposed for it and `target_note`
says so.

Matching is lexical (stdlib only: the MCP server and the CLI call this without the embeddings
extra), so it is deliberately conservative and explainable: a statement covers a record when it
shares enough of the record's *distinctive* words (IDF-weighted over CLAUDE.md and the records),
or carries the record's `<!-- agentctx:ID -->` marker, which `agentctx sync --apply` writes next
to every line it adds. Nothing here writes CLAUDE.md except `apply`, which the CLI calls only
after the developer confirmed the diff.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentctx_store.bounded import Refused, read_repo_text, refuse_links
from agentctx_store.drift.text import (
    HEADING,
    SENTENCE_END,
    STATEMENT_CHARS,
    Statement,
    idf,
    match_score,
    parse_statements,
    record_terms,
)
from agentctx_store.errors import ValidationError
from agentctx_store.files import atomic_write
from agentctx_store.projects import Project
from agentctx_store.records import Record
from agentctx_store.store import Store

CLAUDE_FILES = ("CLAUDE.md", ".claude/CLAUDE.md")
DRIFT_TYPES = ("decision", "convention")
HIGH_CONFIDENCE = ("explicit", "reinforced")
# A statement covers a record from this match score on (0..1); see docs/consolidation.md.
STATED_THRESHOLD = 0.45
SECTION_HEADING = "## Decisions and conventions (from agentctx)"


@dataclass(frozen=True, kw_only=True)
class MissingEntry:
    record_id: str
    type: str
    title: str
    statement: str  # the line `sync --apply` adds
    drift_score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.record_id,
            "type": self.type,
            "title": self.title,
            "statement": self.statement,
            "drift_score": round(self.drift_score, 3),
        }


@dataclass(frozen=True, kw_only=True)
class ContradictedEntry:
    record_id: str  # the superseded record still written in CLAUDE.md
    type: str
    title: str
    superseded_by: str  # the current head of its chain
    current_title: str
    file: str
    line: int  # 1-based
    text: str
    drift_score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.record_id,
            "type": self.type,
            "title": self.title,
            "superseded_by": self.superseded_by,
            "current_title": self.current_title,
            "file": self.file,
            "line": self.line,
            "text": self.text,
            "drift_score": round(self.drift_score, 3),
        }


@dataclass(frozen=True, kw_only=True)
class DriftReport:
    project_id: str
    root: Path
    files: dict[Path, str]  # existing CLAUDE.md files and their text at analysis time
    target: Path  # where additions go
    missing: list[MissingEntry] = field(default_factory=list[MissingEntry])
    contradicted: list[ContradictedEntry] = field(default_factory=list[ContradictedEntry])
    proposed: dict[Path, str] = field(default_factory=dict[Path, str])  # new text of each file that changes
    scores: dict[str, float] = field(default_factory=dict[str, float])  # record id → claudemd_drift_score
    target_note: str = ""  # why nothing is proposed for the target (it is a link)

    @property
    def candidates(self) -> int:
        return len(self.missing) + len(self.contradicted)

    @property
    def digest_candidates(self) -> int:
        """Candidates worth a digest hint: none while the project has no CLAUDE.md at all (a
        project may choose not to have one; `agentctx sync` still offers to create it)."""
        return self.candidates if self.files else 0

    @property
    def proposed_diff(self) -> str:
        parts: list[str] = []
        for path, new_text in self.proposed.items():
            old_text = self.files.get(path, "")
            name = _relative(path, self.root)
            parts.extend(
                difflib.unified_diff(
                    old_text.splitlines(keepends=True),
                    _with_newline(new_text).splitlines(keepends=True),
                    fromfile=f"a/{name}" if path in self.files else "/dev/null",
                    tofile=f"b/{name}",
                )
            )
        return "".join(line if line.endswith("\n") else line + "\n" for line in parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "missing": [entry.to_dict() for entry in self.missing],
            "contradicted": [entry.to_dict() for entry in self.contradicted],
            "proposed_diff": self.proposed_diff,
            "files": [_relative(path, self.root) for path in self.files],
            "target": _relative(self.target, self.root),
            "target_note": self.target_note,
            "candidates": self.candidates,
        }


def report(store: Store, project: Project) -> dict[str, Any]:
    """The drift report as plain data (what `ctx_sync_claudemd` returns). Read-only."""
    return analyse(store, project).to_dict()


def analyse(store: Store, project: Project, *, target: str | None = None) -> DriftReport:
    """Compare the project's current decisions and conventions with its instruction files.
    `target` is the file additions go to (project-relative; default the first CLAUDE.md that
    exists, else `CLAUDE.md`).

    Raises:
        ValidationError: `target` is outside the project.
    """
    from agentctx_store.learn.discover import instruction_files

    root = Path(project.root)
    files = read_claude_files(root)
    if target is not None:
        chosen = Path(os.path.normpath(root / target))
        if chosen != root and root not in chosen.parents:
            raise ValidationError(f"{target}: not a file of this project; name a file inside {root}.")
        if chosen not in files:
            with contextlib.suppress(OSError):
                files[chosen] = read_repo_text(root, chosen)
    else:
        chosen = next(iter(files), root / CLAUDE_FILES[0])
    note = ""
    if os.path.islink(chosen):
        note = (
            f"{_relative(chosen, root)} is a link; agentctx writes only a file of its own: "
            "name one with `agentctx sync --file PATH`."
        )
    statements = [statement for path, text in files.items() for statement in parse_statements(path, text)]
    others = [
        statement
        for path, text in instruction_files(root).items()
        if path not in files and os.path.realpath(path) not in {os.path.realpath(known) for known in files}
        for statement in parse_statements(path, text)
    ]
    present = _learned_from_instructions(store, project, root)
    current = [
        record
        for record in store.list_records(project, types=DRIFT_TYPES, scope="project")
        if record.confidence in HIGH_CONFIDENCE
    ]
    superseded = [
        record
        for record in store.list_records(project, types=DRIFT_TYPES, scope="project", include_superseded=True)
        if record.superseded_at is not None
    ]
    weights = idf([s.terms for s in (*statements, *others)] + [record_terms(r) for r in (*current, *superseded)])
    struck = _contradicted(store, project, superseded, statements, weights)
    struck_keys = {statement.key for _entry, statement in struck}
    standing = [statement for statement in statements if statement.key not in struck_keys] + others
    scores: dict[str, float] = {entry.record_id: 1.0 for entry, _statement in struck}
    missing: list[MissingEntry] = []
    for record in sorted(current, key=lambda item: item.record_id):
        if record.record_id in present:
            scores[record.record_id] = 0.0
            continue
        best = max((match_score(record, s, weights) for s in standing), default=0.0)
        scores[record.record_id] = round(1.0 - best, 4)
        if best < STATED_THRESHOLD:
            missing.append(
                MissingEntry(
                    record_id=record.record_id,
                    type=record.type,
                    title=record.title,
                    statement=statement_line(record),
                    drift_score=1.0 - best,
                )
            )
    return DriftReport(
        project_id=project.project_id,
        root=root,
        files=files,
        target=chosen,
        missing=missing,
        contradicted=[entry for entry, _statement in struck],
        proposed={
            path: text
            for path, text in _propose(files, chosen, missing, struck).items()
            if not os.path.islink(path)  # never written through a link
        },
        scores=scores,
        target_note=note,
    )


def _learned_from_instructions(store: Store, project: Project, root: Path) -> set[str]:
    """Records `learn` took from an instruction file that is still there: already in it."""
    from agentctx_store.anchors import anchored_records
    from agentctx_store.learn.discover import instruction_why

    present: set[str] = set()
    for record, anchors in anchored_records(store, project):
        if record.source != "learn":
            continue
        for anchor in anchors:
            parts = tuple(anchor.path.split("/"))
            if instruction_why(parts) is not None and (root / anchor.path).exists():
                present.add(record.record_id)
                break
    return present


def _contradicted(
    store: Store,
    project: Project,
    superseded: Sequence[Record],
    statements: Sequence[Statement],
    weights: dict[str, float],
) -> list[tuple[ContradictedEntry, Statement]]:
    """Superseded records still stated: by their own marker, or matched better than by their
    current head and on words the head no longer has. Newest superseded first; one statement
    is attributed to one record."""
    found: list[tuple[ContradictedEntry, Statement]] = []
    used: set[tuple[str, int, int]] = set()
    for record in sorted(superseded, key=lambda item: (item.superseded_at or "", item.record_id), reverse=True):
        head = store.head_of(project, record.record_id)
        if head is None or head.superseded_at is not None:
            continue
        distinctive = record_terms(record) - record_terms(head)
        best: tuple[float, Statement] | None = None
        for statement in statements:
            if statement.key in used or head.record_id in statement.record_ids:
                continue
            if record.record_id in statement.record_ids:
                score = 1.0
            else:
                score = match_score(record, statement, weights)
                if score < STATED_THRESHOLD or score <= match_score(head, statement, weights):
                    continue
                if distinctive and not (distinctive & statement.terms):
                    continue
            if best is None or score > best[0]:
                best = (score, statement)
        if best is None:
            continue
        score, statement = best
        used.add(statement.key)
        entry = ContradictedEntry(
            record_id=record.record_id,
            type=record.type,
            title=record.title,
            superseded_by=head.record_id,
            current_title=head.title,
            file=str(statement.path),
            line=statement.line,
            text=statement.text,
            drift_score=score,
        )
        found.append((entry, statement))
    return sorted(found, key=lambda pair: (pair[0].file, pair[1].spans))


def read_claude_files(root: Path) -> dict[Path, str]:
    """The project's CLAUDE.md files that exist, root one first, with their text: read bounded,
    only inside the repository's real tree (a `CLAUDE.md` linked out of it is not read; `apply`
    never writes through a link)."""
    files: dict[Path, str] = {}
    for name in CLAUDE_FILES:
        path = root / name
        try:
            files[path] = read_repo_text(root, name)
        except OSError:  # missing, unreadable, not UTF-8, or refused (bounded.Refused)
            continue
    return files


# -- proposing and applying ---------------------------------------------------------------


def statement_line(record: Record) -> str:
    """The bullet `sync --apply` writes for a missing record, with its marker."""
    body = " ".join(record.body.split()).split("Why:", 1)[0].strip()
    first = SENTENCE_END.split(body, maxsplit=1)[0] if body else ""
    if len(first) > STATEMENT_CHARS:
        first = first[: STATEMENT_CHARS - 1].rsplit(" ", 1)[0] + "…"
    title = record.title.rstrip(". ")
    text = f"- **{title}.**" + (f" {first}" if first and first.rstrip(". ") != title else "")
    return f"{text} <!-- agentctx:{record.record_id} -->"


def _propose(
    files: dict[Path, str],
    target: Path,
    missing: Sequence[MissingEntry],
    struck: Sequence[tuple[ContradictedEntry, Statement]],
) -> dict[Path, str]:
    proposed: dict[Path, str] = {}
    for path, text in files.items():
        edits = [(entry, statement) for entry, statement in struck if statement.path == path]
        if not edits:
            continue
        lines = text.splitlines()
        # right to left, so earlier columns on a line stay valid
        spans = sorted(
            ((span, entry, span == statement.spans[-1]) for entry, statement in edits for span in statement.spans),
            key=lambda item: (item[0][0], item[0][1]),
            reverse=True,
        )
        for (index, start, end), entry, last in spans:
            lines[index] = _strike(lines[index], start, end, entry if last else None)
        proposed[path] = "\n".join(lines) + "\n"
    if missing:
        base = proposed.get(target, files.get(target, ""))
        proposed[target] = _add_section(base, [entry.statement for entry in missing])
    return proposed


def _strike(line: str, start: int, end: int, entry: ContradictedEntry | None) -> str:
    """Wrap `line[start:end]` in `~~`, with a note after the statement's last piece."""
    segment = line[start:end]
    stripped = segment.rstrip()
    if not stripped.strip():
        return line
    note = f" *(superseded by {entry.superseded_by}: {entry.current_title})*" if entry else ""
    return f"{line[:start]}~~{stripped}~~{note}{segment[len(stripped) :]}{line[end:]}"


def _add_section(text: str, bullets: Sequence[str]) -> str:
    lines = text.splitlines()
    if SECTION_HEADING in (line.strip() for line in lines):
        start = [line.strip() for line in lines].index(SECTION_HEADING)
        end = start + 1
        while end < len(lines) and not HEADING.match(lines[end]):
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = list(bullets)
        return "\n".join(lines) + "\n"
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        lines.append("")
    lines.extend([SECTION_HEADING, "", *bullets])
    return "\n".join(lines) + "\n"


def apply(drift: DriftReport) -> list[Path]:
    """Write the proposed CLAUDE.md changes (only ever after the developer confirmed them).

    Raises:
        ValidationError: a CLAUDE.md file changed since the report was made.
    """
    for path in drift.proposed:
        try:
            refuse_links(drift.root, path)
        except Refused as exc:
            raise ValidationError(f"{exc}; agentctx writes CLAUDE.md only as a file of its own.") from None
        try:
            now = read_repo_text(drift.root, path)
        except OSError:
            now = None
        if now != drift.files.get(path):
            raise ValidationError(f"{str(path)!r} changed since the drift report was made; run `agentctx sync` again.")
    written: list[Path] = []
    for path, text in drift.proposed.items():
        atomic_write(path, _with_newline(text))
        written.append(path)
    return written


def write_scores(store: Store, project: Project, drift: DriftReport) -> int:
    """Store `claudemd_drift_score` (derived: docs/contracts.md#stored-inferred-derived) on the
    project's decisions and conventions: 1 − best match for current ones, 1.0 for superseded ones
    still written, 0.0 for every other record of those types. Returns how many rows changed."""
    return store.set_drift_scores(project, drift.scores)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


__all__ = [
    "ContradictedEntry",
    "DriftReport",
    "MissingEntry",
    "analyse",
    "apply",
    "report",
    "write_scores",
]
