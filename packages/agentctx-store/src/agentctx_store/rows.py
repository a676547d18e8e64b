"""Records as rows: the columns the store selects, a row made a `Record`, and the namespaces a
project may read (docs/contracts.md#namespaces). Shared by every module that queries `records`
directly."""

from __future__ import annotations

from agentctx_store.projects import GLOBAL_PROJECT_ID, Project
from agentctx_store.records import SCOPES, Record, check_choice

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping, Sequence
    from typing import Any

RECORD_COLUMNS = (
    "id, project_id, type, title, body, scope, pinned, confidence, reinforce_count, valid_from, recorded_at, "
    "superseded_at, superseded_by, access_count, last_accessed, score, claudemd_drift_score, source, session_id, "
    "pending_embedding, key, updated_at"
)


def row_to_record(row: sqlite3.Row | Mapping[str, Any]) -> Record:
    return Record(
        record_id=row["id"],
        project_id=row["project_id"],
        type=row["type"],
        title=row["title"],
        body=row["body"],
        scope=row["scope"] or "project",
        pinned=bool(row["pinned"]),
        confidence=row["confidence"] or "inferred",
        reinforce_count=row["reinforce_count"] or 0,
        valid_from=row["valid_from"],
        recorded_at=row["recorded_at"],
        superseded_at=row["superseded_at"],
        superseded_by=row["superseded_by"],
        access_count=row["access_count"] or 0,
        last_accessed=row["last_accessed"],
        score=row["score"] if row["score"] is not None else 1.0,
        claudemd_drift_score=row["claudemd_drift_score"] or 0.0,
        source=row["source"],
        session_id=row["session_id"],
        pending_embedding=bool(row["pending_embedding"]),
        key=row["key"],
        updated_at=row["updated_at"],
    )


def like_literal(text: str) -> str:
    """`text` matched literally by a LIKE pattern with `ESCAPE '\\'` (`%` and `_` are not wildcards)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def visible_namespaces(project: Project, scope: str | None = None) -> tuple[str, ...]:
    """The namespaces (owning project ids) whose records `project` may read
    (docs/contracts.md#namespaces): the one rule behind every read that filters on
    `records.project_id`.

    Args:
        scope: None = its own and `_global` (always these two, in this order); "project" = its
            own only; "global" = `_global` only. Team records live in the project's own
            namespace, so they follow "project".

    Raises:
        ValidationError: `scope` is none of these.
    """
    if scope is None:
        return (project.project_id, GLOBAL_PROJECT_ID)
    check_choice("scope", scope, SCOPES)
    return (GLOBAL_PROJECT_ID,) if scope == "global" else (project.project_id,)


def record_filters(
    namespaces: Sequence[str],
    types: Sequence[str] | None = None,
    *,
    include_superseded: bool = False,
    exclude_ids: Sequence[str] = (),
    alias: str = "",
) -> tuple[list[str], list[Any]]:
    """The WHERE clauses (joined with AND by the caller, who may add its own) and their
    parameters of a read of `records`: owned by one of `namespaces` (`visible_namespaces`),
    current unless `include_superseded`, of `types` when given, not in `exclude_ids`. `alias`
    prefixes the columns (`"r."` in a join)."""
    clauses = [f"{alias}project_id IN ({','.join('?' * len(namespaces))})"]
    params: list[Any] = list(namespaces)
    if not include_superseded:
        clauses.append(f"{alias}superseded_at IS NULL")
    if types:
        clauses.append(f"{alias}type IN ({','.join('?' * len(types))})")
        params.extend(types)
    if exclude_ids:
        clauses.append(f"{alias}id NOT IN ({','.join('?' * len(exclude_ids))})")
        params.extend(exclude_ids)
    return clauses, params
