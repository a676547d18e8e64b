"""`/api/inbox`: the review inbox (issue 14), the same `agentctx_store.review` calls as
`agentctx review`; `/api/inbox/proposals`, the re-verification proposals for records whose
anchored code changed (`agentctx_store.stale.reverify`, the second part of `agentctx review`);
and `/api/inbox/heads`, records superseded twice concurrently (`agentctx_store.sharing.team`'s
two heads, from the team file or a remote: docs/remote.md), one kept by a person.
Accepting, rejecting and keeping are writes, so they need the page's token."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from agentctx_store import Record, review
from agentctx_store.sharing import team
from agentctx_store.stale import reverify
from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from agentctx_ui.api_records import ERRORS, ProjectParam, dashboard, out
from agentctx_ui.models import (
    HeadsKeepOut,
    HeadsList,
    HeadsOut,
    Outcome,
    ProposalAcceptOut,
    ProposalList,
    ProposalOut,
    RecordList,
    RecordOut,
    Text,
)

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


def proposal_out(proposal: reverify.Proposal, record: Record) -> ProposalOut:
    return ProposalOut.model_validate(
        {
            "id": proposal.proposal_id,
            "verdict": proposal.verdict,
            "title": proposal.title,
            "body": proposal.body,
            "reason": proposal.reason,
            "created_at": proposal.created_at,
            "status": proposal.status,
            "record": out(record),
        }
    )


ProposalId = Annotated[int, Path(ge=1, description="A proposal id from GET /api/inbox/proposals.")]
OUTCOMES: dict[str, Outcome] = {"still_true": "confirmed", "update": "superseded", "no_longer_true": "deleted"}


@router.get("/heads", response_model=HeadsList, responses=ERRORS)
def heads(request: Request, project: ProjectParam = None) -> HeadsList:
    """Records of the project with two or more current successors (two heads), to keep one."""
    context = dashboard(request)
    with context.store() as store:
        found = team.heads_conflicts(store, context.project(store, project))
    conflicts = [HeadsOut(record=out(old), heads=[out(head) for head in now]) for old, now in found]
    return HeadsList(conflicts=conflicts, count=len(conflicts))


@router.post("/heads/{record_id}/keep", response_model=HeadsKeepOut, responses=ERRORS)
def keep_head(request: Request, record_id: Text, project: ProjectParam = None) -> HeadsKeepOut:
    """Keep this head of its conflict: the other heads are superseded by it (`agentctx team resolve`)."""
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        retired = team.resolve_heads(store, target, record_id)
        return HeadsKeepOut(kept=out(store.get(target, record_id)), retired=retired)


@router.get("/proposals", response_model=ProposalList, responses=ERRORS)
def proposals(request: Request, project: ProjectParam = None) -> ProposalList:
    """Open re-verification proposals of the project with their records, oldest first."""
    context = dashboard(request)
    with context.store() as store:
        found = reverify.open_proposals(store, context.project(store, project))
    return ProposalList(proposals=[proposal_out(proposal, record) for proposal, record in found], count=len(found))


@router.post("/proposals/{proposal_id}/accept", response_model=ProposalAcceptOut, responses=ERRORS)
def accept_proposal(request: Request, proposal_id: ProposalId, project: ProjectParam = None) -> ProposalAcceptOut:
    """Do what the proposal says: re-hash the anchors (still_true), supersede the record with the
    draft (update) or delete it (no_longer_true)."""
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        proposal = reverify.open_proposal(store, target, proposal_id)
        record = store.get(target, proposal.record_id)
        current = reverify.accept(store, target, proposal_id)
    return ProposalAcceptOut(
        proposal=proposal_out(replace(proposal, status="accepted"), record),
        outcome=OUTCOMES[proposal.verdict],
        record=out(current) if current is not None else None,
    )


@router.post("/proposals/{proposal_id}/reject", response_model=ProposalOut, responses=ERRORS)
def reject_proposal(request: Request, proposal_id: ProposalId, project: ProjectParam = None) -> ProposalOut:
    """Dismiss the proposal: nothing else changes (the record stays, marked stale)."""
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        record = store.get(target, reverify.open_proposal(store, target, proposal_id).record_id)
        return proposal_out(reverify.reject(store, target, proposal_id), record)


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
