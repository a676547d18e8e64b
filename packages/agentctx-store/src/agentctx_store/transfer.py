"""Moving records in and out of the store: a Markdown export that round-trips, and JSONL import.

Markdown is a first-class *view* of the store (SPEC §3, ADR-004), never its source of truth, so
the export is written to be read by people and re-imported without loss: every record is a
`### title` heading, a one-line metadata comment (JSON: id, type, scope, confidence, dates,
supersession) and the body, closed by an end marker that names the record. Hand edits to a
title or body are honoured on import: that is how a team corrects context through git.

JSONL takes one object per line with the fields of the ADR eval set (`id`, `type`, `title`,
`body`, `valid_from`, `supersedes`, …); its `id` only resolves `supersedes` within the file.

Import validates the whole file before writing anything and then writes in one transaction:
a bad line leaves the store untouched, and the error names that line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentctx_store.errors import ValidationError
from agentctx_store.projects import GLOBAL_PROJECT_ID, Project
from agentctx_store.records import (
    CONFIDENCES,
    RECORD_TYPES,
    SCOPES,
    SOURCES,
    Record,
    check_choice,
    check_text,
    check_type,
    normalize_time,
    utc_now,
)
from agentctx_store.store import RECORD_COLUMNS, Store, row_to_record, visible_ids
from agentctx_store.ulid import is_ulid, new_ulid

__all__ = [
    "EXPORT_HEADER",
    "ImportItem",
    "ImportReport",
    "import_items",
    "looks_like_jsonl",
    "parse_file_text",
    "parse_jsonl",
    "parse_markdown",
    "render_markdown",
]

EXPORT_HEADER = "<!-- agentctx export v1: edit titles and bodies freely, keep the agentctx comments -->"
_META = re.compile(r"^<!-- agentctx-record (?P<json>\{.*\}) -->$")
_END = re.compile(r"^<!-- /agentctx-record(?: (?P<id>[0-9A-Za-z]+))? -->$")
_HEADING = "### "

TYPE_HEADINGS = {
    "decision": "Decisions",
    "convention": "Conventions",
    "preference": "Preferences",
    "discovery": "Discoveries",
    "bugfix": "Bug fixes",
    "handover": "Handovers",
    "profile": "Profile",
}


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


@dataclass(frozen=True, kw_only=True)
class ImportReport:
    created: list[str] = field(default_factory=list[str])
    updated: list[str] = field(default_factory=list[str])
    unchanged: list[str] = field(default_factory=list[str])


# -- export ---------------------------------------------------------------------------


def _meta_json(record: Record) -> str:
    meta: dict[str, Any] = {
        "id": record.record_id,
        "type": record.type,
        "scope": record.scope,
        "confidence": record.confidence,
        "pinned": record.pinned,
        "valid_from": record.valid_from,
        "recorded_at": record.recorded_at,
    }
    if record.superseded_at is not None:
        meta["superseded_at"] = record.superseded_at
        meta["superseded_by"] = record.superseded_by
    if record.key is not None:
        meta["key"] = record.key
    if record.reinforce_count:
        meta["reinforce_count"] = record.reinforce_count
    meta["source"] = record.source
    text = json.dumps(meta, ensure_ascii=False, separators=(", ", ": "))
    # `-->` must never appear inside the comment; JSON escapes keep the value identical
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def render_record(record: Record) -> str:
    lines = [f"{_HEADING}{record.title}", ""]
    if record.superseded_at is not None:
        lines += [f"*Superseded by {record.superseded_by} on {record.superseded_at[:10]}.*", ""]
    lines += [
        f"<!-- agentctx-record {_meta_json(record)} -->",
        "",
        record.body,
        "",
        f"<!-- /agentctx-record {record.record_id} -->",
        "",
    ]
    return "\n".join(lines)


def render_markdown(
    store: Store, project: Project, *, include_history: bool = False, types: Sequence[str] | None = None
) -> str:
    """The project's records (and `_global` ones) as Markdown, grouped by type.

    Within a type, current records come first (oldest first, so the file diffs well), then,
    with `include_history`, superseded ones with a line naming their successor.
    """
    records = store.list_records(
        project, types=types, include_superseded=include_history, order="recorded_at ASC", limit=None
    )
    out = [f"# agentctx context: {project.name}", "", EXPORT_HEADER, ""]
    for record_type in RECORD_TYPES:
        of_type = [record for record in records if record.type == record_type]
        if not of_type:
            continue
        out += [f"## {TYPE_HEADINGS[record_type]}", ""]
        current = [record for record in of_type if record.superseded_at is None]
        retired = [record for record in of_type if record.superseded_at is not None]
        out += [render_record(record) for record in current + retired]
    if len(out) == 4:
        out += ["*No records yet.*", ""]
    return "\n".join(out)


# -- parsing --------------------------------------------------------------------------


def looks_like_jsonl(text: str) -> bool:
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    return first.startswith("{")


def parse_file_text(text: str) -> list[ImportItem]:
    """Markdown or JSONL, told apart by the first non-blank line."""
    return parse_jsonl(text) if looks_like_jsonl(text) else parse_markdown(text)


def _fail(line: int, message: str) -> ValidationError:
    return ValidationError(f"Line {line}: {message}")


def parse_markdown(text: str) -> list[ImportItem]:
    """The records of an export (see module docstring). Raises `ValidationError` naming the line."""
    items: list[ImportItem] = []
    lines = text.split("\n")  # not splitlines(): bodies keep every other line separator as is
    title: tuple[int, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 1
        if line.startswith(_HEADING):
            title = (number, line[len(_HEADING) :])
        elif line.startswith("<!-- agentctx-record"):
            match = _META.match(line)
            if match is None:
                raise _fail(number, "the agentctx-record comment is damaged; restore it from the export.")
            if title is None:
                raise _fail(number, "a record without a `### title` heading above its agentctx-record comment.")
            try:
                meta = json.loads(match.group("json"))
            except json.JSONDecodeError as exc:
                raise _fail(number, f"the agentctx-record metadata is not valid JSON ({exc.msg}).") from None
            if not isinstance(meta, dict):
                raise _fail(number, "the agentctx-record metadata must be a JSON object.")
            record_id = meta.get("id")
            body_lines: list[str] = []
            index += 1
            while index < len(lines):
                end = _END.match(lines[index])
                # an exported record closes only on its own id: a body may quote the bare marker
                if end and end.group("id") == (record_id.upper() if isinstance(record_id, str) else None):
                    break
                body_lines.append(lines[index])
                index += 1
            else:
                raise _fail(number, "the record has no closing `<!-- /agentctx-record -->` line.")
            items.append(_item_from_meta(number, title[1], "\n".join(body_lines), meta))
            title = None
        index += 1
    return items


def _item_from_meta(line: int, title: str, body: str, meta: dict[str, Any]) -> ImportItem:
    record_id = meta.get("id")
    if record_id is not None and (not isinstance(record_id, str) or not is_ulid(record_id)):
        raise _fail(line, f"id {record_id!r} is not a record id (26-character ULID); remove it to make a new record.")
    pinned = meta.get("pinned", False)
    if not isinstance(pinned, bool):
        raise _fail(line, f"pinned must be true or false, not {pinned!r}.")
    reinforce = meta.get("reinforce_count", 0)
    if not isinstance(reinforce, int) or reinforce < 0:
        raise _fail(line, f"reinforce_count must be a whole number ≥ 0, not {reinforce!r}.")
    return ImportItem(
        line=line,
        ref=record_id.upper() if record_id else None,
        record_id=record_id.upper() if record_id else None,
        type=_text_field(line, meta, "type", required=True) or "",
        title=title,
        body=body,
        scope=_text_field(line, meta, "scope") or "project",
        confidence=_text_field(line, meta, "confidence") or "explicit",
        pinned=pinned,
        valid_from=_text_field(line, meta, "valid_from"),
        recorded_at=_text_field(line, meta, "recorded_at"),
        superseded_at=_text_field(line, meta, "superseded_at"),
        superseded_by=(_text_field(line, meta, "superseded_by") or "").upper() or None,
        source=_text_field(line, meta, "source") or "import",
        key=_text_field(line, meta, "key"),
        reinforce_count=reinforce,
    )


def _text_field(line: int, data: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise _fail(line, f"the field {name!r} is missing.")
        return None
    if not isinstance(value, str):
        raise _fail(line, f"the field {name!r} must be text, not {value!r}.")
    return value


def parse_jsonl(text: str) -> list[ImportItem]:
    """One JSON object per line (blank lines skipped). Raises `ValidationError` naming the line."""
    items: list[ImportItem] = []
    for index, raw in enumerate(text.split("\n")):
        number = index + 1
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _fail(number, f"not valid JSON ({exc.msg} at column {exc.colno}).") from None
        if not isinstance(data, dict):
            raise _fail(number, "each line must be one JSON object.")
        ref = data.get("id")
        if ref is not None and not isinstance(ref, str | int):
            raise _fail(number, f"id must be text, not {ref!r}.")
        supersedes = data.get("supersedes") or []
        if isinstance(supersedes, str):
            supersedes = [supersedes]
        if not isinstance(supersedes, list) or not all(isinstance(value, str) for value in supersedes):
            raise _fail(number, "supersedes must be a list of ids.")
        pinned = data.get("pinned", False)
        if not isinstance(pinned, bool):
            raise _fail(number, f"pinned must be true or false, not {pinned!r}.")
        title = _text_field(number, data, "title", required=True) or ""
        body = _text_field(number, data, "body", required=True) or ""
        items.append(
            ImportItem(
                line=number,
                ref=str(ref) if ref is not None else None,
                record_id=None,
                type=_text_field(number, data, "type", required=True) or "",
                title=title,
                body=body,
                scope=_text_field(number, data, "scope") or "project",
                confidence=_text_field(number, data, "confidence") or "explicit",
                pinned=pinned,
                valid_from=_text_field(number, data, "valid_from"),
                supersedes=tuple(supersedes),
                project=str(data["project"]) if data.get("project") is not None else None,
            )
        )
    return items


# -- import ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Planned:
    item: ImportItem
    record_id: str
    owner: str
    existing: Record | None


def _check_item(item: ImportItem) -> ImportItem:
    """The record contract (SPEC §5) on one item; returns it with trimmed text and UTC times."""
    try:
        check_type(item.type)
        check_choice("scope", item.scope, SCOPES)
        check_choice("confidence", item.confidence, CONFIDENCES)
        check_choice("source", item.source, SOURCES)
        title, body = check_text(item.title, item.body)
        times = {
            name: normalize_time(value) if value else None
            for name, value in (
                ("valid_from", item.valid_from),
                ("recorded_at", item.recorded_at),
                ("superseded_at", item.superseded_at),
            )
        }
    except ValidationError as exc:
        raise _fail(item.line, str(exc)) from None
    return replace(item, title=title, body=body, **times)


def import_items(store: Store, project: Project, items: Sequence[ImportItem]) -> ImportReport:
    """Write `items` into `project` (global-scoped ones into `_global`), all or nothing.

    An item with a `record_id` already in the store updates that record in place (a hand
    edit); one that is unchanged is left alone, so importing the same file twice is a no-op.

    Raises:
        ValidationError: any item breaks the contract or names an unknown record; the
            message starts with `Line N:`. Nothing has been written.
    """
    checked = [_check_item(item) for item in items]
    plan = _plan(store, project, checked)
    links = _supersession_links(store, project, plan)
    report = ImportReport()
    now = utc_now()
    with store.transaction() as conn:
        for planned in plan:
            row = _row(planned, links.get(planned.record_id), now)
            if planned.existing is None:
                conn.execute(
                    f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * len(row))})", list(row.values())
                )
                report.created.append(planned.record_id)
            elif _differs(planned.existing, row) or _newly_superseded(planned.existing, row):
                columns = _UPDATABLE + (("superseded_at", "superseded_by") if row["superseded_by"] else ())
                assignments = ", ".join(f"{column} = ?" for column in columns)
                conn.execute(
                    f"UPDATE records SET {assignments}, updated_at = ?, pending_embedding = 1 WHERE id = ?",
                    [*(row[column] for column in columns), now, planned.record_id],
                )
                report.updated.append(planned.record_id)
            else:
                report.unchanged.append(planned.record_id)
        planned_ids = {planned.record_id for planned in plan}
        for old_id, (new_id, when) in links.items():
            if old_id not in planned_ids:  # a stored record retired by a successor in the file
                conn.execute(
                    "UPDATE records SET superseded_at = ?, superseded_by = ? WHERE id = ? AND superseded_at IS NULL",
                    (when, new_id, old_id),
                )
            conn.execute(
                "INSERT OR IGNORE INTO edges(id, from_id, to_id, rel_type) VALUES (?, ?, ?, 'supersedes')",
                (new_ulid(), new_id, old_id),
            )
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
    for item in items:
        owner = GLOBAL_PROJECT_ID if item.scope == "global" else project.project_id
        existing: Record | None = None
        record_id = item.record_id or new_ulid()
        if item.record_id is not None:
            if item.record_id in seen:
                raise _fail(item.line, f"record {item.record_id} appears twice (first on line {seen[item.record_id]}).")
            row = store.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
            if row is not None:
                existing = row_to_record(row)
                if existing.project_id not in visible_ids(project):
                    raise _fail(
                        item.line,
                        f"record {record_id} belongs to another project; remove its id to import it as a new record.",
                    )
            seen[record_id] = item.line
        if item.ref is not None and item.record_id is None:
            if item.ref in seen:
                raise _fail(item.line, f"id {item.ref!r} appears twice (first on line {seen[item.ref]}).")
            seen[item.ref] = item.line
        plan.append(_Planned(item=item, record_id=record_id, owner=owner, existing=existing))
    return plan


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
                "SELECT id FROM records WHERE id = ? AND project_id IN (?, ?)", (ref.upper(), *visible_ids(project))
            ).fetchone()
            if row is not None:
                return str(row[0])
        raise _fail(line, f"{ref!r} is neither a record in this file nor one in this project.")

    def link(old_id: str, new_id: str, when: str, line: int) -> None:
        if old_id == new_id:
            raise _fail(line, "a record cannot supersede itself.")
        if old_id in links and links[old_id][0] != new_id:
            raise _fail(line, f"record {old_id} is superseded twice; a record has one successor.")
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
        old_type = old_planned.item.type if old_planned else _stored_type(store, old_id)
        new_type = new_planned.item.type if new_planned else _stored_type(store, new_id)
        if old_type != new_type:
            line = (new_planned or old_planned).item.line if (new_planned or old_planned) else 0
            raise _fail(line, f"a {new_type} cannot supersede a {old_type} ({old_id}); supersession keeps the type.")
        stored = old_planned.existing.superseded_by if old_planned and old_planned.existing else None
        if old_planned is None:
            row = store.conn.execute("SELECT superseded_by FROM records WHERE id = ?", (old_id,)).fetchone()
            stored = row[0] if row else None
        if stored not in (None, new_id):
            line = new_planned.item.line if new_planned else old_planned.item.line if old_planned else 0
            raise _fail(line, f"record {old_id} is already superseded by {stored}; supersede the current head.")
    return links


def _stored_type(store: Store, record_id: str) -> str:
    row = store.conn.execute("SELECT type FROM records WHERE id = ?", (record_id,)).fetchone()
    return str(row[0]) if row else ""


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
        "session_id": existing.session_id if existing else None,
        "pending_embedding": 1,
        "key": item.key,
        "updated_at": existing.updated_at if existing else None,
    }
