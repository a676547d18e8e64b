"""Anchors: where a record came from in the project's own files.

An anchor is a project-relative file path (forward slashes), optionally narrowed to a line
range or a symbol name, and the hash of the text it covered when the record was made. `agentctx
learn` anchors every record it writes to the lines it read them from, and re-runs compare the
hashes to tell which records' sources changed; freshness checks use the same rows to notice
that the evidence behind a record has moved on.

Anchors are kept in `record_anchors` (migration `m007_record_anchors`); deleting a record drops
its anchors with it. A superseded record keeps its anchors (its history says where it came from).
"""

from __future__ import annotations

from agentctx_store._frozen import frozen
from agentctx_store.errors import ValidationError
from agentctx_store.projects import Project
from agentctx_store.records import Record, utc_now
from agentctx_store.rows import RECORD_COLUMNS, row_to_record, visible_namespaces
from agentctx_store.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = [
    "Anchor",
    "add_anchors",
    "anchored_records",
    "anchors_of",
    "content_hash",
    "normalize_anchor_path",
    "replace_anchors",
]

_ANCHOR_COLUMNS = "path, line_start, line_end, symbol, content_hash"


@frozen
class Anchor:
    """One piece of evidence: `path` (project-relative), `line_start`/`line_end` (1-based,
    inclusive) or `symbol`, and `content_hash` of what it covered (see `content_hash`)."""

    path: str
    content_hash: str
    line_start: int | None = None
    line_end: int | None = None
    symbol: str | None = None


def content_hash(text: str) -> str:
    """`sha256:<hex>` of the text with line endings made `\\n` and trailing blanks trimmed from
    each line and from the ends, so a file re-saved on Windows or re-indented at line ends
    keeps its hash, and any change to its words does not."""
    import hashlib

    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    canonical = "\n".join(line.rstrip() for line in lines).strip("\n")
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def normalize_anchor_path(path: str) -> str:
    """A project-relative path with forward slashes and no `./`.

    Raises:
        ValidationError: the path is empty, absolute, or leaves the project (`..`).
    """
    text = path.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if not text:
        raise ValidationError("An anchor path is empty; give the file's path relative to the project root.")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ValidationError(f"Anchor path {path!r} is absolute; give it relative to the project root.")
    if ".." in text.split("/"):
        raise ValidationError(f"Anchor path {path!r} leaves the project; give a path inside it.")
    return text


def _check(anchor: Anchor) -> Anchor:
    path = normalize_anchor_path(anchor.path)
    start, end = anchor.line_start, anchor.line_end
    if (start is None) != (end is None):
        raise ValidationError(f"Anchor {path}: give both line_start and line_end, or neither.")
    if start is not None and end is not None and not 1 <= start <= end:
        raise ValidationError(f"Anchor {path}: lines {start}-{end} are not a range (1-based, start ≤ end).")
    if not anchor.content_hash.strip():
        raise ValidationError(f"Anchor {path}: the content hash is empty; use anchors.content_hash(text).")
    symbol = anchor.symbol.strip() if anchor.symbol else None
    return Anchor(path=path, content_hash=anchor.content_hash.strip(), line_start=start, line_end=end, symbol=symbol)


def add_anchors(store: Store, project: Project, record_id: str, anchors: Iterable[Anchor]) -> list[Anchor]:
    """Attach `anchors` to a record this project can see; returns them as stored.

    Raises:
        RecordNotFound: no such record in this project.
        ValidationError: an anchor path is absolute or leaves the project, or a range is wrong.
    """
    record = store.get(project, record_id)
    checked = [_check(anchor) for anchor in anchors]
    now = utc_now()
    with store.transaction() as conn:
        conn.executemany(
            f"""INSERT INTO record_anchors (record_id, project_id, {_ANCHOR_COLUMNS}, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                (record.record_id, record.project_id, a.path, a.line_start, a.line_end, a.symbol, a.content_hash, now)
                for a in checked
            ],
        )
    return checked


def replace_anchors(store: Store, project: Project, record_id: str, anchors: Iterable[Anchor]) -> list[Anchor]:
    """Make `anchors` the record's only anchors (one transaction)."""
    record = store.get(project, record_id)
    with store.transaction() as conn:
        conn.execute("DELETE FROM record_anchors WHERE record_id = ?", (record.record_id,))
        return add_anchors(store, project, record.record_id, anchors)


def anchors_of(store: Store, project: Project, record_id: str) -> list[Anchor]:
    """A record's anchors, in the order they were added.

    Raises:
        RecordNotFound: no such record in this project.
    """
    record = store.get(project, record_id)
    rows = store.conn.execute(
        f"SELECT {_ANCHOR_COLUMNS} FROM record_anchors WHERE record_id = ? ORDER BY anchor_id", (record.record_id,)
    ).fetchall()
    return [_anchor(row) for row in rows]


def anchored_records(
    store: Store,
    project: Project,
    *,
    paths: Sequence[str] | None = None,
    include_superseded: bool = False,
) -> list[tuple[Record, list[Anchor]]]:
    """The project's records that have anchors, each with its anchors, oldest record first.

    `paths` keeps only records anchored to one of those files. Superseded records are left out
    unless `include_superseded`. Another project's records never appear.
    """
    sql = f"""SELECT a.record_id, a.{_ANCHOR_COLUMNS.replace(", ", ", a.")}
              FROM record_anchors a JOIN records r ON r.id = a.record_id
              WHERE a.project_id IN (?, ?) AND r.project_id IN (?, ?)"""
    params: list[object] = [*visible_namespaces(project), *visible_namespaces(project)]
    if not include_superseded:
        sql += " AND r.superseded_at IS NULL"
    if paths is not None:
        wanted = [normalize_anchor_path(path) for path in paths]
        if not wanted:
            return []
        sql += (
            f" AND a.record_id IN (SELECT record_id FROM record_anchors WHERE path IN ({', '.join('?' * len(wanted))}))"
        )
        params += wanted
    sql += " ORDER BY r.recorded_at, r.id, a.anchor_id"
    grouped: dict[str, list[Anchor]] = {}
    for row in store.conn.execute(sql, params):
        grouped.setdefault(row[0], []).append(_anchor(row, offset=1))
    if not grouped:
        return []
    ids = list(grouped)
    records: dict[str, Record] = {}
    for start in range(0, len(ids), 500):  # SQLite's variable limit
        chunk = ids[start : start + 500]
        rows = store.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE id IN ({', '.join('?' * len(chunk))})", chunk
        )
        records.update((row["id"], row_to_record(row)) for row in rows)
    return [(records[record_id], anchors) for record_id, anchors in grouped.items() if record_id in records]


def _anchor(row: Sequence[Any], offset: int = 0) -> Anchor:
    path, start, end, symbol, digest = row[offset : offset + 5]
    return Anchor(
        path=str(path),
        content_hash=str(digest),
        line_start=int(start) if start is not None else None,
        line_end=int(end) if end is not None else None,
        symbol=str(symbol) if symbol is not None else None,
    )
