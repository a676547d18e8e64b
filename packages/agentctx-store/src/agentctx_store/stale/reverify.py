"""Re-verification (issue 16, item 4): records whose anchors changed, checked again offline.

Consolidation calls `reverify` for each project. Every current record whose anchored text
changed (or whose files are gone) is shown to a `Verifier` — with an API key and `llm` on, a
Claude Haiku call made by `agentctx_extract.reverify` — together with the anchors' text as it is
now. Its answer becomes a proposal in the review inbox (`agentctx review`, the dashboard Inbox):
  - `still_true`: accepting re-hashes the anchors (`stale.confirm`);
  - `update`: a superseding draft (title, body); accepting supersedes the record with it and
    anchors the new record where the old one was;
  - `no_longer_true`: accepting deletes the record.
Nothing changes until a person accepts, unless `reverify_auto_apply` is on in config. A record
with an open proposal is not asked about again, nor one whose proposal was rejected until it is
confirmed or re-anchored. Without a verifier, the marks alone (`stale.scan`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agentctx_store.anchors import Anchor, anchors_of
from agentctx_store.errors import RecordNotFound, ValidationError
from agentctx_store.freshness import anchor_record, anchored_text, format_spec
from agentctx_store.projects import Project
from agentctx_store.records import Record, utc_now
from agentctx_store.stale import StaleRecord, confirm, scan, still_there
from agentctx_store.store import Store

Verdict = Literal["still_true", "update", "no_longer_true"]
VERDICTS: tuple[str, ...] = ("still_true", "update", "no_longer_true")
# The text of one anchor shown to the model, at most (a whole file is cut, saying so).
ANCHOR_TEXT_CHARS = 6000
# Records asked about per project and run (each is one call).
MAX_PER_RUN = 20


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """One anchor as it is now: `text` is None when the file or symbol is gone."""

    anchor: Anchor
    text: str | None


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What a verifier said about one record; `cost_usd` is what asking cost."""

    verdict: str
    title: str | None = None
    body: str | None = None
    reason: str = ""
    cost_usd: float = 0.0


Verifier = Callable[[Record, Sequence[Evidence]], Answer | None]


@dataclass(frozen=True, kw_only=True)
class Proposal:
    proposal_id: int
    record_id: str
    project_id: str
    verdict: str
    title: str | None
    body: str | None
    reason: str
    cost_usd: float
    created_at: str
    status: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(kw_only=True)
class ReverifyReport:
    # Same shape as `consolidate.RunReport` (a tally of counters), kept apart: other counts of
    # another run, each printed and serialised by its own command.
    stale: int = 0
    asked: int = 0
    proposed: int = 0
    applied: int = 0
    failed: int = 0
    cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list[str])

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def evidence(project: Project, item: StaleRecord) -> list[Evidence]:
    """Each anchor of a stale record with its text now (cut to ANCHOR_TEXT_CHARS)."""
    from agentctx_store.bounded import MAX_SOURCE_FILE, read_repo_text

    root = project.root
    found: list[Evidence] = []
    for anchor in item.anchors:
        try:  # bounded, inside the project's tree: this text is sent to a model
            text = anchored_text(
                read_repo_text(root, anchor.path, limit=MAX_SOURCE_FILE, errors="replace"),
                anchor.line_start,
                anchor.line_end,
                anchor.symbol,
            )
        except OSError:  # missing, unreadable, or refused (bounded.Refused)
            text = None
        if text is not None and len(text) > ANCHOR_TEXT_CHARS:
            text = text[:ANCHOR_TEXT_CHARS] + "\n… (cut)"
        found.append(Evidence(anchor=anchor, text=text))
    return found


def reverify(
    store: Store,
    project: Project,
    verifier: Verifier | None,
    *,
    auto_apply: bool = False,
    limit: int = MAX_PER_RUN,
) -> ReverifyReport:
    """Re-check the project's anchored records; ask `verifier` about the stale ones not already
    proposed on; store its answers as proposals (applied at once with `auto_apply`)."""
    stale = scan(store, project)
    report = ReverifyReport(stale=len(stale))
    if verifier is None:
        if stale:
            report.notes.append("no-llm: stale records are marked, not re-verified")
        return report
    for item in stale[:limit]:
        if _already_proposed(store, item):
            continue
        report.asked += 1
        try:
            answer = verifier(item.record, evidence(project, item))
        except Exception as exc:  # one record's failure never stops the run
            answer = None
            report.notes.append(f"{item.record.record_id}: {type(exc).__name__}")
        if answer is None or answer.verdict not in VERDICTS:
            report.failed += 1
            continue
        report.cost_usd += answer.cost_usd
        proposal_id = _add(store, project, item.record, answer)
        report.proposed += 1
        if auto_apply:
            accept(store, project, proposal_id)
            report.applied += 1
    return report


def _already_proposed(store: Store, item: StaleRecord) -> bool:
    """An open proposal exists, or one was rejected since the record was last (re-)anchored."""
    row = store.conn.execute(
        """SELECT count(*) FROM freshness_proposals WHERE record_id = ?
           AND (status = 'open' OR (status = 'rejected' AND decided_at >= (
                SELECT coalesce(max(created_at), '') FROM record_anchors WHERE record_id = ?)))""",
        (item.record.record_id, item.record.record_id),
    ).fetchone()
    return bool(row[0])


def _add(store: Store, project: Project, record: Record, answer: Answer) -> int:
    with store.transaction() as conn:
        cursor = conn.execute(
            """INSERT INTO freshness_proposals
               (record_id, project_id, verdict, title, body, reason, cost_usd, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                record.record_id,
                project.project_id,
                answer.verdict,
                (answer.title or record.title) if answer.verdict == "update" else None,
                answer.body if answer.verdict == "update" else None,
                answer.reason[:1000],
                answer.cost_usd,
                utc_now(),
            ),
        )
        return int(cursor.lastrowid or 0)


_COLUMNS = "proposal_id, record_id, project_id, verdict, title, body, reason, cost_usd, created_at, status"


def proposals(store: Store, project: Project, *, status: str | None = "open") -> list[Proposal]:
    """The project's proposals (open ones by default), oldest first."""
    sql = f"SELECT {_COLUMNS} FROM freshness_proposals WHERE project_id = ?"
    params: list[Any] = [project.project_id]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    return [
        Proposal(**dict(zip(_COLUMNS.split(", "), row, strict=True)))
        for row in store.conn.execute(sql + " ORDER BY proposal_id", params)
    ]


def open_proposals(store: Store, project: Project) -> list[tuple[Proposal, Record]]:
    """Open proposals of the project with the records they are about, oldest first (those whose
    record is gone are left out): what `agentctx review` and the dashboard Inbox show."""
    found: list[tuple[Proposal, Record]] = []
    for proposal in proposals(store, project, status="open"):
        try:
            found.append((proposal, store.get(project, proposal.record_id)))
        except RecordNotFound:
            continue
    return found


def open_proposal(store: Store, project: Project, proposal_id: int) -> Proposal:
    """One open proposal of the project.

    Raises:
        RecordNotFound: no open proposal with that id in this project.
    """
    for proposal in proposals(store, project, status="open"):
        if proposal.proposal_id == proposal_id:
            return proposal
    raise RecordNotFound(
        f"No open proposal {proposal_id} in this project; `agentctx review --json` (or the dashboard's Inbox) lists them."
    )


def accept(store: Store, project: Project, proposal_id: int) -> Record | None:
    """Do what the proposal says; returns the record that stays current (None when deleted).

    Raises:
        RecordNotFound: no such open proposal, or its record is gone.
    """
    proposal = open_proposal(store, project, proposal_id)
    result: Record | None
    with store.transaction() as conn:
        if proposal.verdict == "still_true":
            confirm(store, project, proposal.record_id)
            result = store.get(project, proposal.record_id)
        elif proposal.verdict == "update":
            old_anchors = anchors_of(store, project, proposal.record_id)
            _, result = store.supersede(
                project,
                proposal.record_id,
                body=proposal.body or "",
                title=proposal.title,
                rationale="its anchored code changed (re-verified)",
            )
            kept = still_there(project, [format_spec(anchor) for anchor in old_anchors])
            if kept:
                anchor_record(store, project, result.record_id, kept)
        elif proposal.verdict == "no_longer_true":
            store.delete(project, proposal.record_id)
            result = None
        else:  # pragma: no cover - the table only holds VERDICTS
            raise ValidationError(f"Unknown verdict {proposal.verdict!r}.")
        conn.execute(
            "UPDATE freshness_proposals SET status = 'accepted', decided_at = ? WHERE proposal_id = ?",
            (utc_now(), proposal_id),
        )
    return result


def reject(store: Store, project: Project, proposal_id: int) -> Proposal:
    """Dismiss a proposal: nothing else changes (the record stays marked stale); returns it, rejected."""
    proposal = open_proposal(store, project, proposal_id)
    with store.transaction() as conn:
        conn.execute(
            "UPDATE freshness_proposals SET status = 'rejected', decided_at = ? WHERE proposal_id = ?",
            (utc_now(), proposal_id),
        )
    return replace(proposal, status="rejected")


def spent(store: Store, project: Project | None = None, *, since: str = "") -> float:
    """What re-verification calls cost (all projects, or one), since an ISO time."""
    sql = "SELECT coalesce(sum(cost_usd), 0) FROM freshness_proposals WHERE created_at >= ?"
    params: list[Any] = [since]
    if project is not None:
        sql += " AND project_id = ?"
        params.append(project.project_id)
    try:
        return float(store.conn.execute(sql, params).fetchone()[0])
    except sqlite3.Error:
        return 0.0
