"""Stale records, offline: scanning every anchored record of a project, confirming or
re-anchoring one, anchoring new records to the files they name, finding a symbol that moved.

Used by `agentctx stale`, `status`, consolidation (the digest's stale line, re-verification),
extraction (`anchor_from_mentions`) and the dashboard. The per-prompt half, and the helpers both
share (an anchor's state against the file now, storing states), are `agentctx_store.freshness`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentctx_store.anchors import Anchor, anchored_records, anchors_of
from agentctx_store.bounded import MAX_SOURCE_FILE, read_repo_bytes, read_repo_text
from agentctx_store.errors import ValidationError
from agentctx_store.freshness import (
    MISSING,
    WHOLE_FILE_BYTES,
    AnchorRow,
    Staleness,
    anchor_record,
    anchor_rows,
    anchor_state,
    capture,
    checkable,
    format_spec,
    group_states,
    store_states,
    symbol_block,
)
from agentctx_store.projects import Project
from agentctx_store.records import Record
from agentctx_store.store import Store

# `moved` looks at most at this many files, skipping these folders and anything bigger.
FOLLOW_MAX_FILES = 5000
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox", "target"})


@dataclass(frozen=True, kw_only=True)
class StaleRecord:
    """A current record whose anchors moved, for `agentctx stale`: the record, what moved, and
    for each symbol that left its file, the files that define it now (offered as re-anchors)."""

    record: Record
    staleness: Staleness
    anchors: list[Anchor] = field(default_factory=list[Anchor])
    moved: dict[str, list[str]] = field(default_factory=dict[str, list[str]])  # `PATH:SYMBOL` → [`NEWPATH:SYMBOL`, …]


def scan(store: Store, project: Project, *, follow: bool = False, write: bool = True) -> list[StaleRecord]:
    """Check every anchored current record of the project, oldest first; the stale ones.

    With `write`, each anchor's state is stored (`changed`, `missing`, or NULL) and anchors whose
    text still matches get the file's current size and mtime, so the next prompt only stats.
    With `follow`, a symbol no longer defined where it was is looked for in the project (`moved`).
    """
    root = project.root
    if not checkable(root):
        return []
    stats: dict[str, os.stat_result | None] = {}
    result: list[StaleRecord] = []
    updates: list[tuple[int, str | None, os.stat_result | None]] = []
    own = [
        (record, anchors)
        for record, anchors in anchored_records(store, project)
        if record.project_id == project.project_id
    ]
    rows_of: dict[str, list[AnchorRow]] = {}
    for row in anchor_rows(store, [record.record_id for record, _ in own]):  # one query per 500 records
        rows_of.setdefault(row.record_id, []).append(row)
    for record, anchors in own:
        rows = rows_of.get(record.record_id, [])
        states = {index: anchor_state(root, row, stats) for index, row in enumerate(rows)}
        updates += [(row.anchor_id, *states[index]) for index, row in enumerate(rows)]
        found = group_states(rows, {index: state for index, (state, _) in states.items()})
        if record.record_id not in found:
            continue
        moved: dict[str, list[str]] = {}
        if follow:
            for index, row in enumerate(rows):
                if row.symbol and states[index][0] is not None:
                    places = find_symbol(root, row.symbol, skip=row.path if states[index][0] == MISSING else None)
                    places = [place for place in places if place != row.path or states[index][0] == MISSING]
                    if places and row.path in places:
                        continue  # still defined where it was: changed in place, not moved
                    if places:
                        moved[f"{row.path}:{row.symbol}"] = [f"{place}:{row.symbol}" for place in places]
        result.append(StaleRecord(record=record, staleness=found[record.record_id], anchors=anchors, moved=moved))
    if write and updates:
        store_states(store, updates)
    return result


def counts(store: Store, project: Project) -> tuple[int, int]:
    """(current records with a changed or missing anchor, those of them whose anchors are all
    gone), as the last `scan` stored them: no file is read."""
    row = store.conn.execute(
        """SELECT count(*), coalesce(sum(gone), 0) FROM (
               SELECT a.record_id, min(coalesce(a.state, '')) = 'missing' AS gone
               FROM record_anchors a JOIN records r ON r.id = a.record_id
               WHERE a.project_id = ? AND r.superseded_at IS NULL
               GROUP BY a.record_id HAVING max(a.state IS NOT NULL) = 1)""",
        (project.project_id,),
    ).fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def confirm(store: Store, project: Project, record_id: str, specs: Sequence[str] = ()) -> list[Anchor]:
    """The fact still holds: re-hash the record's anchors from the files as they are now, dropping
    anchors whose file or symbol is gone; or, with `specs`, anchor it to those instead (a
    re-anchor, e.g. to where a symbol moved). Returns the anchors it keeps.

    Raises:
        RecordNotFound: no such record in this project.
        ValidationError: a spec cannot be anchored.
    """
    if specs:
        return anchor_record(store, project, record_id, specs, replace=True)
    kept = still_there(project, [format_spec(anchor) for anchor in anchors_of(store, project, record_id)])
    return anchor_record(store, project, record_id, kept, replace=True)  # gone ones are dropped


def still_there(project: Project, specs: Iterable[str]) -> list[str]:
    """The specs that can still be anchored now (their file, range or symbol is there)."""
    root = project.root
    kept: list[str] = []
    for spec in specs:
        try:
            capture(root, spec)
        except ValidationError:
            continue
        kept.append(spec)
    return kept


def carry_anchors(store: Store, project: Project, old_id: str, new_id: str) -> tuple[list[str], list[str]]:
    """Anchor `new_id` (a record that supersedes `old_id`) where `old_id` was anchored, hashed as
    the files are now, so a later edit of those files still marks the fact. Returns (the specs
    anchored, the old specs left out because their file, range or symbol is gone)."""
    specs = [format_spec(anchor) for anchor in anchors_of(store, project, old_id)]
    kept = still_there(project, specs)
    anchored = anchor_record(store, project, new_id, kept) if kept else []
    return [format_spec(anchor) for anchor in anchored], [spec for spec in specs if spec not in kept]


def anchor_from_mentions(store: Store, project: Project, record_ids: Iterable[str], files: Iterable[str]) -> int:
    """Anchor records to the files they name among `files` (project-relative paths, e.g. those a
    session edited): to a symbol the record names (`` `name` `` or `name()`) that the file
    defines, else to the whole file when it is small. Records that already have anchors are
    left alone. Returns how many anchors were added. Offline (extraction), not the prompt path."""
    names = [name for name in dict.fromkeys(files) if name and not os.path.isabs(name)]
    if not names:
        return 0
    root = project.root
    added = 0
    for record_id in record_ids:
        record = store.get(project, record_id)
        if record.scope != "project" or anchors_of(store, project, record_id):
            continue
        text = f"{record.title}\n{record.body}"
        symbols = set(re.findall(r"`([A-Za-z_][\w.]*)(?:\(\))?`", text)) | set(
            re.findall(r"\b([A-Za-z_]\w*)\(\)", text)
        )
        specs: list[str] = []
        for name in names:
            base = name.rsplit("/", 1)[-1]
            if name not in text and not (base != name and "." in base and len(base) >= 6 and base in text):
                continue
            try:
                content = read_repo_text(root, name, limit=MAX_SOURCE_FILE, errors="replace")
            except OSError:  # missing, unreadable, or refused (a FIFO, a link out of the tree)
                continue
            defined = [symbol for symbol in sorted(symbols) if symbol_block(content, symbol) is not None]
            specs += [f"{name}:{symbol}" for symbol in defined]
            if not defined and len(content.encode("utf-8", errors="replace")) <= WHOLE_FILE_BYTES:
                specs.append(name)
        if specs:
            added += len(anchor_record(store, project, record.record_id, specs))
    return added


def find_symbol(root: str, symbol: str, *, skip: str | None = None) -> list[str]:
    """Project-relative paths of text files under `root` that define `symbol` (see
    `symbol_block`), at most FOLLOW_MAX_FILES files read, in path order; `skip` is left out."""
    name = symbol.rpartition(".")[2]
    found: list[str] = []
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for file_name in sorted(files):
            seen += 1
            if seen > FOLLOW_MAX_FILES:
                return found
            full = os.path.join(directory, file_name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            if relative == skip:
                continue
            try:
                data = read_repo_bytes(root, full, limit=4 * WHOLE_FILE_BYTES)
            except OSError:  # too large, unreadable, or refused (a FIFO, a link out of the tree)
                continue
            if b"\0" in data[:1024] or name.encode() not in data:
                continue
            if symbol_block(data.decode("utf-8", errors="replace"), name) is not None:
                found.append(relative)
    return found
