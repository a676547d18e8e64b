"""Retiring a record: it stops being current, with or without a successor.

`Store.supersede` replaces a fact with a new record; some facts simply stop holding: the rule
was deleted from `AGENTS.md`, the block was removed from the team file, an ADR was deprecated.
A retired record is kept (history, `--as-of`) with `superseded_at` set; `superseded_by` names
the successor when there is one (an ADR superseded by a later ADR), else stays empty.
"""

from __future__ import annotations

from agentctx_store.errors import NotHeadError, ValidationError
from agentctx_store.projects import Project
from agentctx_store.records import Record, normalize_time, supersession_error, utc_now
from agentctx_store.store import Store

__all__ = ["retire"]


def retire(
    store: Store, project: Project, record_id: str, *, successor_id: str | None = None, when: str | None = None
) -> Record:
    """Mark the current record `record_id` as no longer current (one transaction).

    Raises:
        RecordNotFound: no such record in this project (or no such successor).
        NotHeadError: the record is already superseded or retired.
        ValidationError: the successor may not supersede it (keyed types).
    """
    old = store.get(project, record_id)
    if old.superseded_at is not None:
        raise NotHeadError(f"Record {old.record_id} is no longer current; nothing to retire.", head_id=None)
    moment = normalize_time(when) if when else utc_now()
    with store.transaction():
        if successor_id is not None:
            new = store.get(project, successor_id)
            if (why := supersession_error(old.type, old.key, new.type, new.key)) is not None:
                raise ValidationError(f"Record {old.record_id} cannot be retired by {new.record_id}: {why}.")
        store.mark_superseded(old.record_id, by=successor_id, when=moment)
    store.dirty.add(old.project_id)
    return store.get(project, old.record_id)
