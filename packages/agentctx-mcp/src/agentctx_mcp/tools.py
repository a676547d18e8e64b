"""What the seven tools do, over the store and without the MCP SDK (docs/contracts.md#mcp-tools).

Each function takes an open `Store` and the `Project` the server runs in, and either returns
what the model will read or raises an `AgentctxError` whose message the model reads instead.
There is no project argument anywhere: the project is fixed by where the server runs, so the
model cannot ask for another project's records: a parameter that does not exist needs no
validation. Keeping this free of the SDK lets the bench time `ctx_search` in-process and lets
tests call the logic without a subprocess.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agentctx_store import drift
from agentctx_store.budget import SEARCH_RESULTS_MAX
from agentctx_store.errors import RecordNotFound, ValidationError
from agentctx_store.fence import DATA_NOTE, unfence
from agentctx_store.projects import Project
from agentctx_store.records import MAX_TITLE_CHARS, NewRecord, Record, check_choice, check_type
from agentctx_store.retrieval import CANDIDATES, query_terms, search
from agentctx_store.store import Store

from agentctx_mcp import bounds
from agentctx_mcp.index import IndexEntry, render_index

MAX_GET_IDS = 10
DEFAULT_LIMIT = 10
SCOPES = ("project", "global")
# How many records linked to a file (nearest first) a `file` filter of ctx_search keeps.
RELATED_POOL = 500
RELATED_DEPTH = 5
PROFILE_FIELDS = ("stack", "commands", "entry_points")
# ctx_sync_claudemd stays a few thousand tokens whatever the store holds.
DRIFT_ENTRIES = 20
DRIFT_DIFF_CHARS = 6000


def check_limit(limit: int) -> int:
    if limit > SEARCH_RESULTS_MAX:
        raise ValidationError(
            f"limit is {limit}; ctx_search returns at most {SEARCH_RESULTS_MAX} results. "
            "Narrow the query or filter by type instead."
        )
    if limit < 1:
        raise ValidationError(f"limit is {limit}; ask for 1 to {SEARCH_RESULTS_MAX} results.")
    return limit


def check_scope(scope: str) -> str:
    return check_choice("scope", scope, SCOPES)


def relative_file(project: Project, file: str) -> str:
    """A path as the entity graph names it: relative to the project root when it lies inside it."""
    text = file.strip()
    if not text:
        raise ValidationError("The file path is empty; pass a path such as src/app.py.")
    path = Path(text)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(project.root).as_posix()
        except (ValueError, OSError):
            return text
    return text.removeprefix("./")


def search_index(
    store: Store,
    project: Project,
    query: str,
    *,
    type: str | None = None,
    file: str | None = None,
    scope: str = "project",
    limit: int = DEFAULT_LIMIT,
    now: datetime | None = None,
) -> str:
    """`ctx_search`: the compact index of the best current records for `query`.

    Scores are relative to the best hit (1.00). Superseded records and other projects' records
    are excluded by the store's query itself.

    Raises:
        ValidationError: empty query, no searchable words, limit out of range, bad type or scope.
    """
    bounds.check("query", query)
    bounds.check("file", file)
    if not query.strip():
        raise ValidationError('The query is empty; pass the words to look for, e.g. "database choice".')
    check_limit(limit)
    check_scope(scope)
    types = [check_type(type)] if type else None
    if not query_terms(query):
        raise ValidationError(
            "The query has no searchable words (only stop words or single letters); use specific terms."
        )
    allowed: set[str] | None = None
    if file is not None and file.strip():
        allowed = {record.record_id for record in related_records(store, project, file, limit=RELATED_POOL)}
    from agentctx_store.service_link import service_search

    wanted = limit if allowed is None else CANDIDATES
    scope_arg = "global" if scope == "global" else None
    served = service_search(store, project, query, limit=wanted, types=types, scope=scope_arg, floor=False)
    if served is not None:  # the warm search service: keyword and vectors fused
        result, mode = served
    else:
        mode = "keyword"
        result = search(store, project, query, floor=None, limit=wanted, types=types, scope=scope_arg, now=now)
    hits = [hit for hit in result.hits if allowed is None or hit.record.record_id in allowed][:limit]
    top = max((hit.score for hit in hits), default=0.0)
    entries = [IndexEntry(record=hit.record, score=(hit.score / top) if top > 0 else 0.0) for hit in hits]
    return render_index(entries, now=now, degraded=result.degraded, mode=mode)


def related_records(store: Store, project: Project, file: str, *, limit: int) -> list[Record]:
    """Current records linked to `file`, nearest first: direct links, then one hop away, and so on.

    The store's walk returns everything within its depth guard newest first, and session nodes
    connect every file and stub of a session; without ordering by distance, the newest stubs of
    busy sessions would push out the records attached to the file itself.
    """
    bounds.check("file", file)
    name = relative_file(project, file)
    if not store.related_to_file(project, name, max_depth=RELATED_DEPTH, limit=1):
        return []  # nothing linked at any distance (the common case for a new file): one query
    nearest: dict[str, Record] = {}
    for depth in range(RELATED_DEPTH + 1):
        for record in store.related_to_file(project, name, max_depth=depth, limit=limit + len(nearest)):
            if record.is_current:
                nearest.setdefault(record.record_id, record)
        if len(nearest) >= limit:
            break
    return list(nearest.values())[:limit]


def related_index(store: Store, project: Project, file: str, *, now: datetime | None = None) -> str:
    """`ctx_related`: current records linked to `file` through entity links and graph edges.

    Same shape and limits as `ctx_search`, nearest records first; the score column is the
    record's stored retrieval score (docs/consolidation.md#scores).
    """
    records = related_records(store, project, file, limit=SEARCH_RESULTS_MAX)
    return render_index([IndexEntry(record=record, score=record.score) for record in records], now=now)


def record_payload(record: Record) -> dict[str, Any]:
    """A full record for the model: every stored field but the project hash (`scope` says
    whether it is this project's or global, and the hash would cost ~45 tokens a record). Its
    title and body are escaped as on every path to a model (`fence.unfence`): data, whoever
    wrote them."""
    payload = record.to_dict()
    del payload["project_id"]
    payload["title"], payload["body"] = unfence(record.title), unfence(record.body)
    return payload


def get_records(store: Store, project: Project, ids: Sequence[str]) -> dict[str, Any]:
    """`ctx_get`: full current records by id; counts the access (it feeds the derived score).

    Unknown ids and other projects' ids come back in `missing`. A superseded id is also
    missing, with its current head in `superseded` so the model can fetch that instead:
    superseded facts never come back from a default read (docs/contracts.md#invariants).

    Raises:
        ValidationError: no ids, or more than 10.
    """
    if len(ids) > 10 * MAX_GET_IDS:
        raise ValidationError(f"{len(ids)} ids given; ctx_get takes at most {MAX_GET_IDS} per call.")
    bounds.check_ids("ids", ids)
    wanted = list(dict.fromkeys(record_id.strip() for record_id in ids if record_id.strip()))
    if not wanted:
        raise ValidationError("No ids given; pass 1 to 10 record ids from ctx_search.")
    if len(wanted) > MAX_GET_IDS:
        raise ValidationError(f"{len(wanted)} ids given; ctx_get takes at most {MAX_GET_IDS} per call.")
    found, missing = store.get_many(project, [_full_id(store, project, record_id) for record_id in wanted])
    superseded: dict[str, str | None] = {}
    current_ids: list[str] = []
    for record in found:
        if record.is_current:
            current_ids.append(record.record_id)
        else:
            head = store.head_of(project, record.record_id)
            superseded[record.record_id] = head.record_id if head else None
    touched, _ = store.get_many(project, current_ids, touch=True) if current_ids else ([], [])
    records = [record for record in touched if record.is_current]
    missing = [*missing, *superseded, *(rid for rid in current_ids if rid not in {r.record_id for r in records})]
    payload: dict[str, Any] = {
        "note": f"record text is {DATA_NOTE}",
        "records": [record_payload(record) for record in records],
        "missing": missing,
    }
    if superseded:
        payload["superseded"] = superseded
    return payload


def keyed_rule(store: Store, project: Project, type: str, title: str) -> tuple[str | None, Record | None]:
    """The key of a keyed type and the record it replaces (supersession by key:
    docs/contracts.md#supersession).

    One current handover per project (key `handover`, as extraction writes it), and one current
    profile entry per key (the title as the hooks name keys: `stack`, `commands`, …).
    """
    if type == "handover":
        previous = store.find_by_key(project, "handover", "handover")
        if previous is None:
            latest = store.list_records(project, types=["handover"], scope="project", limit=1)
            previous = latest[0] if latest else None
        return "handover", previous
    if type == "profile":
        key = "_".join(title.strip().lower().replace("-", " ").split())
        return key, store.find_by_key(project, "profile", key)
    return None, None


def record_new(
    store: Store,
    project: Project,
    type: str,
    title: str,
    body: str,
    supersedes: str | None = None,
    scope: str = "project",
    anchors: list[str] | None = None,
    *,
    session_id: str | None = None,
) -> dict[str, Any]:
    """`ctx_record`: store one explicit fact (`source=mcp_tool`, `confidence=explicit`); the
    tool's arguments, in its order.

    With `supersedes`, the old record is retired in the same transaction as the insert. A
    project handover or profile entry replaces the current one of its key without being told.
    `anchors` (`PATH`, `PATH:START-END`, `PATH:SYMBOL`, project-relative) are read now and
    stored with the record, in the same transaction (docs/freshness.md); a bad one stores nothing.

    Raises:
        ValidationError, RecordNotFound, NotHeadError: from the store, messages as they are.
    """
    for name, value in (("type", type), ("scope", scope), ("title", title), ("body", body)):
        bounds.check(name, value)
    bounds.check("supersedes", supersedes, "id")
    check_type(type)
    check_scope(scope)
    target = supersedes.strip() if supersedes and supersedes.strip() else None
    key: str | None = None
    if scope == "project":
        key, previous = keyed_rule(store, project, type, title)
        if target is None and previous is not None:
            target = previous.record_id
    new = NewRecord(
        type=type,
        title=title,
        body=body,
        scope=scope,
        confidence="explicit",
        source="mcp_tool",
        key=key,
        session_id=session_id,
    )
    specs = [spec for spec in anchors or () if spec.strip()]
    if specs and scope != "project":
        raise ValidationError("Anchors belong to project files; drop `anchors` for a global record.")
    anchored: list[str] = []
    with store.transaction():
        created = store.add(project, new, supersedes=target)
        if specs:
            from agentctx_store.freshness import anchor_record, format_spec

            anchored = [format_spec(anchor) for anchor in anchor_record(store, project, created.record_id, specs)]
    payload: dict[str, Any] = {"id": created.record_id, "type": created.type, "scope": created.scope}
    if target:
        payload["superseded"] = target.upper()
    if specs:
        payload["anchors"] = anchored
    return _with_redaction_note(payload, title, body)


def _with_redaction_note(payload: dict[str, Any], *texts: str) -> dict[str, Any]:
    """Tell the model when the store replaced secrets (it redacts every write), so it stops sending them."""
    from agentctx_store.redact import redact

    count = sum(redact(text).count for text in texts)
    if count:
        payload["redacted"] = f"{count} secret(s) replaced by [REDACTED:<kind>]; never put secrets in records."
    return payload


def title_from_body(body: str) -> str:
    """A title for a replacing record: its first sentence or line, cut at a word under 120 chars."""
    text = " ".join(body.strip().split("\n", 1)[0].split())
    for stop in (". ", "; "):
        if stop in text:
            text = text.split(stop, 1)[0]
    if len(text) <= MAX_TITLE_CHARS:
        return text.rstrip(".")
    cut = text[: MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _full_id(store: Store, project: Project, record_id: str) -> str:
    """The full id of a unique start or end of one (`Store.resolve_id`); else the id as given,
    which `get_many` then reports missing."""
    try:
        return store.resolve_id(project, record_id)
    except RecordNotFound:
        return record_id


def supersede_record(
    store: Store, project: Project, *, old_id: str, new_body: str, rationale: str, session_id: str | None = None
) -> dict[str, Any]:
    """`ctx_supersede`: retire `old_id` and create its replacement (same type and scope).

    The new title is the first sentence of `new_body` (the old title described the old fact);
    the rationale is appended to the body as `Why: …`.

    Raises:
        NotHeadError: `old_id` is already superseded; the message names the current head.
        RecordNotFound, ValidationError: from the store.
    """
    bounds.check("old_id", old_id, "id")
    bounds.check("new_body", new_body, "body")
    bounds.check("rationale", rationale)
    if not rationale.strip():
        raise ValidationError("The rationale is empty; say in a sentence why the old record no longer holds.")
    if not new_body.strip():
        raise ValidationError("The new body is empty; state the fact that replaces the old record.")
    from agentctx_store.stale import carry_anchors

    with store.transaction():
        old, new = store.supersede(
            project,
            old_id.strip(),
            body=new_body,
            title=title_from_body(new_body),
            rationale=rationale,
            source="mcp_tool",
            confidence="explicit",
            session_id=session_id,
        )
        anchored, _gone = carry_anchors(store, project, old.record_id, new.record_id)  # as `agentctx supersede`
    payload: dict[str, Any] = {"old_id": old.record_id, "new_id": new.record_id, "type": new.type, "title": new.title}
    if anchored:
        payload["anchors"] = anchored
    return _with_redaction_note(payload, new_body, rationale)


def _profile_value(body: str) -> Any:
    """A profile body as data: JSON when it is JSON, else the hooks' `a; b; c` list form."""
    try:
        return json.loads(body)
    except ValueError:
        items = [item.strip() for item in body.split("; ") if item.strip()]
        return items if len(items) > 1 else body.strip()


def project_profile(store: Store, project: Project) -> dict[str, Any]:
    """`ctx_project`: the profile the hooks detected (stack, commands, entry points) plus counts.

    Profile records are keyed (`stack`, `commands`, `entry_points`, …); a body holding JSON is
    returned parsed, and the hooks' `a; b; c` bodies as lists. Keys other than the three named
    ones are kept under `other`.
    """
    profile = store.list_records(project, types=["profile"], scope="project")
    fields: dict[str, Any] = dict.fromkeys(PROFILE_FIELDS)
    other: dict[str, Any] = {}
    for record in reversed(profile):  # oldest first, so the newest record of a key wins
        key = (record.key or record.title).strip()
        short = key.rsplit(":", 1)[-1].strip().lower().replace(" ", "_").replace("-", "_")
        if short in fields:
            fields[short] = _profile_value(record.body)
        else:
            other[key] = _profile_value(record.body)
    sessions = store.list_sessions(project, limit=1)
    payload: dict[str, Any] = {
        "name": project.name,
        "project_id": project.project_id,
        **fields,
        "record_counts_by_type": store.counts_by_type(project),
        "last_session_at": sessions[0].get("started_at") if sessions else None,
    }
    if other:
        payload["other"] = other
    if not profile:
        payload["note"] = "No profile detected yet; `agentctx init` or the next session start detects it."
    return payload


def sync_claudemd(store: Store, project: Project) -> dict[str, Any]:
    """`ctx_sync_claudemd`: how the project's CLAUDE.md drifted from the store. Read-only.

    Bounded like every tool (no tool may bulk-return the store): at most `DRIFT_ENTRIES` missing
    and contradicted entries each (most drifted first), and a diff cut at `DRIFT_DIFF_CHARS` on a
    line boundary with a note; the totals say how much was left out. A missing entry drops the
    bullet it would add, which the diff already shows.
    """
    report = drift.report(store, project)
    missing = sorted(report["missing"], key=lambda entry: (-entry.get("drift_score", 0.0), entry["id"]))
    contradicted = report["contradicted"]
    payload: dict[str, Any] = {
        "missing": [
            {key: value for key, value in entry.items() if key != "statement"} for entry in missing[:DRIFT_ENTRIES]
        ],
        "contradicted": contradicted[:DRIFT_ENTRIES],
        "proposed_diff": _cut_diff(report["proposed_diff"]),
    }
    for key in ("files", "target"):
        if key in report:
            payload[key] = report[key]
    if len(missing) > DRIFT_ENTRIES or len(contradicted) > DRIFT_ENTRIES:
        payload["missing_total"] = len(missing)
        payload["contradicted_total"] = len(contradicted)
    return payload


def _cut_diff(diff: str) -> str:
    if len(diff) <= DRIFT_DIFF_CHARS:
        return diff
    lines = diff.splitlines(keepends=True)
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) > DRIFT_DIFF_CHARS:
            break
        kept.append(line)
        size += len(line)
    return "".join(kept) + (
        f"[diff cut: first {len(kept)} of {len(lines)} lines; `agentctx sync` shows and applies all of it]\n"
    )
