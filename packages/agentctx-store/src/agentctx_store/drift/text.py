"""Reading CLAUDE.md for drift detection: Markdown cut into statements, and a lexical match
score between a statement and a record (stdlib only; see docs/consolidation.md).

Statements: bullet items and headings whole, code lines one by one, paragraphs by sentence and
`;` clause, each with the (line, start, end) spans it covers so a proposal can strike exactly
that text. Struck-through text (`~~…~~`) and our own "superseded by" notes state nothing.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentctx_store.passages import stem
from agentctx_store.records import Record
from agentctx_store.retrieval import query_terms

STATEMENT_CHARS = 240

MARKER = re.compile(r"<!--\s*agentctx:([0-9A-Za-z]{26})\s*-->")
BULLET = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?")
_FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_STRUCK = re.compile(r"~~.*?~~", re.DOTALL)
_NOTE = re.compile(r"\*\(superseded by [0-9A-Za-z]{26}: [^)\n]*\)\*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_\[(])")
# A sentence or `;` clause of a paragraph: up to the end mark (kept) or the `;`.
_CLAUSE = re.compile(r"[^;]+?(?:[.!?](?=\s+[A-Z`*_~\[(]|\s*$)|;|$)")


@dataclass(frozen=True, kw_only=True)
class Statement:
    """One statement of a CLAUDE.md file: a bullet item, a sentence, a heading or a code line."""

    path: Path
    spans: tuple[tuple[int, int, int], ...]  # (0-based line, start column, end column)
    text: str
    terms: frozenset[str]
    record_ids: frozenset[str]  # agentctx markers inside it

    @property
    def line(self) -> int:
        return self.spans[0][0] + 1

    @property
    def key(self) -> tuple[str, int, int]:
        return (str(self.path), self.spans[0][0], self.spans[0][1])


def parse_statements(path: Path, text: str) -> list[Statement]:
    """Cut a Markdown file into statements: bullet items, headings and code lines whole,
    paragraphs by sentence (and `;` clause). Struck-through text (`~~…~~`) states nothing."""
    statements: list[Statement] = []
    lines = text.splitlines()
    in_fence = False
    block: list[int] = []  # line indexes of the current bullet item or paragraph
    is_item = False

    def flush() -> None:
        nonlocal block
        if block:
            statements.extend(_block_statements(path, lines, block, split=not is_item))
        block = []

    for index, line in enumerate(lines):
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence or HEADING.match(line):
            flush()
            if line.strip():
                statements.extend(_block_statements(path, lines, [index], split=False))
            continue
        if not line.strip():
            flush()
            continue
        if BULLET.match(line):
            flush()
            block, is_item = [index], True
            continue
        if not block:
            is_item = False
        block.append(index)
    flush()
    return [statement for statement in statements if statement.terms or statement.record_ids]


def _block_statements(path: Path, lines: Sequence[str], block: Sequence[int], *, split: bool) -> list[Statement]:
    """Statements of one block, each with the (line, start, end) spans it covers."""
    joined = ""
    starts: list[tuple[int, int, int]] = []  # (offset in joined, line index, column in line)
    for index in block:
        line = lines[index].rstrip()
        prefix = BULLET.match(line)
        column = prefix.end() if prefix else len(line) - len(line.lstrip())
        if joined:
            joined += " "
        starts.append((len(joined), index, column))
        joined += line[column:]
    # struck-out text and our own "superseded by" notes state nothing: blank them, offsets kept
    joined = _NOTE.sub(lambda match: " " * len(match.group()), _STRUCK.sub(lambda m: " " * len(m.group()), joined))
    pieces = [(0, len(joined))]
    if split:
        pieces = [(m.start(), m.end()) for m in _CLAUSE.finditer(joined)]
    found: list[Statement] = []
    for begin, end in pieces:
        while begin < end and joined[begin].isspace():
            begin += 1
        spans: list[tuple[int, int, int]] = []
        for position, (offset, index, column) in enumerate(starts):
            stop = starts[position + 1][0] - 1 if position + 1 < len(starts) else len(joined)
            low, high = max(begin, offset), min(end, stop)
            if low < high:
                spans.append((index, column + low - offset, column + high - offset))
        raw = joined[begin:end]
        if spans and raw.strip():
            found.append(_statement(path, tuple(spans), raw))
    return found


def _statement(path: Path, spans: tuple[tuple[int, int, int], ...], raw: str) -> Statement:
    text = MARKER.sub(" ", raw)
    cleaned = " ".join(text.replace("`", " ").replace("*", " ").split())
    return Statement(
        path=path,
        spans=spans,
        text=cleaned,
        terms=frozenset(terms_of(cleaned)),
        record_ids=frozenset(MARKER.findall(raw)),
    )


# -- matching -----------------------------------------------------------------------------


def terms_of(text: str) -> set[str]:
    return set(_terms_cached(text))


# Memoised: matching compares every record with every statement, and re-deriving the same
# terms per pair made a large project's report take seconds (bench/README.md#claudemd-drift).
@functools.lru_cache(maxsize=16384)
def _terms_cached(text: str) -> frozenset[str]:
    return frozenset(stem(term) for term in query_terms(text))


@functools.lru_cache(maxsize=16384)
def record_terms(record: Record) -> frozenset[str]:
    """The words that state a record: its title and the first sentences of its body."""
    body = " ".join(record.body.split())
    lead = body.split("Why:", 1)[0][:STATEMENT_CHARS]
    return frozenset(terms_of(record.title) | terms_of(lead))


def idf(documents: Sequence[Iterable[str]]) -> dict[str, float]:
    counts: Counter[str] = Counter()
    for document in documents:
        counts.update(set(document))
    total = max(1, len(documents))
    return {term: math.log(1.0 + total / count) for term, count in counts.items()}


def match_score(record: Record, statement: Statement, weights: dict[str, float]) -> float:
    """How well one statement states a record, 0..1.

    The mean of two weighted coverages: how much of the statement the record accounts for, and
    how much of the record's title the statement carries. A short CLAUDE.md line made of the
    record's rarest words scores high; a line sharing only common words does not. At least two
    shared words are required (or one when the statement has only one).
    """
    if record.record_id in statement.record_ids:
        return 1.0
    words = record_terms(record)
    shared = words & statement.terms
    if len(shared) < min(2, len(statement.terms)) or not shared:
        return 0.0
    title = terms_of(record.title) or set(words)

    def weight(terms: Iterable[str]) -> float:
        return sum(weights.get(term, 1.0) for term in terms)

    statement_cover = weight(shared) / max(weight(statement.terms), 1e-9)
    title_cover = weight(title & statement.terms) / max(weight(title), 1e-9)
    record_cover = weight(shared) / max(weight(words), 1e-9)
    return (statement_cover + max(title_cover, record_cover)) / 2
