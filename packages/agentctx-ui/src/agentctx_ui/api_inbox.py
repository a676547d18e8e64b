"""`/api/inbox`: the review inbox (issue 14), the same `agentctx_store.review` calls as
`agentctx review`. Accepting and rejecting are writes, so they need the page's token."""

from __future__ import annotations

from typing import Annotated

from agentctx_store import review
from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from agentctx_ui.api_records import ERRORS, ProjectParam, dashboard, out
from agentctx_ui.models import RecordList, RecordOut, Text

router = APIRouter(prefix="/api/inbox", tags=["inbox"])


class AcceptIn(BaseModel):
    """Optional corrections made before accepting (`agentctx review`'s edit)."""

    title: Text | None = Field(default=None, description="Corrected title; omitted keeps it.")
    body: Text | None = Field(default=None, description="Corrected body; omitted keeps it.")


@router.get("", response_model=RecordList, responses=ERRORS)
def inbox(
    request: Request,
    project: ProjectParam = None,
    all: Annotated[bool, Query(description="Every unconfirmed record, not only extraction results.")] = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> RecordList:
    """Unconfirmed (`inferred`) current records of the project and `_global`, newest first."""
    context = dashboard(request)
    with context.store() as store:
        records = review.inbox(store, context.project(store, project), everything=all, limit=limit)
    return RecordList(records=[out(record) for record in records], count=len(records))


@router.post("/{record_id}/accept", response_model=RecordOut, responses=ERRORS)
def accept(
    request: Request, record_id: Text, payload: AcceptIn | None = None, project: ProjectParam = None
) -> RecordOut:
    """Confirm a record, corrected first when a title or body is sent: it becomes `explicit`."""
    changes = payload or AcceptIn()
    context = dashboard(request)
    with context.store() as store:
        record = review.accept(
            store, context.project(store, project), record_id, title=changes.title or None, body=changes.body or None
        )
    return out(record)


@router.post("/{record_id}/reject", response_model=RecordOut, responses=ERRORS)
def reject(request: Request, record_id: Text, project: ProjectParam = None) -> RecordOut:
    """Delete a wrong record for good; returns what was deleted."""
    context = dashboard(request)
    with context.store() as store:
        return out(review.reject(store, context.project(store, project), record_id))
