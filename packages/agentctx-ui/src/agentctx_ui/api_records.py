"""`/api/records`: search, list, create, read, correct, pin, supersede, delete — each one a call to the
same store function the CLI uses (`agentctx_store.Store` and `agentctx_store.retrieval`)."""

from __future__ import annotations

from typing import Annotated, Any

from agentctx_store import NewRecord, Record, ValidationError, search
from agentctx_store.origin import of_record
from fastapi import APIRouter, Query, Request

from agentctx_ui.context import DashboardContext
from agentctx_ui.models import (
    AnchorOut,
    ChainOut,
    ConfidenceName,
    ErrorOut,
    RecordCreate,
    RecordList,
    RecordOut,
    RecordPatch,
    RecordTypeName,
    ScopeName,
    SupersededFilter,
    SupersedeIn,
    SupersedeOut,
    Text,
)

router = APIRouter(prefix="/api/records", tags=["records"])

ProjectParam = Annotated[
    Text | None,
    Query(description="A project_id from GET /api/projects (default: the project `agentctx ui` started in)."),
]
ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorOut, "description": "Refused: foreign Host, cross-site request, or missing token."},
    404: {"model": ErrorOut, "description": "No such record (or project) visible here."},
    422: {"model": ErrorOut, "description": "The request breaks the record contract."},
}
# The dashboard labels every write with this source; the store knows no separate "ui" source.
UI_SOURCE = "cli"


def dashboard(request: Request) -> DashboardContext:
    context: DashboardContext = request.app.state.dashboard
    return context


def out(record: Record, rank: float | None = None) -> RecordOut:
    return RecordOut.model_validate({**record.to_dict(), "rank": rank})


@router.get("", response_model=RecordList, responses=ERRORS)
def list_or_search(
    request: Request,
    project: ProjectParam = None,
    q: Annotated[Text, Query(description="Search text (the store's FTS5 search); empty lists newest first.")] = "",
    type: Annotated[list[RecordTypeName] | None, Query(description="Only these types (repeatable).")] = None,
    scope: ScopeName | None = None,
    confidence: ConfidenceName | None = None,
    superseded: Annotated[SupersededFilter, Query(description="Superseded records: hidden, included, or only.")] = (
        "exclude"
    ),
    pinned: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> RecordList:
    """Search (ranked) or list (newest first) the records this project can see, its own and `_global`."""
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        include_superseded = superseded != "exclude"
        if q.strip():
            # A person browsing wants every match ranked, so no relevance floor (that floor guards injection).
            result = search(
                store,
                target,
                q,
                limit=limit + 1,  # one more: whether more matches exist than are shown
                types=type,
                scope=scope,
                include_superseded=include_superseded,
                floor=None,
            )
            ranked = [(hit.record, hit.score) for hit in result.hits]
            terms, degraded = result.terms, result.degraded
        else:
            listed = store.list_records(
                target,
                types=type,
                include_superseded=include_superseded,
                scope=scope,
                confidence=confidence,
                pinned=pinned,
            )  # all of them: the page says how many are not shown
            ranked = [(record, None) for record in listed]
            terms, degraded = [], None
    matching = [
        (record, rank)
        for record, rank in ranked
        if (confidence is None or record.confidence == confidence)
        and (pinned is None or record.pinned == pinned)
        and (superseded != "only" or not record.is_current)
    ]
    kept = [out(record, rank) for record, rank in matching[:limit]]
    return RecordList(
        records=kept,
        count=len(kept),
        total=None if q.strip() else len(matching),
        more=len(matching) > limit,
        query_terms=terms,
        degraded=degraded,
    )


@router.post("", response_model=RecordOut, status_code=201, responses=ERRORS | {409: {"model": ErrorOut}})
def create(request: Request, payload: RecordCreate, project: ProjectParam = None) -> RecordOut:
    """Record something new; with `supersedes`, atomically retire the record it replaces."""
    context = dashboard(request)
    # the payload's fields are NewRecord's, but for the two the request acts on itself
    new = NewRecord(**payload.model_dump(exclude={"supersedes", "anchors"}), source=UI_SOURCE)
    with context.store() as store:
        target = context.project(store, project)
        with store.transaction():  # a bad anchor stores nothing
            created = store.add(target, new, supersedes=payload.supersedes)
            if payload.anchors:
                from agentctx_store.freshness import anchor_record

                anchor_record(store, target, created.record_id, payload.anchors)
        return out(created)


@router.get("/{record_id}", response_model=RecordOut, responses=ERRORS)
def read(request: Request, record_id: Text, project: ProjectParam = None) -> RecordOut:
    """One record, with `origin`: which client and hook produced it."""
    context = dashboard(request)
    from agentctx_store.freshness import anchor_report

    with context.store() as store:
        target = context.project(store, project)
        record = store.get(target, store.resolve_id(target, record_id))  # a unique start or end will do
        session = store.get_session(record.session_id) if record.session_id else None
        anchors = anchor_report(store, target, [record.record_id]).get(record.record_id, [])
    update = {"origin": of_record(session, record.record_id), "anchors": [AnchorOut.model_validate(a) for a in anchors]}
    return out(record).model_copy(update=update)


@router.get("/{record_id}/history", response_model=ChainOut, responses=ERRORS)
def history(request: Request, record_id: Text, project: ProjectParam = None) -> ChainOut:
    """The whole supersession chain through this record, oldest first, and its current head."""
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        chain = store.history(target, store.resolve_id(target, record_id))
    heads = [record.record_id for record in chain if record.is_current]
    return ChainOut(records=[out(record) for record in chain], head_id=heads[-1] if heads else None)


@router.patch("/{record_id}", response_model=RecordOut, responses=ERRORS)
def correct(request: Request, record_id: Text, payload: RecordPatch, project: ProjectParam = None) -> RecordOut:
    """Correct a record in place and/or pin or unpin it (`agentctx edit` / `agentctx pin`)."""
    changes = payload.model_dump(exclude_unset=True, exclude_none=True)
    pinned = changes.pop("pinned", None)
    if not changes and pinned is None:
        raise ValidationError("Nothing to change; send at least one of title, body, type, confidence, scope, pinned.")
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        record = store.get(target, record_id)
        if changes:
            record = store.edit(target, record.record_id, **changes)
        if pinned is not None:
            record = store.pin(target, record.record_id, pinned)
        return out(record)


@router.delete("/{record_id}", response_model=RecordOut, responses=ERRORS)
def remove(request: Request, record_id: Text, project: ProjectParam = None) -> RecordOut:
    """Delete for good (the chain closes over the gap); returns the deleted record."""
    context = dashboard(request)
    with context.store() as store:
        return out(store.delete(context.project(store, project), record_id))


@router.post(
    "/{record_id}/supersede",
    response_model=SupersedeOut,
    status_code=201,
    responses=ERRORS | {409: {"model": ErrorOut}},
)
def supersede(request: Request, record_id: Text, payload: SupersedeIn, project: ProjectParam = None) -> SupersedeOut:
    """Replace a current record with a new one of the same type (409 names the head if it is not current)."""
    context = dashboard(request)
    from agentctx_store.stale import carry_anchors

    with context.store() as store, store.transaction():
        target = context.project(store, project)
        old, new = store.supersede(
            target,
            record_id,
            body=payload.body,
            title=payload.title,
            rationale=payload.rationale,
            source=UI_SOURCE,
        )
        carry_anchors(store, target, old.record_id, new.record_id)  # as `agentctx supersede` does
    return SupersedeOut(old=out(old), new=out(new))
