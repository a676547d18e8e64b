"""Moving records in and out of the store: a Markdown export that round-trips, and JSONL import.

Markdown is a first-class *view* of the store (docs/adr/0001-one-sqlite-file.md), never its source
of truth, so the export is written to be read by people and re-imported without loss: every record
is a `### title` heading, a one-line metadata comment (JSON: id, type, scope, confidence, dates,
supersession, and `client` / `hook` when known: which agent and hook produced it) and the body,
closed by an end marker that names the record. Hand edits to a title or body are honoured on import:
that is how a team corrects context through git.

JSONL takes one object per line with the fields of the ADR eval set (`id`, `type`, `title`,
`body`, `valid_from`, `supersedes`, …); its `id` only resolves `supersedes` within the file.

Import validates the whole file before writing anything and then writes in one transaction:
a bad line leaves the store untouched, and the error names that line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentctx_store.jsontext import is_array, is_object
from agentctx_store.origin import of_records
from agentctx_store.projects import Project
from agentctx_store.records import RECORD_TYPES, Record
from agentctx_store.sharing._transfer_import import ImportItem, ImportReport, import_items, line_error
from agentctx_store.store import Store
from agentctx_store.ulid import is_ulid

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
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")

TYPE_HEADINGS = {
    "decision": "Decisions",
    "convention": "Conventions",
    "preference": "Preferences",
    "discovery": "Discoveries",
    "bugfix": "Bug fixes",
    "handover": "Handovers",
    "profile": "Profile",
}


# -- export ---------------------------------------------------------------------------


def _meta_json(record: Record, origin: dict[str, str] | None = None) -> str:
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
    meta.update(origin or {})  # `client` and `hook`: which agent and hook produced it
    text = json.dumps(meta, ensure_ascii=False, separators=(", ", ": "))
    # `-->` must never appear inside the comment; JSON escapes keep the value identical
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def render_record(record: Record, origin: dict[str, str] | None = None) -> str:
    """One record as Markdown; its text redacted again (a store written before redaction
    covered every path may still hold a secret, and an export is shared)."""
    from agentctx_store.redact import redact_text

    lines = [f"{_HEADING}{redact_text(record.title)}", ""]
    if record.superseded_at is not None:
        lines += [f"*Superseded by {record.superseded_by} on {record.superseded_at[:10]}.*", ""]
    lines += [
        f"<!-- agentctx-record {_meta_json(record, origin)} -->",
        "",
        redact_text(record.body),
        "",
        f"<!-- /agentctx-record {record.record_id} -->",
        "",
    ]
    return "\n".join(lines)


def render_markdown(
    store: Store,
    project: Project,
    *,
    include_history: bool = False,
    types: Sequence[str] | None = None,
    scope: str | None = None,
) -> str:
    """The project's records (and `_global` ones) as Markdown, grouped by type.

    Within a type, current records come first (oldest first, so the file diffs well), then,
    with `include_history`, superseded ones with a line naming their successor. `scope`
    "project" leaves out your global records (for a file the team commits), "global" keeps
    only them.
    """
    records = store.list_records(
        project, types=types, include_superseded=include_history, scope=scope, order="recorded_at ASC", limit=None
    )
    origins = of_records(store, records)
    out = [f"# agentctx context: {project.name}", "", EXPORT_HEADER, ""]
    for record_type in RECORD_TYPES:
        of_type = [record for record in records if record.type == record_type]
        if not of_type:
            continue
        out += [f"## {TYPE_HEADINGS[record_type]}", ""]
        current = [record for record in of_type if record.superseded_at is None]
        retired = [record for record in of_type if record.superseded_at is not None]
        out += [render_record(record, origins.get(record.record_id)) for record in current + retired]
    if len(out) == 4:
        out += ["*No records yet.*", ""]
    return "\n".join(out)


# -- parsing --------------------------------------------------------------------------


def looks_like_jsonl(text: str) -> bool:
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    return first.startswith("{")


def parse_file_text(text: str, *, name: str = "") -> list[ImportItem]:
    """Markdown or JSONL, told apart by the file name (`.jsonl`), else by the first non-blank line."""
    jsonl = name.lower().endswith((".jsonl", ".ndjson")) or looks_like_jsonl(text)
    return parse_jsonl(text) if jsonl else parse_markdown(text)


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
                raise line_error(number, "the agentctx-record comment is damaged; restore it from the export.")
            if title is None:
                raise line_error(number, "a record without a `### title` heading above its agentctx-record comment.")
            try:
                meta = json.loads(match.group("json"))
            except json.JSONDecodeError as exc:
                raise line_error(number, f"the agentctx-record metadata is not valid JSON ({exc.msg}).") from None
            if not is_object(meta):
                raise line_error(number, "the agentctx-record metadata must be a JSON object.")
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
                raise line_error(number, "the record has no closing `<!-- /agentctx-record -->` line.")
            items.append(_item_from_meta(number, title[1], "\n".join(body_lines), meta))
            title = None
        index += 1
    return items


def _item_from_meta(line: int, title: str, body: str, meta: dict[str, Any]) -> ImportItem:
    record_id = meta.get("id")
    if record_id is not None and (not isinstance(record_id, str) or not is_ulid(record_id)):
        raise line_error(
            line, f"id {record_id!r} is not a record id (26-character ULID); remove it to make a new record."
        )
    pinned = meta.get("pinned", False)
    if not isinstance(pinned, bool):
        raise line_error(line, f"pinned must be true or false, not {pinned!r}.")
    reinforce = meta.get("reinforce_count", 0)
    if not isinstance(reinforce, int) or reinforce < 0:
        raise line_error(line, f"reinforce_count must be a whole number ≥ 0, not {reinforce!r}.")
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
        client=_origin_field(line, meta, "client"),
        hook=_origin_field(line, meta, "hook"),
    )


def _origin_field(line: int, data: dict[str, Any], name: str) -> str | None:
    """`client` / `hook` of the provenance: a name (letters, digits, `_`, `-`), or absent."""
    value = _text_field(line, data, name)
    if value is not None and not _NAME.fullmatch(value):
        raise line_error(line, f"{name} must be a name like `codex` or `AfterTool`, not {value!r}; restore it.")
    return value


def _text_field(line: int, data: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise line_error(line, f"the field {name!r} is missing.")
        return None
    if not isinstance(value, str):
        raise line_error(line, f"the field {name!r} must be text, not {value!r}.")
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
            raise line_error(number, f"not valid JSON ({exc.msg} at column {exc.colno}).") from None
        if not is_object(data):
            raise line_error(number, "each line must be one JSON object.")
        ref = data.get("id")
        if ref is not None and not isinstance(ref, str | int):
            raise line_error(number, f"id must be text, not {ref!r}.")
        supersedes: object = data.get("supersedes") or []
        if isinstance(supersedes, str):
            supersedes = [supersedes]
        if not is_array(supersedes) or not all(isinstance(value, str) for value in supersedes):
            raise line_error(number, "supersedes must be a list of ids.")
        pinned = data.get("pinned", False)
        if not isinstance(pinned, bool):
            raise line_error(number, f"pinned must be true or false, not {pinned!r}.")
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
                client=_origin_field(number, data, "client"),
                hook=_origin_field(number, data, "hook"),
            )
        )
    return items
