"""Writing records read from a file (see `transfer`): checked against the record contract and the
store first, then written in one transaction, so a bad line leaves the store untouched.

Kept apart from `transfer` (rendering and parsing) to keep each module one job; `transfer`
re-exports the public names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentctx_store.errors import ValidationError
from agentctx_store.projects import GLOBAL_PROJECT_ID, Project
from agentctx_store.records import Record, check_fields, normalize_time, supersession_error, utc_now
from agentctx_store.rows import RECORD_COLUMNS, row_to_record, visible_namespaces
from agentctx_store.store import Store
from agentctx_store.ulid import is_ulid, new_ulid


@dataclass(frozen=True, kw_only=True)
class ImportItem:
    """One record read from a file, not yet validated against the store.

    `record_id` is a store id to keep (Markdown) or None (a new one is made). `ref` is the
    name other lines use in `supersedes` (the JSONL `id`, or the record id). `line` is where
    the record starts in the file, for error messages.
    """

    line: int
    ref: str | None
    record_id: str | None
    type: str
    title: str
    body: str
    scope: str = "project"
    confidence: str = "explicit"
    pinned: bool = False
    valid_from: str | None = None
    recorded_at: str | None = None
    superseded_at: str | None = None
    superseded_by: str | None = None  # a ref in this file or a store id
    supersedes: tuple[str, ...] = ()  # refs in this file or store ids
    source: str = "import"
    key: str | None = None
    reinforce_count: int = 0
    project: str | None = None  # the JSONL `project` field, kept for callers that map it
    client: str | None = None  # which client and hook produced it (the export's provenance)
    hook: str | None = None


@dataclass(frozen=True, kw_only=True)
class ImportReport:
    created: list[str] = field(default_factory=list[str])
    updated: list[str] = field(default_factory=list[str])
    unchanged: list[str] = field(default_factory=list[str])


def line_error(line: int, message: str) -> ValidationError:
    return ValidationError(f"Line {line}: {message}")


# -- import ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Planned:
    item: ImportItem
    record_id: str
    owner: str
    existing: Record | None


def _check_item(item: ImportItem) -> ImportItem:
    """The record contract (docs/contracts.md#records) on one item; returns it with trimmed text
    and UTC times."""
    try:
        title, body = check_fields(item.type, item.scope, item.confidence, item.source, item.title, item.body)
        times = {
            name: normalize_time(value) if value else None
            for name, value in (
                ("valid_from", item.valid_from),
                ("recorded_at", item.recorded_at),
                ("superseded_at", item.superseded_at),
            )
        }
    except ValidationError as exc:
        raise line_error(item.line, str(exc)) from None
    return replace(item, title=title, body=body, **times)


def import_items(store: Store, project: Project, items: Sequence[ImportItem], *, new_ids: bool = False) -> ImportReport:
    """Write `items` into `project` (global-scoped ones into `_global`), all or nothing.

    An item with a `record_id` already in the store updates that record in place (a hand
    edit); one that is unchanged is left alone, so importing the same file twice is a no-op.
    With `new_ids`, every record gets a fresh id (an export of another project imported
    here); supersession links inside the file follow the new ids.

    Raises:
        ValidationError: any item breaks the contract or names an unknown record; the
            message starts with `Line N:`. Nothing has been written.
    """
    if new_ids:
        items = [replace(item, record_id=None, ref=item.ref or item.record_id) for item in items]
    checked = [_check_item(item) for item in items]
    plan = _plan(store, project, checked)
    links = _supersession_links(store, project, plan)
    report = ImportReport()
    now = utc_now()
    with store.transaction() as conn:
        for planned in plan:
            row = _row(planned, links.get(planned.record_id), now)
            _note_origin(conn, planned, row["session_id"], now)
            if planned.existing is None:
                store.insert_row(row)
                report.created.append(planned.record_id)
            elif _differs(planned.existing, row) or _newly_superseded(planned.existing, row):
                columns = _UPDATABLE + (("superseded_at", "superseded_by") if row["superseded_by"] else ())
                store.rewrite(planned.record_id, {column: row[column] for column in columns}, when=now)
                report.updated.append(planned.record_id)
            else:
                report.unchanged.append(planned.record_id)
        planned_ids = {planned.record_id for planned in plan}
        for old_id, (new_id, when) in links.items():
            if old_id not in planned_ids:  # a stored record retired by a successor in the file
                store.mark_superseded(old_id, by=new_id, when=when)
            else:  # its row above carries the supersession already
                store.add_edge(new_id, old_id, "supersedes")
    store.dirty.update(planned.owner for planned in plan)
    if plan and project.project_id != GLOBAL_PROJECT_ID:
        store.remember_project(project)
    return report


_UPDATABLE = ("type", "title", "body", "scope", "project_id", "pinned", "confidence", "valid_from")


def _differs(existing: Record, row: dict[str, Any]) -> bool:
    current = {
        "type": existing.type,
        "title": existing.title,
        "body": existing.body,
        "scope": existing.scope,
        "project_id": existing.project_id,
        "pinned": int(existing.pinned),
        "confidence": existing.confidence,
        "valid_from": existing.valid_from,
    }
    return any(current[column] != row[column] for column in _UPDATABLE)


def _newly_superseded(existing: Record, row: dict[str, Any]) -> bool:
    """The file retires a record the store still has as current (a successor came with it).
    A file that does not mention a supersession never resurrects a retired record."""
    return existing.superseded_by is None and row["superseded_by"] is not None


def _plan(store: Store, project: Project, items: Sequence[ImportItem]) -> list[_Planned]:
    plan: list[_Planned] = []
    seen: dict[str, int] = {}
    matched: set[str] = set()
    content: dict[ContentKey, list[Record]] | None = None
    for item in items:
        owner = GLOBAL_PROJECT_ID if item.scope == "global" else project.project_id
        existing: Record | None = None
        record_id = item.record_id or new_ulid()
        if item.record_id is not None:
            if item.record_id in seen:
                raise line_error(
                    item.line, f"record {item.record_id} appears twice (first on line {seen[item.record_id]})."
                )
            row = store.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
            if row is not None:
                existing = row_to_record(row)
                if existing.project_id not in visible_namespaces(project):
                    raise line_error(
                        item.line,
                        f"record {record_id} belongs to another project; import with --new-ids to copy it here "
                        "as a new record (or remove its id).",
                    )
            seen[record_id] = item.line
        if item.ref is not None and item.record_id is None:
            if item.ref in seen:
                raise line_error(item.line, f"id {item.ref!r} appears twice (first on line {seen[item.ref]}).")
            seen[item.ref] = item.line
        if item.record_id is None and content is None:
            content = _by_content(store, project)
        if item.record_id is None and (same := _same_record(content or {}, owner, item, matched)) is not None:
            existing, record_id = same, same.record_id  # importing a JSONL file again is a no-op
            matched.add(record_id)
        plan.append(_Planned(item=item, record_id=record_id, owner=owner, existing=existing))
    return plan


ContentKey = tuple[str, str, str, str]  # (project_id, type, title, body)


def _by_content(store: Store, project: Project) -> dict[ContentKey, list[Record]]:
    """Every record this project can see, keyed by its content: one query, not one per line
    (a per-line lookup made re-importing 10K lines quadratic)."""
    index: dict[ContentKey, list[Record]] = {}
    rows = store.conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records WHERE project_id IN (?, ?) ORDER BY recorded_at",
        visible_namespaces(project),
    )
    for row in rows:
        index.setdefault((row["project_id"], row["type"], row["title"], row["body"]), []).append(row_to_record(row))
    return index


def _same_record(index: dict[ContentKey, list[Record]], owner: str, item: ImportItem, taken: set[str]) -> Record | None:
    """A stored record with exactly this type, title and body in the same namespace, if any."""
    candidates = index.get((owner, item.type, item.title, item.body), [])
    return next((record for record in candidates if record.record_id not in taken), None)


def _supersession_links(store: Store, project: Project, plan: Sequence[_Planned]) -> dict[str, tuple[str, str]]:
    """Predecessor record id → (successor record id, superseded_at), from both directions a
    file can state a link: `superseded_by` on the old record (Markdown) or `supersedes` on
    the new one (JSONL)."""
    by_ref = {planned.item.ref: planned for planned in plan if planned.item.ref is not None}
    by_id = {planned.record_id: planned for planned in plan}
    links: dict[str, tuple[str, str]] = {}

    def resolve(ref: str, line: int) -> str:
        if ref in by_ref:
            return by_ref[ref].record_id
        if ref.upper() in by_id:
            return ref.upper()
        if is_ulid(ref):
            row = store.conn.execute(
                "SELECT id FROM records WHERE id = ? AND project_id IN (?, ?)",
                (ref.upper(), *visible_namespaces(project)),
            ).fetchone()
            if row is not None:
                return str(row[0])
        raise line_error(line, f"{ref!r} is neither a record in this file nor one in this project.")

    def link(old_id: str, new_id: str, when: str, line: int) -> None:
        if old_id == new_id:
            raise line_error(line, "a record cannot supersede itself.")
        if old_id in links and links[old_id][0] != new_id:
            raise line_error(line, f"record {old_id} is superseded twice; a record has one successor.")
        links[old_id] = (new_id, when)

    for planned in plan:
        item = planned.item
        if item.superseded_by:
            when = item.superseded_at or item.recorded_at or utc_now()
            link(planned.record_id, resolve(item.superseded_by, item.line), when, item.line)
        for ref in item.supersedes:
            old_id = resolve(ref, item.line)
            old = by_id.get(old_id)
            old_valid = old.item.valid_from if old else None
            # a JSONL link has no time of its own: the successor's validity starts it
            when = max(filter(None, [item.valid_from, old_valid])) if (item.valid_from or old_valid) else utc_now()
            link(old_id, planned.record_id, when, item.line)
    for old_id, (new_id, _) in links.items():
        old_planned, new_planned = by_id.get(old_id), by_id.get(new_id)
        old_type, old_key = (old_planned.item.type, old_planned.item.key) if old_planned else _stored(store, old_id)
        new_type, new_key = (new_planned.item.type, new_planned.item.key) if new_planned else _stored(store, new_id)
        if (why := supersession_error(old_type, old_key, new_type, new_key)) is not None:
            planned = new_planned or old_planned
            line = planned.item.line if planned else 0
            raise line_error(line, f"{why}; record {old_id} cannot be superseded by this {new_type}.")
        stored = old_planned.existing.superseded_by if old_planned and old_planned.existing else None
        if old_planned is None:
            row = store.conn.execute("SELECT superseded_by FROM records WHERE id = ?", (old_id,)).fetchone()
            stored = row[0] if row else None
        if stored not in (None, new_id):
            line = new_planned.item.line if new_planned else old_planned.item.line if old_planned else 0
            raise line_error(line, f"record {old_id} is already superseded by {stored}; supersede the current head.")
    return links


def origin_session(planned: _Planned) -> str | None:
    """The session an imported record's provenance lives in (`agentctx_store.origin` reads it back):
    one per project, client and hook, so a re-export names the same client and hook."""
    item = planned.item
    if item.client is None:
        return None
    return f"imported-{planned.owner[:12]}-{item.client}" + (f"-{item.hook}" if item.hook else "")


def _note_origin(conn: Any, planned: _Planned, session_id: str | None, now: str) -> None:
    if planned.existing is not None or session_id is None:
        return
    meta = {"client": planned.item.client} | ({"hook": planned.item.hook} if planned.item.hook else {})
    conn.execute(
        "INSERT OR IGNORE INTO sessions(session_id, project_id, started_at, meta) VALUES (?, ?, ?, ?)",
        (session_id, planned.owner, now, json.dumps(meta)),
    )


def _stored(store: Store, record_id: str) -> tuple[str, str | None]:
    row = store.conn.execute("SELECT type, key FROM records WHERE id = ?", (record_id,)).fetchone()
    return (str(row[0]), row[1]) if row else ("", None)


def _row(planned: _Planned, link: tuple[str, str] | None, now: str) -> dict[str, Any]:
    item = planned.item
    existing = planned.existing
    return {
        "id": planned.record_id,
        "project_id": planned.owner,
        "type": item.type,
        "title": item.title,
        "body": item.body,
        "scope": item.scope,
        "pinned": int(item.pinned),
        "confidence": item.confidence,
        "reinforce_count": existing.reinforce_count if existing else item.reinforce_count,
        "valid_from": item.valid_from or (existing.valid_from if existing else now),
        "recorded_at": existing.recorded_at if existing else (item.recorded_at or now),
        "superseded_at": link[1] if link else None,
        "superseded_by": link[0] if link else None,
        "access_count": existing.access_count if existing else 0,
        "last_accessed": existing.last_accessed if existing else None,
        "score": existing.score if existing else 1.0,
        "claudemd_drift_score": existing.claudemd_drift_score if existing else 0.0,
        "source": item.source,
        "session_id": existing.session_id if existing and existing.session_id else origin_session(planned),
        "pending_embedding": 1,
        "key": item.key,
        "updated_at": existing.updated_at if existing else None,
    }
